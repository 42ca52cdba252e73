"""numba's cached code is dropped when any source file of the index changed (index/stale.py)."""
import os

from lookahead.index.stale import STAMP, drop_stale_cache


def _files(d):
    return sorted(n for n in os.listdir(d) if n.endswith((".nbi", ".nbc")))


def _cache(d, *names):
    for n in names:
        with open(os.path.join(d, n), "w") as f:
            f.write("machine code")


def test_cache_survives_unchanged_sources_and_goes_when_any_source_changes(tmp_path):
    src = tmp_path / "index"
    cache = src / "__pycache__"
    cache.mkdir(parents=True)
    (src / "propose.py").write_text("from .trie import select\n")
    (src / "trie.py").write_text("def select(): return 1\n")
    _cache(cache, "propose.propose_one-1.py311.nbi", "propose.propose_one-1.py311.1.nbc")
    # no stamp yet: the files may come from any version of the sources
    assert drop_stale_cache(str(src)) == 2 and _files(cache) == []
    assert (cache / STAMP).exists()
    _cache(cache, "propose.propose_one-1.py311.nbi", "propose.propose_one-1.py311.1.nbc", "trie.select-1.py311.nbi")
    assert drop_stale_cache(str(src)) == 0 and len(_files(cache)) == 3  # same sources: kept
    (src / "trie.py").write_text("def select(): return 2\n")  # only the inlined helper's file changes
    assert drop_stale_cache(str(src)) == 3 and _files(cache) == []
    (src / "notes.txt").write_text("not a source")
    _cache(cache, "trie.select-1.py311.nbi")
    assert drop_stale_cache(str(src)) == 0 and len(_files(cache)) == 1
    (src / "new_module.py").write_text("")  # a new source file counts too
    assert drop_stale_cache(str(src)) == 1


def test_the_index_package_has_a_current_stamp():
    """Importing lookahead.index stamped its cache folder with the digest of its sources as they are."""
    import lookahead.index as ix
    from lookahead.index.stale import numba_cache_dir, sources_digest

    src = os.path.dirname(os.path.abspath(ix.__file__))
    with open(os.path.join(numba_cache_dir(src), STAMP)) as f:
        assert f.read().strip() == sources_digest(src)


def test_the_cache_folder_is_numbas_own_choice(tmp_path, monkeypatch):
    """With NUMBA_CACHE_DIR set, numba caches (and the guard looks) under it, not in __pycache__."""
    from numba.core import config

    from lookahead.index.stale import numba_cache_dir

    src = tmp_path / "index"
    src.mkdir()
    (src / "__init__.py").write_text("")
    assert numba_cache_dir(str(src)) == str(src / "__pycache__")
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "numba-cache"))
    got = numba_cache_dir(str(src))
    assert got.startswith(str(tmp_path / "numba-cache")) and "__pycache__" not in got
