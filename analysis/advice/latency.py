"""Latency-hiding code optimizers (GPA Table 2 "Code Optimizers / Latency Hiding", plus async copy from
GPA's released set). They rearrange issue order so other work fills stall slots; GPA eqs. 4–5 bound the
gain by the active samples available in the scope, and Theorem 5.1 bounds it by 2×.
"""

from __future__ import annotations

from warpwise.analysis.advice import common as cm
from warpwise.analysis.advice.code import MATH_ROUTINE_MARKERS
from warpwise.analysis.advice.context import EdgeView, KernelView, demangle_short
from warpwise.analysis.advice.model import Advice, Skipped
from warpwise.analysis.advice.quickfix import QuickFixError, forceinline_fix, unroll_fix
from warpwise.analysis.advice.registry import register
from warpwise.analysis.arch import stalls
from warpwise.analysis.program.model import ProgramFunction

#: GPA released (GPUFunctionInlineOptimizer): inlining is suggested only when instruction-fetch stalls are at
#: most this share of all stalls (more code would make them worse) ...
IFETCH_UPPER = 0.3
#: ... and only for callees smaller than this many instructions.
FUNCTION_SIZE_LIMIT = 3000


def _dependency(e: EdgeView) -> bool:
    """Global-memory or execution dependency (GPA's LAT_GMEM / LAT_IDEP matches)."""
    if e.is_self:
        return False
    if e.gpa_class == stalls.EXECUTION_DEPENDENCY:
        return True
    return e.gpa_class == stalls.MEMORY_DEPENDENCY and (
        e.edge.category == "global_memory" or cm.is_global_mem(e.def_ins))


# ---- loop_unrolling ---------------------------------------------------------------------------------

@register("loop_unrolling", "Loop unrolling", "latency_hiding",
          "Global-memory and execution-dependency stalls whose def and use are in the same loop that the "
          "binary runs rolled.",
          "Unroll the loop (#pragma unroll N, or by hand) so several iterations' loads are in flight at once; "
          "vector loads (float4) help the same way.")
def loop_unrolling(view: KernelView) -> Advice | Skipped:
    """GPA Table 2 loop unrolling: per-loop eq. 5."""
    if view.program is None:
        return Skipped("loop_unrolling", "needs the loop structure of the binary (no cubin given)", missing=True)
    evs = [e for e in view.edges if _dependency(e) and e.use_loop is not None and e.def_loop is e.use_loop
           and e.def_fn is e.use_fn]
    regions = cm.group_regions(view, evs)
    rows = [(r, view.active_in_loop(r.fn, r.loop)) for r in regions if r.fn is not None and r.loop is not None]

    def hint(r: cm.Region) -> str:
        loop = r.loop
        hs = cm.hotspots(view, r.edges, cm.latency_weight, 3)
        pairs = "; ".join(f"line {h.use.line} waits {h.distance} instructions after line "
                          f"{h.def_.line if h.def_ else '?'}" for h in hs)
        fix = ""
        src = view.source(loop.file) if loop is not None else None
        if loop is not None and src is not None and loop.first_line is not None:
            try:
                q = unroll_fix(src, loop.file or "", loop.first_line, loop.last_line)
            except QuickFixError:
                q = None
            if q is not None:
                fix = f" ({q.title.lower()})"
        return (f"the {r.scope.name} runs rolled in the binary and each iteration waits for its own loads ({pairs}): "
                f"unroll it{fix} so the loads of several iterations are issued before their first use")

    return cm.latency_hiding_advice(view, "loop_unrolling", rows, hint,
                                    nothing="no dependency stalls inside rolled loops")


# ---- code_reordering --------------------------------------------------------------------------------

@register("code_reordering", "Code reordering", "latency_hiding",
          "Global-memory and execution-dependency stalls: a value is used soon after the instruction that "
          "produces it.",
          "Move independent work between the load (or long-latency operation) and its first use: issue loads "
          "a few statements earlier.")
def code_reordering(view: KernelView) -> Advice | Skipped:
    """GPA Table 2 code reordering: eq. 5 per loop (else function) of the def."""
    evs = [e for e in view.edges if _dependency(e)]
    if view.program is None:
        region = cm.Region(scope=view.kernel_scope(), fn=None, loop=None, edges=evs)
        rows = [(region, float(view.active))]
    else:
        rows = []
        for r in cm.group_regions(view, evs, by_def=True):
            if r.fn is None:
                rows.append((r, float(view.active)))
            elif r.loop is not None:
                rows.append((r, view.active_in_loop(r.fn, r.loop)))
            else:
                rows.append((r, view.active_in_function(r.fn)))

    def hint(r: cm.Region) -> str:
        hs = cm.hotspots(view, r.edges, cm.latency_weight, 3)
        parts = [f"line {h.use.line} ({h.use.opcode}) uses the result of line {h.def_.line if h.def_ else '?'} "
                 f"({h.def_.opcode if h.def_ else '?'}) {h.distance} instructions later" for h in hs]
        return ("; ".join(parts) + ": start these loads or long operations earlier, with independent work between "
                "them and their first use") if parts else ""

    return cm.latency_hiding_advice(view, "code_reordering", rows, hint, nothing="no dependency stalls")


# ---- function_inlining ------------------------------------------------------------------------------

def _is_math(pf: ProgramFunction) -> bool:
    return any(m in pf.name for m in MATH_ROUTINE_MARKERS)


@register("function_inlining", "Function inlining", "latency_hiding",
          "Stalls inside device functions called with CALL (not inlined) and at their call sites.",
          "Inline the callee (__forceinline__ instead of __noinline__) so caller and callee are scheduled together "
          "and the call's register saves disappear.")
