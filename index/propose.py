"""Drafts from all tiers: the request's own automaton plus external ones (memory segments, corpus).

All automata of a drafter live in one numba typed List `B` (or, for single calls, a tuple: address.py). A request's
automaton keeps, in its header, match cursors into the external automata (cursors.py), so a proposal never
rescans anything:

    append: extend own automaton (amortized O(1) per token), step each external cursor (amortized O(1)).
    propose: for every tier with a match, enumerate up to `occ` occurrences of the matched suffix, read what
             followed each one, and merge these continuations into a trie whose node weights are counts.
             p(child | node) = w(child) / (w(node) + alpha), alpha shrinking as the match gets longer. A chain
             follows the heaviest child; a tree takes the `budget` nodes of highest path probability (which is
             always a tree, since a path's probability never exceeds its prefix's). When the best path runs
             out of recorded text, cursors advance virtually along it and another round continues it.
    A response's first draft opens the way earlier responses did, then copies the input from that opening
    (opening.py). A value's first token is also matched as the input's "Key: value" lines spell it, with a
    leading space (_spaced_state).
"""
from numba import njit

from ._layout import CUR_W, H_AN, H_CP, H_CUR, H_N_TX, H_OFF_TX, H_PE, H_RUN, H_SPL, H_SPLM, H_VE, N_CUR, SEP
from .borrow import borrow
from .automaton import extend, extend_many, match_step, recent_occurrences, self_cursor, slen, slink
from .cursors import cursor_entry
from .analogy import live, predicted
from .opening import (agreed_opening, awaiting_first, newest_opening, only_root, opening_token, recent_openings,
                      start_splice)
from .pointer import (AGREE, backmatch, candidate, example_run, pointer_spacing, resume_after_swap, resume_at_break,
                      template_run)
from .trie import alpha_at, insert, insert_seq, insert_spliced, insert_spliced3, select
from .lists import ITEM, list_draft, separated
from .spacing import spaced
from .template import fires, resume
from .value_end import POINTER_VOTES, template_ahead, value_end

BRK_W = 4.0  # weight of the input's continuation at a break (flat: 2 to 6 give the same tau)

# when nothing matches, the input after a replaced span as long as the output's own tokens since the break, and
# after one and two input tokens more (a word the tokenizer splits differently: "ret|re|ived" -> " retrieved")
SWAP_W = (4.0, 2.0, 2.0)

MAX_TIERS = 1 + N_CUR
N_PARAMS = 19  # length of propose_one's params
MAX_BACKOFF = 4
SPACED_L = 8  # a match of the request's own text this short may go on one token back with that token spaced
              # (3: multi_turn tree / chain 6 / 8 steps more, templated 7 fewer / 9 more)


@njit(cache=True)
def add_document(B, slot, tokens):
    """Appends one document (then SEP) to automaton `slot` (memory segments, corpora)."""
    b = extend_many(B[slot], tokens)
    b = extend(b, SEP)
    B[slot] = b


@njit(cache=True, inline="always")
def _pow(x, power):
    """x ** power, without libm's pow for the default power of 2 (it showed in profiles)."""
    return x * x if power == 2.0 else x ** power


@njit(cache=True, inline="always")
def _predict(b, e, m, r, w, depth, ends, t_tok, t_par, t_child, t_sib, t_w, nn):
    """A draft's text, the m tokens after end position e and then the template from position r on (a copy of
    an earlier object of the output, or of the template it copied: m = 0; a value's fork back to the template
    where it ends: value_end.py), meets the start of a value the analogy placed (analogy.predicted): the next
    record's value there, then the template after it, weighs w."""
    if w <= 0.0 or b[H_VE] == 0 or m >= depth:  # (nothing is kept before values copied into a template were seen)
        return nn
    if 0 < b[H_CP] <= b[H_PE]:
        # the pointer copies the input, a record's value or list: it drafts that (a predicted value took the next
        # record's item where a list's next item was due: test_lists)
        return nn
    pm, pr = predicted(b, r - 1, depth - m)
    if pm < 0:
        return nn
    m3, r3 = value_end(b, pr - 1, r + pm - 1, depth - m - pm, 1) if ends else (-1, -1)
    if m3 < 0:
        m3, r3 = depth, 0
    return insert_spliced3(b, e, m, r, pm, pr, m3, r3, w, depth, t_tok, t_par, t_child, t_sib, t_w, nn)


