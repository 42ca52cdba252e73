"""lookahead.index: numba suffix automata over token ids (never imports torch).

_layout.py     the flat int32 buffer of one automaton: header, states, edges, hash, text; growth
automaton.py   one automaton: extension, match cursors, occurrences
arena.py       all automata of a drafter in one typed List
cursors.py     a request's match cursors into other automata; appending tokens
pointer.py     a request's copy pointer: where in its own text it is copying from
analogy.py     where a filled-in value comes from, by analogy with earlier values
value_end.py   where copied values end and the template resumes
lists.py       a list's next items after the one copied, with the output's separator
template.py    what followed a key in memory or a corpus, resumed after the value the request just wrote
substitute.py  tokens the output consistently writes in place of an input token
spacing.py     a token's spelling with a leading space (a copied value's first token, from the tokenizer)
trie.py        the draft trie: continuations merged with weights, emitted as a chain or tree
opening.py     a response's first draft: how earlier responses opened
propose.py     drafts from a request's automaton and external ones (memory, corpus), batched
address.py     single-request calls that receive their arrays as addresses (the cheapest per-step path)
entry.py       a compiled function's own entry point for one signature (no dispatcher on the hot path)
borrow.py      array views that hold no reference (no reference counting in hot loops)
paths.py       best root paths of a batch of tree drafts (for chain verifiers)
rows.py        an engine's token table: content keys of its rows, their new tokens
memory.py      cross-request memory with a token budget
corpus.py      static corpus indexes: build, save, mmap load, merge
validate.py    token-id checks with errors that name the fix
warmup.py      compiles (or loads from cache) every native function, and checks that it did
stale.py       drops numba's cached code when any source file here changed (numba checks only the defining one)
"""
import os as _os

from .stale import drop_stale_cache as _drop_stale_cache

_drop_stale_cache(_os.path.dirname(_os.path.abspath(__file__)))  # before any module below loads cached code

from .arena import Arena  # noqa: E402
from .automaton import extend_many, find_state, match_step, new_automaton, occurrences, self_cursor, text_of
from .corpus import (CorpusIndex, IndexFileError, build_corpus, load_corpus, merge_corpora,
                     vocab_fingerprint)
from .memory import Memory
from .cursors import append_tokens
from .batch import propose_batch
from .propose import add_document
from .spacing import NO_SPACING, spaced_ids
from .validate import as_token_ids
from .warmup import warmup

__all__ = ["Arena", "CorpusIndex", "IndexFileError", "Memory", "add_document", "append_tokens", "as_token_ids",
           "build_corpus", "extend_many", "find_state", "load_corpus", "match_step", "merge_corpora",
           "new_automaton", "NO_SPACING", "occurrences", "propose_batch", "self_cursor", "spaced_ids", "text_of",
           "vocab_fingerprint", "warmup"]
