"""Spaced tokens: the same word with and without its leading space are two unrelated token ids.

Text copied from `Key: value` lines into JSON, from prose into a list, or from an argument list into a call
starts with a different token than its source: the input writes " pool/main/..." (" pool", "/", "main"...),
the output '"pool/main/...' ('"', "pool", "/", "main"...). Everything after the first token is the same, but
a copy is found from the token the target has just written, and that token occurs nowhere in the input. So
every value's start was lost: the analogy (analogy.py) could not find the record a value comes from, and
the copy pointer (pointer.py) could not go back to the input for the next item of a list.

`spaced_ids(tokenizer)` reads, from the tokenizer's vocabulary, which token is each token's spelling with one
leading space (byte-level BPE marks it "Ġ", SentencePiece "▁"): int32 [vocab], -1 where there is none; a spaced
token that has no spaced spelling of its own holds -(its bare token + 2) instead (`unspaced`: a list's next
item, spelled " lib" in the input, is drafted as the output writes it, "lib": lists.py). The
index compares a text token t with an input token x as the same when x == t or x == spaced[t] (`same`), and
only where a copy starts, so a word inside a value (" disk" in "guest disk image") is still copied as it is:
    analogy.place: the source of the value the text broke off from, and the new value's first token;
    pointer.track: the agreement at a run's place and a list's next item after the output's separator, once
        a value end was seen (a template being filled; in code, tokens are compared exactly);
    propose: a value's first token the text never held before, when the analogy found its record, is drafted
        from there (before, a token never seen drafted nothing); found or not, a token never held before is
        drafted from where the text holds its spelling with a leading space (propose_one).
templated / multi_turn tau, tree / chain: 6.443 / 6.192 -> 6.570 / 6.298, 8.326 / 7.972 -> 8.442 / 8.096;
code_edit 10.471 / 9.931 -> 10.470 / 9.938; completion and the model workloads within 0.2%; step cost the same.

NO_SPACING (a single -1) turns it off: a Drafter made without a tokenizer compares tokens exactly.
"""
import numpy as np
from numba import njit

NO_SPACING = np.full(1, -1, np.int32)
_MARKS = ("\u0120", "\u2581")  # "Ġ" (byte-level BPE: GPT-2, Llama 3, Qwen, SmolLM), "▁" (SentencePiece)


def spaced_ids(tokenizer):
    """int32 [vocab]: for each token id, the id of the same piece with one leading space, or -1, or for a
    spaced piece with none, -(the bare piece's id + 2) (see the module's docstring). tokenizer: a Hugging Face
    tokenizer (anything with get_vocab(): piece -> id)."""
    get_vocab = getattr(tokenizer, "get_vocab", None)
    if get_vocab is None:
        raise TypeError(f"spaced_ids needs a Hugging Face tokenizer (with get_vocab()), got {type(tokenizer).__name__}")
    vocab = get_vocab()
    if not vocab:
        return NO_SPACING.copy()
    out = np.full(max(vocab.values()) + 1, -1, np.int32)
    back = []
    for piece, i in vocab.items():
        if len(piece) > 1 and piece[0] in _MARKS:
            j = vocab.get(piece[1:])
            if j is not None and out[j] == -1:
                out[j] = i
                back.append((i, j))
    for i, j in back:  # a spaced token with no spaced spelling of its own names its bare one: -(bare + 2)
        if out[i] == -1:
            out[i] = -(j + 2)
    return out


@njit(cache=True, inline="always")
def same(spacing, x, t):
    """Whether input token x stands for text token t: the same token, or t's spelling with a leading space."""
    return x == t or (0 <= t < spacing.shape[0] and spacing[t] == x and x >= 0)


@njit(cache=True, inline="always")
def unspaced(spacing, x):
    """The token x spells with a leading space (x's spelling without it), or -1."""
    v = spacing[x] if 0 <= x < spacing.shape[0] else -1
    return -v - 2 if v <= -2 else -1


@njit(cache=True, inline="always")
def spaced(spacing, t):
    """t's spelling with a leading space, or -1."""
    v = spacing[t] if 0 <= t < spacing.shape[0] else -1
    return v if v >= 0 else -1