@njit(cache=True, inline="always")
def _add_source(src, ns, tier, v, L, k):
    """Records source ns: state v of a tier's automaton, matched length L, k occurrences read."""
    src[4 * ns] = tier
    src[4 * ns + 1] = v
    src[4 * ns + 2] = L
    src[4 * ns + 3] = k


@njit(cache=True, inline="always")
def _spaced_state(b, L, sp):
    """The request's own text (b) matched its last L tokens; the token before them, spelled with a leading
    space, and them: a value's first token as a "Key: value" line of the input spells it. The output writes
    '"', 'a', '80', 'd' of "SHA256: a80d..." (' a', '80', 'd' there): after 'a', '80' the own text matched '80'
    alone, all over the hashes, so the draft was another record's hash (or an example's) until a third token
    of the value was written; ' a', '80' occurs once, in the record. Returns the state of that context (length
    L + 1), or -1 where it does not occur. With L = 0 (nothing matched: a token the text never held before), the
    context is that last token spelled with a leading space (propose_one, whenever copy_weight > 0).

    With L > 0 (_build_trie), only once values copied into a template were seen (a value end learned:
    value_end.py), as the copy pointer's spacing is. Tau at budget 16, tree / chain: templated 7.038 / 6.952 ->
    7.104 / 7.049 (20,564 / 20,820 -> 20,375 / 20,534 steps), multi_turn 8.930 / 8.702 -> 8.985 / 8.781 (4,957 /
    5,087 -> 4,927 / 5,041), completion 4,965 / 5,890 -> 4,968 / 5,884 steps, code_edit the same, model: workloads
    within 2 steps (templated 865 / 903 -> 864 / 901)."""
    n = b[H_N_TX]
    if n - L - 1 < 0:
        return -1
    ot = b[H_OFF_TX]
    s = spaced(sp, b[ot + n - L - 1])
    if s < 0:
        return -1
    v, m = match_step(b, 0, 0, s)
    for q in range(n - L, n):
        v, m = match_step(b, v, m, b[ot + q])
    return v if m == L + 1 else -1


