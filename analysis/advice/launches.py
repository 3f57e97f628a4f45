"""One ranking per kernel over all its profiled launches.

A report often holds several launches of one kernel (a solver's iterations, one launch per layer, sizes
that change). Each launch is analysed on its own (its launch shape, samples and blame); the kernel's advice
then combines them by the time each launch takes:

    S = Σ_i t_i / Σ_i (t_i / S_i)

— the speedup of the kernel's total time when launch i's time t_i shrinks by its own estimate S_i
(S_i = 1 for a launch the optimizer did not match). t_i is the launch's ``gpu__time_duration.sum``; a
report without durations weights by the launches' samples (PC samples accrue at a fixed rate per SM cycle,
so they are proportional to time on equally busy SMs). The interval combines the launches' bounds the
same way; the finding shown (scope, hotspots, hint) is that of the launch where the fix saves most time.

kernel_merge is the one optimizer whose estimate needs the launches together (:func:`merge_estimate`): a
launch that cannot fill the GPU costs about a fixed minimum time, so merging the launches into one turns
Σ_i t_i into about the total work at the rate of the launches that fill the GPU, plus one such floor.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from warpwise.analysis.advice import filters
from warpwise.analysis.advice import ranking as rk
from warpwise.analysis.advice.model import Advice, AdviceReport, Estimate, LaunchEstimate, Scope
from warpwise.analysis.profile.model import KernelProfile


def weight(profile: KernelProfile) -> float:
    """t_i of a launch: its duration in ns, else its sample count (see the module docstring)."""
    return profile.launch.duration_ns if profile.launch.duration_ns > 0 else float(profile.total_samples)


def merge_estimate(profiles: list[KernelProfile]) -> Estimate | None:
    """kernel_merge's estimate from the launches of one kernel: S = Σ_i t_i / (W · r + t_floor).

    t_i: each launch's duration (ns, ``gpu__time_duration.sum``); W = Σ_i n_i, the threads of all launches
    (n_i = CTAs × threads per CTA: the kernel's unit of work, the same code per thread in every launch);
    t_floor = min_i t_i, the per-launch floor: a launch whose grid cannot fill the GPU (waves < 1) costs about
    this fixed minimum (launch, ramp-up and drain: the fixed part f of ranking.apply_launch_floor's Amdahl
    model, here measured) whatever its few CTAs do; r = Σ_full (t_i − t_floor) / Σ_full n_i, the time per
    thread beyond that floor of the launches that fill the GPU (Nsight Compute's LaunchStats "Waves Per SM"
    ≥ 1: every SM has a full wave of CTAs, so their time past the floor scales with their work — CUDA C++
    Best Practices Guide, "Occupancy", and the wave/tail effect). One merged launch runs all the work at that
    full-GPU rate and pays the floor once.

    ``profiles``: the launches in report order. None when fewer than two launches, any launch lacks its
    duration, grid or waves, or when no launch fills the GPU (no rate to take) or none is below one wave
    (nothing to merge away). Raises nothing.
    """
    if len(profiles) < 2:
        return None
    facts = [p.launch for p in profiles]
    if any(f.duration_ns <= 0 or f.blocks <= 0 or f.threads_per_block <= 0 or f.waves_per_sm <= 0 for f in facts):
        return None
    full = [f for f in facts if f.waves_per_sm >= 1.0]
    if not full or len(full) == len(facts):
        return None
    floor = min(f.duration_ns for f in facts)
    rate = sum(f.duration_ns - floor for f in full) / sum(f.blocks * f.threads_per_block for f in full)
    work = float(sum(f.blocks * f.threads_per_block for f in facts))
    total = sum(f.duration_ns for f in facts)
    merged = work * rate + floor
    if merged >= total:
        return None
    return Estimate(total / merged, "sum_t_ns/(W*r_ns+t_floor_ns), r_ns=sum_full(t_ns-t_floor_ns)/sum_full_n",
                    {"sum_t_ns": total, "W": work, "r_ns": rate, "t_floor_ns": floor,
                     "launches": float(len(facts)), "full_launches": float(len(full))},
                    "launch floor: one merged launch at the full-GPU rate of the launches with >= 1 wave")


def _merge_advice(launches: list[tuple[KernelProfile, AdviceReport]], est: Estimate,
                  found: Advice | None) -> Advice:
    """The kernel_merge Advice of ``launches`` with the launch-floor estimate ``est`` (:func:`merge_estimate`);
    ``found``: the time-weighted instruction-fetch finding of the same optimizer, whose hotspots it keeps."""
    first = launches[0][1]
    n = int(est.inputs["launches"])
    small = n - int(est.inputs["full_launches"])
    hint = (f"{n} launches of this kernel, {small} of them too small to fill the GPU (under one wave of CTAs), "
            f"each costing about {est.inputs['t_floor_ns'] / 1000:.1f} us whatever its work: merge them into one "
            "launch over all the work (a table of the inputs, as multi-tensor launches do)")
    basis = (f"{n} launches, {small} under one wave: sum t = {est.inputs['sum_t_ns'] / 1000:.1f} us -> "
             f"{est.inputs['W']:,.0f} threads at {est.inputs['r_ns'] * 1000:.2f} ps each past the floor "
             f"(the rate of the launches with a full wave) + one {est.inputs['t_floor_ns'] / 1000:.1f} us floor")
    per = [LaunchEstimate(launch=p.launch_index, duration_ns=p.launch.duration_ns, samples=rep.total,
                          speedup=est.speedup, grid=p.launch.grid, block=p.launch.block) for p, rep in launches]
    scope = first.kernel_scope or Scope("kernel", function=first.mangled, name=f"kernel {first.kernel}")
    if found is not None:
        return replace(found, estimate=est, hint=hint, basis=basis, launches=per, matched_samples=0.0, share=0.0,
                       matched={}, interval=None, upper_bound=False, cap=None)
    return Advice(optimizer="kernel_merge", kernel=first.kernel, scope=scope, matched_samples=0.0, share=0.0,
                  estimate=est, hint=hint, samples=sum(rep.total for _, rep in launches), launches=per, basis=basis)


def combine(launches: list[tuple[KernelProfile, AdviceReport]]) -> AdviceReport:
    """The kernel-level AdviceReport of several launches of one kernel (module docstring's rule).

    ``launches``: (profile, per-launch report) pairs in report order; their ``candidates`` (capped, not yet
    grouped) are combined per optimizer, filtered by MIN_SPEEDUP and ranked once. One launch: its own report.
    Raises ValueError for an empty list.
    """
    if not launches:
        raise ValueError("no launches to combine")
    if len(launches) == 1:
        return launches[0][1]
    t = [max(weight(p), 1e-9) for p, _ in launches]
    total_t = sum(t)
    by_opt: dict[str, list[tuple[int, Advice]]] = defaultdict(list)
    for i, (_, rep) in enumerate(launches):
        for a in rep.candidates:
            by_opt[a.optimizer].append((i, a))
    total_samples = sum(rep.total for _, rep in launches)
    timed = [p.launch.duration_ns > 0 for p, _ in launches]  # what weight() returned: the unit of t_i
    t_unit = ("= launch i's duration in ns" if all(timed) else "= launch i's warp samples (no durations)"
              if not any(timed) else "= launch i's duration in ns, or its warp samples where it has none")
    combined: list[Advice] = []
    for items in by_opt.values():
        s_i = [1.0] * len(launches)
        lo_i = [1.0] * len(launches)
        hi_i = [1.0] * len(launches)
        for i, a in items:
            s_i[i] = a.estimated_speedup
            lo, hi = a.interval or (a.estimated_speedup, a.estimated_speedup)
            lo_i[i], hi_i[i] = lo, hi
        s = total_t / sum(ti / si for ti, si in zip(t, s_i, strict=True))
        i_best, best = max(items, key=lambda ia: t[ia[0]] * (1 - 1 / ia[1].estimated_speedup))
        # a launch-shape basis names one launch's facts: say which
        basis = (f"{best.basis} (launch {'.'.join(map(str, launches[i_best][0].launch_index))})"
                 if best.basis else "")
        inputs = {f"t{i}": ti for i, ti in enumerate(t)} | {f"S{i}": si for i, si in enumerate(s_i)}
        est = Estimate(s, f"sum_i t_i / sum_i (t_i/S_i) over launches, t_i {t_unit}", inputs,
                       f"time-weighted over {len(launches)} launches of {best.estimate.equation}")
        matched: dict[tuple[str, int | None, int], float] = defaultdict(float)
        for _, a in items:
            for k, v in a.matched.items():
                matched[k] += v
        m = sum(a.matched_samples for _, a in items)
        per = [LaunchEstimate(launch=p.launch_index, duration_ns=p.launch.duration_ns, samples=rep.total,
                              speedup=s_i[i], grid=p.launch.grid, block=p.launch.block)
               for i, (p, rep) in enumerate(launches)]
        merged = replace(best, estimate=est, matched_samples=m, share=m / total_samples if total_samples else 0.0,
                         samples=total_samples, launches=per, alternatives=[], matched=dict(matched), basis=basis,
                         upper_bound=any(a.upper_bound for _, a in items),
                         interval=(total_t / sum(ti / x for ti, x in zip(t, lo_i, strict=True)),
                                   total_t / sum(ti / x for ti, x in zip(t, hi_i, strict=True))))
        combined.append(merged)
    merge = merge_estimate([p for p, _ in launches])
    if merge is not None:
        found = next((a for a in combined if a.optimizer == "kernel_merge"), None)
        combined = [a for a in combined if a.optimizer != "kernel_merge"]
        combined.append(_merge_advice(launches, merge, found))
    first = launches[0][1]
    longest = max(range(len(launches)), key=lambda i: t[i])
    out = AdviceReport(kernel=first.kernel, mangled=first.mangled, arch=first.arch, total=total_samples,
                       latency=sum(r.latency for _, r in launches), active=sum(r.active for _, r in launches),
                       kernel_scope=first.kernel_scope, bound=launches[longest][1].bound, launches=len(launches))
    from warpwise.analysis.advice.advise import explain_bound, merge_launch_notes

    out.notes = merge_launch_notes([(p.launch_index, rep.notes, rep.few_samples) for p, rep in launches])
    for _, rep in launches:
        out.skipped.extend(s for s in rep.skipped if s.optimizer not in by_opt and
                           (merge is None or s.optimizer != "kernel_merge") and
                           all(s.optimizer != x.optimizer for x in out.skipped))
    kept = []
    for a in combined:
        low = filters.below_minimum(a)
        if low is not None:
            out.skipped.append(low)
        else:
            kept.append(a)
    out.candidates = list(kept)
    # intervals are already combined: order() recomputes them from the summed samples only when missing
    out.advice = rk.order(kept, total_samples, keep_intervals=True)
    explain_bound(out.advice, out.bound)
    return out
