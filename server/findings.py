"""Per-file findings: what the editor shows on each line of a source file, from the analyses.

Pure functions over analysis results (no LSP types) so they are tested without a client. Lines are
1-based in the *baseline* text: the source embedded in the profile when present (what was profiled),
otherwise the file as it was on disk when analysed.

Findings are per kernel, not per launch or per report (``EditorKernel``): the launches of one kernel in a
report are the analysis' KernelGroup (samples summed, so a line's share is never above 100%; one ranking
over the launches, the CLI's), and when several reports cover the same kernel the newest is active unless
the user picked another one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from warpwise.analysis.bounded import InputFileError, read_text
from warpwise.analysis.pipeline import Analysis, KernelAnalysis, KernelGroup
from warpwise.analysis.profile.lines import LineStats
from warpwise.analysis.profile.source import same_code
from warpwise.server.uris import same_file


@dataclass
class EditorKernel:
    """One kernel as the editor shows it: the analysis' grouping of its launches in the active report.

    ``group``: the analysis' KernelGroup (lines summed over the launches, one ranking over them by the
    CLI's rule); ``report``: the active report; ``reports``: every report holding the kernel, newest first.
    """

    group: KernelGroup
    report: Path
    reports: list[Path]

    @property
    def mangled(self) -> str:
        """The kernel's symbol."""
        return self.group.mangled

    @property
    def name(self) -> str:
        """The kernel's name as ncu shows it."""
        return self.group.name

    @property
    def launches(self) -> list[KernelAnalysis]:
        """The kernel's launches in the active report (report order)."""
        return self.group.launches

    @property
    def lines(self) -> list[LineStats]:
        """Line stats summed over the launches, hottest first."""
        return self.group.lines

    @property
    def total_samples(self) -> int:
        """T summed over the launches."""
        return self.group.total_samples

    @property
    def advice(self) -> list[Any]:
        """The kernel-level ranked advice (best first)."""
        return self.group.advice

    @property
    def bound(self) -> Any:
        """The roofline the kernel runs at (advice model ``Bound``), or None."""
        rep = self.group.advice_report
        return getattr(rep, "bound", None) if rep is not None else None

    @property
    def rule(self) -> str:
        """How the launches were combined (the analysis' own words, stated in the hover)."""
        if len(self.launches) == 1:
            return "one launch"
        return ("samples and lines summed over the launches; advice ranked once, each launch weighted by its "
                "duration: S = Σ t_i / Σ (t_i / S_i)")

    @property
    def first(self) -> KernelAnalysis:
        """The first launch (its binary, path map and embedded sources serve the whole group)."""
        return self.group.first

    @property
    def arch(self) -> str:
        """Architecture the kernel ran on (``sm_90``)."""
        return self.first.profile.arch

    @property
    def device(self) -> str:
        """GPU name as the report records it."""
        return self.first.profile.device

    def inlined(self, file: str, line: int) -> list[Any]:
        """Call sites a hot line of an inlined helper was inlined into (the first launch's; the binary and
        so the inline chains are the same for every launch of a report)."""
        return list(getattr(self.first, "inlined", {}).get((file, line), []))

    def inclusive(self, file: str, line: int) -> int | None:
        """Samples of a call line with the code inlined through it, summed over the launches (None when the
        line inlines nothing)."""
        got = [ka.inclusive[(file, line)] for ka in self.launches if (file, line) in getattr(ka, "inclusive", {})]
        return sum(got) if got else None

    @property
    def local(self) -> dict[str, Path | None]:
        """Recorded source path -> local file, over all launches."""
        out: dict[str, Path | None] = {}
        for ka in self.launches:
            for r, p in ka.local.items():
                if out.get(r) is None:
                    out[r] = p
        return out


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0


def group_kernels(analyses: list[Analysis], active: dict[str, Path] | None = None) -> list[EditorKernel]:
    """One entry per kernel (mangled name) over ``analyses``: the analysis' group of the active report.

    The active report of a kernel is ``active[mangled]`` when it holds the kernel, else the newest report
    (file modification time, then path) holding it. Kernels come in the order they first appear.
    """
    by_kernel: dict[str, dict[Path, KernelGroup]] = {}
    for a in analyses:
        for g in a.groups:
            by_kernel.setdefault(g.mangled, {})[a.report] = g
    out: list[EditorKernel] = []
    for mangled, per_report in by_kernel.items():
        reports = sorted(per_report, key=lambda p: (-_mtime(p), str(p)))
        want = (active or {}).get(mangled)
        report = want if want in per_report else reports[0]
        out.append(EditorKernel(group=per_report[report], report=report, reports=reports))
    return out


@dataclass
class BlameLink:
    """Stall samples of a use line blamed on a def line (or the reverse, for a def line's findings).

    ``distance``: instructions on the def→use path of the edge that carries most of the samples (the
    dominant edge), as the CLI reports it."""

    file: Path | None
    line: int | None
    opcode: str
    reason: str
    samples: float
    distance: int