@njit(cache=True, inline="always")
def _build_trie(B, tb, tv, tl, nt, depth, occ, backoff_knobs, power, alpha0, half_len, self_w, norm, copy_w, an_w,
                ends, swap_slot, t_tok, t_par, t_child, t_sib, t_w, occbuf, src, spare, own, keys, nk, tmpl_w, sp):
    """Merges continuations of every tier's matched suffix into a weighted trie rooted at node 0.

    Per tier, the longest match and then up to `backoff` shorter ones (suffix-link ancestors: the PPM idea, so a
    tree also covers what follows the shorter context) each contribute up to `occ` occurrences; as in PPM, a context
    seen `occ` times or more needs no shorter one (its newest occurrences are mostly the same places again; stopping
    there costs no tokens per step on the workloads and saves up to a third of a proposal). A shorter context is
    read only while it is at least `bratio` of the longest match's length (it weighs (L / Lmax)^power: 1% at a
    tenth; reading it cost a fifth of a proposal for the same tau), and only `bdepth` tokens after each of its
    occurrences (deeper, its weight never decides a draft; backoff_knobs is (backoff, bratio, bdepth, pred_w),
    pred_w weighing predicted values: _predict). A tier whose longest match only ends at the end of its own text
    backs off first. An occurrence weighs (L / Lmax)^power. With copy_w > 0 (tier 0 is the request's own text), the
    place its copy pointer points at weighs copy_w (l / c)^power more, for an agreement of length l <= c = min(Lmax,
    AGREE) there (first, when it is not among the occurrences read), and the place after the break where a long copy
    of the input stopped weighs BRK_W. With an_w > 0 (tier 0 is the request's own text), a live analogous place
    (analogy.py) adds an_w there. With `ends`, a value copied from the input forks back to the template where it is
    predicted to end (value_end.py): the pointer's weight goes to that fork (once the pair has two votes), the
    analogy's to both; in a list's item (lists.py), the pointer's place (and the occurrences read there) drafts the next
    items instead, and so do each input occurrence of the longest match and the analogy's place where the pointer drafts
    no list (the analogy's list replaces its value fork and plain copy). When nothing matches and swap_slot is the
    request's own automaton, the input after the span the output's new tokens replaced (pointer.resume_after_swap) is
    drafted, weighing SWAP_W. keys[1:1 + 2 * nk] name (slot, key state) of the other automata whose match broke off at a
    key a few tokens ago: what followed the value's end there weighs tmpl_w, split over the occurrences read
    (template.py). Where the request's own text matches only its last L <= SPACED_L tokens (values seen), the
    token before them spelled with a leading space and them are a context one token longer (_spaced_state):
    tier 0's longest, its exact match the next shorter. sp: spacing.py. Returns (nodes, alpha).
    """
    backoff, bratio, bdepth, pred_w = backoff_knobs
    t_tok[0] = -1
    t_par[0] = -1
    t_child[0] = -1
    t_sib[0] = -1
    t_w[0] = 0.0
    nn = 1
    for q in range(nk):  # templates resumed after a value (template.py)
        nn = resume(own, borrow(B[keys[1 + 2 * q]]), keys[2 + 2 * q], tmpl_w, occ, depth, t_tok, t_par, t_child,
                    t_sib, t_w, nn, occbuf, spare)
    ns = 0  # sources: (tier, state, length, occurrences)
    Lmax = 0
    b0 = own  # tier 0's automaton (a typed List lookup costs ~20 ns: once each)
    for i in range(nt):
        b = borrow(B[tb[i]])
        if i == 0:
            b0 = b
        v = tv[i]
        L = tl[i]
        levels = 0
        if i == 0 and ends and copy_w > 0.0 and b[H_VE] != 0 and 0 < L <= SPACED_L:
            sv = _spaced_state(b, L, sp)
            k = recent_occurrences(b, sv, occbuf[ns * occ:(ns + 1) * occ], occ, spare) if sv >= 0 else 0
            if k > 0:
                _add_source(src, ns, 0, sv, L + 1, k)
                ns += 1
                levels = 1
                Lmax = L + 1
                if k == occ:
                    L = 0
        while L > 0 and levels <= backoff:
            if levels > 0 and L < bratio * Lmax:
                break  # a context this much shorter weighs (L / Lmax)^power: next to nothing, for a costly read
            k = recent_occurrences(b, v, occbuf[ns * occ:(ns + 1) * occ], occ, spare)
            if k > 0:
                _add_source(src, ns, i, v, L, k)
                ns += 1
                levels += 1
                Lmax = max(Lmax, L)
                if k == occ:
                    break  # well attested: no escape to a shorter context
            v = slink(b, v)
            L = slen(b, v)
    if Lmax == 0:
        if swap_slot >= 0:  # nothing matches (the output wrote a token never seen): it may have replaced input
            sb = borrow(B[swap_slot])
            if sb[H_VE] == 0:  # (in a filled-in template a value, not a replacement, is what is never seen)
                for extra in range(len(SWAP_W)):
                    se = resume_after_swap(sb, extra)
                    if se >= 0:
                        nn = insert(sb, se, SWAP_W[extra], depth, t_tok, t_par, t_child, t_sib, t_w, nn)
        # a live analogy, or the copy pointer resumed at the token's spelling with a leading space
        # (pointer.track), still drafts
        if not (an_w > 0.0 and live(own) >= 0) and not (copy_w > 0.0 and candidate(own, pointer_spacing(own, sp)) >= 0):
            return nn, alpha_at(0, alpha0, half_len)
    b = b0
    ce = -1
    cw = 0.0
    lce = -1  # where the pointer's list draft (spare[:lk]) starts: occurrences there draft it too
    lk = 0
    # the template a value copied from the input was left (pointer.template_run): both the pointer's place and
    # the input occurrences read fork back to it where the value ends
    pr0 = template_run(b0) if ends and copy_w > 0.0 else -1
    # or, for the longest match's occurrences where that finds no end, the pointer's own run, when it copies
    # a prompt's example object (example_run; asked only then: the check scans the run's text)
    ex0 = example_run(b0) if ends and copy_w > 0.0 else -1
    exq = 0  # whether ex0's text is a template, not a record's value (template_ahead): 0 = not asked yet
    psp = pointer_spacing(b, sp)
    # an input occurrence of the longest match may copy a list's item too, where the pointer drafts no list: the
    # pointer is often on an earlier object's list, or lost after an item's first tokens (lists.py)
    item_lists = ends and copy_w > 0.0 and b[H_VE] != 0
    if copy_w > 0.0:
        ce = candidate(b, psp)
        # where a long copy of the input broke off (pointer.py), unless values copied into a template were
        # seen: there the value ends, not the break, say where the input goes on (templated and multi_turn
        # lose 1.5% with it)
        be = resume_at_break(b, sp) if b[H_VE] == 0 else -1
        if be >= 0 and be != ce:
            nn = insert(b, be, BRK_W, depth, t_tok, t_par, t_child, t_sib, t_w, nn)
        if ce >= 0:
            cap = max(1, min(Lmax, AGREE))
            cw = copy_w * _pow(backmatch(b, ce, cap, psp) / cap, power)
            if item_lists:  # a list's item: the next items after it
                k = list_draft(b, ce, b[H_RUN], psp, POINTER_VOTES, spare, depth)
                # the pointer found the input only at the item's last tokens (a run of 0 at "libatk1.0-0" after
                # a jump): where its place is one of tier 0's longest match's, that match is the run (multi_turn /
                # templated steps, tree / chain: 4,897 / 4,995 -> 4,891 / 4,991, 20,240 / 20,391 -> 20,193 / 20,340)
                if k == 0 and ns > 0 and src[0] == 0 and src[2] - 1 > b[H_RUN]:
                    for j in range(src[3]):
                        if occbuf[j] == ce:
                            k = list_draft(b, ce, src[2] - 1, psp, POINTER_VOTES, spare, depth)
                            break
                if k > 0:
                    nn = insert_seq(spare, k, cw, t_tok, t_par, t_child, t_sib, t_w, nn)
                    lce = ce
                    lk = k
                    ce = -1
                    cw = 0.0
            if pr0 >= 0 and ce >= 0:  # a value copied from the input, the template before it
                m, r = value_end(b, ce, pr0, depth, POINTER_VOTES)
                if m >= 0:  # the pointer's weight goes to the template where the value ends
                    nn = insert_spliced(b, ce, m, r, cw, depth, t_tok, t_par, t_child, t_sib, t_w, nn)
                    ce = -1
                    cw = 0.0
        if ce >= 0:
            dup = False  # mostly the pointer's place is one of the occurrences read: it adds its weight there
            for q in range(ns):
                if src[4 * q] != 0:
                    break
                for j in range(src[4 * q + 3]):
                    dup = dup or occbuf[q * occ + j] == ce
            if not dup:
                nn = insert(b, ce, cw, depth, t_tok, t_par, t_child, t_sib, t_w, nn)
                ce = -1
    # every input occurrence read forks at its predicted value end too, while the copy is in a value (the
    # pointer's current run copies the input, the run before it is the template: template_run): the pointer's own
    # place is often not among them, or not the value being written (templated / multi_turn tau, tree / chain:
    # 6.270 / 5.901 -> 6.302 / 5.955, 8.040 / 7.660 -> 8.057 / 7.683; code_edit 10.466 / 9.936 -> 10.464 / 9.934)
    # whether the longest match's input occurrences may copy a list's item: the text before the match holds a
    # separator (asked once: a list draft tried at each of them cost 3-5% of a step where none could be one)
    lv = item_lists and lk == 0 and ns > 0 and src[0] == 0 and separated(b0, src[2] - 1, POINTER_VOTES)
    tier = 0
    spl = -1  # where the first occurrence's branch goes back to the template (analogy.follow reads it)
    spl_m = 0
    for q in range(ns):
        if src[4 * q] != tier:  # sources come grouped by tier; a typed List lookup costs ~20 ns, so once each
            tier = src[4 * q]
            b = borrow(B[tb[tier]])
        w = _pow(src[4 * q + 2] / Lmax, power)
        dq = depth if q == 0 or src[4 * q - 4] != tier else min(depth, bdepth)
        if tier == 0:
            w *= self_w  # tier 0 is the request's own text when it matched
        if norm:
            w /= src[4 * q + 3]
        for j in range(src[4 * q + 3]):
            x = occbuf[q * occ + j]
            if tier == 0 and x == lce:
                nn = insert_seq(spare, lk, w, t_tok, t_par, t_child, t_sib, t_w, nn)
            elif tier == 0 and x == ce:
                nn = insert(b, x, w + cw, depth, t_tok, t_par, t_child, t_sib, t_w, nn)
                if an_w > 0.0 and q == 0 and lk == 0:
                    nn = _predict(b, x, 0, x + 1, pred_w * (w + cw), depth, ends, t_tok, t_par, t_child, t_sib, t_w,
                                  nn)
                ce = -1  # a shorter context's occurrences repeat the longer one's: count it once
            else:
                m, r = -1, -1
                # the list drafted from this occurrence, its match's length taken for the run; tried before the
                # value's fork, which at an item's last token forks to the template's next key ('", "version"')
                # where the record's next item follows (multi_turn / templated steps, tree / chain: 4,905 / 5,017
                # -> 4,897 / 4,995, 20,332 / 20,486 -> 20,240 / 20,391; the rest the same)
                k = 0
                if lv and q == 0 and x < b[H_PE]:
                    k = list_draft(b, x, src[2] - 1, psp, POINTER_VOTES, spare, depth)
                # the first occurrence's fork is still found where its list is drafted: analogy.follow reads it
                if tier == 0 and x < b[H_PE] and (k == 0 or j == 0):
                    if pr0 >= 0:
                        m, r = value_end(b, x, pr0, depth, POINTER_VOTES)
                    if m < 0 and ex0 >= 0 and q == 0 and x != ex0:  # the pointer copies the example's template
                        if exq == 0:
                            exq = 1 if template_ahead(b, ex0, POINTER_VOTES) else -1
                        if exq > 0:
                            m, r = value_end(b, x, ex0, depth, POINTER_VOTES)
                if m >= 0 and q == 0 and j == 0:
                    spl = r
                    spl_m = m
                if k > 0:
                    nn = insert_seq(spare, k, w, t_tok, t_par, t_child, t_sib, t_w, nn)
                elif m >= 0:
                    nn = insert_spliced(b, x, m, r, w, depth, t_tok, t_par, t_child, t_sib, t_w, nn)
                else:
                    nn = insert(b, x, w, dq, t_tok, t_par, t_child, t_sib, t_w, nn)
                    if an_w > 0.0 and tier == 0 and q == 0 and lk == 0:  # an earlier object, or its template
                        nn = _predict(b, x, 0, x + 1, pred_w * w, dq, ends, t_tok, t_par, t_child, t_sib, t_w,
                                      nn)
    alpha = alpha_at(Lmax, alpha0, half_len)
    if an_w > 0.0:
        b = b0
        b[H_AN + 1] = occbuf[0] + 1 if ns > 0 and src[0] == 0 else 0  # where this draft copies from (follow)
        b[H_SPL] = spl + 1 if ns > 0 and src[0] == 0 else 0
        b[H_SPLM] = spl_m
        a = live(b)
        if a >= 0:
            m, r = value_end(b, a, b[H_AN + 2] - 1, depth, 1) if ends and b[H_AN + 3] == 1 else (-1, -1)
            if b[H_AN + 3] == 1:  # the analogy's own fork, not the first source's (analogy.follow)
                b[H_SPL] = r + 1 if m >= 0 else 0
                b[H_SPLM] = m
            # a list's item copied from the analogy's place: the list, instead of the value's fork back to the
            # template (lists.py; multi_turn / templated tau, tree / chain: 8.891 / 8.661 -> 8.909 / 8.695,
            # 6.943 / 6.860 -> 6.952 / 6.885)
            k = 0
            if item_lists and lk == 0 and a < b[H_PE]:
                g = backmatch(b, a, ITEM, psp)
                if g > 0 and separated(b, g - 1, POINTER_VOTES):
                    k = list_draft(b, a, g - 1, psp, POINTER_VOTES, spare, depth)
            if k > 0:
                nn = insert_seq(spare, k, an_w, t_tok, t_par, t_child, t_sib, t_w, nn)
            elif m >= 0:  # a value: both where it is predicted to end and where the input goes on
                nn = insert_spliced(b, a, m, r, an_w, depth, t_tok, t_par, t_child, t_sib, t_w, nn)
                # and, where the template after the value reaches the next value, the next record's (the value
                # after that was a break each object otherwise: templated / multi_turn tau, tree / chain, 6.899 /
                # 6.666 -> 6.919 / 6.709, 8.801 / 8.528 -> 8.804 / 8.538)
                nn = _predict(b, a, m, r, pred_w * an_w, depth, ends, t_tok, t_par, t_child, t_sib, t_w, nn)
            if k == 0:
                nn = insert(b, a, an_w, depth, t_tok, t_par, t_child, t_sib, t_w, nn)
            if b[H_AN + 3] == 0 and lk == 0:  # the template: where its next value was, the next record's
                nn = _predict(b, a, 0, a + 1, pred_w * an_w, depth, ends, t_tok, t_par, t_child, t_sib, t_w, nn)
    return nn, alpha


