"""Post-processing of one kernel's advice: keep only advice the user can act on.

- Advice that lies only in CUDA device-runtime code (``__cudaCDP2*``) is dropped: the user cannot change it.
- Scopes inside compiler-emitted math routines (the division slow path) move to the user line that calls them.
- loop_unrolling and loop_no_unroll never both advise on one loop: the larger estimate stays.
- Advice whose estimate rounds to 1.000x (≤ MIN_SPEEDUP) is not worth acting on and moves to ``skipped``.
- A kernel that launches kernels from the device gets a note pointing at the DP rewrites (docs/rewrites.md).
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path, PurePosixPath

from warpwise.analysis.advice.common import same_loop
from warpwise.analysis.advice.context import (
    KernelView,
    demangle_short,
    is_math_routine,
    is_runtime_function,
    user_loc,
)
from warpwise.analysis.advice.model import Advice, RegionEstimate, Scope, Skipped
from warpwise.analysis.binary.model import SourceLoc

#: Advice with an estimated speedup at or below this (×) is reported as skipped: it prints as 1.000x and
#: promises nothing measurable. A warpwise reporting threshold, not a GPA constant.
MIN_SPEEDUP = 1.0005

#: The CDP2 device-runtime entry point every device-side ``kernel<<<...>>>`` compiles to (CUDA 12+, -rdc).
CDP_LAUNCH = "__cudaCDP2LaunchDeviceV2"


def runtime_only(a: Advice) -> bool:
    """Whether the advice concerns only device-runtime code: its scope lies in a runtime function and so does
    every hotspot's stalled instruction (or it has none)."""
    if not is_runtime_function(a.scope.function):
        return False
    return all(is_runtime_function(h.use.function) for h in a.hotspots)


def call_site_scope(view: KernelView, callee: str, depth: int = 4) -> Scope | None:
    """A line scope at the user call site of ``callee`` (walking up through callers that are math routines
    themselves, at most ``depth`` levels). None without a program, a unique site or line info."""
    if view.program is None or depth <= 0:
        return None
    found: set[tuple[str, int, str]] = set()
    for pf in view.program.functions.values():
        for cs in pf.calls:
            if cs.callee != callee:
                continue
            if is_math_routine(pf.name):
                up = call_site_scope(view, pf.name, depth - 1)
                if up is not None and up.file is not None and up.line is not None:
                    found.add((up.file, up.line, up.function or pf.name))
                continue
            ins = pf.function.at(cs.offset)
            loc = None if ins is None else user_loc(ins)
            if loc is not None:
                found.add((loc.file, loc.line, pf.name))
    if len({(f, ln) for f, ln, _ in found}) != 1:
        return None
    file, line, fn = next(iter(found))
    return Scope(kind="line", file=file, line=line, end_line=line, function=fn,
                 name=f"call of {demangle_short(callee)} at line {line}")


def rescope_internal(view: KernelView, a: Advice) -> Advice:
    """Move a scope (and region scopes) that lies in a compiler-emitted math routine to the user line that
    calls it; other advice is returned unchanged."""
    def fix(s: Scope) -> Scope:
        if s.kind in ("function", "loop") and s.function is not None and is_math_routine(s.function):
            return call_site_scope(view, s.function) or s
        return s

    scope = fix(a.scope)
    regions = [RegionEstimate(fix(r.scope), r.matched_samples, r.estimate) for r in a.regions]
    if scope == a.scope and all(r.scope == o.scope for r, o in zip(regions, a.regions, strict=True)):
        return a
    return replace(a, scope=scope, regions=regions)


def _loop_scopes(a: Advice) -> list[Scope]:
    return [s for s in [a.scope, *(r.scope for r in a.regions), *(h.loop for h in a.hotspots if h.loop)]
            if s is not None and s.kind == "loop"]


def resolve_loop_conflicts(advice: list[Advice]) -> tuple[list[Advice], list[Skipped]]:
    """Keep only one of loop_unrolling and loop_no_unroll when both name the same loop: the one with the
    larger estimated speedup (the other's advice would undo it)."""
    un = next((a for a in advice if a.optimizer == "loop_unrolling"), None)
    no = next((a for a in advice if a.optimizer == "loop_no_unroll"), None)
    if un is None or no is None:
        return advice, []
    shared = [s for s in _loop_scopes(un) if any(same_loop(s, t) for t in _loop_scopes(no))]
    if not shared:
        return advice, []
    keep, drop = (un, no) if un.estimated_speedup >= no.estimated_speedup else (no, un)
    reason = (f"contradicts {keep.optimizer} on the {shared[0].name} ({drop.estimated_speedup:.3f}x against "
              f"{keep.estimated_speedup:.3f}x); the larger estimate is kept")
    return [a for a in advice if a is not drop], [Skipped(drop.optimizer, reason)]


def below_minimum(a: Advice) -> Skipped | None:
    """Skipped when the estimated speedup is at most MIN_SPEEDUP, else None."""
    if a.estimated_speedup > MIN_SPEEDUP:
        return None
    return Skipped(a.optimizer, f"estimated speedup {a.estimated_speedup:.4f}x ({a.matched_samples:.0f} samples, "
                                f"{a.share:.2%}) is at most {MIN_SPEEDUP}x: not worth acting on")


def device_launch_lines(view: KernelView) -> list[SourceLoc]:
    """User source lines of the kernel's device-side launches (CALLs to CDP_LAUNCH in its SASS), in address
    order; empty without a program or without such calls."""
    if view.program is None:
        return []
    pf = view.program.functions.get(view.profile.mangled)
    if pf is None:
        return []
    out: list[SourceLoc] = []
    for cs in pf.calls:
        if cs.callee == CDP_LAUNCH:
            ins = pf.function.at(cs.offset)
            loc = None if ins is None else user_loc(ins)
            if loc is not None and loc not in out:
                out.append(loc)
    return out


def cdp_note(view: KernelView) -> str | None:
    """A note for a kernel that launches child kernels from the device: GPA's optimizers do not model launch
    overhead; the DP rewrites (thresholding, coarsening, aggregation; docs/rewrites.md) do. None otherwise."""
    locs = device_launch_lines(view)
    if not locs:
        return None
    where = ", ".join(f"{PurePosixPath(loc.file.replace(chr(92), '/')).name}:{loc.line}" for loc in locs)
    first = locs[0]
    name = PurePosixPath(first.file.replace("\\", "/")).name
    # the report this was analysed from, as an absolute path (the command is run in the source's folder); a CSV
    # export cannot serve the plan (no device-runtime samples): then the report it was exported from
    rep = view.profile.report
    report = shlex.quote(str(Path(rep).resolve())) if rep and view.profile.origin == "ncu-rep" else \
        "REPORT.ncu-rep (the report the CSV export was made from)"
    return (f"{view.profile.name} launches kernels from the device ({CDP_LAUNCH} at {where}): launch overhead "
            "of many small child grids is not modelled by these optimizers; try the dynamic-parallelism rewrites "
            "(thresholding, coarsening, aggregation): the code actions on the launch line, or, in the source's "
            f"folder, `warpwise rewrite plan {name} --launch {first.line} --profile {report}` (the "
            "profile-guided combination; threshold|coarsen|aggregate one at a time; docs/rewrites.md)")