@dataclass
class LineFinding:
    """One source line's findings for one kernel.

    ``share``: the line's samples / the kernel's total samples (0..1); ``caused_share``: stall samples of
    other instructions blamed on this line's instructions / total. ``stats`` is None for a line that has no
    samples itself but is blamed for stalls elsewhere (``causes``). ``blamed_on``: where this line's stalls
    come from; ``advice``: advice whose primary line this is (ranked, best first); ``touching``: other advice
    whose hotspots touch this line.
    """

    line: int
    kernel: EditorKernel
    stats: LineStats | None
    share: float
    caused_share: float = 0.0
    blamed_on: list[BlameLink] = field(default_factory=list)
    causes: list[BlameLink] = field(default_factory=list)
    advice: list[Any] = field(default_factory=list)
    touching: list[Any] = field(default_factory=list)
    sass: list[str] = field(default_factory=list)

    @property
    def weight(self) -> float:
        """The share a filter compares with minShare: the line's own, or what it causes if larger."""
        return max(self.share, self.caused_share)


@dataclass
class FileFindings:
    """All findings for one local file plus the baseline text their lines refer to.

    ``advice_lines``: id(advice) -> every baseline line of this file the advice points at (its primary
    line and its hotspots), so an edit of any of them retires the advice everywhere.
    """

    path: Path
    baseline: str
    findings: list[LineFinding]
    groups: list[EditorKernel] = field(default_factory=list)
    advice_lines: dict[int, set[int]] = field(default_factory=dict)
    launch_costs: list[Any] = field(default_factory=list)  # cdp.LaunchCost of device-side launch lines
    stale: bool = False  # the profiled source differs from the file on disk
    #: (kernel, its signature line's stats) of the kernels whose entry line is in this file (LineStats.entry): the
    #: hover states them as the kernel's entry; no hot-line diagnostic or inlay hint is made for them
    entries: list[tuple[EditorKernel, LineStats]] = field(default_factory=list)


def _same(a: Path | None, b: Path) -> bool:
    return a is not None and same_file(a, b)  # resolutions remembered per path (uris.resolved; reload clears)


def _instruction_text(ka: KernelAnalysis, function: str, offset: int,
                      section: str = "") -> tuple[str, Path | None, int | None]:
    ins, s, file, line = ka.instruction(function, offset, section)
    text = ins.text if ins is not None else (s.sass if s is not None else "")
    return text, (ka.local.get(file) if file else None), line


def opcode_of(text: str) -> str:
    """The opcode of a SASS instruction text (after an ``@P0`` guard), ``?`` when empty."""
    parts = text.split()
    if not parts:
        return "?"
    return parts[1] if parts[0].startswith("@") and len(parts) > 1 else parts[0]


def stall_edges(g: EditorKernel) -> Iterator[tuple[KernelAnalysis, Any, str]]:
    """(launch, blame edge, owner) for every edge of every launch that blames stall samples on a def;
    ``owner`` is the function the profile files the edge's PCs under (the section's kernel)."""
    for ka in g.launches:
        if ka.blame is None:
            continue
        for e in ka.blame.edges:
            if e.def_offset is not None and e.stall_samples > 0:
                yield ka, e, e.section.removeprefix(".text.") if e.section else e.function


def _blame_links(g: EditorKernel, pcs: set[tuple[str, int]], as_use: bool) -> list[BlameLink]:
    """Blame edges of every launch touching ``pcs`` merged by (other line, opcode, reason)."""
    agg: dict[tuple[str | None, int | None, str, str], dict[int, float]] = {}
    for ka, e, owner in stall_edges(g):
        if (owner, e.use_offset if as_use else e.def_offset) not in pcs:
            continue
        other = e.def_offset if as_use else e.use_offset
        text, file, line = _instruction_text(ka, e.function, other, e.section)
        key = (str(file) if file else None, line, opcode_of(text), e.reason)
        by_dist = agg.setdefault(key, {})
        by_dist[e.distance] = by_dist.get(e.distance, 0.0) + e.stall_samples
    links = [BlameLink(Path(k[0]) if k[0] else None, k[1], k[2], k[3], sum(v.values()),
                       int(max(v.items(), key=lambda kv: (kv[1], -kv[0]))[0])) for k, v in agg.items()]
    return sorted(links, key=lambda b: -b.samples)


def advice_primary(adv: Any, g: EditorKernel) -> tuple[Path | None, int | None]:
    """The one (local file, line) an advice is a diagnostic on: its scope line for line-scoped advice,
    else the use line of its hottest hotspot; (None, None) for advice with neither (kernel-wide)."""
    local = g.local
    scope = getattr(adv, "scope", None)
    if scope is not None and getattr(scope, "kind", "") == "line" and scope.file and scope.line:
        return local.get(scope.file) or Path(scope.file), int(scope.line)
    for h in getattr(adv, "hotspots", []) or []:
        use = getattr(h, "use", None)
        if use is not None and use.file and use.line:
            return local.get(use.file) or Path(use.file), int(use.line)
    return None, None


