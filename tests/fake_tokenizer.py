"""A tokenizer stand-in for spacing tests: only get_vocab(), as index.spacing.spaced_ids reads it."""


class SpacedVocab:
    """Ids 0..size-1 are pieces "t{id}"; pairs maps an id to the id of its spelling with a leading space
    ("Ġt{id}", byte-level BPE's mark), which must lie outside 0..size-1 or be unused by other pieces."""

    def __init__(self, size, pairs):
        self.vocab = {f"t{i}": i for i in range(size) if i not in set(pairs.values())}
        for t, s in pairs.items():
            self.vocab["\u0120" + f"t{t}"] = s

    def get_vocab(self):
        return dict(self.vocab)
