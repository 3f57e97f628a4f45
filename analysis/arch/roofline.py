"""Speed-of-light ceilings: how close to peak a unit's throughput can get, and the headroom it leaves.

Nsight Compute's SpeedOfLight section gives each unit's throughput in % of its peak sustained rate
(DRAM, L2, L1/TEX, SM). A fix that does not change how much work a unit does cannot make the kernel faster
than that unit allows: with a unit at p% of peak and at most a% reachable, the speedup is at most a / p
(the roofline argument of Williams, Waterman and Patterson, CACM 2009, applied per unit).

Reachable fractions (``ACHIEVABLE``) are the highest values measured on the H200 with Nsight Compute, not
datasheet peaks: DRAM 87% of peak for a STREAM triad (bench/advice/pairs/stream_triad, 2026-12-01; a
device-to-device copy through PyTorch moved 4.3 of the datasheet's 4.8 TB/s, KINDS.md), L2 96% for the ELL
SpMV gather (examples/gather). L1/TEX and SM throughputs are the utilization of the unit's busiest
sub-unit (a pipe: Kernel Profiling Guide, "Throughput"), which does reach 100%.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Largest fraction of peak a real kernel reaches per unit (see the module docstring for the sources).
ACHIEVABLE: dict[str, float] = {"dram": 0.87, "l2": 0.96, "l1": 1.0, "sm": 1.0}
#: Readable unit names.
UNIT_NAMES: dict[str, str] = {"dram": "DRAM bandwidth", "l2": "L2 bandwidth", "l1": "L1/TEX throughput",
                              "sm": "SM (instruction/pipe) throughput"}
#: A unit at or above this fraction of its reachable peak makes the kernel "bound" by it (Nsight Compute's
#: SOL rule threshold: 80% of peak; here relative to the reachable peak).
BOUND_FRACTION = 0.80


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


def ceilings(throughput_pct: dict[str, float]) -> list[Ceiling]:
    """Ceilings of the units the profile measured (``throughput_pct``: unit -> % of peak), tightest first.

    cap = max(1, 100 × ACHIEVABLE[unit] / pct); a unit with no throughput (0 %) has no ceiling.
    """
    out = []
    for unit, reach in ACHIEVABLE.items():
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


def after_fix(throughput_pct: dict[str, float], ratios: dict[str, float]) -> AfterFix | None:
    """Speedup ceiling of a fix that changes the work of some units, the others unchanged.

    A unit u at p_u % of peak with at most a_u reachable needs at least p_u × r_u / (100 a_u) of the launch's
    present duration for its work after the fix (r_u = ``ratios[u]``, default 1), so the launch takes at least
    the largest of those: S ≤ 1 / max_u (p_u r_u / (100 a_u)) — the roofline argument (Williams et al., CACM
    2009) with each unit's work after the fix. For a kernel whose time follows its memory traffic this is
    also the expected speedup. None when the profile measured no unit.
    """
    worst, unit = 0.0, ""
    for u, reach in ACHIEVABLE.items():
        p = throughput_pct.get(u)
        if p is None or p <= 0:
            continue
        need = p * max(0.0, ratios.get(u, 1.0)) / (100.0 * reach)
        if need > worst:
            worst, unit = need, u
    if not unit:
        return None
    return AfterFix(speedup=max(1.0, 1.0 / worst), unit=unit, ratios=dict(ratios))


def busy(throughput_pct: dict[str, float], unit: str) -> float:
    """``unit``'s throughput as a fraction of its reachable peak (0 when not measured)."""
    return throughput_pct.get(unit, 0.0) / (100.0 * ACHIEVABLE.get(unit, 1.0))
