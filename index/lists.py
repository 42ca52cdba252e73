"""Lists: a value copied from the input that is one item of a list the output writes with its own separators.

    input:   Depends: libguestfs0 (= 1:1.48.6-2), libc6 (>= 2.34), libconfig9 (>= 1.5), libreadline8 ...
    output:  "depends": ["libguestfs0", "libc6", "libconfig9", "libreadline8", ...

Each item is copied from the input. Where it ends (value_end.py: the input's " (" or ","), the output writes
its separator ('", "', or '",\n      "'), then the next item, which the input starts after its next ",". The
copy pointer goes back to the input at that item once the output wrote its first token (pointer._resume), but
until then a draft forked at the item's end back to the template, which goes on with the earlier object's next
item, not this one's. So when the pointer's current run, or an input occurrence of the longest match where the
pointer drafts no list, copies a list's item (it started at the item's first token, and a value end's output
token stands at most SEP_MAX tokens before it: the separator), the draft copies the item's rest, the separator
the output wrote before it, and the input's next item, its first token spelled as the output spelled this
one's (spacing.unspaced), and so on while each item ends at the token the previous one ended at, or, neither
being the most voted pair's, at another pair's (_goes_on). The pointer's (or the occurrence's) weight moves to
that draft, and the input occurrences read at the pointer's place add theirs to it (propose.py). Values
copied from consecutive lines of a record look like a list's items when the output's key between them is
short, so an item may not end at the most voted pair's input token (mostly a record's newline) unless the
output wrote the same separator before the previous item.

multi_turn / templated tau, tree / chain: 8.559 / 6.735 -> 8.599 / 6.770, 8.271 / 6.488 -> 8.341 / 6.509;
code_edit, completion and the model workloads unchanged. Measured and not kept: the item's start taken from
where the text and the input stop agreeing going back (not from the run), alone and with the same draft at
the analogy's place too: chain templated 6.391 and 6.345 (drafts walked on through a record's fields); no
record rule: 8.597 / 6.760, 8.341 / 6.500, and synthetic records with one-token keys lost their value ends
(test_value_end); the most voted pair alone, without the repeated separator: a session whose long lists' item
end (" (") outvoted the newline lost them.

Items with and without a version ("libc6 (>= 2.14), libx11-6, libxext6") end at " (" and at ",", and the
delimiter before the next one is "),", or the "," that ended the item: so an item may end at another pair's
token than the previous one (not the most voted pair's: a record's end), and, where the output drops the
items' leading space, the delimiter is also any token followed by another's spelling with a leading space
(templated tau, tree / chain: 6.919 / 6.709 -> 6.923 / 6.737; multi_turn 8.804 / 8.538 -> 8.804 / 8.539; the
rest unchanged; with the first rule alone, templated 6.920 / 6.715). And an item starts up to BACK tokens
before the pointer's run where the output wrote its first tokens from the template before the pointer found
the input ('"libx' until 'rand'): multi_turn 8.804 / 8.539 -> 8.832 / 8.564, templated 6.923 / 6.737 -> 6.920
/ 6.763; the rest unchanged.

The pointer is often elsewhere while the output writes a list (on an earlier object's list, or lost after an
item's first tokens), and the longest match's occurrence in the record then copied the input on past the item's
end (' (>= 1.16'): an input occurrence of the longest match drafts a list too, its length taken for the run
(propose.py; multi_turn 8.832 / 8.564 -> 8.852 / 8.616, templated 6.920 / 6.763 -> 6.943 / 6.811). Version
constraints are mostly 6 to 13 tokens long (digits are tokens: " (>= 5.18.0.240)," is 14), so the delimiter may
stand up to GAP = 20 tokens after an item's end (12 covered 89% of the workloads' constraints, 20 covers 99.8%),
and the previous item ends at the nearest place of its last token that an end token follows (a constraint may
hold that token: in "libgdk-pixbuf-2.0-0 (>= 2.42.10+dfsg)" the scan stopped at the first "0", followed by
"+"): multi_turn -> 8.891 / 8.661, templated -> 6.943 / 6.860; code_edit, completion and the model workloads
unchanged (completion tree 1.9473 -> 1.9477).

The analogy's place (analogy.py: the next record's value for the key the output is at) is often on a list's
item where the pointer drafts no list; it drafted the item and then the value's fork back to the template, as
if the item were the whole value: where the pointer drafts no list, it drafts the list too, the text's
agreement with it (up to ITEM tokens) taken for the run (propose.py; multi_turn 8.891 / 8.661 -> 8.909 /
8.695, templated 6.943 / 6.860 -> 6.952 / 6.885; code_edit, completion and the model workloads unchanged).

An occurrence tried its list only where the value's fork found no end; at an item's last token the value end is
right there, and the fork went on with the template's next key ('", "version"') where the record's next item
follows: the list is tried first. And where the copy pointer found the input only at an item's last tokens (a
run of 0 after a jump), it drafted no list; where its place is one of the longest match's occurrences, that
match's length is its run (propose.py). But a pair was voted only where the copy went back to the template
(pointer.py): a list accepted past an item's end skips ahead to the next item, so better lists took votes from
their own pair (' (' -> '",' ended a session's first request with 5 votes, not 6, and was not carried): a skip
ahead votes for a pair already known (value_end.learn_end, `known`), and CARRY_VOTES is 4. Steps at budget 16, tree /
chain: multi_turn 4,905 / 5,017 -> 4,889 / 4,982, templated 20,332 / 20,486 -> 20,136 / 20,224, code_edit 5,679
/ 5,983 -> 5,687 / 5,994, model:multi_turn 1,031 / 1,116 -> 1,028 / 1,113, model:completion chain 1,278 ->
1,275; completion and the other model workloads the same.
"""
from numba import njit

