"""Writing a command's output file (``advise -o``, ``rewrite -o``): all or nothing."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path


def input_clobbered(output: str | Path, inputs: list[str | Path]) -> str | None:
    """The input that ``output`` would overwrite (the same file, through any path or link), or None: a
    command's -o must never replace what it reads (the source, report or binary)."""
    out = Path(output)
    if not out.exists():
        return None
    for given in inputs:
        try:
            if os.path.samefile(out, given):
                return str(given)
        except OSError:
            continue
    return None


def write_atomically(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder renamed over it (POSIX
    rename is atomic): a reader never sees a partial file, and a failure leaves the old file as it was.
    The file keeps an existing file's permissions, else gets the default ones (0666 less the umask).

    Raises:
        OSError: the folder does not exist or is not writable, ``path`` is a folder, the disk is full.
    """
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a folder", str(p))
    folder = p.parent
    if not folder.is_dir():
        raise FileNotFoundError(errno.ENOENT, f"folder {folder} does not exist", str(p))
    try:
        mode = p.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{p.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
