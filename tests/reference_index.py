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
