"""The copy pointer: where in its own text a request is copying from.

Outputs that edit or fill in their input (code edits, forms, templates) copy it in runs, with changes in
between. After a change the context's longest match is often short and occurs all over the text ("\\n",
")\\n", '",\\n    "'), and its most recent occurrences are in the output just written, while the copy usually
resumes right where the last run broke off. A filled-in template alternates between two runs: the template
(keys, punctuation) and the filled-in values (copied from elsewhere in the input). So the pointer remembers
two places, the current run and the one before it:

    append: the pointer follows the copied tokens; after a change, the run whose next WINDOW tokens hold a
            place where the context's end agrees again (NEED tokens) becomes current; when the context
            matches some other place at length ANCHOR or more (the copy jumped), that place becomes current.
    propose: the current run's place, when it holds the context's last token, adds copy_weight (l / c)^power
            to the continuation there, l being how far back it agrees with the context, at most
            c = min(Lmax, AGREE) (propose.py). When the current run copies the input and the one before it
            is the template (the output's own text, or an example in the input once value ends are known:
            template_run), the copy is a value: its draft goes back to the template where the value is
            predicted to end (value_end.py). A value copied from another place in the input than the
            current run, when that run is in the input, may also go back to the current run: an example
            object the run copies while the value agrees with the example's (example_run).
    break:  when a run that copied LONG or more input tokens stops, the position where it stopped is kept
            apart from the two runs (an inserted line wanders through places that match it for a few tokens
            and moves both runs away). Until the copy comes back to it, a proposal also drafts the input from
            the first place in the WINDOW from there that holds the context's last token (propose.py): that
            is where the input goes on after an inserted line or a replaced span. A token never seen (nothing
            matches) ends a run too; right after it, the input after the replaced span is drafted instead
            (resume_after_swap).

With a spacing map (spacing.py), once a value end was seen (a template is being filled: value_end.py), a text
token agrees with its spelling with a leading space wherever the pointer compares, and going back from the
output's own text to the input run before it (the input a value came from) may start at that spelling of the
text's last token alone: a list's next item ('", "lib' after "libc6 (>= 2.14), lib"). A token never seen (nothing
matches) there is mostly a value's first token that the input holds only so spelled: a run that copies the input
then resumes at it (_resume_unseen), where the places used to stay and the draft was empty.

Stored in the request automaton's header (H_CP, H_CP + 1, H_BRK: 1 + a position, 0 = none; H_RUN: tokens
the current run copied), so it travels with the buffer (growth copies the header) and needs no state outside it.
"""
import numpy as np
from numba import njit

from ._layout import H_BRK, H_CP, H_N_TX, H_OFF_TX, H_PE, H_RUN, H_VE, SEP
from .automaton import occurrences, self_cursor
from .spacing import same, spaced
from .substitute import SPAN, forget, learn, mapped
from .value_end import learn_end

WINDOW = 64  # tokens searched ahead of a run's place for where it resumes
NEED = 2     # agreement (capped at the longest match) that resumes a run
ANCHOR = 4   # a match this long elsewhere means the copy jumped there
LONG = 8     # a run that copied this many input tokens leaves a break when it stops
SWAP = 2     # output tokens after a break that may have replaced as many input tokens
AGREE = 64   # agreement at the pointer is measured up to this many tokens: a bound on a proposal's cost that
             # does not grow with the context (a long copy of repetitive text matches for thousands of tokens)


@njit(cache=True, inline="always")
def backmatch(b, e, cap, sp):
    """How many tokens (at most cap) agree going back from position e and from the end of the text (input
    tokens as the output writes them: substitute.py; a token and its spelling with a leading space agree:
    spacing.py, sp)."""
    ot = b[H_OFF_TX]
    last = ot + b[H_N_TX] - 1
    k = 0
    while k < cap and k <= e and b[last - k] != SEP and same(sp, mapped(b, e - k, b[ot + e - k]), b[last - k]):
        k += 1
    return k


@njit(cache=True, inline="always")
def _resume(b, nxt, need, end, sp, spaced_start):
    """The first position before `end` in the WINDOW from run place nxt - 1 that holds the text's last token,
    agrees with the text's end over `need` tokens and is followed by text; -1 when there is none. With
    spaced_start, an input position holding the token's spelling with a leading space is enough by itself
    (the next item of a list the output writes with other separators: '", "lib' after ' (>= 2.14), lib')."""
    ot = b[H_OFF_TX]
    n = b[H_N_TX]
    pe = b[H_PE]
    t = b[ot + n - 1]
    ts = spaced(sp, t) if spaced_start else -1
    for e in range(nxt - 1, min(nxt - 1 + WINDOW, end, n - 1)):
        x = mapped(b, e, b[ot + e])
        if b[ot + e + 1] == SEP:
            continue
        if x == t and backmatch(b, e, need, sp) >= need:
            return e
        if x == ts and ts >= 0 and e < pe:
            return e
    return -1


