"""Whether the compiled DSA kernel (``planner.alloc.kernel``) is in numba's cache, and
compiling it in the background when it is not.

Compiling the kernel takes about 15 s (once per machine and kernel version: numba caches it
beside the source, and a cached load takes under a second). A solve with a 60 s limit must
not spend a quarter of it compiling, so a process that finds no cache starts one compile in a
detached child (``python -m planner.alloc.jit_cache``) and meanwhile uses the Python search,
which gives the same answers node for node, only slower; once the child has written the
cache (and the marker below), later searches use the compiled one. ``COOP_DSA_JIT=0``
never uses it, ``COOP_DSA_JIT=1`` compiles in the foreground when needed.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

log = logging.getLogger(__name__)

KERNEL = Path(__file__).with_name("kernel.py")
STALE_LOCK_S = 600.0  # a compile that has not finished in this long is presumed dead
_once: set[str] = set()  # what this process did once: "compile" (started or tried), "warned"


@functools.lru_cache(maxsize=1)
def _fingerprint() -> str:
    """The kernel's sources, their modification times and sizes (numba invalidates its cache
    on those two), numba's version and the interpreter."""
    from importlib.metadata import version
    h = hashlib.sha256()
    for path in _sources():
        st = path.stat()
        h.update(path.read_bytes())
        h.update(f"{path.name} {st.st_mtime_ns} {st.st_size}".encode())
    h.update(f"{version('numba')} {sys.version_info[:2]} {sys.executable}".encode())
    return h.hexdigest()[:20]


def _sources() -> list[Path]:
    """The modules of the compiled search (``kernel.py`` calls into ``kernel_memo.py``)."""
    return sorted(KERNEL.parent.glob("kernel*.py"))


def _purge_stale() -> None:
    """Remove numba's cached kernel code before a compile. numba checks only the stamp of the
    file that defines a function, not of the functions it calls: after a change to
    ``kernel_memo.py`` alone it would load ``kernel.run`` compiled against the old one."""
    for path in _sources():
        for stale in _cache_dir().glob(f"{path.stem}.*.nb[ic]"):
            stale.unlink(missing_ok=True)


def _cache_dir() -> Path:
    """Where numba puts the cache (NUMBA_CACHE_DIR, else beside the source when writable, else
    the user's cache): the marker lives with it, so removing one removes the other."""
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        return Path(env)
    here = KERNEL.parent / "__pycache__"
    try:
        here.mkdir(exist_ok=True)
        if os.access(here, os.W_OK):
            return here
    except OSError:
        pass
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "coop-planner"


def _marker() -> Path:
    return _cache_dir() / f"dsa_kernel-{_fingerprint()}.ready"


def mode() -> str:
    """"jit" (compiled kernel ready, or COOP_DSA_JIT=1), "python" (COOP_DSA_JIT=0, numba
    missing, or the cache still cold: a background compile is then started)."""
    flag = os.environ.get("COOP_DSA_JIT", "")
    if flag == "0":
        return "python"
    if importlib.util.find_spec("numba") is None:  # found, not imported: that costs half a second
        if "warned" not in _once:
            log.warning("numba is not installed: the DSA search runs in Python (same answers, 20-30x slower)")
            _once.add("warned")
        return "python"
    if flag == "1":
        return "jit"
    try:
        if _marker().exists():
            return "jit"
    except OSError:
        return "python"
    _start_background_compile()
    return "python"


def _start_background_compile() -> None:
    if "compile" in _once:
        return
    _once.add("compile")
    lock = _marker().with_suffix(".lock")
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        if lock.exists() and time.time() - lock.stat().st_mtime > STALE_LOCK_S:
            lock.unlink(missing_ok=True)
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        os.close(fd)
    except OSError:
        return  # another process is compiling (or the cache dir is not writable)
    log.info("dsa: compiling the search kernel in the background (once per machine, about 15 s); "
             "the Python search meanwhile (same answers)")
    root = str(KERNEL.parents[2])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    try:
        subprocess.Popen([sys.executable, "-m", "planner.alloc.jit_cache", str(lock)], cwd=root, env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    except OSError as exc:
        log.warning("dsa: could not start the kernel compile: %s", exc)
        lock.unlink(missing_ok=True)


def skip_blas_probe() -> None:
    """Spare this process numba's BLAS probe (0.2 s of CPU: importing numba's array functions
    imports ``scipy.linalg`` to see whether ``np.dot`` can be compiled). The kernel uses no
    linear algebra. The cost: numba compiles no BLAS functions in this process, so only a
    process that runs nothing else compiled calls it (``planner alloc``). Nothing happens when
    numba's array functions or ``scipy.linalg`` are already imported."""
    if {"numba.np.arraymath", "scipy.linalg"} & set(sys.modules) or importlib.util.find_spec("numba") is None:
        return
    blas = "scipy.linalg.cython_blas"
    sys.modules[blas] = None  # an import of it then fails at once, without importing scipy.linalg
    try:
        import numba.np.arraymath  # noqa: F401  (runs the probe, which now finds no BLAS)
    finally:
        if sys.modules.get(blas, 0) is None:
            del sys.modules[blas]


def warm(lock: Path | None = None) -> None:
    """Compile the kernel (numba writes its cache) by one search on a small instance whose
    answer is known, then write the marker (through a temp file and a rename)."""
    import numpy as np

    _purge_stale()
    from .jit_search import JitSearch
    try:
        # two buffers meeting in time, capacity 3: one at 0 (size 1), one at 1 (size 2)
        st = JitSearch(np.array([0, 0]), np.array([2, 2]), np.array([1, 2]), np.array([1, 1]), 3)
        ok = st.run(np.arange(2), 1e9, float("inf"))
        if not ok or sorted(zip(st.offset.tolist(), st.size.tolist())) not in ([(0, 2), (2, 1)], [(0, 1), (1, 2)]):
            raise RuntimeError(f"compiled DSA kernel gave a wrong answer: {ok}, offsets {st.offset.tolist()}")
        marker = _marker()
        fd, tmp = tempfile.mkstemp(dir=marker.parent, prefix=".ready-")
        os.close(fd)
        os.replace(tmp, marker)
    finally:
        if lock is not None:
            lock.unlink(missing_ok=True)


if __name__ == "__main__":
    warm(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
