"""Ranking one kernel's advice: speed-of-light caps, confidence, overlapping findings, order and reasons.

The estimators (GPA eqs. 2–10) say how much time the matched samples stand for. Whether that time can be
won also depends on what the rest of the GPU does, and on how many samples the estimate rests on:

- **caps** — a fix that leaves a unit's work unchanged cannot beat that unit's roofline (SpeedOfLight
  section, analysis/arch/roofline): the estimate becomes min(S, C_unit) and the formula says so;
- **confidence** — the matched share of T samples is a binomial proportion: its 95% Wilson score interval
  (Wilson, JASA 1927), mapped through S = 1/(1 − e), gives the interval of the speedup;
- **upper bounds** — estimators that can only bound the gain (the tail of a partial wave, bank conflicts
  without a conflict counter, work split over more threads than the launch has) are ranked by the midpoint
  of [1, S] (the expected value when the real gain is anywhere between none and the bound);
- **overlap** — optimizers that matched mostly the same samples are one finding with alternatives, ranked
  once by its best member;
- **order** — by rank value (the estimate, or the midpoint for an upper bound), then by the interval's
  lower end, then matched samples.
"""

from __future__ import annotations

import math
from dataclasses import replace

from warpwise.analysis.advice.model import Advice, Alternative, Cap, Estimate
from warpwise.analysis.arch.roofline import LAUNCH_FLOOR_NS, after_fix, ceilings

#: z for a two-sided 95% interval.
Z95 = 1.959964
#: Below this many samples in the kernel, estimates are flagged as resting on too few samples (a warpwise
#: threshold: with 300 samples a 10% share has a ±3.4% Wilson half-width, about ±4% on the speedup).
FEW_SAMPLES = 300
#: A cap within this factor of the estimate is worth stating even when it does not bind.
NEAR_CAP = 1.25
#: Two findings whose matched sample sets share at least this fraction of the smaller set are grouped.
OVERLAP_GROUP = 0.5

#: Units whose work an optimizer leaves unchanged, so whose roofline caps it. Stall elimination removes
#: instructions (SM work shrinks), latency hiding and launch-shape changes only reorder or redistribute
#: them; fixes that cut memory traffic are capped only by the units they do not touch.
_STALL_ELIMINATION_UNITS = ("dram", "l2", "l1")
_REORDER_UNITS = ("dram", "l2", "l1", "sm")
UNCHANGED_UNITS: dict[str, tuple[str, ...]] = {
    "global_memory_coalesce": (),
    "memory_transaction_reduction": (),
    "register_reuse": ("dram",),
    "register_increase": ("dram",),
    "shared_memory_coalesce": ("dram", "l2"),
    # inlining removes the call machinery (its estimate is eq. 2 over those samples): SM work shrinks
    "function_inlining": _STALL_ELIMINATION_UNITS,
    # rolling an unrolled loop back up keeps every iteration's instructions (and adds the loop's increment,
    # compare and branch): only the fetch stalls go, the SM's issue work does not shrink, so its roofline caps
    # the gain like any reordering fix
    "loop_no_unroll": _REORDER_UNITS,
    # privatized atomics leave the L1 (shared atomics, their compare-and-swap loops) and the L2 slices (global
    # atomics) with the instructions: only DRAM traffic stays
    "atomic_privatization": ("dram",),
}
#: Estimators that give an upper bound rather than an expected value (see the module docstring).
UPPER_BOUND_IDS = frozenset({"sm_balance", "shared_memory_coalesce"})


def units_for(optimizer: str, family: str) -> tuple[str, ...]:
    """The roofline units that cap ``optimizer`` (of estimator ``family``)."""
    if optimizer in UNCHANGED_UNITS:
        return UNCHANGED_UNITS[optimizer]
    return _STALL_ELIMINATION_UNITS if family == "stall_elimination" else _REORDER_UNITS