def _advice_lines(adv: Any, path: Path, g: EditorKernel) -> set[int]:
    """Lines of ``path`` an advice points at: its primary line and its hotspots' use and def lines."""
    local = g.local
    lines: set[int] = set()
    f, ln = advice_primary(adv, g)
    if ln is not None and _same(f, path):
        lines.add(ln)
    for h in getattr(adv, "hotspots", []) or []:
        for end in ("use", "def_"):
            loc = getattr(h, end, None)
            if loc is None:
                continue
            fl, ll = getattr(loc, "file", None), getattr(loc, "line", None)
            if fl and ll and _same(local.get(fl) or Path(fl), path):
                lines.add(int(ll))
    return lines


def baseline_text(ka: KernelAnalysis, path: Path) -> str | None:
    """The profiled version of ``path`` (embedded in the report) if the report has it."""
    for recorded, local in ka.local.items():
        if _same(local, path) and recorded in ka.profile.source_files:
            return ka.profile.source_files[recorded]
    return None


def _covers(g: EditorKernel, path: Path) -> set[str]:
    return {r for r, p in g.local.items() if _same(p, path)}


def group_findings(g: EditorKernel, path: Path) -> tuple[list[LineFinding], dict[int, set[int]]]:
    """The findings of one kernel group on ``path`` and its advice's lines there."""
    recorded = _covers(g, path)
    if not recorded:
        return [], {}
    total = max(1, g.total_samples)
    by_line: dict[int, LineFinding] = {}
    first = g.first
    for ls in g.lines:
        # the signature line's samples are the kernel's entry (its prologue), not a hot source line: no hot-line
        # diagnostic or inlay there (the text report states them under "kernel entry", JSON marks kernel_entry)
        if ls.file in recorded and not ls.entry:
            f = LineFinding(ls.line, g, ls, ls.samples / total)
            f.blamed_on = _blame_links(g, set(ls.pcs), as_use=True)
            f.sass = [_instruction_text(first, fn, off)[0] for fn, off in ls.pcs]
            by_line[ls.line] = f
    # def lines: instructions on this file blamed for stalls elsewhere
    def_pcs: dict[int, set[tuple[str, int]]] = {}
    for ka, e, owner in stall_edges(g):
        _, file, line = _instruction_text(ka, e.function, e.def_offset, e.section)
        if line is not None and _same(file, path):
            def_pcs.setdefault(line, set()).add((owner, e.def_offset))
    for line, pcs in def_pcs.items():
        f = by_line.get(line) or LineFinding(line, g, None, 0.0)
        f.causes = _blame_links(g, pcs, as_use=False)
        f.caused_share = sum(b.samples for b in f.causes) / total
        by_line[line] = f
    lines_of: dict[int, set[int]] = {}
    for adv in g.advice:
        lines_of[id(adv)] = _advice_lines(adv, path, g)
        pf, pl = advice_primary(adv, g)
        for line in sorted(lines_of[id(adv)]):
            f = by_line.get(line) or LineFinding(line, g, None, 0.0)
            (f.advice if (line == pl and _same(pf, path)) else f.touching).append(adv)
            by_line[line] = f
    for f in by_line.values():
        # the analysis' order: rank value (an upper bound at its midpoint), not the raw estimate
        f.advice.sort(key=lambda a: -float(getattr(a, "rank_value", 0.0) or getattr(a, "estimated_speedup", 1.0)))
    return list(by_line.values()), lines_of


def disk_source(path: Path) -> str | None:
    """Text of local file ``path`` (a profiled file the analysis mapped, or the file the editor names) when
    it is a regular file within the source size limit (``WARPWISE_MAX_SOURCE_BYTES``); None otherwise —
    never a device or FIFO, never a huge file read whole (issue 13). Bytes that are not UTF-8 read as U+FFFD."""
    try:
        return read_text(path, "source", errors="replace")
    except InputFileError:
        return None


def file_findings(analyses: list[Analysis], path: Path, disk_text: str | None = None,
                  active: dict[str, Path] | None = None) -> FileFindings:
    """Findings of every profiled kernel (grouped, see ``group_kernels``) on the local file ``path``."""
    findings: list[LineFinding] = []
    baseline: str | None = None
    groups: list[EditorKernel] = []
    advice_lines: dict[int, set[int]] = {}
    for g in group_kernels(analyses, active):
        found, lines_of = group_findings(g, path)
        if not found and not _covers(g, path):
            continue
        groups.append(g)
        baseline = baseline or baseline_text(g.first, path)
        findings.extend(found)
        advice_lines.update(lines_of)
    if disk_text is None:
        disk_text = disk_source(path)
    from warpwise.server.cdp import launch_costs

    costs = [c for g in groups for c in launch_costs(g, path, baseline or disk_text or "")]
    stale = baseline is not None and disk_text is not None and not same_code(baseline, disk_text)
    findings.sort(key=lambda f: (-(f.stats.samples if f.stats else 0), f.line))
    entries = [(g, ls) for g in groups for ls in g.lines if ls.entry and ls.file in _covers(g, path)]
    return FileFindings(path=path, baseline=baseline if baseline is not None else (disk_text or ""),
                        findings=findings, groups=groups, advice_lines=advice_lines, launch_costs=costs,
                        stale=stale, entries=entries)
