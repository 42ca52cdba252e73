"""Analogous copies: where a filled-in value comes from when the context's earlier occurrences hold other values.

A template filled from records (JSON built from package stanzas, a form from a profile, a table from a list)
repeats its keys, while each value is copied from the record the output is at:

    record 6:  ...Version: 2.36-9\n...   record 7:  ...Version: 1.9.4-1\n...
    output:    "version": "2.36-9",  ...  "version": "1.|

The draft copies the earlier object ("version": "2.36-9"), and the target breaks off where the values differ;
after that the context ("1.) matches nothing useful. But where the earlier value was copied from tells where
this one is: 2.36-9 followed "Version: " in record 6, and records are filled in order, so this value follows
the next "Version: " after it. So when the text breaks off after end position d of the place it was copying
(the last draft's, or a template place found below):

    1. the source: the longest piece after d (up to SRC tokens) that occurs twice, at its earliest of POOL
       occurrences (the input comes before the output), unless that is d's own (nothing was copied: an edit);
    2. the CTX tokens before the source, at their first occurrence after it (of POOL read) where the text's
       tokens after the break (the target's own token, usually) follow too: the value's place. Where there is
       none, the next earliest source is tried (up to TRIES);
    3. proposals draft what follows that place, with weight analogy_weight, while the text agrees with it;
    4. where the value started in the output is kept with the next record's place for the same key (the first
       place after this one that follows the same CTX tokens): the next time a draft copies that object (the
       template of the next one), it drafts the next record's value where this one starts, then the template
       after it (predicted, weighing predict_weight times the copy), so the target need not break off there
       first; so does a draft of a value that forks back to the template where the value ends (3.), where the
       template after it reaches the next value. A break there whose new tokens that place holds moves the
       analogy to it whatever their number. Kept only once value ends were learned (value_end.py; code edits
       learn none).

When the text breaks off from a value's place (the value ended), the template left where the value started
resumes at the first place within WINDOW tokens where the text's new tokens (",) occur: the next key. Where
values end is learned there too, so that drafts of the next value fork back to the template where it ends
(value_end.py). When the target took such a draft, the value and then the template, the place the draft
copied goes on in the template (H_SPL: where the fork went on), so a break there looks the next value up
from the template, not from the input after the value (templated / multi_turn tau, tree / chain: 6.337 /
5.992 -> 6.375 / 6.021, 8.222 / 7.864 -> 8.279 / 7.922; code_edit, completion and the model workloads
unchanged). The same holds for the analogy's own value: when it ends where its draft forked, the template
is followed from the fork, and a break in it is the next value, looked up there (before, the new tokens had
to occur in the template together, the next value's first one included, so the analogy was lost at every
value: 6.421 / 6.083 -> 6.443 / 6.192, 8.294 / 7.926 -> 8.326 / 7.972; the rest unchanged).

A value copied from a "Key: value" line starts with a token spelled with a leading space there (" pool") and
without it in the output ('"pool'): the piece after d then occurs in the record only with that spelling, and
the new value's first token only so. With a spacing map (spacing.py, from the tokenizer) the source may be that
spelling of the piece and the place's first token may be too.

While the text follows the analogy's place, the input tokens it copied unchanged forget a substitution of theirs
(substitute.forget, as the copy pointer does where it copies): a pair learned from two look-alike values
('5' -> '0' of two versions, "io" -> "dk" of two package names) otherwise rewrote every input occurrence of its
token for hundreds of steps, since values are mostly copied from here, not by the pointer (templated /
multi_turn tau, tree / chain: 6.952 / 6.885 -> 6.977 / 6.944, 8.909 / 8.695 -> 8.909 / 8.699; code_edit,
completion and the model workloads unchanged).

Cost: up to SRC + CTX hash probes and 2 * POOL occurrences, only where the text breaks off from a copy;
independent of the context's length.
"""
import numpy as np
from numba import njit

from ._layout import (H_AN, H_N_TX, H_OFF_ST, H_OFF_TX, H_SPL, H_SPLM, H_VE, H_VS, N_VS, S_CLONE, S_LTH, SEP,
                      ST_W)
from .automaton import match_step, occurrences
from .pointer import agree, backmatch
from .spacing import same, spaced
from .substitute import forget
from .value_end import learn_end

SRC = 8       # tokens of a continuation (at most) that identify where it was copied from
CTX = 4       # tokens before that source, looked for after it
POOL = 16     # occurrences read (the first the link tree yields) for the earliest source and the next context
WINDOW = 128  # tokens searched for where the template goes on after a value
TRIES = 4     # sources tried, earliest first
AFTER = 4     # tokens after a break that the new place must explain


@njit(cache=True, inline="always")
def live(b):
    """The place (end position) of the analogous copy the text agrees with, when text follows it; else -1."""
    a = b[H_AN] - 1
    if a < 0:
        return -1
    ot = b[H_OFF_TX]
    if a + 1 < b[H_N_TX] and b[ot + a + 1] != SEP:
        return a
    return -1


