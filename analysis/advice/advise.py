"""Entry point: run every registered optimizer on one kernel and rank the advice (GPA §3, §5).

``advise(profile, program, blame, arch)`` returns the advice ranked by estimated speedup (best first);
``evaluate`` also returns the optimizers that were skipped and why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from warpwise.analysis.advice import filters
from warpwise.analysis.advice import ranking as rk
from warpwise.analysis.advice.context import LoadQueueing, build_view
from warpwise.analysis.advice.estimate import EstimateError
from warpwise.analysis.advice.model import Advice, AdviceReport, Bound, Skipped
from warpwise.analysis.advice.parallel import first_wave_ctas_per_sm
from warpwise.analysis.advice.registry import OPTIMIZER_IDS, REGISTRY, optimizers
from warpwise.analysis.arch.facts import arch_facts
from warpwise.analysis.arch.model import ArchFacts
from warpwise.analysis.arch.roofline import ACHIEVABLE, ceilings, launch_floor_ns
from warpwise.analysis.binary.model import Cubin
from warpwise.analysis.blame.model import BlameGraph
from warpwise.analysis.profile.model import KernelProfile
from warpwise.analysis.program.model import Program


def _program(program: Program | Cubin | None) -> Program | None:
    if program is None or isinstance(program, Program):
        return program
    from warpwise.analysis.program.build import build_program

    return build_program(program)


def rank(advice: list[Advice], total: int | None = None) -> list[Advice]:
    """Advice in ranked order (analysis/advice/ranking.py: rank value, interval, matched samples), overlapping
    advice grouped as alternatives. ``total``: T of the kernel (defaults to each advice's own samples)."""
    ids = {k: i for i, k in enumerate(OPTIMIZER_IDS)}
    stable = sorted(advice, key=lambda a: ids.get(a.optimizer, 99))
    return rk.order(stable, total if total is not None else max((a.samples for a in advice), default=0))


def bound_finding(throughput_pct: dict[str, float], reach_of: dict[str, float] | None = None,
                  queueing: LoadQueueing | None = None) -> Bound | None:
    """The roofline the kernel is at (SpeedOfLight; analysis/arch/roofline; ``reach_of``: the launch's
    reachable fractions for its traffic as issued, KernelView.reach_now), as a finding; None if none.
    ``queueing``: the launch's global-load waits (KernelView.load_queueing); when they show queueing and DRAM
    binds, the text says that the waits, not a datasheet fraction, set DRAM's reach."""
    bound = [c for c in ceilings(throughput_pct, reach_of) if c.bound]
    if not bound:
        return None
    c = bound[0]
    if c.unit == "dram" and queueing is not None and queueing.queued:
        text = (f"{c.name} is at {c.pct:.0f}% of peak (SpeedOfLight) and the global loads queue for it: "
                f"{100 * queueing.share:.0f}% of the warp samples wait on them, {queueing.wait_ns / 1e3:.2f} us per "
                f"load against DRAM's {queueing.latency_ns / 1e3:.2f} us latency at this throughput (Little's law "
                "over the PC samples), so the requests wait in line and this access pattern gets no more from DRAM: "
                f"the kernel is bandwidth bound; a fix that leaves its traffic unchanged (hiding latency, more "
                f"warps, fewer instructions) can gain at most {c.cap:.2f}x. Move fewer bytes, or the same bytes "
                "in fewer, fuller requests, to go faster")
        return Bound(unit=c.unit, pct=c.pct, cap=c.cap, text=text)
    if c.unit == "sm":
        what = ("compute bound", "remove work (fewer or cheaper instructions) to go faster")
    else:
        what = ("bandwidth bound", "move fewer bytes (reuse data from shared memory or registers, smaller types, "
                "fused kernels) to go faster")
    # the cap is against what the unit reaches in practice, not its datasheet peak: say so, or "at 96% of
    # peak ... at most 1.00x" reads as a contradiction
    reach = (reach_of or ACHIEVABLE).get(c.unit, 1.0)
    seen = f"; real kernels reach about {100 * reach:.0f}% of it" if reach < 1.0 else ""
    text = (f"{c.name} is at {c.pct:.0f}% of peak (SpeedOfLight{seen}): the kernel is {what[0]}; a fix that leaves "
            f"that work unchanged can gain at most {c.cap:.2f}x. {what[1][0].upper()}{what[1][1:]}")
    return Bound(unit=c.unit, pct=c.pct, cap=c.cap, text=text)


_TRAFFIC = {"dram": "DRAM", "l2": "L2", "l1": "L1"}


def explain_bound(advice: list[Advice], bound: Bound | None) -> None:
    """Add to each ranked advice's ``why`` why its estimate may exceed the kernel's bound line ("a fix that
    leaves that work unchanged can gain at most C"), where it does: the fix changes the bound unit's work, so
    ranking.py did not cap it by C (ranking.units_for: stall elimination removes instructions, so it is not
    capped by the SM roofline; a fix that cuts a memory unit's traffic is capped by the roofline after the
    fix instead). Text only: no estimate or order changes."""
    if bound is None:
        return
    for a in advice:
        if a.estimated_speedup <= bound.cap + 1e-9:
            continue
        family = REGISTRY[a.optimizer].family if a.optimizer in REGISTRY else "stall_elimination"
        capped_after = a.cap is not None and a.cap.unit == bound.unit and a.cap.cap > bound.cap + 1e-9
        if bound.unit in rk.units_for(a.optimizer, family) and not capped_after:
            continue
        over = f"above the {bound.unit} bound's {bound.cap:.2f}x"
        if capped_after:
            text = (f"{over}: the fix cuts the {_TRAFFIC.get(bound.unit, bound.unit)} traffic itself, so the cap is "
                    f"the {bound.unit} roofline after the fix")
        elif bound.unit == "sm" and family == "stall_elimination":
            text = (f"{over}: the fix removes instructions (SM work) rather than hiding their latency, so that cap, "
                    "for fixes that leave the work unchanged, does not apply")
        else:
            text = (f"{over}: the fix changes the {bound.unit} work itself, so that cap, for fixes that leave the "
                    "work unchanged, does not apply")
        head, sep, nxt = a.why.partition("; next: ")  # before the pointer to the next advice
        a.why = f"{head}; {text}{sep}{nxt}" if a.why else text


def _cap(a: Advice, throughput_pct: dict[str, float], reach_of: dict[str, float] | None = None) -> Advice:
    """Apply the roofline cap of the units ``a``'s fix leaves unchanged (estimators that capped themselves,
    with their own work factor, keep theirs)."""
    if a.optimizer in rk.UPPER_BOUND_IDS and not a.params.get("confirmed"):
        a.upper_bound = True
    if a.cap is not None:
        return a
    family = REGISTRY[a.optimizer].family if a.optimizer in REGISTRY else "stall_elimination"
    cap = rk.roofline_cap(throughput_pct, rk.units_for(a.optimizer, family), reach_of=reach_of)
    a.estimate, a.cap = rk.apply_cap(a.estimate, cap, soft=True)
    return a


def evaluate(profile: KernelProfile, program: Program | Cubin | None, blame: BlameGraph,
             arch: ArchFacts | str | int, *, sources: dict[str, str] | None = None, launches: int | None = None,
             only: tuple[str, ...] | None = None) -> AdviceReport:
    """Run the optimizers on one kernel launch.

    ``profile``: the launch; ``program``: its program structure (a Cubin is built into one; None when no
    binary is available — structure-dependent optimizers then report what is missing); ``blame``: the
    BlameGraph of the launch; ``arch``: facts or an ``sm_XX`` name; ``sources``: recorded path -> text
    for hints and quick fixes (defaults to the profile's embedded sources, then the files on disk);
    ``launches``: launches of this kernel in the run (kernel_merge needs it); ``only``: optimizer ids to
    run (default all). Raises UnknownArchError for an unknown architecture.

    The raw advice is then filtered (:mod:`.filters`): advice only about device-runtime code is dropped,
    scopes in compiler math routines move to the calling user line, loop_unrolling/loop_no_unroll conflicts
    keep the larger estimate, and advice of at most ``filters.MIN_SPEEDUP`` moves to ``skipped``.
    """
    facts = arch_facts(arch)
    prog = _program(program)
    view = build_view(profile, prog, blame, facts, sources, launches)
    ks = view.kernel_scope()
    report = AdviceReport(kernel=profile.name, mangled=profile.mangled, arch=profile.arch or facts.arch,
                          total=view.total, latency=view.latency, active=view.active,
                          kernel_scope=ks if ks.line is not None else None)
    if prog is not None and prog.cubin.debug_build:
        report.notes.append("the binary is a -G debug build: its SASS is unoptimized, so this advice does not "
                            "describe the release build")
    if view.outside > 0:
        report.notes.append(f"{view.outside:.0f} warp samples lie in code outside the binary's functions (e.g. the "
                            "CUDA device runtime) and are not matched by any optimizer")
    if view.runtime > 0:
        # one count of the device runtime's time: its functions linked into the binary and, beside them, the
        # code outside the binary (the note above; in a CDP program, the runtime's own)
        outside = (f" and {view.outside:,.0f} in code outside the binary (noted above; "
                   f"{(view.runtime + view.outside) / view.total:.1%} of all together)"
                   if view.outside > 0 and view.total > 0 else "")
        report.notes.append(f"{view.runtime:,.0f} warp samples lie in CUDA device-runtime functions linked into the "
                            f"binary (__cudaCDP2* and the like){outside}: the program cannot change them, and no "
                            "optimizer matches them")
    if (note := filters.cdp_note(view)) is not None:
        report.notes.append(note)
    if view.total == 0:
        report.notes.append("the profile has no samples for this kernel")
    for opt in optimizers():
        if only is not None and opt.id not in only:
            continue
        try:
            res = opt.run(view)
        except EstimateError as e:
            res = Skipped(opt.id, f"estimate not computable: {e}", missing=True)
        if not isinstance(res, Advice):
            report.skipped.append(res)
        elif filters.runtime_only(res):
            report.skipped.append(Skipped(opt.id, f"matches only CUDA device-runtime code ({res.scope.function}), "
                                                  "which the program cannot change"))
        else:
            report.advice.append(filters.rescope_internal(view, res))
    report.advice, dropped = filters.resolve_loop_conflicts(report.advice)
    report.skipped.extend(dropped)
    tp = profile.launch.throughput_pct
    report.bound = bound_finding(tp, view.reach_now, view.load_queueing)
    kept = []
    floor_now = launch_floor_ns(first_wave_ctas_per_sm(view))
    for a in report.advice:
        a = _cap(a, tp, view.reach_now)
        after = None if a.ctas_per_sm_after is None else launch_floor_ns(a.ctas_per_sm_after)
        a.estimate = rk.apply_launch_floor(a.estimate, profile.launch.duration_ns, floor_now, after)
        if (low := filters.below_minimum(a)) is not None:
            report.skipped.append(low)
        else:
            kept.append(a)
    report.candidates = list(kept)
    report.advice = rank(kept, view.total)
    explain_bound(report.advice, report.bound)
    if 0 < view.total < rk.FEW_SAMPLES:
        report.few_samples = view.total
        report.notes.append(launch_few_samples_note(view.total))
    return report


_FEW_TAIL = (": estimates are uncertain (see each interval); re-profile with a finer PC sampling interval "
             "(`warpwise profile --short-kernels -o R.ncu-rep -- ./app`, i.e. ncu --warp-sampling-interval 0)")


def few_samples_note(head: str) -> str:
    """The note for a launch with fewer than ranking.FEW_SAMPLES warp samples: ``head`` (how few, where) and
    what to do about it."""
    return head + _FEW_TAIL


def launch_few_samples_note(samples: int) -> str:
    """The note :func:`evaluate` adds to one launch's report when its ``samples`` warp samples are fewer than
    ranking.FEW_SAMPLES (``AdviceReport.few_samples`` holds the count)."""
    return few_samples_note(f"only {samples} warp samples for this kernel")


def merge_launch_notes(launches: list[tuple[tuple[int, int], list[str], int | None]]) -> list[str]:
    """The notes of several launches of one kernel (``(launch index, notes, few samples)`` in report order),
    each once. ``few samples`` is the launch's ``AdviceReport.few_samples`` (None when it has enough samples or
    no advice report): its :func:`launch_few_samples_note`, which differs between launches only in that count,
    is replaced by one note naming the launches (``only 120 warp samples in launch 0.1, 95 in 0.3 (2 of 4
    launches): ...``; more than report.PER_LAUNCH_SHOWN such launches: ``only 30-59 warp samples per launch in
    48 of 48 launches``), where the first was. The counts come from the reports, never from the note text."""
    out: list[str] = []
    few: list[tuple[str, int]] = []
    at = 0
    for idx, notes, samples in launches:
        own = launch_few_samples_note(samples) if samples is not None else None
        for n in notes:
            if samples is not None and n == own:
                at = len(out) if not few else at
                few.append((".".join(map(str, idx)), samples))
            elif n not in out:
                out.append(n)
    if not few:
        return out
    if len(launches) == 1:
        return [*out[:at], launch_few_samples_note(few[0][1]), *out[at:]]
    from warpwise.analysis.advice.report import PER_LAUNCH_SHOWN

    if len(few) > PER_LAUNCH_SHOWN:  # a range, not one count per launch
        cs = [c for _, c in few]
        head = f"only {min(cs)}-{max(cs)} warp samples per launch in {len(few)} of {len(launches)} launches"
    else:
        counts = ", ".join(f"{c} in {label}" for label, c in few[1:])
        head = (f"only {few[0][1]} warp samples in launch {few[0][0]}" + (f", {counts}" if counts else "")
                + f" ({len(few)} of {len(launches)} launches)")
    return [*out[:at], few_samples_note(head), *out[at:]]


def advise(profile: KernelProfile, program: Program | Cubin | None, blame: BlameGraph, arch: ArchFacts | str | int,
           **kwargs: object) -> list[Advice]:
    """Advice for one kernel launch, ranked by estimated speedup (best first). See :func:`evaluate`."""
    return evaluate(profile, program, blame, arch, **kwargs).advice  # type: ignore[arg-type]


if not TYPE_CHECKING:  # (runtime only: the checker keeps evaluate's own signature)
    from warpwise.analysis.gcpause import without_gc

    # the per-edge views allocate ~10^6 objects: cyclic-collection passes cost ~15% of a 200k-instruction run
    evaluate = without_gc(evaluate)
