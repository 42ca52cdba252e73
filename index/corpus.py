"""Static corpus index: build from token arrays, save to one file, load with mmap, merge.

File layout (little endian): a 256-byte header, then the automaton buffer (int32) as it lives in memory, so a
load maps it without copying. Header: magic b"LKHDIDX\\0", format version, vocab size, documents, tokens,
buffer length, CRC-32 of the buffer, the tokenizer's vocab fingerprint (sha256) and name. Loading checks all of
it, then validates the buffer's structure (every index in range, lists acyclic), because native code trusts
it. An index file is data, never code: nothing is unpickled.
"""
import hashlib
import os
import struct
import zlib

import numpy as np
from numba import njit

from ._layout import (ED_W, E_NEXT, E_TO, E_TOK, H_CAP_ED, H_CAP_HS, H_CAP_ST, H_CAP_TX, H_MAGIC, H_N_ED,
                      H_N_HS, H_N_ST, H_N_TX, H_OFF_ED, H_OFF_HS, H_OFF_ST, H_OFF_TX, H_SIZE, HS_W, MAGIC,
                      NO_TOK, S_EH, S_LEN, S_LINK, S_LTH, S_LTN, S_T0, S_TO0, SEP, ST_W, _buffer_size,
                      shrink_to_fit)
from .arena import Arena
from .automaton import new_automaton, text_of
from .validate import as_token_ids
from .propose import add_document

FILE_MAGIC = b"LKHDIDX\0"
# 2: automaton headers of 80 ints (cursor keys, template.py); 3: 96 (value-end pairs); 4: states of 9 ints (the
# first transition inline); 5: headers of 128 ints (predicted values, analogy.py); 6: 160 (eight value-end pairs)
FORMAT_VERSION = 6
_HEADER = struct.Struct("<8sIIqqqqI32s64s")
HEADER_BYTES = 256


class IndexFileError(ValueError):
    """An index file that cannot be used; the message says why and what to do."""


def vocab_fingerprint(tokenizer):
    """sha256 over the tokenizer's (token, id) pairs: indexes built with another vocabulary are refused."""
    vocab = tokenizer.get_vocab()
    h = hashlib.sha256()
    for tok, i in sorted(vocab.items(), key=lambda kv: kv[1]):
        h.update(f"{i}\t{tok}\n".encode("utf-8", "surrogatepass"))
    return h.digest()


class CorpusIndex:
    """A read-only automaton over documents. `buffer` is int32[:] (possibly a copy-on-write mmap)."""

    def __init__(self, buffer, vocab_size=None, fingerprint=b"", tokenizer_name="", documents=0):
        self.buffer = buffer
        self.vocab_size = vocab_size
        self.fingerprint = bytes(fingerprint)
        self.tokenizer_name = tokenizer_name
        self.documents = int(documents)

    @property
    def tokens(self):
        return int(self.buffer[H_N_TX]) - self.documents  # minus one SEP per document

    def documents_tokens(self):
        """The indexed documents, as a list of int32 arrays."""
        t = np.asarray(text_of(self.buffer))
        cuts = np.flatnonzero(t == SEP)
        out, s = [], 0
        for c in cuts:
            out.append(t[s:c].copy())
            s = c + 1
        return out

    def save(self, path):
        """Writes the index to `path` (atomically: a temporary file, then rename)."""
        buf = np.ascontiguousarray(shrink_to_fit(self.buffer))
        crc = zlib.crc32(buf.view(np.uint8))
        head = _HEADER.pack(FILE_MAGIC, FORMAT_VERSION, 0, -1 if self.vocab_size is None else self.vocab_size,
                            self.documents, self.tokens, buf.shape[0], crc, self.fingerprint.ljust(32, b"\0"),
                            self.tokenizer_name.encode()[:64].ljust(64, b"\0"))
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(head.ljust(HEADER_BYTES, b"\0"))
            f.write(buf.tobytes())
        os.replace(tmp, path)
        return path


def build_corpus(documents, vocab_size=None, fingerprint=b"", tokenizer_name="", progress=None):
    """Indexes documents (iterable of int sequences). `progress(n_tokens)` is called after each one."""
    arena = Arena()
    slot, _ = arena.add(new_automaton(1024))
    n = 0
    for doc in documents:
        toks = as_token_ids(doc, "corpus document", vocab_size)
        add_document(arena.buffers, slot, toks)
        n += 1
        if progress is not None:
            progress(len(toks))
    return CorpusIndex(arena[slot], vocab_size, fingerprint, tokenizer_name, n)


def merge_corpora(indexes):
    """One index over the documents of all given indexes (same tokenizer required)."""
    indexes = list(indexes)
    if not indexes:
        raise ValueError("merge_corpora needs at least one index")
    fps = {ix.fingerprint for ix in indexes}
    if len(fps) > 1:
        raise IndexFileError("cannot merge indexes built with different tokenizers "
                             f"({', '.join(sorted({ix.tokenizer_name or '?' for ix in indexes}))}); rebuild them "
                             "with one tokenizer")
    first = indexes[0]
    docs = [d for ix in indexes for d in ix.documents_tokens()]
    return build_corpus(docs, first.vocab_size, first.fingerprint, first.tokenizer_name)


