"""Per-file findings: what the editor shows on each line of a source file, from the analyses.

Pure functions over analysis results (no LSP types) so they are tested without a client. Lines are
1-based in the *baseline* text: the source embedded in the profile when present (what was profiled),
otherwise the file as it was on disk when analysed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from warpwise.analysis.pipeline import Analysis, KernelAnalysis
from warpwise.analysis.profile.lines import LineStats
from warpwise.analysis.profile.source import same_code


@dataclass
class BlameLink:
    """Stall samples of a use line blamed on a def line (or the reverse, for a def line's findings)."""

    file: Path | None
    line: int | None
    opcode: str
    reason: str
    samples: float
    distance: int


@dataclass
class LineFinding:
    """One source line's findings for one kernel.

    ``share``: the line's samples / the kernel's total samples (0..1). ``stats`` is None for a line that
    has no samples itself but is blamed for stalls elsewhere (``causes``). ``blamed_on``: where this
    line's stalls come from; ``advice``: advice whose hotspots or scope touch this line.
    """

    line: int
    kernel: KernelAnalysis
    stats: LineStats | None
    share: float
    blamed_on: list[BlameLink] = field(default_factory=list)
    causes: list[BlameLink] = field(default_factory=list)
    advice: list[Any] = field(default_factory=list)
    sass: list[str] = field(default_factory=list)


@dataclass
class FileFindings:
    """All findings for one local file plus the baseline text their lines refer to."""

    path: Path
    baseline: str
    findings: list[LineFinding]
    stale: bool = False  # the profiled source differs from the file on disk


def _same(a: Path | None, b: Path) -> bool:
    return a is not None and a.resolve() == b.resolve()


def _instruction_text(ka: KernelAnalysis, function: str, offset: int,
                      section: str = "") -> tuple[str, Path | None, int | None]:
    ins, s, file, line = ka.instruction(function, offset, section)
    text = ins.text if ins is not None else (s.sass if s is not None else "")
    return text, (ka.local.get(file) if file else None), line


def _blame_links(ka: KernelAnalysis, pcs: set[tuple[str, int]], as_use: bool) -> list[BlameLink]:
    if ka.blame is None:
        return []
    agg: dict[tuple[str | None, int | None, str, str], list[float]] = {}
    for e in ka.blame.edges:
        if e.stall_samples <= 0 or e.def_offset is None:
            continue
        owner = e.section.removeprefix(".text.") if e.section else e.function
        here = (owner, e.use_offset if as_use else e.def_offset)
        if here not in pcs:
            continue
        other = e.def_offset if as_use else e.use_offset
        text, file, line = _instruction_text(ka, e.function, other, e.section)
        opcode = text.split()[0] if text and not text.startswith("@") else (text.split()[1] if text else "?")
        key = (str(file) if file else None, line, opcode, e.reason)
        slot = agg.setdefault(key, [0.0, 0.0])
        slot[0] += e.stall_samples
        slot[1] = max(slot[1], e.distance)
    links = [BlameLink(Path(k[0]) if k[0] else None, k[1], k[2], k[3], v[0], int(v[1])) for k, v in agg.items()]
    return sorted(links, key=lambda b: -b.samples)


def _advice_lines(adv: Any, path: Path, ka: KernelAnalysis) -> set[int]:
    """Lines of ``path`` an advice points at: its hotspots' use and def lines (recorded paths mapped
    to local files through the kernel's path map)."""
    lines: set[int] = set()
    for h in getattr(adv, "hotspots", []) or []:
        for end in ("use", "def_"):
            loc = getattr(h, end, None)
            if loc is None:
                continue
            f, ln = getattr(loc, "file", None), getattr(loc, "line", None)
            if f and ln and _same(ka.local.get(f) or Path(f), path):
                lines.add(int(ln))
    return lines


def baseline_text(ka: KernelAnalysis, path: Path) -> str | None:
    """The profiled version of ``path`` (embedded in the report) if the report has it."""
    for recorded, local in ka.local.items():
        if _same(local, path) and recorded in ka.profile.source_files:
            return ka.profile.source_files[recorded]
    return None


def file_findings(analyses: list[Analysis], path: Path, disk_text: str | None = None) -> FileFindings:
    """Findings of every analysed kernel on the local file ``path`` (hottest lines first)."""
    findings: list[LineFinding] = []
    baseline: str | None = None
    for a in analyses:
        for ka in a.kernels:
            recorded = {r for r, p in ka.local.items() if _same(p, path)}
            if not recorded:
                continue
            baseline = baseline or baseline_text(ka, path)
            total = max(1, ka.profile.total_samples)
            by_line: dict[int, LineFinding] = {}
            for ls in ka.lines:
                if ls.file in recorded:
                    f = LineFinding(ls.line, ka, ls, ls.samples / total)
                    f.blamed_on = _blame_links(ka, set(ls.pcs), as_use=True)
                    f.sass = [_instruction_text(ka, fn, off)[0] for fn, off in ls.pcs]
                    by_line[ls.line] = f
            # def lines: instructions on this file blamed for stalls elsewhere
            if ka.blame is not None:
                def_pcs: dict[int, set[tuple[str, int]]] = {}
                for e in ka.blame.edges:
                    if e.def_offset is None or e.stall_samples <= 0:
                        continue
                    _, file, line = _instruction_text(ka, e.function, e.def_offset, e.section)
                    if line is not None and _same(file, path):
                        owner = e.section.removeprefix(".text.") if e.section else e.function
                        def_pcs.setdefault(line, set()).add((owner, e.def_offset))
                for line, pcs in def_pcs.items():
                    f = by_line.get(line) or LineFinding(line, ka, None, 0.0)
                    f.causes = _blame_links(ka, pcs, as_use=False)
                    by_line[line] = f
            for adv in ka.advice:
                for line in _advice_lines(adv, path, ka):
                    f = by_line.get(line) or LineFinding(line, ka, None, 0.0)
                    f.advice.append(adv)
                    by_line[line] = f
            findings.extend(by_line.values())
    if disk_text is None and path.is_file():
        disk_text = path.read_text(errors="replace")
    stale = baseline is not None and disk_text is not None and not same_code(baseline, disk_text)
    findings.sort(key=lambda f: (-(f.stats.samples if f.stats else 0), f.line))
    return FileFindings(path=path, baseline=baseline if baseline is not None else (disk_text or ""),
                        findings=findings, stale=stale)
