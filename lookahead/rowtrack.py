"""Which drafter request each row of an engine's batch holds, recognised by the content keys of index/rows.py.

vLLM condenses its batch between steps, so a row may hold another request than before; each row's text before
this step's tokens is keyed and looked up among the keys the live requests had at the end of their last step.
Done per row in Python (a dict of lists, then numpy glue over the batch), this bookkeeping and the drafts' cut
cost ~2 us a request more than now (256 rows at 1k tokens: 8.3-9.0 -> 6.2-7.1 us raw a request for the
proposer's whole step); here a step is one native call (index.rows.track_rows), plus a Python call only for each
row that starts a request and each request that finishes.

Several live requests may share a key (the same prompt sampled n times): the j-th row with that key, in row
order, continues the j-th such request, in the order they were kept.
"""
import numpy as np

from .index.rows import track_rows

STALE_STEPS = 2  # a request missing from this many steps in a row is finished (a row can skip a step)


class RowTracker:
    """Live requests as parallel int64 arrays: key (of their text at the end of their last step), handle and
    the step they were last seen in. A key reads a text's length and its first and last `width` tokens."""

    def __init__(self, width=16):
        self.width = width
        self.keys = np.zeros(0, np.int64)
        self.handles = np.zeros(0, np.int64)
        self.seen = np.zeros(0, np.int64)

    def __len__(self):
        return self.keys.shape[0]

    def step(self, step, table, n_new, n_tok, max_len, begin, end):
        """One engine step. table: int32 [rows, width]; n_new / n_tok: int64 [B], each row's tokens new since the
        last step and its token count (index.rows.track_rows). begin(row, length) starts the request of a row no
        live request matches and returns its handle; end(handle) finishes a request missing for STALE_STEPS
        steps. Returns (rows, lens, handles (a list of int), (flat, offsets)): the drafting rows, their token
        counts, their requests and their new tokens (none for the rows that started a request)."""
        rows, lens, row_h, fresh, flat, offs, keys, handles, seen, stale = track_rows(
            table, n_new, n_tok, max_len, self.keys, self.handles, self.seen, step, STALE_STEPS, self.width)
        started = []
        try:
            for j in fresh.tolist():
                h = begin(int(rows[j]), int(lens[j]))
                row_h[j] = handles[j] = h
                started.append(h)
        except BaseException:  # the live requests stay live; the ones started here would be lost
            for h in started:
                end(h)
            raise
        self.keys, self.handles, self.seen = keys, handles, seen
        for h in stale.tolist():
            end(h)
        return rows, lens, row_h.tolist(), (flat, offs)

    def clear(self):
        """Forgets every live request; returns their handles (a list of int)."""
        h = self.handles.tolist()
        self.__init__(self.width)
        return h
