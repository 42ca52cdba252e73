"""How many draft nodes a step should verify, so that speculation pays for itself.

A step's value is the tokens it is expected to emit, sum over rows of 1 + E[accepted], and its price the
forward's time. E[accepted] for the first K nodes of a draft is the sum of their reach probabilities (the
drafter's estimates), scaled per request by a running calibration (accepted / predicted). The forward's
time is learnt online per bucket of batch tokens (B * (K + 1)); unmeasured buckets are extrapolated from a
linear cost curve. The step takes the K with the most expected tokens per second; K = 0 means plain decoding.
"""
import math

LEVELS = (0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)


class DraftPolicy:
    def __init__(self, max_draft, slope=0.06, ema=0.3):
        self.max_draft = max_draft
        self.slope = slope  # extra cost per additional token, relative to one token (CPU-like default)
        self.ema = ema
        self.cost = {}  # bucket -> seconds
        self.calib = {}  # request key -> accepted / predicted

    @staticmethod
    def _bucket(m):
        # exact below 33 tokens: on CPU the cost is far from linear there (1 token can cost more than 4)
        return m if m <= 32 else 1 << math.ceil(math.log2(m))

    def _time(self, m):
        b = self._bucket(m)
        if b in self.cost:
            return self.cost[b]
        known = sorted(self.cost.items())
        if not known:
            return 1.0 + self.slope * (m - 1)
        b0, t0 = known[0]
        if len(known) >= 2:
            b1, t1 = known[-1]
            per = max((t1 - t0) / max(b1 - b0, 1), 0.0)
        else:
            per = t0 * self.slope
        return max(t0 + per * (m - b0), 1e-9)

    def choose(self, probs, keys):
        """probs: per active row, the reach probabilities of its draft nodes in order (any array-like)."""
        B = len(probs)
        best_k, best = 0, None
        for k in LEVELS:
            if k > self.max_draft:
                break
            exp = sum(1.0 + self.calib.get(key, 1.0) * float(sum(p[:k])) for p, key in zip(probs, keys))
            score = exp / self._time(B * (k + 1))
            if best is None or score > best * 1.0001:
                best_k, best = k, score
        return best_k

    def observe_step(self, batch_tokens, seconds):
        b = self._bucket(batch_tokens)
        old = self.cost.get(b)
        self.cost[b] = seconds if old is None else (1 - self.ema) * old + self.ema * seconds

    def observe_accept(self, key, predicted, accepted):
        if predicted <= 0:
            return
        old = self.calib.get(key, 1.0)
        self.calib[key] = min(4.0, max(0.05, (1 - self.ema) * old + self.ema * (accepted / predicted)))

    def forget(self, key):
        self.calib.pop(key, None)
