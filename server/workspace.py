"""Workspace files the server reads: glob matching and the order reports are analysed in.

Globs are relative to the workspace folder with ``**`` for any number of folders (``reports/**`` is
everything under ``reports/``, ``**/*.ncu-rep`` every report at any depth), as VS Code's own settings
use them; matching is wcmatch's (GLOBSTAR), not file names alone.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from wcmatch import glob as wglob

SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".ruff_cache", "build", "dist"}
_FLAGS = wglob.GLOBSTAR | wglob.BRACE | wglob.DOTGLOB


def matches(rel: str, patterns: Sequence[str]) -> bool:
    """Whether the workspace-relative POSIX path ``rel`` matches any of ``patterns``."""
    return bool(patterns) and wglob.globmatch(rel, list(patterns), flags=_FLAGS)


def scan(roots: Iterable[Path], patterns: Sequence[str] = (), exts: tuple[str, ...] | None = None) -> list[Path]:
    """Regular files under ``roots`` matching a glob of ``patterns`` (or ending in one of ``exts``).

    Hidden folders and build/tool folders (``SKIP_DIRS``) are not entered; results are sorted per folder.
    """
    out: list[Path] = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
            for name in sorted(filenames):
                p = Path(dirpath) / name
                if not p.is_file():
                    continue
                if exts is not None:
                    if name.endswith(exts):
                        out.append(p)
                elif matches(p.relative_to(root).as_posix(), patterns):
                    out.append(p)
    return out


def open_first(reports: Sequence[Path], open_files: Sequence[Path]) -> list[Path]:
    """``reports`` ordered so that those likely to cover an open file come first.

    A report in the folder of an open file (or below it) goes first, then one whose folder shares the
    longest path prefix with an open file; among equals the newest file first (the newest report of a
    kernel is the one the editor shows), else the order is kept. Only the order changes: every report is
    still analysed (the rest in the background, with progress).
    """
    dirs = [f.resolve().parent for f in open_files]

    def rank(rep: Path) -> tuple[int, int, float]:
        r = rep.resolve().parent
        try:
            newest = -rep.stat().st_mtime
        except OSError:
            newest = 0.0
        best = 0
        for d in dirs:
            if r == d or d in r.parents:
                return (0, 0, newest)
            common = len(os.path.commonpath([str(r), str(d)]).split(os.sep))
            best = max(best, common)
        return (1, -best, newest)

    return sorted(reports, key=rank)


def is_report(path: Path) -> bool:
    """A file warpwise reads as a profile: an Nsight Compute report or an ncu CSV source export (a glob
    like ``reports/**`` selects a folder; other files in it are not reports)."""
    return path.suffix == ".ncu-rep" or path.name.endswith(".source.csv")


def is_binary(path: Path) -> bool:
    """A file warpwise reads as a binary: a ``.cubin`` or an ELF executable/shared library."""
    if path.suffix == ".cubin":
        return True
    from warpwise.analysis.bounded import InputFileError, read_bytes

    try:  # only a regular file is opened: a FIFO or device named like a program must not block the scan
        return read_bytes(path, "binary", head=4) == b"\x7fELF"
    except (InputFileError, OSError):
        return False