from ._layout import H_N_TX, H_OFF_TX, H_PE, H_VE, N_VE, SEP, VE_W
from .spacing import same, unspaced
from .substitute import mapped
from .value_end import _is_end, _writes, end_ahead

SEP_MAX = 5  # tokens of an output separator ('",', "\n", indentation, ' "')
GAP = 20  # input tokens from an item's end to the delimiter before the next item (" (>= 5.18.0.240),": 14)
ITEM = 32  # tokens of the previous item compared (_repeats)
BACK = 3  # tokens an item may start before the copy (_item)


@njit(cache=True, inline="always")
def _most_voted(b):
    """The input token of the value-end pair with the most votes (the first of them), or -2 when none: mostly
    where a record's values end (a newline). Values copied from consecutive lines of a record look like a
    list's items when the output's key between them is short ('", "version": "'), so items may end there
    only when the separator repeats (_repeats): long lists' own item end (" (") can outvote the newline."""
    best = -1
    t = -2
    for k in range(N_VE):
        o = H_VE + VE_W * k
        if b[o] != 0 and b[o + 2] > best:
            best = b[o + 2]
            t = b[o] - 1
    return t


@njit(cache=True, inline="always")
def _repeats(b, q, s, j, sp):
    """Whether the output wrote the separator at text positions q .. s - 1 before the previous item too: that
    item (the text before q, a copy of the input up to position j, at most ITEM tokens) follows the same
    tokens. A key between a record's values differs from value to value."""
    ot = b[H_OFF_TX]
    pe = b[H_PE]
    n = 0
    while n < ITEM and q - 1 - n >= pe and j - n >= 0 and same(sp, b[ot + j - n], b[ot + q - 1 - n]):
        n += 1
    x = q - 1 - n  # where the separator before the previous item would end
    k = s - q
    if n == 0 or x - k + 1 < pe:
        return False
    for i in range(k):
        if b[ot + x - k + 1 + i] != b[ot + q + i]:
            return False
    return True


@njit(cache=True, inline="always")
def _goes_on(t, end, mv):
    """Whether an item that ends at input token t is followed by another, the previous item having ended at
    `end`: at the same token, or, neither being the most voted pair's (mv: a record's newline), at another
    pair's (items with and without a version: "libxcb1 (= 1.15-1), libpthread-stubs0-dev, libxau-dev")."""
    return t == end or (t != mv and end != mv)


@njit(cache=True, inline="always")
def separated(b, run, votes):
    """Whether a value end's output token stands within SEP_MAX + BACK tokens before the text's last run + 1
    tokens: else no copy of them is a list's item (_item), wherever it copies from. Asked once before the
    longest match's occurrences are tried (propose.py)."""
    ot = b[H_OFF_TX]
    s = b[H_N_TX] - 1 - run
    for x in range(s - 1, max(s - 1 - SEP_MAX - BACK, b[H_PE] - 1), -1):
        if _writes(b, b[ot + x], votes):
            return True
    return False


