"""Template resumption from other automata: after a value the request wrote, the text that followed the key.

A response filled from records (a JSON object per package, a form per profile) writes keys that earlier
responses wrote too, then a value of its own:

    earlier response:  "installed_size_kib": 899,\\n    "maintainer_name": "Debian Java Maintainers",
    this response:     "installed_size_kib": 40,|

The match into memory breaks at the value (": 40" was never seen), and after the value's end the context
(",") matches everywhere. But where the match was still long (the key, `"installed_size_kib": ` and maybe the
value's first tokens) tells where the template is: at each occurrence of that key, the text after the first
token equal to the one the request just wrote (',') is what the template writes after the value.

Each cursor into another automaton keeps its key: the state its match was in when a match of length >= KEY_MIN last
broke off, and the request's length then (cursors.py). A proposal whose cursor's match reaches back at most REACH
tokens past the tokens written since the key, at most VMAX tokens after it, reads up to `occ` occurrences of the
key and scans at most SCAN tokens after each for the request's last token. The key often ends with the value's
first tokens, where an earlier value began as this one does ('"installed_size_kib": 4' of an earlier 4xx, this
value being 44), and the match after the break starts at those tokens ('44,\\n "maintainer' reaches back one token
past the key's end): that is not the key's own text going on, so the template resumes ('_name": "Debian X Strike
Force"'); it did not while the match had to start after the key's end (REACH 0 -> 2, tree / chain: multi_turn 8.909
/ 8.695 -> 8.921 / 8.707, templated 7.036 / 6.948 -> 7.037 / 6.947, code_edit 10.470 / 9.941 -> 10.471 / 9.939,
completion 1.948 / 1.643 -> 1.949 / 1.643; REACH = KEY_MIN - 1: multi_turn 8.934 / 8.726 but templated chain 6.934,
completion chain 1.639). Only other automata: in the request's own text the copy pointer and the analogy
(pointer.py, analogy.py) resume templates, and a key there too lost tau on multi_turn.

A long match that breaks off right after a token the output ends values with (value_end.py: '",') does not
replace the key (`keeps`): it matched the value's own text in another place, up to its end. In a later turn's
first object, `\\n    "package": "gcc-12` was the key, and ` "gcc-12-base",` of an earlier response's depends
list then broke off at the next key; kept, the key's template drafts `\\n    "version": "12.2.0-14+deb12u1"`
of the earlier object (16 tokens accepted where 5). Tree / chain: multi_turn 8.921 / 8.707 -> 8.930 / 8.702
(4,962 / 5,084 -> 4,957 / 5,087 steps), templated 7.037 / 6.947 -> 7.038 / 6.952 (20,567 / 20,833 -> 20,564 /
20,820), code_edit the same, completion 4,964 / 5,888 -> 4,965 / 5,890 steps, model workloads the same.

Measured (replay, budget 16, tree / chain, template_weight 0 -> 2): multi_turn 7.879 / 7.534 -> 7.999 / 7.619,
templated 6.113 / 5.799 -> 6.207 / 5.854, code_edit 10.433 / 9.928 -> 10.455 / 9.943. KEY_MIN 4 / 8 and VMAX
24 / 48 were within 0.3% and lower; a weight per occurrence instead of split, dropping the tier's own short
match when it fires, and weights adapted to how often the resumption's first token was right were all lower.
"""
from numba import njit

from ._layout import H_N_TX, H_OFF_TX, SEP
from .automaton import match_step, recent_occurrences
from .trie import insert
from .value_end import _writes

KEY_MIN = 6   # a match at least this long is a key
VMAX = 16     # tokens written since the key, at most, for the template to resume
SCAN = 32     # tokens scanned after an occurrence of the key for the value's end
REACH = 2     # tokens past the key's end a match may reach back over (the value's first tokens the key ended with)
KEY_VOTES = 2  # votes a value end (value_end.py) needs before a match that broke off right after it keeps the key


@njit(cache=True, inline="always")
def key_step(eb, v, L, t):
    """match_step on token t, and whether the match left a key: one of >= KEY_MIN tokens that t did not
    extend (the state before t, v, is then the key)."""
    v2, L2 = match_step(eb, v, L, t)
    return v2, L2, L2 <= L and L >= KEY_MIN


@njit(cache=True, inline="always")
def keeps(own, kn, n):
    """Whether a long match that broke off where the request (own) had n tokens leaves the key, which ended
    at length kn, in place: the key is at most VMAX tokens back and the match's last token is how the output
    ends values (value_end.py: '",', with >= KEY_VOTES votes). A match that runs up to a value's end and
    breaks off right after it matched the value's own text in another place (` "gcc-12-base",` of an earlier
    depends list, its next item there, `\\n    "version` here), not a key: what follows the value is still
    the key's."""
    return kn > 0 and n - kn <= VMAX and _writes(own, own[own[H_OFF_TX] + n - 1], KEY_VOTES)


@njit(cache=True, inline="always")
def fires(own, L, kn):
    """Whether a cursor with matched length L, whose key ended when the request had kn tokens, has broken off
    from it within VMAX tokens (its match reaches back at most REACH tokens past the tokens since the key)."""
    g = own[H_N_TX] - kn
    return kn > 0 and 1 <= g <= VMAX and L <= g + REACH


@njit(cache=True, inline="always")
def resume(own, eb, kv, w, occ, depth, t_tok, t_par, t_child, t_sib, t_w, nn, occbuf, spare):
    """Inserts, with total weight w, what follows the request's last token after the value at up to `occ`
    occurrences of key state kv in automaton eb; returns nn."""
    t_last = own[own[H_OFF_TX] + own[H_N_TX] - 1]
    k = recent_occurrences(eb, kv, occbuf, occ, spare)
    if k == 0:
        return nn
    ot = eb[H_OFF_TX]
    n = eb[H_N_TX]
    hits = 0
    for j in range(k):
        x = occbuf[j]
        for r in range(x + 1, min(x + 1 + SCAN, n - 1)):
            t = eb[ot + r]
            if t == SEP:
                break
            if t == t_last:
                occbuf[hits] = r
                hits += 1
                break
    for j in range(hits):
        nn = insert(eb, occbuf[j], w / hits, depth, t_tok, t_par, t_child, t_sib, t_w, nn)
    return nn