#: Units inside each SM (their % is an average over SMs): a fix that changes the work per SM or the number of
#: busy SMs scales their ceiling; DRAM and L2 are shared by the whole GPU.
PER_SM_UNITS = frozenset({"l1", "sm"})


def roofline_cap(throughput_pct: dict[str, float], units: tuple[str, ...], sm_work: float = 1.0,
                 reach_of: dict[str, float] | None = None) -> Cap | None:
    """The tightest ceiling among ``units`` (analysis/arch/roofline). ``sm_work``: work per SM after / before
    the fix (scales the per-SM ceilings: cap = a / (p × sm_work)); ``reach_of``: the launch's reachable
    fractions (default the architecture-wide ones). None when the profile measured none."""
    best: Cap | None = None
    best_bound = False
    bound: list[tuple[str, float]] = []
    for c in ceilings(throughput_pct, reach_of):
        if c.unit not in units:
            continue
        cap = max(1.0, c.cap / sm_work) if c.unit in PER_SM_UNITS and sm_work > 0 else c.cap
        if c.bound:
            bound.append((c.unit, cap))
        if best is None or cap < best.cap:
            best = Cap(unit=c.unit, pct=c.pct, cap=cap, binding=False)
            best_bound = c.bound
    if best is not None and best_bound:
        best = replace(best, bound=True, also_bound=tuple(b for b in bound if b[0] != best.unit))
    return best


def after_fix_cap(throughput_pct: dict[str, float], ratios: dict[str, float], speedup: float,
                  reach_of: dict[str, float] | None = None) -> Cap | None:
    """The roofline after a fix that scales each unit's work by ``ratios`` (arch/roofline.after_fix) as the
    Cap of an estimate of ``speedup`` (×): binding when it is at or below the estimate, bound when its unit sits
    at its roofline now. None when the profile measured no unit."""
    af = after_fix(throughput_pct, ratios, reach_of)
    if af is None:
        return None
    bound = any(c.bound for c in ceilings(throughput_pct, reach_of) if c.unit == af.unit)
    return Cap(unit=af.unit, pct=throughput_pct[af.unit], cap=af.speedup, binding=speedup >= af.speedup - 1e-9,
               bound=bound)


def apply_cap(e: Estimate, cap: Cap | None, soft: bool = False) -> tuple[Estimate, Cap | None]:
    """``e`` limited by ``cap``: min(S, C_unit), the formula and inputs extended; the cap marked binding when
    it lowered the estimate.

    ``soft`` (when the capping unit is bound, analysis/arch/roofline BOUND_FRACTION): near a roofline the
    stalls are largely queueing behind that unit and the work a fix removes is largely overlapped with it,
    so the fix wins less than either bound alone. The saved time shares e = 1 − 1/S and e_C = 1 − 1/C then combine
    harmonically, e' = e·e_C / (e + e_C) — the smaller when they differ widely, half of each when equal
    (a warpwise model, stated in the formula). When several of the capping units sit at their rooflines
    (``cap.also_bound``), the removed work overlaps with each of their queues: e' = 1 / (1/e + sum_u 1/e_u)
    over all of them (the same harmonic combination, one term per bound unit; helper modelE, 2026-12-03:
    holdout10's nv12_convert, L2 and DRAM both bound, probe 1.006x)."""
    if cap is None:
        return e, None
    name = f"C_{cap.unit}"
    if soft and cap.bound and e.speedup > 1.0:
        s_e = 1 - 1 / e.speedup
        shares = [1 - 1 / c for c in (cap.cap, *(c for _, c in cap.also_bound))]
        if min(shares) <= 0:
            saved = 0.0
        else:
            saved = 1 / (1 / s_e + sum(1 / s for s in shares))
        new = 1 / (1 - saved)
        inputs = {**e.inputs, name: cap.cap, f"{cap.unit}_pct": cap.pct,
                  **{f"C_{u}": c for u, c in cap.also_bound}}
        if cap.also_bound:
            names = ", ".join([cap.unit, *(u for u, _ in cap.also_bound)])
            formula = (f"1/(1-e'), e'=1/(1/e+sum_u 1/e_u), e=1-1/({e.formula}), e_u=1-1/C_u (bound by "
                       f"{names})")
        else:
            formula = f"1/(1-e'), e'=e*e_C/(e+e_C), e=1-1/({e.formula}), e_C=1-1/{name} (bound by {cap.unit})"
        return (Estimate(new, formula, inputs, f"{e.equation}, roofline (queueing near the bound)"),
                replace(cap, binding=True))
    if e.speedup <= cap.cap:
        return e, cap
    inputs = {**e.inputs, name: cap.cap, f"{cap.unit}_pct": cap.pct}
    capped = Estimate(cap.cap, f"min({e.formula}; {name}), {name}=a/p (SpeedOfLight)", inputs,
                      f"{e.equation}, roofline cap")
    return capped, replace(cap, binding=True)


