"""A slow, obviously correct index over a token list: what the automaton must agree with."""
from collections import Counter

SEP = -1


class RefIndex:
    def __init__(self, text=()):
        self.text = list(text)

    def extend(self, tokens):
        self.text.extend(int(t) for t in tokens)

    def ends(self, pattern):
        """Sorted end positions of every occurrence of `pattern` (non-empty, no SEP inside)."""
        m, t = len(pattern), self.text
        return [i + m - 1 for i in range(len(t) - m + 1) if t[i:i + m] == list(pattern)]

    def count(self, pattern):
        return len(self.ends(pattern))

    def continuations(self, pattern):
        """Counter of the real token that follows each occurrence."""
        t = self.text
        return Counter(t[e + 1] for e in self.ends(pattern) if e + 1 < len(t) and t[e + 1] != SEP)

    def longest_match(self, context):
        """Longest suffix of `context` that occurs in the text (SEP never matches)."""
        best = 0
        for L in range(1, len(context) + 1):
            suf = list(context[-L:])
            if SEP in suf:
                break
            if self.count(suf):
                best = L
        return best

    def longest_repeat_suffix(self):
        """Longest suffix of the text that also ends at an earlier position."""
        t, best = self.text, 0
        for L in range(1, len(t)):
            suf = t[-L:]
            if SEP in suf:
                break
            if any(t[e - L + 1:e + 1] == suf for e in range(L - 1, len(t) - 1)):
                best = L
        return best


def _spaced(spacing, t):
    """t's spelling with a leading space under a spacing map (index/spacing.py), or None."""
    s = int(spacing[t]) if spacing is not None and 0 <= t < len(spacing) else -1
    return s if s >= 0 else None


def _same(spacing, x, t):
    """Input token x stands for text token t: equal, or x is t spelled with a leading space."""
    return x == t or (x != SEP and _spaced(spacing, t) == x)


def ref_pointer(text, state, added, pe=0, window=64, need_cap=2, anchor=4, long=8, spacing=None):
    """The copy pointer's rule (index/pointer.py) by brute force: from state = (current, previous, break,
    run), the set of states it may hold after `added` tokens were appended to `text` (one tuple, except where
    the copy jumps: then any earlier occurrence of the longest repeated suffix is right, the fast path reading
    only some of them).
    Places are 1 + a position (0 = none); the break is where the last copy of the input (text before `pe`)
    that went on for `long` tokens or more stopped; run counts the tokens the current run copied. With a spacing map (the fast path uses it once
    a value end was seen), a text token agrees with its spelling with a leading space, and a return from the
    output's own text to the input run before it may start at that spelling of the text's last token alone."""
    cur, prev, brk, run = state
    n = len(text)
    L = RefIndex(text).longest_repeat_suffix()

    def followed(j=0):  # how many of the added tokens still followed the run
        while j < added and cur + j < n - added and text[cur + j] == text[n - added + j]:
            j += 1
        return j

    if L == 0:  # a token never seen: it ends a long copy of the input there
        if cur > 0 and cur - 1 < pe and run >= long:
            brk, run = cur + followed() + 1, 0
        # a run that copies the input (the current one first) resumes at the first place in the window from
        # it that holds the token's spelling with a leading space; else the places stay
        ts = _spaced(spacing, text[-1])
        for k, p in enumerate((cur, prev)):
            if ts is not None and 0 < p <= pe:
                for e in range(p - 1, min(p - 1 + window, n - 1)):
                    if text[e + 1] != SEP and e < pe and text[e] == ts:
                        return {(e + 1, cur if k == 1 else prev, brk, 0)}
        return {(cur, prev, brk, run)}
    need = min(L, need_cap)

    def agree(e):
        k = 0
        while k < need and k <= e and text[n - 1 - k] != SEP and _same(spacing, text[e - k], text[n - 1 - k]):
            k += 1
        return k

    if cur > 0:
        e = cur - 1 + added
        if e < n - 1 and agree(e) >= need:
            run += added
            if run >= long and brk > 0 and brk - 2 <= e < brk - 2 + window:
                brk = 0  # the copy came back to where it broke off
            return {(e + 1, prev, brk, run)}
        if cur - 1 < pe and run >= long:
            brk = cur + followed() + 1
    for k, p in enumerate((cur, prev)):
        if p > 0:
            for e in range(p - 1, min(p - 1 + window, n - 1)):
                if text[e + 1] == SEP:
                    continue
                if (text[e] == text[-1] and agree(e) >= need) or \
                        (k == 1 and cur - 1 >= pe > prev - 1 and e < pe and _spaced(spacing, text[-1]) == text[e]):
                    return {(e + 1, cur if k == 1 else prev, brk, 0)}
    if L >= anchor:
        return {(e + 1, cur, brk, 0) for e in range(L - 1, n - 1) if text[e - L + 1:e + 1] == text[n - L:]}
    return {(cur, prev, brk, run)}


