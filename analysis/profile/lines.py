"""Per-source-line view of a kernel profile: the raw PC-sampling view, exact to the profile's counts."""

from __future__ import annotations

from dataclasses import dataclass, field

from warpwise.analysis.profile.model import KernelProfile, PCSample


@dataclass
class LineStats:
    """Samples of one source line of one kernel.

    ``samples``: sum of the line's instructions' samples as Nsight Compute records them;
    ``latency_samples``: their not-issued part; ``stalls``: samples per stall reason (sums);
    ``pcs``: the instructions' (function, offset) keys. ``entry``: the line is the kernel's signature (its
    declaration line, where the prologue's instructions map: parameter and stack-pointer set-up, and warps waiting
    there at launch): the kernel's entry, not a hot source line (pipeline.mark_entry_line).
    """

    file: str
    line: int
    samples: int = 0
    latency_samples: int = 0
    stalls: dict[str, int] = field(default_factory=dict)
    pcs: list[tuple[str, int]] = field(default_factory=list)
    entry: bool = False

    def top_reasons(self, n: int = 3) -> list[tuple[str, int]]:
        """The ``n`` stall reasons with most samples, largest first (ties by name)."""
        return sorted(self.stalls.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def _add(stats: LineStats, s: PCSample) -> None:
    stats.samples += s.samples
    stats.latency_samples += s.not_issued
    for r, v in s.stalls.items():
        stats.stalls[r] = stats.stalls.get(r, 0) + v
    stats.pcs.append((s.function, s.offset))


def line_stats(profile: KernelProfile) -> list[LineStats]:
    """Every source line with samples, hottest first (ties by file, line). Lines keep recorded paths."""
    by_line: dict[tuple[str, int], LineStats] = {}
    for s in profile.pcs.values():
        if s.file is None or s.line is None or s.samples == 0:
            continue
        key = (s.file, s.line)
        if key not in by_line:
            by_line[key] = LineStats(s.file, s.line)
        _add(by_line[key], s)
    return sorted(by_line.values(), key=lambda st: (-st.samples, st.file, st.line))


def unlocated_samples(profile: KernelProfile) -> int:
    """Samples on instructions without a source line (no -lineinfo, device runtime code)."""
    return sum(s.samples for s in profile.pcs.values() if s.file is None or s.line is None)