@njit(cache=True, inline="always")
def _item(b, c, run, sp, votes):
    """(q, s, e, end, delim, mv) when a copy of the input at end position c, the text's last run + 1 tokens,
    copies a list's item: the item starts at text position s and input position e (the same token, or its
    spelling with a leading space; up to BACK tokens before the copy, where they agree), and the output wrote
    its separator at q .. s - 1 (q starts the run of value ends' output tokens that holds the last of them
    within SEP_MAX tokens before s); the input's previous item ended at token `end` (a pair's input token, at
    the nearest place within GAP before e where it follows the output's last token before the separator; not
    mv, the most voted pair's, read only there, unless the separator repeats) and the delimiter `delim` stands
    just before e. Else q = -1.

    The separator once started at that last output token alone. Where both of the separator's tokens are
    pairs' ('",' then ' "': the pair ',' -> ' "' is learned too), it started at ' "', the previous item then
    seemed to end with '",', which the input does not hold, and no list was drafted (multi_turn chain 8.387 ->
    8.414, 17 steps fewer in one 60-item list; tree 8.663 the same; templated 6.5413 / 6.8010 -> 6.5425 /
    6.8017, chain / tree; code_edit, completion and the model workloads unchanged)."""
    ot = b[H_OFF_TX]
    n = b[H_N_TX]
    pe = b[H_PE]
    s = n - 1 - run
    e = c - run
    if c + 1 >= pe or e < 1 or s - SEP_MAX < pe or not same(sp, b[ot + e], b[ot + s]):
        return -1, 0, 0, 0, 0, 0
    # the run may start inside the item (the pointer found the input only after its first tokens: '"libx' was
    # the template's 'libx11-6' until 'rand'): the item starts up to BACK tokens before, where they agree
    g = 0
    while g < BACK and e - g - 1 >= 1 and s - g - 1 - SEP_MAX >= pe and \
            same(sp, b[ot + e - g - 1], b[ot + s - g - 1]):
        g += 1
    s -= g
    e -= g
    q = -1
    for j in range(1, SEP_MAX + 1):
        if _writes(b, b[ot + s - j], votes):
            q = s - j
            break
    if q < 0:
        return -1, 0, 0, 0, 0, 0
    while q - 1 > pe and _writes(b, b[ot + q - 1], votes):
        q -= 1
    last = b[ot + q - 1]
    for j in range(e - 2, max(e - 2 - GAP, -1), -1):
        t = b[ot + j]
        if t == SEP:
            break
        if same(sp, t, last) and _is_end(b, b[ot + j + 1], votes):
            end = b[ot + j + 1]
            mv = _most_voted(b)
            if end != mv or _repeats(b, q, s, j, sp):
                return q, s, e, end, b[ot + e - 1], mv
            break
    return -1, 0, 0, 0, 0, 0


@njit(cache=True)
def list_draft(b, c, run, sp, votes, seq, depth):
    """Writes into seq (int32, >= depth) the draft after input end position c when the text's last run + 1
    tokens copy a list's item from there (_item; the copy pointer's place and run, or an occurrence of the
    longest match and its length): the item's rest, then, while an item ends at the previous one's end token
    (or another item's: _goes_on) and a delimiter follows within GAP tokens (the one before the item copied,
    or, when the output drops the input's leading space, any token followed by a spaced one), the output's
    separator and the next item (its first token spelled as the output spelled this one's). Returns its
    length: 0 when the run is not a list's item or the item does not end as the previous one did within depth
    (the list's last item: value_end.py forks)."""
    q, s, e, end, delim, mv = _item(b, c, run, sp, votes)
    if q < 0:
        return 0
    ot = b[H_OFF_TX]
    pe = b[H_PE]
    bare = b[ot + e] != b[ot + s]
    k = 0
    p = c
    while k < depth:
        m, t = end_ahead(b, p, depth - k, votes)
        if m < 0:  # no end within the draft: the item runs on
            if p == c:
                return 0
            x = p + 1
            while k < depth and x < pe and b[ot + x] != SEP:
                seq[k] = mapped(b, x, b[ot + x])
                k += 1
                x += 1
            break
        more = _goes_on(t, end, mv)
        if not more and p == c:
            return 0
        for i in range(m):
            seq[k] = mapped(b, p + 1 + i, b[ot + p + 1 + i])
            k += 1
        if not more:  # the list's last item
            break
        pd = -1
        for g in range(GAP):
            x = p + 1 + m + g
            if x + 1 >= pe or b[ot + x] == SEP:
                break
            tx = b[ot + x]
            if tx == delim or (bare and unspaced(sp, b[ot + x + 1]) >= 0):
                pd = x
                break
            if g > 0 and _is_end(b, tx, votes):
                break
        if pd < 0:
            return k if p != c else 0
        for i in range(q, s):
            if k >= depth:
                return k
            seq[k] = b[ot + i]
            k += 1
        y = b[ot + pd + 1]
        if bare:
            y = unspaced(sp, y)
        if y < 0 or k >= depth:
            return k
        seq[k] = y
        k += 1
        p = pd + 1
    return k