def ref_resume_at_break(text, brk, pe, window=64):
    """pointer.resume_at_break by its definition: the first place from the break's position - 1 on, within
    the window, that holds the text's last token and is followed by input; -1 when there is none."""
    if brk <= 0:
        return -1
    p = brk - 1
    for e in range(max(p - 1, 0), min(p - 1 + window, pe - 1, len(text) - 1)):
        if text[e] == text[-1] and text[e + 1] != SEP:
            return e
    return -1


def ref_resume_after_swap(text, brk, pe, extra, swap=2):
    """pointer.resume_after_swap by its definition: the output's last g <= swap tokens follow a copy of the
    two input tokens before the break (brk: 1 + the position where the copy stopped); the input goes on after
    g + extra replaced tokens there. The end position to continue after, or -1."""
    n = len(text)
    p = brk - 1
    if p < 2:
        return -1
    for g in range(1, swap + 1):
        j = n - 1 - g
        if j < 1:
            return -1
        if text[j - 1:j + 1] == text[p - 2:p]:
            e = p - 1 + g + extra
            return e if e + 1 < pe and text[e + 1] != SEP else -1
    return -1


def ref_place(text, d, j, src=8, ctx=4, pool=16, spacing=None, tries=4):
    """analogy.place by brute force over the whole text: (place, exact). The fast path reads only the first
    `pool` occurrences the link tree yields; exact says that nothing it reads occurs more often, so the two
    must agree. With a spacing map, the source may also be the piece after d with its first token spelled
    with a leading space, occurring at all, when that is longer; the place's first token may be the
    text's spelled so. The sources are the piece's earlier occurrences, tried earliest first."""
    n = len(text)
    if d < 0 or d + 2 >= n - j:
        return -1, True

    def starts(piece):
        k = len(piece)
        return [p for p in range(n - k + 1) if text[p:p + k] == piece]

    m = 0
    for i in range(src):
        p = d + 1 + i
        if text[p] == SEP or p >= n - j or len(starts(text[d + 1:p + 1])) < 2:
            break
        m = i + 1
    piece = text[d + 1:d + 1 + m]
    ts = _spaced(spacing, text[d + 1])
    if ts is not None:
        ms = 0
        for i in range(src):
            p = d + 1 + i
            if (i > 0 and text[p] == SEP) or p >= n - j or not starts([ts] + text[d + 2:p + 1]):
                break
            ms = i + 1
        if ms > m:
            m = ms
            piece = [ts] + text[d + 2:d + 1 + m]
    if m == 0:
        return -1, True
    ss = starts(piece)
    exact = len(ss) <= pool
    # the sources, earliest first: the first of them (up to `tries`) whose context goes on where the value starts
    for s in sorted(p for p in ss if ctx <= p < d + 1)[:tries]:
        if SEP in text[s - ctx:s]:
            continue
        cs = starts(text[s - ctx:s])
        exact = exact and len(cs) <= pool
        xs = [p + ctx for p in cs]  # places after the same context
        xs = [x for x in xs if x > s and x != d + 1 and x + j < n - j and _same(spacing, text[x], text[n - j])
              and text[x + 1:x + j] == text[n - j + 1:] and text[x + j] != SEP]
        if xs:
            return min(xs) + j - 1, exact
    return -1, exact