def apply_launch_floor(e: Estimate, duration_ns: float, floor_ns: float = LAUNCH_FLOOR_NS,
                       floor_after_ns: float | None = None) -> Estimate:
    """``e`` with the launch's fixed cost kept: a launch of duration T spends f (analysis/arch/roofline
    .launch_floor_ns: an empty kernel's duration for the launch's first wave) launching and draining the grid
    whatever its code does, so a fix that speeds the rest up S times gives S' = T / (f' + (T − f)/S) (Amdahl's
    law), with f' the floor of the launch after the fix (``floor_after_ns``; f when the fix keeps the grid: a
    grid that fills the GPU's CTA slots pays for dispatching them). Unchanged when T is unknown or the floor
    moves S by less than 1%."""
    after = floor_ns if floor_after_ns is None else floor_after_ns
    if duration_ns <= floor_ns or e.speedup <= 1.0:
        return e
    s = duration_ns / (after + (duration_ns - floor_ns) / e.speedup)
    if abs(s - e.speedup) < e.speedup * 0.01:
        return e
    if after == floor_ns:
        return Estimate(s, f"T_ns/(f_ns+(T_ns-f_ns)/S), S={e.formula}",
                        {**e.inputs, "T_ns": duration_ns, "f_ns": floor_ns}, f"{e.equation}, launch floor (Amdahl)")
    return Estimate(s, f"T_ns/(f_after_ns+(T_ns-f_ns)/S), S={e.formula}",
                    {**e.inputs, "T_ns": duration_ns, "f_ns": floor_ns, "f_after_ns": after},
                    f"{e.equation}, launch floor before and after (Amdahl; CTA dispatch of the new grid)")