@njit(cache=True)
def _validate(b, vocab):
    """0 when buffer b is a well-formed automaton, else a code naming the first problem found."""
    n = b.shape[0]
    if n < H_SIZE or b[H_MAGIC] != MAGIC:
        return 1
    cst, ced, chs, ctx = b[H_CAP_ST], b[H_CAP_ED], b[H_CAP_HS], b[H_CAP_TX]
    if cst < 1 or ced < 1 or chs < 16 or ctx < 1 or (chs & (chs - 1)) != 0:
        return 2
    if _buffer_size(ctx, cst, ced, chs) != n:
        return 3
    if (b[H_OFF_ST] != H_SIZE or b[H_OFF_ED] != H_SIZE + ST_W * cst or b[H_OFF_HS] != b[H_OFF_ED] + ED_W * ced
            or b[H_OFF_TX] != b[H_OFF_HS] + HS_W * chs):
        return 4
    nst, ned, ntx, nhs = b[H_N_ST], b[H_N_ED], b[H_N_TX], b[H_N_HS]
    if not (1 <= nst <= cst and 0 <= ned <= ced and 0 <= ntx <= ctx and nhs == ned and 2 * nhs <= chs):
        return 5
    os_, oe, oh, ot = b[H_OFF_ST], b[H_OFF_ED], b[H_OFF_HS], b[H_OFF_TX]
    for i in range(ntx):
        t = b[ot + i]
        if t < SEP or (vocab > 0 and t >= vocab):
            return 6
    seen = np.zeros(max(nst, ned), np.uint8)
    for s in range(nst):
        o = os_ + ST_W * s
        if b[o + S_LEN] < 0 or b[o + S_LEN] > ntx:
            return 7
        lk = b[o + S_LINK]
        if s == 0:
            if lk != -1:
                return 8
        elif lk < 0 or lk >= nst or b[os_ + ST_W * lk + S_LEN] >= b[o + S_LEN]:
            return 8
    for s in range(nst):  # link-tree child lists: each child exactly once, under its own link
        c = b[os_ + ST_W * s + S_LTH]
        while c != -1:
            if c < 1 or c >= nst or seen[c] or b[os_ + ST_W * c + S_LINK] != s:
                return 9
            seen[c] = 1
            c = b[os_ + ST_W * c + S_LTN]
    seen[:] = 0
    for s in range(nst):  # edge lists: each edge in exactly one list, targets in range
        t0, to0 = b[os_ + ST_W * s + S_T0], b[os_ + ST_W * s + S_TO0]
        if t0 == NO_TOK:  # no first transition, so no others
            if to0 != -1 or b[os_ + ST_W * s + S_EH] != -1:
                return 10
        elif t0 < SEP or to0 < 0 or to0 >= nst:
            return 10
        e = b[os_ + ST_W * s + S_EH]
        while e != -1:
            if e < 0 or e >= ned or seen[e]:
                return 10
            seen[e] = 1
            to = b[oe + ED_W * e + E_TO]
            if to < 0 or to >= nst or b[oe + ED_W * e + E_TOK] < SEP:
                return 10
            e = b[oe + ED_W * e + E_NEXT]
    used = 0
    for i in range(chs):
        s = b[oh + HS_W * i]
        if s != -1:
            used += 1
            e = b[oh + HS_W * i + 1]
            if s < 0 or s >= nst or e < 0 or e >= ned:
                return 11
    if used != nhs:
        return 11
    return 0


def load_corpus(path, tokenizer=None, verify=True):
    """Maps an index file (copy-on-write: pages load lazily, the file is never written).

    With `tokenizer`, refuses an index built with another vocabulary. `verify=False` skips the checksum (the
    structure is always validated)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no index file at {path!r}; build one with `lookahead index build`")
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        raw = f.read(HEADER_BYTES)
    if len(raw) < _HEADER.size or raw[:8] != FILE_MAGIC:
        raise IndexFileError(f"{path!r} is not a lookahead index file; build one with `lookahead index build`")
    magic, version, _flags, vocab, docs, ntok, blen, crc, fp, name = _HEADER.unpack(raw[:_HEADER.size])
    if version != FORMAT_VERSION:
        raise IndexFileError(f"{path!r} has index format {version}, this lookahead reads {FORMAT_VERSION}; "
                             "rebuild it with this version's `lookahead index build`")
    if blen <= 0 or size != HEADER_BYTES + 4 * blen:
        raise IndexFileError(f"{path!r} is truncated or padded ({size} bytes, expected "
                             f"{HEADER_BYTES + 4 * max(blen, 0)}); copy it again or rebuild it")
    mm = np.memmap(path, dtype=np.int32, mode="c", offset=HEADER_BYTES, shape=(blen,))
    buf = np.ndarray(shape=(blen,), dtype=np.int32, buffer=mm)
    if verify and zlib.crc32(buf.view(np.uint8)) != crc:
        raise IndexFileError(f"{path!r} is corrupt (checksum mismatch); rebuild it or copy it again")
    vocab = None if vocab < 0 else int(vocab)
    code = _validate(buf, vocab or 0)
    if code:
        raise IndexFileError(f"{path!r} is corrupt (structure check {code} failed); rebuild it")
    name = name.rstrip(b"\0").decode("utf-8", "replace")
    fp = fp if any(fp) else b""  # all zero: built without a tokenizer
    if tokenizer is not None:
        want = vocab_fingerprint(tokenizer)
        if fp and fp != want:
            raise IndexFileError(f"{path!r} was built with another tokenizer ({name or 'unknown'}); rebuild it "
                                 "with `lookahead index build --tokenizer` naming the model you serve")
    ix = CorpusIndex(buf, vocab, fp, name, docs)
    ix._mmap = mm  # keeps the mapping alive as long as the index
    return ix