def ref_learn(text, pe, pairs, e, added, right=3, span=8, confirm=2, n_sub=2):
    """substitute.learn by its definition, on plain lists: the pairs [(input token, output token, seen)], newest
    first, after the pointer copied input position e with `added` new tokens."""
    n = len(text)

    def shown(p):  # the input token at p as the output writes it
        if p < pe:
            for y, x, c in pairs:
                if y == text[p] and c >= confirm:
                    return x
        return text[p]

    if e >= pe:
        return pairs
    m = 0  # tokens agreeing back from e and from the end, the end's side staying in the output
    while m < span and m <= e and n - 1 - m >= pe and shown(e - m) == text[n - 1 - m]:
        m += 1
    if not (right <= m < span and m - added < right and m + 1 <= e and n - 2 - m >= pe):
        return pairs
    if shown(e - m - 1) != text[n - 2 - m]:
        return pairs
    y, x = text[e - m], text[n - 1 - m]
    if SEP in (x, y) or x == y:
        return pairs
    seen = next((c for yy, xx, c in pairs if yy == y and xx == x), 0)
    rest = [p for p in pairs if p[0] != y]
    if len(rest) == n_sub:  # the least seen goes, the oldest of those
        low = min(c for _, _, c in rest)
        drop = max(i for i, p in enumerate(rest) if p[2] == low)
        rest = rest[:drop] + rest[drop + 1:]
    return [(y, x, seen + 1)] + rest


def ref_learn_end(text, pe, votes, p, x, n_pairs=4, substitutions=(), known=False, known_votes=2):
    """value_end.learn_end by its definition: the pairs [(input token, output token, count)] (at most n_pairs,
    in the order they were first learned; a replaced pair keeps its place) after a value copied from the input
    ended at text position p, the output writing x there. A known pair gains a vote; a new one takes a free
    place, else the first of the least voted pairs loses a vote, or is replaced when it had one. Nothing is
    learned where x is what the output writes for text[p] anyway: the token itself, or where a confirmed
    substitution (input token, output token) in `substitutions` has it, its output token. With `known`, only
    a pair with known_votes votes or more gains one, and nothing else changes."""
    if not 0 <= p < min(pe, len(text)) or text[p] == SEP or x == dict(substitutions).get(text[p], text[p]):
        return votes
    t = text[p]
    votes = list(votes)
    for i, (a, b, c) in enumerate(votes):
        if (a, b) == (t, x):
            if not known or c >= known_votes:
                votes[i] = (a, b, c + 1)
            return votes
    if known:
        return votes
    if len(votes) < n_pairs:
        return votes + [(t, x, 1)]
    low = min(range(len(votes)), key=lambda i: (votes[i][2], i))
    a, b, c = votes[low]
    votes[low] = (a, b, c - 1) if c > 1 else (t, x, 1)
    return votes


def ref_template_ahead(text, pe, votes, c, need, ahead=32):
    """value_end.template_ahead by its definition: the input after position c (up to `ahead` tokens, to pe, to
    a SEP) meets an output token of a pair with `need` votes or more before any such pair's input token."""
    ok = [(t, x) for t, x, k in votes if k >= need]
    for p in range(c + 1, min(c + 1 + ahead, pe)):
        if text[p] == SEP:
            return False
        if any(text[p] == x for _, x in ok):
            return True
        if any(text[p] == t for t, _ in ok):
            return False
    return False


def ref_value_end(text, pe, votes, a, o, depth, need, window=128):
    """value_end.value_end by its definition: (m, r), the value copied from end position a ending at the first
    of its next `depth` input tokens that is the input token of a pair with `need` votes or more (the input
    stopping at pe and at SEP) and that the earlier value (text positions o + 1 .. r - 1) does not hold, the
    template going on at the first position r after o (within `window`, followed by text) holding the output
    token of such a pair for that input token."""
    ok = [(t, x) for t, x, c in votes if c >= need]
    if not votes or o < 0:
        return -1, -1
    n = len(text)
    for d in range(depth):
        p = a + 1 + d
        if p >= min(pe, n) or text[p] == SEP:
            return -1, -1
        if any(text[p] == t for t, _ in ok):
            rs = [r for r in range(o + 1, min(o + window, n - 1)) if (text[p], text[r]) in ok]
            if not rs:
                return -1, -1
            if text[p] not in text[o + 1:rs[0]]:  # the same key's earlier value did not go on past it
                return d, rs[0]
    return -1, -1


def _unspaced(spacing, x):
    """The token whose spelling with a leading space is x, under a spacing map, or None."""
    hits = [u for u in range(len(spacing)) if spacing[u] == x and x >= 0] if spacing is not None else []
    return hits[0] if hits and spacing[x] < 0 else None


