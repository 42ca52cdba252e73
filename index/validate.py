"""Input checks shared by every entry point that takes token ids."""
import numpy as np

from .cursors import check_ids


def as_token_ids(x, what="token ids", vocab_size=None):
    """Validates a 1-D sequence of non-negative integer ids; returns a contiguous int32 array."""
    if isinstance(x, np.ndarray):
        a = x
    elif hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor, without importing torch
        a = x.detach().cpu().numpy()
    elif isinstance(x, (str, bytes)):
        raise TypeError(f"{what} must be token ids, got a string; tokenize it first (tokenizer(text).input_ids)")
    else:
        try:
            a = np.asarray(x)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{what} must be a 1-D sequence of integer token ids ({exc})") from None
    if a.ndim != 1:
        raise TypeError(f"{what} must be a 1-D sequence of integer token ids, got shape {a.shape}; "
                        "pass one sequence (a list of ints), not a batch or a scalar")
    if a.size == 0:
        return np.empty(0, np.int32)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{what} must be integers, got dtype {a.dtype}; convert them, e.g. "
                        "np.asarray(ids, dtype=np.int64), or pass the tokenizer's input_ids")
    if a.dtype == np.int32 or a.dtype == np.int64:
        if check_ids(a, vocab_size or 0) == 0 and (a.dtype == np.int32 or check_ids(a, 2**31 - 1) == 0):
            return np.ascontiguousarray(a, dtype=np.int32)
    lo, hi = int(a.min()), int(a.max())
    if lo < 0:
        raise ValueError(f"{what} contain a negative id ({lo} at position {int(np.argmin(a))}); token ids "
                         "are >= 0 (strip padding such as -1 or -100 before passing them)")
    if vocab_size is not None and hi >= vocab_size:
        raise ValueError(f"{what} contain id {hi} at position {int(np.argmax(a))}, past the vocabulary of "
                         f"{vocab_size}; use the tokenizer the corpus index was built with")
    if hi > 2**31 - 1:
        raise ValueError(f"{what} contain id {hi}, larger than int32; token ids must be < 2**31")
    return np.ascontiguousarray(a, dtype=np.int32)
