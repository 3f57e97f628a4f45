"""Map source paths recorded on the compile machine to local files (DESIGN.md CLI contract; issue 12 item 3,
issue 13 item 4).

A profile taken on a GPU server must work on a laptop checkout. A recorded path (the kernel's file, a header,
an inlined helper; from the report or the cubin's line table) is normalized — mixed ``\\``/``/`` separators,
``./`` and ``../`` segments (Makefile builds record ``./kernel/x.cu``) — and matched to the local candidates
sharing the longest suffix of path components. Among those, the one whose text is the profiled text (the
report embeds it) wins, then the one nearest the report. When that still leaves several, none is taken:
the note names the candidates and how to choose (``--path-map OLD=NEW``, setting ``warpwise.pathMap``).
A path map rewrites a recorded prefix first and is exact: its target is used when it is a candidate.
"""

from __future__ import annotations

import ntpath
import posixpath
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path


def normalize(path: str) -> str:
    """``path`` with ``/`` separators, ``.`` segments removed and ``..`` applied lexically; a Windows drive
    (``C:``) is kept. ``./kernel/x.cu`` -> ``kernel/x.cu``; ``a\\b/../c.cu`` -> ``a/c.cu``."""
    if not path:
        return path
    drive, rest = ntpath.splitdrive(path) if ("\\" in path or (len(path) > 1 and path[1] == ":")) else ("", path)
    rest = rest.replace("\\", "/")
    norm = posixpath.normpath(rest) if rest else rest
    if norm.startswith("//") and not rest.startswith("//"):
        norm = norm[1:]
    return f"{drive}{norm}" if drive else norm


def _parts(path: str) -> tuple[str, ...]:
    n = normalize(path)
    n = n[2:] if len(n) > 1 and n[1] == ":" else n
    return tuple(p for p in n.split("/") if p and p not in (".", ".."))


def common_suffix(a: str, b: str) -> int:
    """Number of trailing path components ``a`` and ``b`` share after normalizing (0 if the file names differ)."""
    pa, pb = _parts(a), _parts(b)
    n = 0
    while n < min(len(pa), len(pb)) and pa[-1 - n] == pb[-1 - n]:
        n += 1
    return n


def map_path(recorded: str, candidates: Iterable[str | Path]) -> Path | None:
    """The candidate sharing the longest component suffix with ``recorded`` (at least the file name).

    Ties go to the first candidate given. Returns None when no candidate has the same file name. (Paths
    only; :func:`resolve` also checks content and distance to the report.)
    """
    best: Path | None = None
    best_n = 0
    for c in candidates:
        n = common_suffix(recorded, str(c))
        if n > best_n:
            best, best_n = Path(c), n
    return best


def translated(recorded: str, mapped: Iterable[tuple[str, Path]]) -> list[Path]:
    """Where ``recorded`` would be in the checkout that holds files already mapped: for each (recorded path,
    local file) pair, the recorded folder above their shared suffix is replaced by the local one.

    ``/box/build/./src/a.cu`` mapped to ``/laptop/proj/src/a.cu`` puts ``/box/build/./src/../include/h.cuh``
    at ``/laptop/proj/include/h.cuh`` — a header in a sibling folder of the sources (``include/``,
    ``../common/``) that no suffix search near the sources finds. Existing regular files only, each once,
    in the order of ``mapped``.
    """
    target = _parts(recorded)
    out: list[Path] = []
    for rec, local in mapped:
        n = common_suffix(rec, str(local))
        src = _parts(rec)
        lp = Path(local).parts
        if n == 0 or n >= len(lp):
            continue
        root = src[:len(src) - n]
        if len(target) <= len(root) or target[:len(root)] != root:
            continue
        cand = Path(*lp[:len(lp) - n], *target[len(root):])
        try:
            ok = cand.is_file()
        except OSError:
            ok = False
        if ok and cand not in out:
            out.append(cand)
    return out


def parse_path_map(items: Iterable[str]) -> list[tuple[str, str]]:
    """``OLD=NEW`` strings as (normalized old prefix, new prefix) pairs, longest old prefix first.

    Raises ValueError naming the item when it has no ``=`` or an empty side.
    """
    out = []
    for item in items:
        old, sep, new = item.partition("=")
        if not sep or not old.strip() or not new.strip():
            raise ValueError(f"path map entry {item!r}: expected OLD=NEW (the recorded path prefix = the local one)")
        out.append((normalize(old.strip()).rstrip("/"), new.strip()))
    return sorted(out, key=lambda kv: -len(kv[0]))


def apply_path_map(recorded: str, path_map: Sequence[tuple[str, str]]) -> Path | None:
    """The local path ``recorded`` maps to under ``path_map`` (a prefix rule, on component boundaries), or None."""
    norm = normalize(recorded)
    for old, new in path_map:
        if norm == old or norm.startswith(old + "/"):
            return Path(new) / norm[len(old):].lstrip("/") if norm != old else Path(new)
    return None


@dataclass(frozen=True)
class Mapping:
    """Where one recorded path went: ``local`` (None when nothing or no single file matched), the
    ``candidates`` that shared the longest suffix, and a ``note`` for the user when it was ambiguous."""

    recorded: str
    local: Path | None
    candidates: tuple[Path, ...] = field(default_factory=tuple)
    note: str | None = None


def _distance(candidate: Path, report: Path) -> int:
    """Folders between ``candidate`` and ``report`` (up to their common ancestor, then down)."""
    a, b = candidate.resolve().parent.parts, report.resolve().parent.parts
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    return (len(a) - k) + (len(b) - k)


def resolve(recorded: str, candidates: Sequence[Path], embedded: str | None = None, report: Path | None = None,
            path_map: Sequence[tuple[str, str]] = (), same_text: Callable[[str, str], bool] | None = None) -> Mapping:
    """Map ``recorded`` to one of ``candidates`` (see the module doc for the order of the rules).

    ``embedded``: the profiled text of the file (the report's copy) when known; ``same_text(a, b)`` compares
    two texts (default: source.same_code, comments and white space aside); unreadable candidates count as
    different.
    """
    if path_map:
        target = apply_path_map(recorded, path_map)
        if target is not None:
            hit = next((c for c in candidates if c.resolve() == target.resolve()), None)
            if hit is not None or target.is_file():
                return Mapping(recorded, hit or target, (hit or target,))
    best_n, best = 0, []
    for c in candidates:
        n = common_suffix(recorded, str(c))
        if n > best_n:
            best_n, best = n, [c]
        elif n == best_n and n > 0 and c not in best:
            best.append(c)
    if not best:
        return Mapping(recorded, None)
    if len(best) == 1:
        return Mapping(recorded, best[0], tuple(best))
    pool = best
    if embedded is not None:
        from warpwise.analysis.profile.source import same_code

        same = same_text or same_code
        matching = []
        for c in best:
            try:
                if same(c.read_text(errors="replace"), embedded):
                    matching.append(c)
            except OSError:
                continue
        pool = matching or best
    if len(pool) > 1 and report is not None:
        d = {c: _distance(c, report) for c in pool}
        nearest = min(d.values())
        pool = [c for c in pool if d[c] == nearest]
    if len(pool) == 1:
        return Mapping(recorded, pool[0], tuple(best))
    names = ", ".join(str(c) for c in pool)
    return Mapping(recorded, None, tuple(best),
                   f"{recorded} matches {len(pool)} local files equally ({names}): none is used. Choose with "
                   f"--path-map {posixpath.dirname(normalize(recorded)) or '.'}=LOCAL_FOLDER (CLI) or the "
                   "warpwise.pathMap setting (editor)")