def wilson(share: float, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval of a binomial proportion ``share`` observed over ``n`` samples."""
    if n <= 0:
        return 0.0, 1.0
    p = min(1.0, max(0.0, share))
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def interval(speedup: float, n: int) -> tuple[float, float]:
    """Interval of a speedup S estimated from ``n`` samples: Wilson interval of e = 1 − 1/S (the share of
    time the fix removes), mapped back through S = 1/(1 − e). The upper end is capped at 1000×."""
    e = 1.0 - 1.0 / speedup if speedup > 0 else 0.0
    lo, hi = wilson(e, n)
    return 1.0 / (1.0 - lo), (1.0 / (1.0 - hi) if hi < 0.999 else 1000.0)


def rank_value(a: Advice) -> float:
    """What the ranking sorts by: the estimate, or for an upper bound the midpoint 1 + (S − 1)/2."""
    s = a.estimated_speedup
    return 1.0 + (s - 1.0) / 2.0 if a.upper_bound else s


def overlap(a: Advice, b: Advice) -> float:
    """Share of the smaller matched set two advices have in common (Σ min over shared pairs / min of sums)."""
    if not a.matched or not b.matched:
        return 0.0
    common = sum(min(w, b.matched[k]) for k, w in a.matched.items() if k in b.matched)
    small = min(sum(a.matched.values()), sum(b.matched.values()))
    return common / small if small > 0 else 0.0


def from_samples(a: Advice) -> bool:
    """Whether ``a``'s estimate rests on warp samples (a matched share M of T, or a launch-shape formula with a
    sampled input such as eqs. 6-10's issue ratio R_I); False for one built from the launch facts alone (the tail
    effect's waves per SM: ``basis`` set and nothing matched), which has no sampling interval."""
    return not (a.basis and a.matched_samples <= 0)


def _key(a: Advice) -> tuple[float, int, float, float]:
    lo = a.interval[0] if a.interval else a.estimated_speedup
    return (-round(a.rank_value, 3), -a.priority, -lo, -a.matched_samples)


def order(advice: list[Advice], total: int, keep_intervals: bool = False) -> list[Advice]:
    """Rank ``advice`` (one kernel): fill ``samples``, ``interval``, ``rank_value``; group overlapping advice
    into ``alternatives`` of the better-ranked finding; write ``why`` for every finding. ``total``: T.
    ``keep_intervals``: keep intervals already set (combined over launches)."""
    for a in advice:
        a.samples = a.samples or total
        a.alternatives = []
        if not from_samples(a):
            a.interval = None  # built from the launch shape alone: no sampled share to be uncertain about
        elif not (keep_intervals and a.interval is not None):
            a.interval = interval(a.estimated_speedup, a.samples)
        a.rank_value = rank_value(a)
    ranked = sorted(advice, key=_key)
    kept: list[Advice] = []
    for a in ranked:
        host = next((k for k in kept if overlap(k, a) >= OVERLAP_GROUP), None)
        if host is None:
            kept.append(a)
            continue
        host.alternatives.append(Alternative(optimizer=a.optimizer, estimated_speedup=a.estimated_speedup,
                                             matched_samples=a.matched_samples, overlap=overlap(host, a),
                                             hint=a.hint, upper_bound=a.upper_bound))
    for i, a in enumerate(kept, 1):
        a.why = explain(a, i, kept[i] if i < len(kept) else None)
    return kept


def explain(a: Advice, rank: int, next_: Advice | None) -> str:
    """One sentence on why ``a`` is ranked ``rank``: its estimate (or bound), interval, cap and what the estimate
    is built from (the matched samples M of T, or ``a.basis`` for launch-shape estimates)."""
    # the interval is the sampling uncertainty of the matched share, not the model's error (docs/benchmarks.md
    # has that: the geometric-mean error on the H200 benchmark), and it belongs to the estimate, not the midpoint;
    # an estimate from the launch shape alone has none
    ci = f" (sampling 95% {a.interval[0]:.2f}-{a.interval[1]:.2f}x)" if a.interval else ""
    what = (f"upper bound {a.estimated_speedup:.2f}x{ci}, ranked at its midpoint {a.rank_value:.2f}x"
            if a.upper_bound else f"estimate {a.estimated_speedup:.2f}x{ci}")
    # a launch-shape estimate is built from launch facts, not from a matched share of the samples
    source = a.basis or f"{a.matched_samples:,.0f} of {a.samples:,} warp samples"
    parts = [f"#{rank}: {what} from {source}"]
    if a.cap is not None and (a.cap.binding or a.cap.cap <= NEAR_CAP * a.estimated_speedup):
        parts.append(f"{'capped' if a.cap.binding else 'near the cap'} by {a.cap.unit} at {a.cap.pct:.0f}% of "
                     f"peak (at most {a.cap.cap:.2f}x)")
    if len(a.launches) > 1:
        parts.append(f"time-weighted over {len(a.launches)} launches")
    if a.samples < FEW_SAMPLES:
        parts.append(f"only {a.samples} warp samples: re-profile with a finer sampling interval")
    if next_ is not None:
        parts.append(f"next: {next_.optimizer} {next_.rank_value:.2f}x")
    return "; ".join(parts)