@njit(cache=True, inline="always")
def _repeated(b, v):
    """Whether state v's strings occur more than once: a clone, or a state with link-tree children (each
    other state is the prefix that ends where it was created, and its link-subtree holds its other ends)."""
    o = b[H_OFF_ST] + ST_W * v
    return b[o + S_CLONE] != 0 or b[o + S_LTH] != -1


@njit(cache=True, inline="always")
def _piece(b, d, j, t0, twice):
    """The longest piece after end position d (up to SRC tokens, the first one t0 in place of d + 1's) that
    occurs in the text, more than once with `twice` (the piece at d + 1 is one of its occurrences):
    (its state, its length)."""
    ot = b[H_OFF_TX]
    n = b[H_N_TX]
    v = 0
    L = 0
    m = 0
    for i in range(SRC):
        t = t0 if i == 0 else b[ot + d + 1 + i]
        if t == SEP or d + 1 + i >= n - j:
            break
        w, L = match_step(b, v, L, t)
        if L != i + 1 or (twice and not _repeated(b, w)):
            break
        v = w
        m = i + 1
    return v, m


@njit(cache=True, inline="always")
def _after_source(b, s, d, j, sp, pool):
    """The place the source at s points to: the first occurrence after s (of POOL read into pool) of the CTX
    tokens before it, followed by the text's last j tokens; its end position (of those j), or -1."""
    ot = b[H_OFF_TX]
    n = b[H_N_TX]
    v = 0
    L = 0
    for i in range(CTX):
        v, L = match_step(b, v, L, b[ot + s - CTX + i])
    if L != CTX:
        return -1  # a document boundary
    k = occurrences(b, v, pool, POOL, False)
    best = n
    for i in range(k):
        x = pool[i] + 1  # the token after the context
        if x <= s or x >= best or x == d + 1 or x + j >= n - j:
            continue
        ok = j == 0 or same(sp, b[ot + x], b[ot + n - j])
        for q in range(1, j):
            if b[ot + x + q] != b[ot + n - j + q]:
                ok = False
                break
        if ok and b[ot + x + j] != SEP:
            best = x
    if best == n:
        return -1
    return best + j - 1


@njit(cache=True)
def place(b, d, j, sp):
    """The analogous place for a break after end position d, the text's last j tokens being the new value's
    start: the end position whose next j tokens equal those (the first one may be its spelling with a
    leading space: spacing.py, sp), or -1 (none found)."""
    ot = b[H_OFF_TX]
    n = b[H_N_TX]
    if d < 0 or d + 2 >= n - j:
        return -1
    # the source: an earlier occurrence of the longest piece after d (up to SRC tokens) seen twice
    v, m = _piece(b, d, j, b[ot + d + 1], True)
    # or, when longer, seen once with its first token spelled with a leading space: a value copied from a
    # "Key: value" line (" pool/main/..." there, '"pool/main/...' in the JSON at d + 1; the output's own
    # spelling often occurs once more a few tokens long, in the prompt's examples: '"pool/main/'). Longer by
    # one, not two: multi_turn / templated tau, tree, 8.430 / 6.562 -> 8.442 / 6.570; on ties too, templated
    # gained (6.616) and multi_turn lost (8.429)
    ts = spaced(sp, b[ot + d + 1])
    if ts >= 0:
        vs, ms = _piece(b, d, j, ts, False)
        if ms > m:
            v = vs
            m = ms
    if m == 0:
        return -1
    pool = np.empty(2 * POOL, np.int32)
    k = occurrences(b, v, pool, POOL, False)
    # the sources: the piece's first tokens before d + 1 (the input comes before the output), earliest first
    c = 0
    for i in range(k):
        s = pool[i] - (m - 1)
        if CTX <= s < d + 1:
            q = c
            while q > 0 and pool[q - 1] > s:  # pool[c:i + 1] are free: insertion sort in place
                pool[q] = pool[q - 1]
                q -= 1
            pool[q] = s
            c += 1
    # the earliest source whose context goes on where the new value starts: where the earliest occurrence's
    # context leads nowhere (an example, or a record with no next one), a later copy of the value may
    # (multi_turn / templated tau, tree, 8.663 / 6.802 -> 8.714 / 6.823; chain 8.414 / 6.543 -> 8.493 / 6.591)
    for i in range(min(c, TRIES)):
        x = _after_source(b, pool[i], d, j, sp, pool[POOL:])
        if x >= 0:
            return x
    return -1


@njit(cache=True, inline="always")
def _resume(b, o, j, sp):
    """The first end position within WINDOW tokens after o where the text's last j tokens occur (followed by
    text), else -1: where the template left at o goes on after the value the target wrote."""
    ot = b[H_OFF_TX]
    n = b[H_N_TX]
    for r in range(o + j, min(o + WINDOW, n - j - 1)):
        if b[ot + r + 1] != SEP and backmatch(b, r, j, sp) == j:
            return r
    return -1


@njit(cache=True, inline="always")
def _entry(b, t):
    """The ring entry kept for a value starting at text position t (at most one: _keep replaces it), or -1."""
    for i in range(N_VS):
        if b[H_VS + 1 + 2 * i] == t + 1:
            return i
    return -1


