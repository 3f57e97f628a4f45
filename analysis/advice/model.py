"""Advice model: what an optimizer found, where, and how much it may gain (GPA §5, DESIGN.md CLI contract).

Plain dataclasses; lines are 1-based, files are the paths the profile/binary recorded (the server and CLI
map them to local files). Sample counts are warp samples (floats where blame apportioning split them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ScopeKind = Literal["line", "loop", "function", "kernel"]
Family = Literal["stall_elimination", "latency_hiding", "parallel"]


@dataclass(frozen=True)
class Scope:
    """Where an advice applies.

    ``kind``: line, loop, function or kernel; ``file``: recorded source path (None if the binary has no
    line info for it); ``line``/``end_line``: 1-based range (``line`` = loop header / function start /
    the hot line); ``function``: mangled name of the function the scope lies in; ``name``: readable label
    (``loop at line 15``).
    """

    kind: ScopeKind
    file: str | None = None
    line: int | None = None
    end_line: int | None = None
    function: str | None = None
    name: str = ""


@dataclass(frozen=True)
class Estimate:
    """A speedup estimate with the formula and the values that produced it (× = speedup factor).

    ``formula`` uses the input names, e.g. ``T/(T-M)``; ``inputs`` maps each name to its value
    (samples, warps, ratios); ``equation``: the GPA equation(s) it implements, e.g. ``GPA eq. 2``.
    """

    speedup: float
    formula: str
    inputs: dict[str, float]
    equation: str = ""


@dataclass(frozen=True)
class Location:
    """One SASS instruction and its source position: ``function`` (mangled), ``pc`` (section offset),
    ``opcode``, ``file``/``line`` (recorded path, 1-based; None without line info)."""

    function: str
    pc: int
    opcode: str
    file: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class Hotspot:
    """A blamed def→use pair: ``samples`` matched on it (stall samples for stall elimination, latency
    samples for latency hiding and the parallel optimizers' eq. 4 forms, see ``Advice.matched_samples``),
    ``distance`` in instructions on the longest def→use path, ``reason``: the dominant stall reason,
    ``loop``: the innermost loop holding the use (None outside loops). ``def_`` is None for stalls the
    stalled instruction keeps itself (throttles, instruction fetch, no surviving def after pruning)."""

    def_: Location | None
    use: Location
    samples: float
    distance: int
    reason: str
    loop: Scope | None = None


@dataclass(frozen=True)
class RegionEstimate:
    """Per-scope estimate of a latency-hiding optimizer (GPA eq. 5) or a per-region stall-elimination
    estimate: the scope, its matched samples and its own estimate."""

    scope: Scope
    matched_samples: float
    estimate: Estimate


@dataclass
class Advice:
    """One optimizer's suggestion for one kernel.

    ``optimizer``: id (``strength_reduction``); ``scope``: its top region (or the kernel);
    ``matched_samples``: M (samples the estimator removes or hides); ``share``: M / T;
    ``estimated_speedup``/``estimate``: the optimizer-level estimate; ``hotspots``: up to 5 blamed pairs,
    hottest first; ``regions``: per-scope estimates, best first; ``hint``: plain-words suggestion specific to
    the hotspots; ``missing``: what the profile/binary lacks to judge the advice fully (empty if nothing).
    """

    optimizer: str
    kernel: str
    scope: Scope
    matched_samples: float
    share: float
    estimate: Estimate
    hotspots: list[Hotspot] = field(default_factory=list)
    regions: list[RegionEstimate] = field(default_factory=list)
    hint: str = ""
    missing: str = ""

    @property
    def estimated_speedup(self) -> float:
        """The optimizer-level estimated speedup (×)."""
        return self.estimate.speedup


@dataclass(frozen=True)
class Skipped:
    """An optimizer that gave no advice for a kernel and why: ``missing`` True when the profile or binary
    lacks the data it needs (then ``reason`` names that data), False when nothing matched."""

    optimizer: str
    reason: str
    missing: bool = False


@dataclass
class AdviceReport:
    """All optimizers' results for one kernel: ``advice`` ranked by estimated speedup (best first) and the
    optimizers that were ``skipped`` with their reasons. ``total``/``latency``/``active``: T, L, A.
    ``notes``: plain-words remarks on the whole kernel (debug build, device-runtime samples, device-side
    launches); ``kernel_scope``: the kernel function's source range when the binary has line info for it
    (SARIF places advice without a line of its own there)."""

    kernel: str
    mangled: str
    arch: str
    total: int
    latency: int
    active: int
    advice: list[Advice] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    kernel_scope: Scope | None = None
