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


@dataclass(frozen=True)
class Cap:
    """A speed-of-light ceiling applied to an estimate: ``unit`` (dram, l2, l1, sm), its throughput ``pct``
    (% of peak) and ``cap`` (×), the most a fix that leaves that unit's work unchanged can gain
    (analysis/arch/roofline). ``binding``: whether it lowered the estimate; ``bound``: the unit sits at its
    roofline (roofline.BOUND_FRACTION of what it reaches); ``also_bound``: the other units of the estimate's
    caps that sit at theirs."""

    unit: str
    pct: float
    cap: float
    binding: bool
    bound: bool = False
    #: the other capping units that sit at their roofline too: (unit, cap ×) each (ranking.roofline_cap)
    also_bound: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Alternative:
    """Another optimizer whose matched samples are mostly the same as a finding's: a different fix for the
    same cause, listed with the finding instead of being ranked again. ``overlap``: share of the smaller
    matched set the two have in common (0..1)."""

    optimizer: str
    estimated_speedup: float
    matched_samples: float
    overlap: float
    hint: str = ""
    upper_bound: bool = False


@dataclass(frozen=True)
class LaunchEstimate:
    """One launch's part of a kernel-level estimate: ``launch`` (range, action) index in the report,
    ``duration_ns``, ``samples`` (T of the launch), ``speedup`` (the launch's own estimate, 1.0 when the
    optimizer did not match that launch) and ``grid``/``block`` of the launch."""

    launch: tuple[int, int]
    duration_ns: float
    samples: int
    speedup: float
    grid: tuple[int, int, int] = (0, 0, 0)
    block: tuple[int, int, int] = (0, 0, 0)


@dataclass
class Advice:
    """One optimizer's suggestion for one kernel.

    ``optimizer``: id (``strength_reduction``); ``scope``: its top region (or the kernel);
    ``matched_samples``: M (samples the estimator removes or hides); ``share``: M / T;
    ``estimated_speedup``/``estimate``: the optimizer-level estimate; ``hotspots``: up to 5 blamed pairs,
    hottest first; ``regions``: per-scope estimates, best first; ``hint``: plain-words suggestion specific to
    the hotspots; ``missing``: what the profile/binary lacks to judge the advice fully (empty if nothing).

    Ranking facts (analysis/advice/ranking): ``samples``: T behind the estimate (all launches); ``interval``:
    95% interval of the speedup from the binomial uncertainty of the matched share (Wilson score interval
    on 1 − 1/S over T samples); ``upper_bound``: the estimator gives an upper bound, not an expected value
    (ranked by ``rank_value`` = the midpoint of [1, S]); ``cap``: the tightest speed-of-light ceiling that
    applies; ``why``: one sentence on why it is ranked where it is; ``alternatives``: other optimizers that
    matched mostly the same samples; ``launches``: per-launch detail when the kernel ran several times.
    ``matched``: matched samples per (function, def pc, use pc) pair, used to find overlapping advice.
    ``params``: values the advice's quick fix must use (``unroll_factor@FILE:LINE`` for a loop), so the fix
    does what the hint says, and what the quick fix alone gives where the hint asks for more than it edits
    (``pragma_alone_speedup``, ×: the unroll pragma without the ``__restrict__`` the estimate assumes).
    ``ctas_per_sm_after``: CTAs per busy SM in the first wave after a fix that changes the grid (None: the
    grid stays), for the launch floor after the fix (ranking.apply_launch_floor).
    ``basis``: what the estimate is built from when it does not scale with matched samples (the launch-shape
    estimators, GPA eqs. 6–10: the launch facts and the issue ratio R_I; the tail effect: the waves per SM),
    in words for the reports; '' for estimates built from the matched samples M.
    ``priority``: breaks ties of equal rank value in favour of the more specific fix
    (a rolled loop's unrolling over generic reordering of the same loads, lifting a register cap over reuse).
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
    samples: int = 0
    interval: tuple[float, float] | None = None
    upper_bound: bool = False
    cap: Cap | None = None
    rank_value: float = 0.0
    why: str = ""
    alternatives: list[Alternative] = field(default_factory=list)
    launches: list[LaunchEstimate] = field(default_factory=list)
    matched: dict[tuple[str, int | None, int], float] = field(default_factory=dict, repr=False, compare=False)
    params: dict[str, int] = field(default_factory=dict)
    priority: int = 0
    basis: str = ""
    ctas_per_sm_after: float | None = None

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
    (SARIF places advice without a line of its own there); ``bound``: the roofline the kernel is at, when
    it is at one (shown first); ``launches``: launches of the kernel the ranking covers; ``candidates``: the
    capped advice before overlapping findings were grouped (what :mod:`.launches` combines); ``few_samples``:
    the launch's warp samples T when fewer than ranking.FEW_SAMPLES (``notes`` then says so, advise.
    launch_few_samples_note), None otherwise and on a report combined over launches (its one note names them)."""

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
    bound: Bound | None = None
    launches: int = 1
    candidates: list[Advice] = field(default_factory=list, repr=False)
    few_samples: int | None = None


@dataclass(frozen=True)
class Bound:
    """The kernel runs near a roofline: ``unit`` (dram, l2, l1, sm) at ``pct`` % of peak, so no fix that keeps
    that unit's work can gain more than ``cap`` (×). ``text``: the finding in plain words, shown before the
    advice (SpeedOfLight section; analysis/arch/roofline)."""

    unit: str
    pct: float
    cap: float
    text: str