def function_inlining(view: KernelView) -> Advice | Skipped:
    """GPA Table 2 function inlining: per-callee eq. 5 with A = callee + caller loop around the calls."""
    prog = view.program
    if prog is None:
        return Skipped("function_inlining", "needs the call graph of the binary (no cubin given)", missing=True)
    all_stall = sum(e.stall for e in view.edges)
    icache = sum(e.stall for e in view.edges if e.edge.reason in cm.ICACHE_REASONS)
    if all_stall > 0 and icache / all_stall > IFETCH_UPPER:
        return Skipped("function_inlining",
                       f"instruction-fetch stalls are {icache / all_stall:.0%} of all stalls: more code would hurt")
    callees = {pf.name: pf for pf in prog.functions.values()
               if not pf.is_kernel and not _is_math(pf) and len(pf.instructions) < FUNCTION_SIZE_LIMIT}
    sites: dict[str, list[tuple[ProgramFunction, int]]] = {n: [] for n in callees}
    for pf in prog.functions.values():
        for cs in pf.calls:
            if cs.callee in sites:
                sites[cs.callee].append((pf, cs.offset))
    called = {n for n, s in sites.items() if s}
    if not called:
        return Skipped("function_inlining", "no device function is called out of line")
    site_lines: dict[str, set[tuple[str, int]]] = {}
    for n, ss in sites.items():
        site_lines[n] = set()
        for pf, off in ss:
            ins = pf.function.at(off)
            if ins is not None and ins.loc is not None:
                site_lines[n].add((pf.name, ins.loc.line))
    regions: dict[str, cm.Region] = {}
    for e in view.edges:
        target = None
        if e.use_fn is not None and e.use_fn.name in called:
            target = e.use_fn.name
        elif e.use_ins is not None and e.use_ins.loc is not None and e.use_fn is not None:
            for n in called:
                if (e.use_fn.name, e.use_ins.loc.line) in site_lines[n]:
                    target = n
                    break
        if target is None:
            continue
        if target not in regions:
            regions[target] = cm.Region(scope=view.function_scope(callees[target]), fn=callees[target], loop=None)
        regions[target].edges.append(e)
    rows = []
    for n, r in regions.items():
        a = view.active_in_function(callees[n])
        seen: set[tuple[str, int]] = set()
        for caller, off in sites[n]:
            loop = caller.loop_of(off)
            key = (caller.name, loop.header if loop is not None else -1)
            if key in seen:
                continue
            seen.add(key)
            a += view.active_in_loop(caller, loop) if loop is not None else view.active_in_function(caller)
        rows.append((r, a))

    def hint(r: cm.Region) -> str:
        name = demangle_short(r.fn.name) if r.fn is not None else "?"
        calls = sorted({ln for _, ln in site_lines.get(r.fn.name if r.fn else "", set())})
        at = f" at line{'s' if len(calls) > 1 else ''} {', '.join(map(str, calls))}" if calls else ""
        fix = ""
        src = view.source(r.scope.file)
        if src is not None and r.scope.file:
            try:
                q = forceinline_fix(src, r.scope.file, name)
            except QuickFixError:
                q = None
            if q is not None:
                fix = f": {q.title[0].lower()}{q.title[1:]}"
        return (f"{name} is called{at} as a real function (CALL/RET, registers saved through the stack, no "
                f"scheduling across the call); inline it{fix}")

    return cm.latency_hiding_advice(view, "function_inlining", rows, hint, nothing="no stalls in called functions")


# ---- async_copy -------------------------------------------------------------------------------------

def _global_to_shared(e: EdgeView) -> bool:
    if e.is_self or cm.base(e.def_ins) not in cm.GLOBAL_LOADS or cm.base(e.use_ins) not in cm.SHARED_STORES:
        return False
    assert e.def_ins is not None and e.use_ins is not None
    data = {op.partition(".")[0] for op in e.use_ins.operands if "[" not in op}
    return bool(cm.dest_registers(e.def_ins) & data)


@register("async_copy", "Asynchronous copy", "latency_hiding",
          "Global loads whose value is only stored to shared memory (LDG then STS): the warp waits for data "
          "it does not use.",
          "Copy global to shared memory asynchronously (cuda::memcpy_async / cp.async, or TMA) and overlap the "
          "copy with computation.")
def async_copy(view: KernelView) -> Advice | Skipped:
    """GPA released async copy: LDG→STS stalls hidden by an asynchronous copy, eq. 4 with the kernel's A."""
    if view.program is None:
        return Skipped("async_copy", "needs the kernel's SASS instructions (no cubin given)", missing=True)
    supported = getattr(view.arch, "async_copy", None)
    if supported is None:
        return Skipped("async_copy", f"the architecture facts for {view.arch.arch} do not say whether "
                                     "asynchronous global-to-shared copies exist", missing=True)
    if not supported:
        return Skipped("async_copy", f"{view.arch.arch} has no asynchronous global-to-shared copy")
    evs = [e for e in view.edges if _global_to_shared(e)]
    region = cm.Region(scope=view.kernel_scope(), fn=None, loop=None, edges=evs)

    def hint(r: cm.Region) -> str:
        hs = cm.hotspots(view, r.edges, cm.latency_weight, 3)
        return (f"the shared-memory stores at {cm.lines_text((h.use.file, h.use.line) for h in hs)} wait for global "
                "loads they only copy: use cuda::memcpy_async (cp.async) and wait on the copy where the data is used")

    return cm.latency_hiding_advice(view, "async_copy", [(region, float(view.active))], hint,
                                    nothing="no global-to-shared copies stall")
