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
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from warpwise.analysis.advice import filters
from warpwise.analysis.advice import ranking as rk
from warpwise.analysis.advice.model import Advice, AdviceReport, Estimate, LaunchEstimate
from warpwise.analysis.profile.model import KernelProfile


def weight(profile: KernelProfile) -> float:
    """t_i of a launch: its duration in ns, else its sample count (see the module docstring)."""
    return profile.launch.duration_ns if profile.launch.duration_ns > 0 else float(profile.total_samples)


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
    first = launches[0][1]
    longest = max(range(len(launches)), key=lambda i: t[i])
    out = AdviceReport(kernel=first.kernel, mangled=first.mangled, arch=first.arch, total=total_samples,
                       latency=sum(r.latency for _, r in launches), active=sum(r.active for _, r in launches),
                       kernel_scope=first.kernel_scope, bound=launches[longest][1].bound, launches=len(launches))
    from warpwise.analysis.advice.advise import explain_bound, merge_launch_notes

    out.notes = merge_launch_notes([(p.launch_index, rep.notes, rep.few_samples) for p, rep in launches])
    for _, rep in launches:
        out.skipped.extend(s for s in rep.skipped if s.optimizer not in by_opt and
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
