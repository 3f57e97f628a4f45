"""Speed-of-light ceilings: how close to peak a unit's throughput can get, and the headroom it leaves.

Nsight Compute's SpeedOfLight section gives each unit's throughput in % of its peak sustained rate
(DRAM, L2, L1/TEX, SM). A fix that does not change how much work a unit does cannot make the kernel faster
than that unit allows: with a unit at p% of peak and at most a% reachable, the speedup is at most a / p
(the roofline argument of Williams, Waterman and Patterson, CACM 2009, applied per unit).

Reachable fractions (``ACHIEVABLE``) are the highest values measured on the H200 with Nsight Compute, not
datasheet peaks: DRAM 89.3% of peak for a read-only stream (bench/arch/dram_mix.cu; a STREAM triad reached
88.5%, bench/advice/pairs/stream_triad, 2026-12-01; a
device-to-device copy through PyTorch moved 4.3 of the datasheet's 4.8 TB/s, KINDS.md), L2 96% for the ELL
SpMV gather (examples/gather). L1/TEX and SM throughputs are the utilization of the unit's busiest
sub-unit (a pipe: Kernel Profiling Guide, "Throughput"), which does reach 100%.

DRAM's reachable share depends on the traffic's mix: writes cost the bus read/write turnarounds, so a copy
(half writes) saturates near 80% of peak where read-mostly streams reach 88-89%. ``DRAM_REACH_BY_WRITE_SHARE``
is measured on the H200 by bench/arch/dram_mix.cu (bench/arch/gpu_dram_mix.sh, 2026-12-01: streams of R
reads and W writes per element at full occupancy, unrolled 1-4x, DRAM bytes read and written from ncu; the
data in bench/arch/dram_mix_h200.csv and _run2.csv); a launch's write share is taken from its global stores' L2 sectors.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from warpwise.analysis.binary.model import opcode_of_sass, writes_memory

#: Largest fraction of peak a real kernel reaches per unit (see the module docstring for the sources).
ACHIEVABLE: dict[str, float] = {"dram": 0.893, "l2": 0.96, "l1": 1.0, "sm": 1.0}
#: The shortest a launch can take (ns): an empty kernel's gpu__time_duration on the H200, 1.6 us for 132 CTAs of
#: 1024 threads and 1.9 us for 528 CTAs of 512 (bench/arch/dram_mix.cu, 2026-12-01) — grid launch and drain,
#: which no change to the kernel's code removes.
LAUNCH_FLOOR_NS = 1700.0
#: What each further CTA per SM of the first wave adds to that floor (ns): an empty kernel with k CTAs per SM
#: took 1.5-1.7 us at k = 1, 2.2 us at 8, 2.8 us at 16 and 4.1 us at 32 (32-thread CTAs; 128- and 256-thread
#: CTAs the same at equal k), a least-squares slope of 81 ns per CTA per SM: the CTA dispatch of one wave is
#: serial per SM (H200, bench/arch/launch_latency.cu, bench/arch/launch_latency_h200.csv, 2026-12-01).
LAUNCH_FLOOR_PER_CTA_NS = 81.0
#: DRAM load-to-use latency under load on the H200: (DRAM throughput % of peak, latency ns) of a dependent
#: chain of coalesced loads, one in flight per warp, 1 to 64 warps per SM on all 132 SMs (Little's law:
#: bytes in flight / bandwidth; bench/arch/launch_latency.cu, bench/arch/launch_latency_h200.csv, 2026-12-01).
#: Flat to ~30% of peak, +6% at 44%, +14% at 55%: queueing in the memory system.
DRAM_LATENCY_BY_LOAD: tuple[tuple[float, float], ...] = (
    (1.0, 358.0), (8.0, 351.0), (15.8, 355.0), (23.3, 361.0), (30.5, 368.0), (44.3, 381.5), (55.1, 408.0))
#: (share of DRAM bytes written, reachable fraction of DRAM peak), ascending: H200, bench/arch/dram_mix.cu, the
#: best of four launches per mix over two runs (bench/arch/dram_mix_h200*.csv): read-only 89.3%, 4:1 (0.19)
#: 88.4%, 3:1 (0.24) 88.6%, 2:1 (0.32) 85.3%, 1:1 (0.48) 80.8%, 1:2 (0.65) 78.3%, write-only 79.3%.
DRAM_REACH_BY_WRITE_SHARE: tuple[tuple[float, float], ...] = (
    (0.0, 0.893), (0.19, 0.884), (0.24, 0.886), (0.32, 0.853), (0.48, 0.808), (0.65, 0.783), (1.0, 0.793))
#: A launch's global loads queue in the memory system (their requests wait in line, not just for DRAM's
#: latency) when the wait per execution of its global loads (Little's law over the PC samples, weighted by their
#: waits: advice/context.KernelView.load_queueing) is at least this many times the DRAM load-to-use latency at the
#: launch's DRAM throughput (:func:`dram_latency_factor` x the unloaded DRAM_LATENCY_BY_LOAD latency): then more
#: than half of each wait is time in line. A warpwise rule (helper modelH, 2026-12-03): holdout11's
#: kinetic_energy_fp64 (DRAM at 68% of peak, 1.47 us per load against 0.44 us) gained 1.003x from its probe.
QUEUEING_FACTOR = 2.0
#: ... and those waits are at least this share of the launch's samples (the loads set the kernel's pace), with
#: DRAM at THROUGHPUT_FRACTION of its peak or more (the traffic, not a few slow requests, makes the queue): such
#: a launch's DRAM throughput is what its access pattern reaches, and a fix that leaves its traffic unchanged
#: (latency hiding, more warps, fewer instructions) only lengthens the queue.
QUEUEING_SHARE = 0.5
#: Readable unit names.
UNIT_NAMES: dict[str, str] = {"dram": "DRAM bandwidth", "l2": "L2 bandwidth", "l1": "L1/TEX throughput",
                              "sm": "SM (instruction/pipe) throughput"}
#: A unit at or above this fraction of its reachable peak makes the kernel "bound" by it (Nsight Compute's
#: SOL rule threshold: 80% of peak; here relative to the reachable peak).
BOUND_FRACTION = 0.80
#: Below this fraction of peak on every unit a kernel is latency limited: Nsight Compute's SpeedOfLight rule
#: ("achieved compute throughput and/or memory bandwidth below 60.0% of peak typically indicate latency
#: issues"); at or above it on the SM the launch's time follows its issue work.
THROUGHPUT_FRACTION = 0.60


@dataclass(frozen=True)
class Ceiling:
    """One unit's headroom: ``unit`` (dram, l2, l1, sm), ``pct`` its throughput in % of peak, ``cap`` the
    largest speedup a fix that leaves the unit's work unchanged can give (×, ≥ 1), ``bound`` whether the
    unit is at BOUND_FRACTION of its reachable peak or more."""

    unit: str
    pct: float
    cap: float
    bound: bool

    @property
    def name(self) -> str:
        """Readable unit name."""
        return UNIT_NAMES.get(self.unit, self.unit)


def dram_reach(write_share: float) -> float:
    """Reachable fraction of DRAM peak for traffic with ``write_share`` of its bytes written (0..1): linear
    between the measured points of DRAM_REACH_BY_WRITE_SHARE."""
    w = min(1.0, max(0.0, write_share))
    pts = DRAM_REACH_BY_WRITE_SHARE
    for (w0, r0), (w1, r1) in itertools.pairwise(pts):
        if w <= w1:
            return r0 + (r1 - r0) * (w - w0) / (w1 - w0) if w1 > w0 else r1
    return pts[-1][1]


def reach(write_share: float | None = None) -> dict[str, float]:
    """Reachable fraction of peak per unit for a launch: ACHIEVABLE, with DRAM's from the launch's write share
    (:func:`dram_reach`) when it is known."""
    out = dict(ACHIEVABLE)
    if write_share is not None:
        out["dram"] = dram_reach(write_share)
    return out


def ceilings(throughput_pct: dict[str, float], reach_of: dict[str, float] | None = None) -> list[Ceiling]:
    """Ceilings of the units the profile measured (``throughput_pct``: unit -> % of peak), tightest first.

    cap = max(1, 100 × reach / pct) with ``reach_of`` (default ACHIEVABLE) the unit's reachable fraction; a unit
    with no throughput (0 %) has no ceiling.
    """
    out = []
    for unit, reach in (reach_of or ACHIEVABLE).items():
        pct = throughput_pct.get(unit)
        if pct is None or pct <= 0:
            continue
        cap = max(1.0, 100.0 * reach / pct)
        out.append(Ceiling(unit=unit, pct=pct, cap=cap, bound=pct >= 100.0 * reach * BOUND_FRACTION))
    return sorted(out, key=lambda c: c.cap)


@dataclass(frozen=True)
class AfterFix:
    """The roofline of a launch after a fix that scales each unit's work: ``speedup`` (×) the most the fix
    can give, ``unit`` the unit that then binds, ``ratios`` work after / before per unit (1 = unchanged)."""

    speedup: float
    unit: str
    ratios: dict[str, float]


def after_fix(throughput_pct: dict[str, float], ratios: dict[str, float],
              reach_of: dict[str, float] | None = None) -> AfterFix | None:
    """Speedup ceiling of a fix that changes the work of some units, the others unchanged.

    A unit u at p_u % of peak with at most a_u reachable needs at least p_u × r_u / (100 a_u) of the launch's
    present duration for its work after the fix (r_u = ``ratios[u]``, default 1), so the launch takes at least
    the largest of those: S ≤ 1 / max_u (p_u r_u / (100 a_u)) — the roofline argument (Williams et al., CACM
    2009) with each unit's work after the fix. For a kernel whose time follows its memory traffic this is
    also the expected speedup. ``reach_of``: a_u per unit (default ACHIEVABLE). None when the profile measured
    no unit.
    """
    worst, unit = 0.0, ""
    for u, reach in (reach_of or ACHIEVABLE).items():
        p = throughput_pct.get(u)
        if p is None or p <= 0:
            continue
        need = p * max(0.0, ratios.get(u, 1.0)) / (100.0 * reach)
        if need > worst:
            worst, unit = need, u
    if not unit:
        return None
    return AfterFix(speedup=max(1.0, 1.0 / worst), unit=unit, ratios=dict(ratios))


def busy(throughput_pct: dict[str, float], unit: str, reach_of: dict[str, float] | None = None) -> float:
    """``unit``'s throughput as a fraction of its reachable peak (0 when not measured)."""
    return throughput_pct.get(unit, 0.0) / (100.0 * (reach_of or ACHIEVABLE).get(unit, 1.0))


