"""Removes numba's cached machine code when any source file of the index changed.

numba's cache checks only the timestamp of the file that defines a function, but a compiled function also
holds the code of every inline="always" helper it calls, and most of those live in other files (propose_one
inlines trie.py, automaton.py, pointer.py...). After an edit to trie.py alone (a git pull, a branch switch in
an editable install) propose_one would load the old trie from the cache and draft with it, silently. So the
cache is also keyed by a digest of all the index's sources: when it changes, the cached files go before
anything loads them (the next warm-up compiles again, a few minutes).
"""
import hashlib
import os

STAMP = "lookahead-sources.sha1"  # in the cache folder: the digest the cached files were compiled from


def sources_digest(src_dir):
    """sha1 over the names and contents of the .py files in src_dir (hex)."""
    h = hashlib.sha1()
    for name in sorted(os.listdir(src_dir)):
        if name.endswith(".py"):
            h.update(name.encode() + b"\0")
            with open(os.path.join(src_dir, name), "rb") as f:
                h.update(f.read())
            h.update(b"\0")
    return h.hexdigest()


def numba_cache_dir(src_dir):
    """The folder numba caches src_dir's functions in: NUMBA_CACHE_DIR's subfolder for it when that is set,
    else src_dir/__pycache__ when writable, else the user-wide cache's subfolder (numba's own choice, asked
    from its locators); None when numba would not cache them."""
    try:
        from numba.core import caching

        names = sorted(n for n in os.listdir(src_dir) if n.endswith(".py"))
        if not names:
            return None
        probe = os.path.join(src_dir, names[0])  # numba places every file of a folder alike
        impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # numba >= 0.59 / older
        for cls in impl._locator_classes:
            loc = cls.from_function(numba_cache_dir, probe)
            if loc is not None:
                return loc.get_cache_path()
        return None
    except (ImportError, AttributeError):  # another numba's internals: its default place
        return os.path.join(src_dir, "__pycache__")


def drop_stale_cache(src_dir, cache_dir=None):
    """Deletes numba's cache files (*.nbi, *.nbc) in cache_dir (default: where numba caches src_dir's
    functions) unless they were compiled from the sources in src_dir as they are now; returns how many files
    it deleted. A folder it cannot write to is left alone."""
    cache_dir = cache_dir or numba_cache_dir(src_dir)
    if cache_dir is None:
        return 0
    digest = sources_digest(src_dir)
    stamp = os.path.join(cache_dir, STAMP)
    try:
        with open(stamp) as f:
            if f.read().strip() == digest:
                return 0
    except OSError:
        pass
    try:
        os.makedirs(cache_dir, exist_ok=True)
    except OSError:
        return 0
    if not os.access(cache_dir, os.W_OK):
        return 0
    dropped = 0
    for name in os.listdir(cache_dir):
        if name.endswith((".nbi", ".nbc")):
            try:
                os.remove(os.path.join(cache_dir, name))
                dropped += 1
            except OSError:  # another process removed it first
                pass
    try:
        with open(stamp + ".tmp", "w") as f:
            f.write(digest)
        os.replace(stamp + ".tmp", stamp)  # atomic: a reader never sees half a digest
    except OSError:
        pass
    return dropped
