"""Which source files warpwise may read: those that resolve (symlinks followed) inside the workspace
folders (server) or the folders the user named on the command line (CLI) — docs/security.md.

Paths recorded in a binary's line table or in a report come from whoever built the file; reading them
wherever they point would put another file's text into advice and SARIF, or make the server read its own
LSP channel through ``/dev/stdin`` (issue 13). The roots are process-wide: the CLI sets them from its
arguments, the server from its workspace folders. With no roots set nothing is read from disk.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

from warpwise.analysis.bounded import InputFileError, read_bytes

_lock = threading.Lock()
_roots: tuple[Path, ...] = ()


def set_roots(folders: Iterable[str | Path]) -> tuple[Path, ...]:
    """Make ``folders`` (resolved; files stand for their folder) the roots sources may be read from."""
    out: list[Path] = []
    for f in folders:
        try:
            p = Path(f).resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        out.append(p if p.is_dir() else p.parent)
    global _roots
    with _lock:
        _roots = tuple(dict.fromkeys(out))
    return _roots


def roots() -> tuple[Path, ...]:
    """The current roots (resolved folders)."""
    with _lock:
        return _roots


def inside(path: str | Path) -> bool:
    """Whether ``path`` exists and resolves, symlinks followed, inside one of the roots."""
    try:
        real = Path(path).resolve(strict=True)
    except (OSError, RuntimeError, ValueError):
        return False
    return any(real.is_relative_to(r) for r in roots())


def read_source(path: str | Path, errors: str = "strict") -> str | None:
    """Text of source ``path`` when it resolves inside the roots and is a regular file within the source
    size limit; None otherwise (outside, missing, a device or FIFO, too large). Bytes are kept as they
    are: no newline translation. ``errors="strict"``: UTF-8, or for a file that is not UTF-8 (a Latin-1
    comment) one code point per byte, as rewrites read it (:mod:`warpwise.analysis.encoding`; None for
    binary data); otherwise UTF-8 decoded with ``errors`` (``"replace"``: U+FFFD)."""
    if not inside(path):
        return None
    try:
        data = read_bytes(Path(path).resolve(), "source")
        if errors == "strict":
            from warpwise.analysis.encoding import decode_source

            return decode_source(data, path).text
    except InputFileError:
        return None
    return data.decode("utf-8", errors=errors)
