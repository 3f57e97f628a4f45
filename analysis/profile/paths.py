"""Map source paths recorded on the compile machine to local files (DESIGN.md CLI contract).

A profile taken on a GPU server must work on a laptop checkout: the recorded path is matched to the
local candidate that shares the longest suffix of path components.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePosixPath, PureWindowsPath


def _parts(path: str) -> tuple[str, ...]:
    pure = PureWindowsPath(path) if "\\" in path else PurePosixPath(path)
    return tuple(p for p in pure.parts if p not in ("/", "\\") and not p.endswith(":\\"))


def common_suffix(a: str, b: str) -> int:
    """Number of trailing path components ``a`` and ``b`` share (0 if the file names differ)."""
    pa, pb = _parts(a), _parts(b)
    n = 0
    while n < min(len(pa), len(pb)) and pa[-1 - n] == pb[-1 - n]:
        n += 1
    return n


def map_path(recorded: str, candidates: Iterable[str | Path]) -> Path | None:
    """The candidate sharing the longest component suffix with ``recorded`` (at least the file name).

    Ties go to the first candidate given. Returns None when no candidate has the same file name.
    """
    best: Path | None = None
    best_n = 0
    for c in candidates:
        n = common_suffix(recorded, str(c))
        if n > best_n:
            best, best_n = Path(c), n
    return best