def ref_list_draft(text, pe, votes, c, run, depth, need, spacing=None, sep_max=5, gap=20, item=32,
                   back=3):
    """lists.list_draft by its definition, from input end position c, the text's last run + 1 tokens copying it: the
    item starts at text position s = len(text) - 1 - run and input position e = c - run (the same token, or its
    spelling with a leading space), or up to `back` tokens before both where they agree; the output's separator runs
    from q to s, q starting the run of pairs' output tokens (after pe) that holds the last of the sep_max tokens
    before s that is one; the previous item's last token (text[q - 1]) followed by a token that ends values (`end`)
    stands at most gap tokens before e - 1 in the input (the nearest such place), `end` not being the input token of
    the most voted pair (the first of them) unless the separator also ends, after pe, right before the previous item
    (the text before q that agrees with the input up to j, at most item tokens); the delimiter is text[e - 1] (or,
    when item e's first token is written without the input's space, any token followed by a spaced one). The draft:
    the item's rest up to its end, and, while an item ends at `end` (or, neither being the most voted pair's input
    token, at another end token) and a delimiter follows within gap tokens (no other end token between), the
    separator and the next item, its first token spelled as the output spelled item e's. [] for none."""
    ok = [(t, x) for t, x, cnt in votes if cnt >= need]
    ends = {t for t, _ in ok}
    writes = {x for _, x in ok}
    top = max(votes, key=lambda v: v[2])[0] if votes else None  # the first of the most voted
    n = len(text)
    s, e = n - 1 - run, c - run
    if c + 1 >= pe or e < 1 or s - sep_max < pe or not _same(spacing, text[e], text[s]):
        return []
    g = 0  # the item starts up to back tokens before the run, where the text and the input agree
    while g < back and e - g - 1 >= 1 and s - g - 1 - sep_max >= pe and \
            _same(spacing, text[e - g - 1], text[s - g - 1]):
        g += 1
    s, e = s - g, e - g
    qs = [s - j for j in range(1, sep_max + 1) if text[s - j] in writes]
    if not qs:
        return []
    q = qs[0]
    while q - 1 > pe and text[q - 1] in writes:
        q -= 1
    end = None
    for j in range(e - 2, max(e - 2 - gap, -1), -1):
        if text[j] == SEP:
            break
        if _same(spacing, text[j], text[q - 1]) and text[j + 1] in ends:
            sep, k = text[q:s], 0
            while k < item and q - 1 - k >= pe and j - k >= 0 and _same(spacing, text[j - k], text[q - 1 - k]):
                k += 1  # the previous item: the text before q, a copy of the input up to j
            x = q - 1 - k
            again = k > 0 and x - len(sep) + 1 >= pe and text[x - len(sep) + 1:x + 1] == sep
            end = text[j + 1] if text[j + 1] != top or again else None
            break
    if end is None:
        return []
    delim = text[e - 1]
    bare = text[e] != text[s]
    stop = min(pe, n)
    out = []
    p = c
    while len(out) < depth:
        left = depth - len(out)
        span = []
        for x in range(p + 1, min(p + 1 + left, stop)):
            if text[x] == SEP:
                break
            span.append(x)
        m = next((i for i, x in enumerate(span) if text[x] in ends), None)
        if m is None:  # no end within the draft: the item runs on
            if p == c:
                return []
            out += [text[x] for x in span]
            break
        t = text[span[m]]
        goes_on = t == end or (t != top and end != top)  # another item follows (not a record's end)
        if not goes_on and p == c:
            return []
        out += [text[x] for x in span[:m]]
        if not goes_on:
            break
        pd = None
        for g in range(gap):
            x = p + 1 + m + g
            if x + 1 >= pe or text[x] == SEP:
                break
            if text[x] == delim or (bare and _unspaced(spacing, text[x + 1]) is not None):
                pd = x
                break
            if g > 0 and text[x] in ends:
                break
        if pd is None:
            return out if p != c else []
        out += text[q:s]
        if len(out) >= depth:
            break
        y = _unspaced(spacing, text[pd + 1]) if bare else text[pd + 1]
        if y is None or y == SEP:
            break
        out.append(y)
        p = pd + 1
    return out[:depth]
