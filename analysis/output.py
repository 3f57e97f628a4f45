"""Writing a command's output file (``advise -o``, ``rewrite -o``, ``tune -o``'s artifacts): all or nothing,
and only ever onto a regular file or a new one (a FIFO, device, folder or symbolic link named as the output is
refused, never written into or replaced)."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from warpwise.analysis.bounded import what_kind


class OutputPathError(OSError):
    """The output path exists and is not a regular file, or its folder is missing or not writable; the
    message (``str(e)``) names the path and what it is."""


def output_problem(output: str | Path, *, folder_made: bool = False) -> str | None:
    """Why ``output`` cannot be written as a command's output file, or None: it exists and is not a regular
    file (a folder, FIFO, device, socket or symbolic link, looked at without following it), or its folder does
    not exist (unless ``folder_made``: the command creates it) or is not writable. The message names the
    path; checked before any work is done."""
    p = Path(output)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        st = None
    except OSError as e:  # a path through a file, a name too long
        return f"{output}: cannot be written: {e.strerror or e}"
    if st is not None and not stat.S_ISREG(st.st_mode):
        hint = "name the file to write" if stat.S_ISDIR(st.st_mode) else \
            "name a regular file (or a new one) to write"
        return f"{output}: is {what_kind(st.st_mode)}, not a regular file; {hint}"
    folder = p.parent
    if folder_made and not os.path.lexists(folder):
        return None
    if not folder.is_dir():
        return f"{output}: the folder {folder} does not exist"
    if not os.access(folder, os.W_OK):
        return f"{output}: the folder {folder} is not writable"
    return None


def report_output_problem(output: str | Path) -> str | None:
    """:func:`output_problem` of the report ``warpwise profile -o OUTPUT`` makes ncu write: ``OUTPUT``, with
    ``.ncu-rep`` added unless it ends so (as analysis/profile/collect.profile adds it); its folder is created."""
    p = Path(output)
    return output_problem(p if p.suffix == ".ncu-rep" else p.with_name(p.name + ".ncu-rep"), folder_made=True)


def folder_problem(folder: str | Path, names: list[str | Path]) -> str | None:
    """Why output folder ``folder`` (created when missing) cannot take the files ``names`` (paths inside it),
    or None: it exists and is not a folder (a symbolic link to one is a folder), or one of the files exists
    and is not a regular file (:func:`output_problem`)."""
    f = Path(folder)
    if os.path.lexists(f) and not f.is_dir():
        try:
            mode = os.lstat(f).st_mode
        except OSError as e:
            return f"{folder}: cannot be written: {e.strerror or e}"
        kind = "a file" if stat.S_ISREG(mode) else what_kind(mode)
        return f"{folder}: is {kind}, not a folder; name the folder to write into"
    if not f.is_dir():
        return None
    return next((m for m in (output_problem(n) for n in names) if m is not None), None)


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
    ``path`` must be a regular file or not exist (:func:`output_problem`, checked again here).

    Raises:
        OutputPathError: ``path`` exists and is not a regular file (a folder, FIFO, device, socket,
            symbolic link), or its folder does not exist or is not writable.
        OSError: the disk is full, or another write error.
    """
    p = Path(path)
    problem = output_problem(p)
    if problem is not None:
        raise OutputPathError(problem)
    try:
        mode = os.lstat(p).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
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