def dram_write_share(sectors: list[tuple[str, int]]) -> float | None:
    """Share of a launch's global L2 sectors that its writes move: ``sectors`` = (SASS text, L2 sectors) per
    instruction (SourceCounters' memory_l2_theoretical_sectors_global). None when no sector was counted."""
    total = writes = 0
    for sass, n in sectors:
        if n <= 0:
            continue
        total += n
        if writes_memory(opcode_of_sass(sass)):  # sectors are global ones: only global writes have any
            writes += n
    return writes / total if total else None


def launch_floor_ns(ctas_per_sm: float) -> float:
    """The shortest a launch whose first wave puts ``ctas_per_sm`` CTAs on each busy SM can take (ns):
    LAUNCH_FLOOR_NS + LAUNCH_FLOOR_PER_CTA_NS × (k − 1), k ≥ 1 (H200 measurement, see those constants)."""
    return LAUNCH_FLOOR_NS + LAUNCH_FLOOR_PER_CTA_NS * max(0.0, ctas_per_sm - 1.0)


def dram_latency_ns(dram_pct: float) -> float:
    """DRAM load-to-use latency (ns) at ``dram_pct`` % of peak DRAM throughput: the unloaded latency of
    DRAM_LATENCY_BY_LOAD x :func:`dram_latency_factor`."""
    return DRAM_LATENCY_BY_LOAD[0][1] * dram_latency_factor(dram_pct)


def dram_latency_factor(dram_pct: float) -> float:
    """DRAM latency at ``dram_pct`` % of peak DRAM throughput over the unloaded latency (×, ≥ 1), interpolated
    in DRAM_LATENCY_BY_LOAD; above its last point the last segment's slope is extended (an extrapolation: the
    chain benchmark cannot load DRAM further with one load in flight per warp), up to the reachable peak."""
    pts = DRAM_LATENCY_BY_LOAD
    base = pts[0][1]  # the unloaded latency (1% of peak); the points up to 16% differ from it by noise (< 2%)
    x = min(max(dram_pct, pts[0][0]), 100.0 * ACHIEVABLE["dram"])
    for (x0, y0), (x1, y1) in itertools.pairwise(pts):
        if x <= x1:
            return max(1.0, (y0 + (y1 - y0) * (x - x0) / (x1 - x0)) / base)
    (x0, y0), (x1, y1) = pts[-2], pts[-1]
    return max(1.0, (y1 + (y1 - y0) * (x - x1) / (x1 - x0)) / base)