@njit(cache=True)
def propose_one(B, slot, ext, params, out_tok, out_par, out_prob, scratch_i, scratch_f, sp):
    """Draft for request `slot` into out_* (each >= budget long); returns the number of nodes. sp: the
    tokens' spellings with a leading space (spacing.py).

    params: float64 [budget, tree, occurrences, min_prob, alpha, half_len, window, backoff, power, self_weight,
    normalize, copy_weight, analogy_weight, value_ends, response_start, template_weight, backoff_ratio,
    backoff_depth]."""
    B = borrow(B)
    ext = borrow(ext)
    params = borrow(params)
    sp = borrow(sp)
    budget = int(params[0])
    tree = params[1] != 0
    occ = int(params[2])
    min_prob = params[3]
    alpha0 = params[4]
    half_len = params[5]
    window = int(params[6])
    backoff = int(params[7])
    power = params[8]
    self_w = params[9]
    norm = params[10] != 0
    copy_w = params[11]
    an_w = params[12]
    ends = params[13] != 0
    tiers = borrow(scratch_i[8])
    tb = tiers[0:MAX_TIERS]
    tv = tiers[MAX_TIERS:2 * MAX_TIERS]
    tl = tiers[2 * MAX_TIERS:3 * MAX_TIERS]
    src = tiers[3 * MAX_TIERS:]
    spine_tok = borrow(scratch_i[9])
    backoff = min(backoff, MAX_BACKOFF)
    # backoff, backoff_ratio, backoff_depth, and predict_weight (in the tuple: _build_trie takes 30 arguments)
    backoff_knobs = (backoff, params[16], int(params[17]), params[18])
    nt = 0
    b = borrow(B[slot])
    v, L = self_cursor(b)
    # a token never seen (nothing matched): its spelling with a leading space is the context, where the text
    # holds it. A value copied from a "Key: value" line starts with the line's spelling (" Ring" of "Description:
    # Ring middleware that ..."), the output writes it without the space ('"summary": "Ring'), and the draft was
    # empty at every such value's first token. Tau at budget 16, tree / chain: templated 7.188 / 7.157 -> 7.267 /
    # 7.219 (20,136 / 20,224 -> 19,916 / 20,049 steps), multi_turn 9.054 / 8.885 -> 9.118 / 8.912 (4,889 / 4,982
    # -> 4,855 / 4,967), completion 4,966 / 5,886 -> 4,937 / 5,861 steps, code_edit 5,679 / 5,983 -> 5,673 / 5,980
    if L == 0 and params[11] > 0.0:
        sv = _spaced_state(b, 0, sp)
        if sv >= 0:
            v = sv
            L = 1
    # a token never seen still has a live analogy, or a copy pointer, when the input spells it with a leading
    # space (spacing.py; pointer.track): the request's own tier stays, matching nothing, so that they draft
    own = L > 0 or (params[12] > 0.0 and live(b) >= 0) or \
        (params[11] > 0.0 and b[H_VE] != 0 and candidate(b, pointer_spacing(b, sp)) >= 0)
    keys = borrow(scratch_i[4])  # (count, then per tier: slot, key state) of templates to resume
    keys[0] = 0
    tmpl_w = params[15]
    if own:
        tb[nt] = slot
        tv[nt] = v if L > 0 else 0
        tl[nt] = L
        nt += 1
    for j in range(min(ext.shape[1], N_CUR)):
        if ext[1, j] == -1:
            continue
        o = H_CUR + CUR_W * cursor_entry(B, b, j, ext, window)
        if tmpl_w > 0.0 and fires(b, b[o + 3], b[o + 5]):
            keys[1 + 2 * keys[0]] = ext[0, j]
            keys[2 + 2 * keys[0]] = b[o + 4]
            keys[0] += 1
        if b[o + 3] > 0:
            tb[nt] = ext[0, j]
            tv[nt] = b[o + 2]
            tl[nt] = b[o + 3]
            nt += 1
    t_tok = borrow(scratch_i[0])
    t_par = borrow(scratch_i[1])
    t_child = borrow(scratch_i[2])
    t_sib = borrow(scratch_i[3])
    t_out = borrow(scratch_i[5])
    cand = borrow(scratch_i[6])
    occbuf = borrow(scratch_i[7])  # occ entries per source: T >= occ * MAX_TIERS * (1 + MAX_BACKOFF)
    t_w = borrow(scratch_f[0])
    t_prob = borrow(scratch_f[1])
    n_out = 0
    attach = -1
    base = 1.0
    own = nt > 0 and tb[0] == slot  # tier 0 is the request's own text (it matched); rounds keep the tiers
    opening = opening_token(B, b, slot, tb, tv, tl, nt, occbuf, cand) if params[14] != 0 else -1
    # no tier told how responses open: the newest memory segment (ext column 0, when memory is on) recalls
    # how its newest responses did
    recall = params[14] != 0 and opening == -1 and awaiting_first(b) and ext.shape[1] > 0 and ext[1, 0] != -1
    if recall:  # the newest response's first token opens this one too
        opening = newest_opening(borrow(B[ext[0, 0]]))
    while n_out < budget:
        left = budget - n_out
        first = attach == -1
        # a response's first token follows earlier responses rather than the prompt's own continuation, so the
        # request's text gets no extra weight there (its copy comes in through opening.start_splice)
        mine = own and not (opening >= 0 and first)
        sw = self_w if mine else 1.0
        cw = copy_w if mine and first else 0.0
        aw = an_w if mine and first else 0.0
        swap = slot if first and copy_w > 0.0 else -1
        nk = keys[0] if first else 0
        nn, alpha = _build_trie(B, tb, tv, tl, nt, left, occ, backoff_knobs, power, alpha0, half_len, sw, norm, cw, aw,
                                ends, swap, t_tok, t_par, t_child, t_sib, t_w, occbuf, src, cand, b, keys, nk,
                                tmpl_w, sp)
        if recall and first:
            nn = recent_openings(borrow(B[ext[0, 0]]), left, t_tok, t_par, t_child, t_sib, t_w, nn)
        if nn == 1:
            break
        if opening >= 0 and first:
            nn = start_splice(b, opening, occ, self_w, left, t_tok, t_par, t_child, t_sib, t_w, occbuf, cand,
                               nn)
            # the newest responses all opened alike: so does this one (code_edit / multi_turn tree tau
            # 10.458 / 8.066 -> 10.471 / 8.094)
            if ext.shape[1] > 0 and ext[1, 0] != -1 and agreed_opening(borrow(B[ext[0, 0]]), opening):
                only_root(opening, t_tok, t_child, t_sib, t_w)
        start = n_out
        n_out, leaf = select(nn, alpha, left, tree, min_prob, base, attach, t_tok, t_par, t_child, t_sib,
                              t_w, t_prob, t_out, out_tok, out_par, out_prob, n_out, cand)
        if leaf == 0 or t_child[leaf] != -1 or n_out == start or n_out >= budget:
            break
        # the best path ran out of recorded text: continue it from where it leads
        ns = 0
        x = leaf
        while x != 0:
            spine_tok[ns] = t_tok[x]
            ns += 1
            x = t_par[x]
        for i in range(nt):
            vv = tv[i]
            ll = tl[i]
            eb = borrow(B[tb[i]])
            for q in range(ns - 1, -1, -1):
                vv, ll = match_step(eb, vv, ll, spine_tok[q])
            tv[i] = vv
            tl[i] = ll
        attach = t_out[leaf]
        base = t_prob[leaf]
        if base < min_prob:
            break
    return n_out
