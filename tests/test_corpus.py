"""Corpus indexes: build, save, mmap load, merge, and the refusals of bad files."""
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lookahead import Drafter
from lookahead.index import (IndexFileError, build_corpus, find_state, load_corpus, merge_corpora, occurrences,
                             text_of, vocab_fingerprint)
from reference_index import SEP, RefIndex


class FakeTokenizer:
    def __init__(self, words):
        self.words = words

    def get_vocab(self):
        return {w: i for i, w in enumerate(self.words)}


docs_st = st.lists(st.lists(st.integers(0, 5), max_size=30), min_size=1, max_size=5)


def _ends(ix, pat):
    b = ix.buffer
    v = find_state(b, np.asarray(pat, np.int32))
    if v == -1:
        return []
    out = np.empty(b.shape[0], np.int32)
    return sorted(out[:occurrences(b, v, out, out.shape[0], False)].tolist())


@settings(max_examples=25)
@given(docs_st, docs_st, st.lists(st.lists(st.integers(0, 5), min_size=1, max_size=4), max_size=6))
def test_save_load_merge_agree_with_reference(tmp_path_factory, d1, d2, patterns):
    tmp = tmp_path_factory.mktemp("ix")
    a = build_corpus(d1, vocab_size=6)
    b = build_corpus(d2, vocab_size=6)
    pa = a.save(tmp / "a.lkidx")
    la = load_corpus(pa)
    assert la.documents == len(d1) and la.vocab_size == 6
    assert [x.tolist() for x in la.documents_tokens()] == d1
    merged = merge_corpora([la, b])
    pm = merged.save(tmp / "m.lkidx")
    lm = load_corpus(pm)
    ref_a = RefIndex([t for d in d1 for t in d + [SEP]])
    ref_m = RefIndex([t for d in d1 + d2 for t in d + [SEP]])
    assert text_of(lm.buffer).tolist() == ref_m.text
    for pat in patterns:
        assert _ends(la, pat) == ref_a.ends(pat)
        assert _ends(lm, pat) == ref_m.ends(pat)


def test_drafter_drafts_from_a_corpus_file(tmp_path):
    doc = list(range(20, 70))
    p = build_corpus([doc, [1, 2, 3]], vocab_size=100).save(tmp_path / "c.lkidx")
    d = Drafter(max_draft=10, corpus=str(p), learn=False)
    assert d.vocab_size == 100
    h = d.begin([5, 6, 20, 21, 22])
    assert d.propose(h).tokens.tolist() == list(range(23, 33))
    with pytest.raises(ValueError, match="vocabulary"):
        d.append(h, [100])


def test_missing_and_foreign_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="index build"):
        load_corpus(tmp_path / "nope.lkidx")
    junk = tmp_path / "junk.lkidx"
    junk.write_bytes(b"not an index at all" * 20)
    with pytest.raises(IndexFileError, match="not a lookahead index"):
        load_corpus(junk)
    with pytest.raises(IndexFileError, match="not a lookahead index"):
        Drafter(corpus=str(junk))


def _saved(tmp_path, tok=None):
    fp = vocab_fingerprint(tok) if tok else b""
    return build_corpus([list(range(30)), [3, 4, 5, 3, 4]], vocab_size=40, fingerprint=fp,
                        tokenizer_name="fake").save(tmp_path / "c.lkidx")


def test_truncated_file(tmp_path):
    p = _saved(tmp_path)
    raw = p.read_bytes() if hasattr(p, "read_bytes") else open(p, "rb").read()
    with open(p, "wb") as f:
        f.write(raw[:-40])
    with pytest.raises(IndexFileError, match="truncated"):
        load_corpus(p)


def test_corrupt_byte_fails_checksum(tmp_path):
    p = _saved(tmp_path)
    with open(p, "r+b") as f:
        f.seek(os.path.getsize(p) - 10)
        f.write(b"\x7f")
    with pytest.raises(IndexFileError, match="corrupt"):
        load_corpus(p)


def test_structurally_bad_buffer_is_refused_even_with_valid_checksum(tmp_path):
    # a crafted file (right checksum, wrong structure) must never reach native code
    ix = build_corpus([list(range(10))], vocab_size=40)
    ix.buffer[ix.buffer[13] + 2] = 10**6  # a text token far past the vocabulary
    p = ix.save(tmp_path / "bad.lkidx")
    with pytest.raises(IndexFileError, match="structure"):
        load_corpus(p)


def test_bad_inline_transition_is_refused(tmp_path):
    # a state's first transition lives in the state itself: a target past the states is a structure error
    from lookahead.index._layout import H_OFF_ST, H_N_ST, S_TO0, ST_W
    ix = build_corpus([list(range(10))], vocab_size=40)
    b = ix.buffer
    b[b[H_OFF_ST] + ST_W * 3 + S_TO0] = b[H_N_ST] + 5
    p = ix.save(tmp_path / "bad.lkidx")
    with pytest.raises(IndexFileError, match="structure check 10"):
        load_corpus(p)


def test_version_mismatch(tmp_path):
    p = _saved(tmp_path)
    with open(p, "r+b") as f:
        f.seek(8)
        f.write((99).to_bytes(4, "little"))
    with pytest.raises(IndexFileError, match="format 99"):
        load_corpus(p)


def test_foreign_tokenizer_is_refused(tmp_path):
    tok_a = FakeTokenizer(["a", "b", "c"])
    tok_b = FakeTokenizer(["a", "b", "d"])
    p = _saved(tmp_path, tok_a)
    assert load_corpus(p, tokenizer=tok_a).tokenizer_name == "fake"
    with pytest.raises(IndexFileError, match="another tokenizer"):
        load_corpus(p, tokenizer=tok_b)
    a = build_corpus([[1]], fingerprint=vocab_fingerprint(tok_a))
    b = build_corpus([[1]], fingerprint=vocab_fingerprint(tok_b))
    with pytest.raises(IndexFileError, match="different tokenizers"):
        merge_corpora([a, b])


def test_loading_never_writes_the_file(tmp_path):
    p = _saved(tmp_path)
    before = open(p, "rb").read()
    ix = load_corpus(p)
    d = Drafter(corpus=ix)
    h = d.begin([3, 4])
    d.append(h, [5, 3, 4])
    d.propose(h)
    del d, ix
    assert open(p, "rb").read() == before