@njit(cache=True, inline="always")
def pointer_spacing(b, sp):
    """The spacing map the pointer compares with: sp once a value end was seen (a template is being filled),
    else none, so tokens compare exactly (code_edit lost 0.1% tree when a word and its spelling with a leading
    space agreed everywhere)."""
    return sp if b[H_VE] != 0 else sp[:0]


@njit(cache=True, inline="always")
def template_run(b):
    """The place of the run before the current one when the current run copies a value from the input and
    that run is the template it was filled into, else -1. The template is the output's own text, or, once
    value ends were seen (a template is being filled), another place in the input: a response's first object
    copies its template from an example object in the prompt (templated / multi_turn tau, tree / chain:
    6.581 / 6.309 -> 6.722 / 6.452, 8.458 / 8.111 -> 8.538 / 8.236; code_edit and completion unchanged)."""
    c = b[H_CP] - 1
    pr = b[H_CP + 1] - 1
    pe = b[H_PE]
    if c < 0 or c >= pe or pr < 0 or pr == c:
        return -1
    return pr if pr >= pe or b[H_VE] != 0 else -1


@njit(cache=True, inline="always")
def example_run(b):
    """The current run's place when it is in the input and value ends were seen, else -1: the template a value
    copied from elsewhere in the input may go back to. A response's first object copies its keys from the
    prompt's example object, and the run stays there while the value's first tokens agree with the example's
    ('"installed_size_kib": 9' of 98, where the record has 92). The value then comes from the record, while
    template_run takes the current run for the value and the output for its template; where that finds no
    end, the record's value (an occurrence of the longest match) goes back to the example's template, once
    value_end.template_ahead tells the run's text is a template, not a record (propose.py). templated /
    multi_turn tau, tree / chain: 6.722 / 6.452 -> 6.735 / 6.488, 8.538 / 8.236 -> 8.559 / 8.271; trying
    the example first, or only one of the two per proposal, gave less (8.549 / 8.265 and 8.538 / 8.239)."""
    c = b[H_CP] - 1
    if c < 0 or c >= b[H_PE] or b[H_VE] == 0:
        return -1
    return c


@njit(cache=True, inline="always")
def candidate(b, sp):
    """Where the copy most likely continues from: the current run's place when it holds the context's last
    token (or its spelling with a leading space) and is followed by text (track() keeps it so), else -1."""
    e = b[H_CP] - 1
    if e < 0:
        return -1
    ot = b[H_OFF_TX]
    n = b[H_N_TX]
    if e + 1 < n and same(sp, mapped(b, e, b[ot + e]), b[ot + n - 1]) and b[ot + e + 1] != SEP:
        return e
    return -1


@njit(cache=True, inline="always")
def agree(b, a, added):
    """How many of the `added` tokens just appended equal those after end position a."""
    ot = b[H_OFF_TX]
    n = b[H_N_TX]
    k = 0
    while k < added and a + 1 + k < n - added and b[ot + a + 1 + k] == b[ot + n - added + k]:
        k += 1
    return k


@njit(cache=True, inline="always")
def _value_ended(b, nxt, added, j, known):
    """The copy leaves the current run (place nxt - 1), back to the previous one or ahead in the input: when
    the previous run is the output's own text (a value copied from the input ended, the template resumes),
    the token where the input and the `added` new tokens first differ (after j = agree(b, nxt - 1, added) of
    them) is learned as a value end (with `known`, only a pair already known: value_end.learn_end)."""
    pe = b[H_PE]
    if j >= added or nxt <= 0 or nxt - 1 >= pe or b[H_CP + 1] - 1 < pe:
        return
    learn_end(b, nxt + j, b[b[H_OFF_TX] + b[H_N_TX] - added + j], known)


@njit(cache=True, inline="always")
def _heal(b, e):
    """The copy is at e: a break it has come back to (within WINDOW) is healed."""
    brk = b[H_BRK] - 1
    if brk >= 0 and brk - 1 <= e < brk - 1 + WINDOW:
        b[H_BRK] = 0


@njit(cache=True, inline="always")
def resume_at_break(b, sp):
    """Where the input goes on after the last long copy of it broke off (an insertion or a replacement in
    the output): the first place in the WINDOW from the break that holds the text's last token and is
    followed by input; -1 when there is none."""
    brk = b[H_BRK] - 1  # >= 1: a break lies after a copied token
    if brk < 0:
        return -1
    return _resume(b, brk, 0, b[H_PE] - 1, sp, False)