@njit(cache=True, inline="always")
def _keep(b, t, r):
    """Keeps (t, r): a value starts at text position t, the next record's value of its key at r (replacing
    what was kept for t, else the oldest entry)."""
    i = _entry(b, t)
    if i < 0:
        i = b[H_VS]
        b[H_VS] = (i + 1) % N_VS
    b[H_VS + 1 + 2 * i] = t + 1
    b[H_VS + 2 + 2 * i] = r + 1


@njit(cache=True, inline="always")
def _remember(b, t0, t1, xs, sp):
    """A value placed by analogy starts at output position t0, where the template it broke off from held its
    own value at t1, and is copied from the place starting at xs: keeps, for both, where the next record's
    value of the same key starts (the first place after xs that follows the CTX tokens before xs), for the
    next time a draft copies either through there (predicted): the next object is copied from this one, or
    from the same template."""
    pool = np.empty(POOL, np.int32)
    x = _after_source(b, xs, t0 - 1, 0, sp, pool)
    if x < 0:
        return
    _keep(b, t0, x + 1)  # _after_source gives the end position before the place
    _keep(b, t1, x + 1)


@njit(cache=True, inline="always")
def predicted(b, a, depth):
    """The first value start t0 kept by _remember within `depth` tokens after template place a: (m, r), the
    template's m tokens after a lead to it, and the next record's value starts at r; (-1, -1) when none."""
    t = -1
    r = -1
    for i in range(N_VS):
        u = b[H_VS + 1 + 2 * i] - 1
        if a < u <= a + depth and (t < 0 or u < t):
            t = u
            r = b[H_VS + 2 + 2 * i] - 1
    if t < 0:
        return -1, -1
    return t - a - 1, r


@njit(cache=True, inline="always")
def _confirmed(b, d, j):
    """The text broke off from a template at end position d with j new tokens: when a value kept by _remember
    starts at d + 1 and its predicted place holds those j tokens, the end position of them there; else -1."""
    i = _entry(b, d + 1)
    if i >= 0:
        r = b[H_VS + 2 + 2 * i] - 1
        if agree(b, r - 1, j) == j:
            return r - 1 + j
    return -1


@njit(cache=True, inline="always")
def _look_up(b, e, k, added, sp):
    """The text broke off from end position e after k of the `added` tokens: looks for the new value's place
    (predicted, else by analogy) and keeps it (with e + k as the template to resume after it); whether one
    was found."""
    j = added - k
    kept = b[H_VE] != 0  # values copied into a template were seen (code edits: none)
    x = _confirmed(b, e + k, j) if kept else -1
    if x < 0:
        if j > AFTER:
            return False
        x = place(b, e + k, j, sp)
        if x < 0:
            return False
    b[H_AN] = x + 1
    b[H_AN + 2] = e + k + 1
    b[H_AN + 3] = 1
    if kept:
        _remember(b, b[H_N_TX] - j, e + k + 1, x - j + 1, sp)
    return True


@njit(cache=True)
def follow(b, added, sp):
    """After `added` tokens were appended: moves the analogous place along while the text agrees with it.
    When the text breaks off from a value's place (the value ended), the template left at the value's start
    resumes where the text's new tokens occur in it; when it breaks off from the template's place (else from
    the place the last draft copied), the new value is looked for by analogy (place)."""
    a = b[H_AN] - 1
    d = b[H_AN + 1] - 1
    b[H_AN + 1] = 0
    r = b[H_SPL] - 1  # the template's first position after the value
    b[H_SPL] = 0
    if a >= 0:
        k = agree(b, a, added)
        if k == added:
            b[H_AN] = a + added + 1
            # the text copied these input tokens unchanged: a substitution of one of them was a one-off
            forget(b, a + added, added)
            return
        b[H_AN] = 0
        if b[H_AN + 3] == 1:  # a value ended
            o = b[H_AN + 2] - 1
            b[H_AN + 2] = 0
            j = added - k
            learn_end(b, a + k + 1, b[b[H_OFF_TX] + b[H_N_TX] - added + k])
            if r >= 0 and k == b[H_SPLM]:
                # the draft forked back to the template where the value ended, at r: the text went on there
                # (then it is the template's place) or broke off in it (then at the next value, looked up)
                k2 = agree(b, r - 1, j)
                if k2 == j:
                    b[H_AN] = r + k2
                    b[H_AN + 3] = 0
                    return
                if k2 > 0:
                    _look_up(b, r - 1, k2, j, sp)
                    return
            if o >= 0:  # any number of new tokens: a draft that forked at the value's end wrote the template
                e = _resume(b, o, j, sp)
                if e >= 0:
                    b[H_AN] = e + 1
                    b[H_AN + 3] = 0
            return
        if _look_up(b, a, k, added, sp):
            return
    if d >= 0:
        k = agree(b, d, added)
        if k < added:
            if r >= 0 and k == b[H_SPLM]:
                # the text left the value where the draft forked back to the template: the break, if any,
                # is in the template
                k2 = agree(b, r - 1, added - k)
                if k2 < added - k:
                    _look_up(b, r - 1, k2, added - k, sp)
            else:
                _look_up(b, d, k, added, sp)
