"""Numba set-up shared by the engine kernels: the cache directory and the ``njit`` decorator.

DESIGN.md decision 2: kernels are ``@njit(cache=True, nogil=True)``. The cache
lives next to the package when that directory is writable, else in the user cache
dir (platformdirs); an explicit ``NUMBA_CACHE_DIR`` (the test script sets a fresh
one) is used as the base instead. Numba checks only the source file of each
kernel when it reuses a cached one, not the modules it calls or the global tables
it reads, so the cache goes into a subdirectory named by a hash of all kernel
sources, the Numba version and the evaluation tables played (the shipped file, the one named by
``XIANGQI_EVAL``, or ``hand``; ``nnue`` and the network's weights file, ``XIANGQI_NNUE`` or the
shipped one): a stale cache can never change results.
"""

from __future__ import annotations

import hashlib
import os
import sys

_KERNEL_FILES = ("_numba.py", "consts.py", "movegen.py", "evaluate.py", "tt.py", "search.py", "tbgen.py",
                 "chase.py", "nnue.py")


def _writable(path: str) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
        probe = os.path.join(path, f".write-test-{os.getpid()}")
        with open(probe, "w") as fh:
            fh.write("")
        os.remove(probe)
        return True
    except OSError:
        return False


def _sources_digest() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256()
    for name in _KERNEL_FILES:
        try:
            with open(os.path.join(here, name), "rb") as fh:
                h.update(fh.read())
        except OSError:
            h.update(name.encode())
    # the evaluation tables the kernels read as globals (evaluate.tables_source): the shipped file,
    # another one named by XIANGQI_EVAL, or "hand"
    tables = os.environ.get("XIANGQI_EVAL") or os.path.join(here, "data", "eval-texel-2026-12-01.npz")
    # the network's weights (nnue.py reads them as globals; XIANGQI_EVAL=nnue plays them in the search,
    # a run-time choice: the evaluation tables are then the shipped ones)
    net = os.environ.get("XIANGQI_NNUE") or os.path.join(here, "data", "nnue-2026-12-01.npz")
    try:
        with open(net, "rb") as fh:
            h.update(b"net" + fh.read())
    except OSError:
        h.update(b"net-missing")
    if tables in ("nnue", "texel"):
        tables = os.path.join(here, "data", "eval-texel-2026-12-01.npz")
    if tables == "hand":
        h.update(b"tables-hand")
    else:
        try:
            with open(tables, "rb") as fh:
                h.update(b"tables" + fh.read())
        except OSError:
            h.update(b"tables-missing")
    try:
        from importlib.metadata import version

        h.update(version("numba").encode())
    except Exception:  # noqa: BLE001 - the digest only needs to change when sources change
        pass
    return h.hexdigest()[:16]


def cache_dir() -> str:
    """The directory the kernels are cached in (created when needed)."""
    base = os.environ.get("XIANGQI_NUMBA_CACHE_BASE") or os.environ.get("NUMBA_CACHE_DIR")
    if not base:
        here = os.path.dirname(os.path.abspath(__file__))
        base = os.path.join(here, "__pycache__", "numba")
        if not _writable(base):
            import platformdirs

            base = os.path.join(platformdirs.user_cache_dir("pyxiangqi"), "numba")
    return os.path.join(base, "kernels-" + _sources_digest())


def _set_cache_dir() -> None:
    path = cache_dir()
    # remember the base so that a re-import (e.g. importlib.reload) does not nest directories
    os.environ.setdefault("XIANGQI_NUMBA_CACHE_BASE", os.path.dirname(path))
    os.environ["NUMBA_CACHE_DIR"] = path
    if "numba" in sys.modules:  # numba read its config already: update it in place
        import numba.core.config

        numba.core.config.CACHE_DIR = path


_set_cache_dir()

import numba  # noqa: E402


def njit(func):
    """``numba.njit(cache=True, nogil=True)``: compiled lazily on first call, cached on disk."""
    return numba.njit(cache=True, nogil=True)(func)


def njit_sig(signature: str):
    """``numba.njit(signature, cache=True, nogil=True)``: compiled when the module is imported.

    Recursive kernels need an explicit signature: a recursive kernel compiled by
    type inference crashes when it is loaded back from the cache
    (numba issue #6061); with the signature it loads correctly.
    """
    return numba.njit(signature, cache=True, nogil=True)