@njit(cache=True, inline="always")
def resume_after_swap(b, extra):
    """Where the input goes on when the output wrote tokens of its own in place of the input's at the break
    (a fixed typo, a renamed word), when nothing matches the context (propose.py): the output's last
    g <= SWAP tokens follow the copy's last two tokens, and the input goes on after g + extra replaced
    tokens (extra = 0: as many as the output wrote; 1, 2: a word the tokenizer split into more pieces,
    "ret|re|ived" -> " retrieved"). Returns the end position to continue after, or -1."""
    brk = b[H_BRK] - 1
    if brk < 2:
        return -1
    ot = b[H_OFF_TX]
    n = b[H_N_TX]
    pe = b[H_PE]
    for g in range(1, SWAP + 1):
        j = n - 1 - g  # the text's last copied token
        if j < 1:
            break
        if b[ot + j] == mapped(b, brk - 1, b[ot + brk - 1]) and b[ot + j - 1] == mapped(b, brk - 2, b[ot + brk - 2]):
            e = brk - 1 + g + extra
            if e + 1 < pe and b[ot + e + 1] != SEP:
                return e
            return -1
    return -1


@njit(cache=True, inline="always")
def _break_off(b, nxt, added):
    """The copy at place nxt - 1 did not go on with the `added` tokens: when it was a long copy of the input,
    the break is kept (H_BRK: 1 + the first input position the output did not copy). Returns whether."""
    if nxt - 1 < b[H_PE] and b[H_RUN] >= LONG:
        b[H_BRK] = nxt + agree(b, nxt - 1, added) + 1
        return True
    return False


@njit(cache=True, inline="always")
def _move(b, k, e, nxt, added):
    """Run k (0: the current one, at place nxt - 1; 1: the one before it) resumes after end position e as the
    current run; going back to the one before it, the current one becomes that."""
    j = agree(b, nxt - 1, added)
    if k == 1:
        _value_ended(b, nxt, added, j, False)
        b[H_CP + 1] = nxt
    elif e > nxt + j:
        # the copy skipped the rest of the input's item to its next one: a list written with its own
        # separators, accepted past the item's end ('", "libglib3.0-c' for ' (>= 2.74.5), libglib3.0-c'), ended
        # a value there too. Only a return to the template voted for it before: a list drafted well then
        # starved its own pair of votes, which then was not carried to the next request
        _value_ended(b, nxt, added, j, True)
    b[H_RUN] = 0
    b[H_CP] = e + 1


@njit(cache=True, inline="always")
def _resume_unseen(b, nxt, added, sp):
    """The text's last token was never seen (nothing matches) while a template is filled: mostly a value's or
    a list item's first token, which the input holds only spelled with a leading space (' q' of ", qemu-",
    written '", "q'). A run that copies the input (the current one first) resumes at the first place in the
    WINDOW from it that holds that spelling (sp)."""
    pe = b[H_PE]
    for k in range(2):
        if 0 < b[H_CP + k] <= pe:
            e = _resume(b, b[H_CP + k], 1, b[H_N_TX] - 1, sp, True)
            if e >= 0:
                _move(b, k, e, nxt, added)
                return


@njit(cache=True)
def track(b, added, sp):
    """Moves request b's pointer after `added` tokens were appended to its text (sp: spacing.py)."""
    v, L = self_cursor(b)
    sp = pointer_spacing(b, sp)
    nxt = b[H_CP]
    if L == 0:  # nothing matches: keep the places where the runs broke off
        if nxt > 0 and _break_off(b, nxt, added):  # a token never seen ended a long copy
            b[H_RUN] = 0
        if sp.shape[0] > 0:  # unless a value starts there (multi_turn / templated tau, tree: 8.599 / 6.770 ->
            _resume_unseen(b, nxt, added, sp)  # 8.659 / 6.801; the draft was empty)
        return
    n = b[H_N_TX]
    need = min(L, NEED)
    if nxt > 0:
        e = nxt - 1 + added
        if e < n - 1 and backmatch(b, e, need, sp) >= need:  # the copy went on
            b[H_CP] = e + 1
            b[H_RUN] += added
            if b[H_RUN] >= LONG:  # copying again for a while: a break it came back to is healed
                _heal(b, e)
            forget(b, e, added)
            learn(b, e, added)
            return
        _break_off(b, nxt, added)
    for k in range(2):
        if b[H_CP + k] > 0:
            # from the output's own text back to the input a value was copied from (k == 1): the next value
            # may start right after that value, its first token written without the input's space
            e = _resume(b, b[H_CP + k], need, n - 1, sp, k == 1 and nxt - 1 >= b[H_PE] > b[H_CP + 1] - 1)
            if e >= 0:
                learn(b, e, SPAN)
                _move(b, k, e, nxt, added)
                return
    if L >= ANCHOR:
        pool = np.empty(16, np.int32)
        k = occurrences(b, v, pool, 16, False)
        best = -1
        for i in range(k):
            if pool[i] < n - 1 and pool[i] > best:
                best = pool[i]
        if best >= 0:
            learn(b, best, SPAN)
            b[H_CP + 1] = nxt
            b[H_CP] = best + 1
            b[H_RUN] = 0
