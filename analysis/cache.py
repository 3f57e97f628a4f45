"""Persistent on-disk cache of analyses (issue 15): a second ``warpwise advise`` of the same inputs, or a
reopened workspace, costs a load instead of reading the report, disassembling and analysing again.

Where: ``$WARPWISE_CACHE_DIR``, else ``$XDG_CACHE_HOME/warpwise``, else ``~/.cache/warpwise`` (the XDG Base
Directory default). ``WARPWISE_NO_CACHE=1`` turns it off; ``WARPWISE_CACHE_MAX_MB`` bounds its size
(default 512 MiB; least recently used entries are removed first).

Keys are SHA-256 digests of everything a result depends on: the content hashes of the report, binaries and
sources, *a digest of warpwise's own analysis code* (so a changed checkout never reads an older analysis),
the installed files of nvdisasm and ncu-report (path, size, mtime), and the call's options.

Entries are pickles. Pickle runs code when loaded, so an entry is only ever read from the private cache
directory warpwise created itself: it must be owned by this user and not writable by group or others
(created with mode 0700); otherwise the cache is not used. Writes go to a temporary file in the same
directory and are renamed into place (atomic on POSIX), so concurrent writers never leave a torn entry; an
entry that fails to load (corrupt, truncated, from another Python) is removed and treated as a miss.
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import stat
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

log = logging.getLogger("warpwise")

#: Bumped when the entry layout changes (part of every key and every entry's header).
FORMAT = 1
_MAGIC = b"warpwise-cache\n"
DEFAULT_MAX_BYTES = 512 << 20

_lock = threading.Lock()
_code_digest: str | None = None


def enabled() -> bool:
    """Whether the persistent cache is on (``WARPWISE_NO_CACHE`` unset or ``0``)."""
    return os.environ.get("WARPWISE_NO_CACHE", "") in ("", "0")


def cache_dir() -> Path:
    """The cache directory (not created): see the module docstring."""
    explicit = os.environ.get("WARPWISE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, "warpwise")


def max_bytes() -> int:
    """Size bound of the cache in bytes (``WARPWISE_CACHE_MAX_MB``, default 512 MiB)."""
    try:
        return max(1, int(float(os.environ["WARPWISE_CACHE_MAX_MB"]) * (1 << 20)))
    except (KeyError, ValueError):
        return DEFAULT_MAX_BYTES


def _private_dir(create: bool) -> Path | None:
    """The cache directory if it is safe to read pickles from (ours, mode without group/other write)."""
    d = cache_dir()
    try:
        if create:
            d.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = d.stat()
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        log.warning("cache directory %s is not private to this user: cache not used", d)
        return None
    return d


def code_digest() -> str:
    """Digest of the bytes of warpwise's analysis package's Python files (computed once): the code that makes a
    cached analysis. (Not the installed version string: reading it imports ``importlib.metadata``, ~1.5 MiB
    of RSS in the ``advise`` process while the report reader runs, and a version with the same analysis
    code makes the same analyses.)"""
    global _code_digest
    if _code_digest is None:
        h = hashlib.sha256(f"format {FORMAT}\n".encode())
        root = Path(__file__).resolve().parent
        for p in sorted(root.rglob("*.py")):
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())
        _code_digest = h.hexdigest()
    return _code_digest


def _file_identity(path: Path) -> str:
    """``path size mtime_ns`` of a file (``path missing`` when it cannot be stat'ed): identifies an installed
    file without reading or running it."""
    try:
        st = path.stat()
    except OSError:
        return f"{path} missing"
    return f"{path} {st.st_size} {st.st_mtime_ns}"


def tool_versions() -> str:
    """Identity of the external tools an analysis depends on, by their files (path, size, mtime: no run or
    import needed): the nvdisasm binary, and the files of the installed ncu-report package (its Python module
    and native libraries, the folder of ``libnvperf_host.so``), so a reinstall or upgrade of either gives new
    keys."""
    parts = []
    try:
        from warpwise.analysis.binary.tools import find_tool

        parts.append(f"nvdisasm {_file_identity(Path(find_tool('nvdisasm')))}")
    except Exception:
        parts.append("nvdisasm none")
    from warpwise.analysis.profile.nvperf_boot import library_path

    lib = library_path()
    if lib is None:
        parts.append("ncu-report none")
    else:
        folder = Path(lib).parent
        files = sorted(p for p in folder.iterdir() if p.is_file())
        parts.append("ncu-report " + ", ".join(_file_identity(p) for p in files))
    return "; ".join(parts)


def file_digest(path: Path) -> str:
    """SHA-1 of a file's bytes (``missing`` when it cannot be read). Only a regular file within the size
    limits is opened (analysis/bounded): a FIFO or device named like an input must never block the key."""
    from warpwise.analysis.bounded import InputFileError, open_regular

    h = hashlib.sha1()
    try:
        with os.fdopen(open_regular(path, "binary"), "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except (OSError, InputFileError):
        return "missing"
    return h.hexdigest()


def make_key(kind: str, files: Iterable[Path], extra: Iterable[str] = ()) -> str:
    """Cache key of a ``kind`` of result computed from ``files`` (by resolved path and content) and options
    ``extra``, for this warpwise code and these tools."""
    h = hashlib.sha256(f"{kind}\n{FORMAT}\n{code_digest()}\n{tool_versions()}\n".encode())
    for f in files:
        h.update(f"{Path(f).resolve()}\0{file_digest(Path(f))}\n".encode())
    for x in extra:
        h.update(f"{x}\n".encode())
    return h.hexdigest()


def _entry(d: Path, key: str) -> Path:
    return d / f"{key}.pickle"


def load(key: str) -> Any | None:
    """The object stored under ``key``, or None (miss, disabled, corrupt: a corrupt entry is removed)."""
    if not enabled():
        return None
    d = _private_dir(create=False)
    if d is None:
        return None
    p = _entry(d, key)
    try:
        with p.open("rb") as fh:
            if fh.read(len(_MAGIC)) != _MAGIC:
                raise ValueError("bad header")
            obj = pickle.load(fh)
    except FileNotFoundError:
        return None
    except Exception as e:
        log.info("cache entry %s unreadable (%s): removed", p, e)
        _remove(p)
        return None
    try:
        os.utime(p)  # recently used: evicted last
    except OSError:
        pass
    return obj


def store(key: str, obj: Any) -> bool:
    """Store ``obj`` under ``key`` atomically, then evict least recently used entries over the size bound.
    Returns whether it was stored; never raises (a full disk or an unpicklable object only logs)."""
    if not enabled():
        return False
    d = _private_dir(create=True)
    if d is None:
        return False
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=".pickle")
        with os.fdopen(fd, "wb") as fh:
            fh.write(_MAGIC)
            pickle.dump(obj, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, _entry(d, key))
        tmp = None
    except Exception as e:
        log.info("cache store failed in %s: %s", d, e)
        return False
    finally:
        if tmp is not None:
            _remove(Path(tmp))
    evict(d, max_bytes())
    return True


def evict(d: Path, limit: int) -> None:
    """Remove least recently used entries of ``d`` until their total size is at most ``limit`` bytes."""
    with _lock:
        entries = []
        total = 0
        for p in d.glob("*.pickle"):
            try:
                st = p.stat()
            except OSError:
                continue
            if p.name.startswith(".tmp-"):
                continue
            entries.append((st.st_mtime_ns, st.st_size, p))
            total += st.st_size
        entries.sort()
        for _, size, p in entries:
            if total <= limit:
                break
            _remove(p)
            total -= size


def _remove(p: Path) -> None:
    try:
        p.unlink()
    except OSError:
        pass
