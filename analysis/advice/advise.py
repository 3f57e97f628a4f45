"""Entry point: run every registered optimizer on one kernel and rank the advice (GPA §3, §5).

``advise(profile, program, blame, arch)`` returns the advice ranked by estimated speedup (best first);
``evaluate`` also returns the optimizers that were skipped and why.
"""

from __future__ import annotations

from warpwise.analysis.advice import filters
from warpwise.analysis.advice.context import build_view
from warpwise.analysis.advice.estimate import EstimateError
from warpwise.analysis.advice.model import Advice, AdviceReport, Skipped
from warpwise.analysis.advice.registry import OPTIMIZER_IDS, optimizers
from warpwise.analysis.arch.facts import arch_facts
from warpwise.analysis.arch.model import ArchFacts
from warpwise.analysis.binary.model import Cubin
from warpwise.analysis.blame.model import BlameGraph
from warpwise.analysis.profile.model import KernelProfile
from warpwise.analysis.program.model import Program


def _program(program: Program | Cubin | None) -> Program | None:
    if program is None or isinstance(program, Program):
        return program
    from warpwise.analysis.program.build import build_program

    return build_program(program)


def rank(advice: list[Advice]) -> list[Advice]:
    """Advice sorted by estimated speedup (best first); ties by matched samples, then contract order."""
    order = {k: i for i, k in enumerate(OPTIMIZER_IDS)}
    return sorted(advice, key=lambda a: (-a.estimated_speedup, -a.matched_samples, order.get(a.optimizer, 99)))


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
        report.notes.append(f"{view.outside:.0f} samples lie in code outside the binary's functions (e.g. the CUDA "
                            "device runtime) and are not matched by any optimizer")
    if view.runtime > 0:
        report.notes.append(f"{view.runtime:.0f} stall samples lie in CUDA device-runtime functions (__cudaCDP2* "
                            "and the like), which the program cannot change; no optimizer matches them")
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
    kept = []
    for a in report.advice:
        if (low := filters.below_minimum(a)) is not None:
            report.skipped.append(low)
        else:
            kept.append(a)
    report.advice = rank(kept)
    return report


def advise(profile: KernelProfile, program: Program | Cubin | None, blame: BlameGraph, arch: ArchFacts | str | int,
           **kwargs: object) -> list[Advice]:
    """Advice for one kernel launch, ranked by estimated speedup (best first). See :func:`evaluate`."""
    return evaluate(profile, program, blame, arch, **kwargs).advice  # type: ignore[arg-type]
