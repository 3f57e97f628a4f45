"""Latency-hiding code optimizers (GPA Table 2 "Code Optimizers / Latency Hiding", plus async copy from
GPA's released set). They rearrange issue order so other work fills stall slots; GPA eqs. 4–5 bound the
gain by the active samples available in the scope, and Theorem 5.1 bounds it by 2×.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
from warpwise.analysis.advice import common as cm
from warpwise.analysis.advice import estimate as est
from warpwise.analysis.advice import parallel as par
from warpwise.analysis.advice import ranking as rk
from warpwise.analysis.advice.context import (
    EdgeView,
    KernelView,
    demangle_short,
    is_math_routine,
    is_runtime_function,
    pc_table,
)
from warpwise.analysis.advice.filters import MIN_SPEEDUP
from warpwise.analysis.advice.model import Advice, Estimate, Skipped
from warpwise.analysis.advice.quickfix import (
    DEFAULT_UNROLL,
    QuickFixError,
    forceinline_fix,
    loop_bound_arguments,
    unroll_fix,
)
from warpwise.analysis.advice.registry import register
from warpwise.analysis.arch import stalls
from warpwise.analysis.arch.roofline import dram_latency_factor
from warpwise.analysis.binary.model import Instruction
from warpwise.analysis.blame.operands import def_use, function_def_use
from warpwise.analysis.program.model import Loop, Program, ProgramFunction

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


def _dependency_edges(view: KernelView) -> list[EdgeView]:
    """The :func:`_dependency` edges in edge order (a new list; the class index leaves out the other classes)."""
    def make() -> list[EdgeView]:  # once per view: loop_unrolling and code_reordering both ask
        glob = cm.instructions_of_class(view, "global")  # id(def_ins) in glob == cm.is_global_mem(def_ins)
        return [e for e in view.edges_by(gpa_class=(stalls.EXECUTION_DEPENDENCY, stalls.MEMORY_DEPENDENCY))
                if not e.is_self and (e.gpa_class == stalls.EXECUTION_DEPENDENCY or (
                    e.edge.category == "global_memory" or id(e.def_ins) in glob))]
    return list(view.memo("dependency_edges", make))


# ---- loop_unrolling ---------------------------------------------------------------------------------

@register("loop_unrolling", "Loop unrolling", "latency_hiding",
          "Global-memory and execution-dependency stalls whose def and use are in the same loop, which the "
          "binary runs rolled (or unrolled too little to hide them).",
          "Unroll the loop (#pragma unroll N, or by hand) so several iterations' loads are in flight at once; "
          "vector loads (float4) help the same way.")
def loop_unrolling(view: KernelView) -> Advice | Skipped:
    """GPA Table 2 loop unrolling: per-loop eq. 5."""
    if view.program is None:
        return Skipped("loop_unrolling", "needs the loop structure of the binary (no cubin given)", missing=True)
    # a wait on a CALL is on the callee's result (the ABI's return registers): inlining's, not more iterations'
    evs = [e for e in _dependency_edges(view) if e.use_loop is not None and e.def_loop is e.use_loop
           and e.def_fn is e.use_fn and cm.base(e.def_ins) not in CALL_OPS]
    regions = cm.group_regions(view, evs)
    # A loop the binary unrolls with each copy's loads behind a join of the previous copy's branches gets no more
    # loads in flight from more copies (cm.loads_behind_joins): its waits are not unrolling's to hide.
    joined: list[tuple[cm.Region, cm.JoinedCopies]] = []
    rows = []
    for r in regions:
        if r.fn is None or r.loop is None:
            continue
        main = cm.unrolled_loop(r.fn, r.loop)
        behind = cm.loads_behind_joins(r.fn, main) if main is not None else None
        if behind is not None:
            joined.append((r, behind))
        else:
            rows.append((r, view.active_in_loop(r.fn, r.loop)))

    # Per region, each asked several times (the factor, both estimates, the hint; ~18k loop regions on a
    # ptx_loops 200k kernel): pure in the region, so kept by (what, id(region), flag) for this call (``regions``
    # keeps every region alive, so an id is not reused meanwhile).
    per_region: dict[tuple[str, int, bool], Any] = {}

    def once(what: str, r: cm.Region, make: Callable[[], Any], flag: bool = False) -> Any:
        key = (what, id(r), flag)
        if key not in per_region:
            per_region[key] = make()
        return per_region[key]

    def pinned(r: cm.Region) -> bool:
        """Whether the loop's loads must stay behind its own global writes: a store/atomic in the loop and plain
        (not read-only) loads, so unrolled iterations cannot load ahead of the previous iteration's store."""
        got: bool = once("pinned", r, lambda: r.fn is not None and r.loop is not None
                         and bool(cm.loop_writes_global(r.fn, r.loop)))
        return got

    def load_share(r: cm.Region, restrict: bool = True) -> float:
        """f_l: the loop's global-load latency samples / T that more loads in flight can hide. Loads a store in
        the loop may alias stay in order whatever the unroll factor: they count only with ``restrict``, the
        hint's `const ... __restrict__` applied (the advice as written); without it they are left out."""
        if view.total <= 0:
            return 0.0

        def make() -> float:
            stuck = not restrict and pinned(r)
            loads = sum(e.latency for e in r.edges if e.gpa_class == stalls.MEMORY_DEPENDENCY and
                        (e.edge.category == "global_memory" or cm.is_global_mem(e.def_ins)) and
                        not (stuck and not cm.is_reorderable_load(e.def_ins)))
            return (loads + chain_latency(r)) / view.total
        got: float = once("load_share", r, make, restrict)
        return got

    def chain_latency(r: cm.Region) -> float:
        got: float = once("chain_latency", r, lambda: _chain_latency(r))
        return got

    def _chain_latency(r: cm.Region) -> float:
        """Execution-dependency latency samples of chains inside one iteration (def before use in the loop
        body), which k unrolled iterations interleave k at a time (instruction-level parallelism: Little's law
        as for the loads). Counted only in a loop the binary runs rolled (an unrolled one has its copies'
        chains interleaved already) and when no chain is carried from one iteration to the next (an edge from
        a later to an earlier or the same instruction: acc = f(acc, ...)), which stays serial whatever the
        unroll factor."""
        main = cm.unrolled_loop(r.fn, r.loop) if (r.fn is not None and r.loop is not None) else None
        if r.fn is not None and main is not None and cm.unroll_factor(r.fn, main) >= cm.UNROLLED_MEDIAN_COPIES:
            return 0.0
        fwd = carried = 0.0
        for e in r.edges:
            if e.gpa_class != stalls.EXECUTION_DEPENDENCY or e.def_ins is None or e.use_ins is None:
                continue
            if e.def_ins.offset < e.use_ins.offset:
                fwd += e.latency
            else:
                carried += e.latency
        return fwd if carried <= 0 else 0.0

    def aliasing_note(r: cm.Region) -> str:
        """What keeps unrolling from overlapping the loads, when a store in the loop may alias them."""
        if r.fn is None or r.loop is None or not pinned(r):
            return ""
        plain = [e.def_ins for e in r.edges if e.def_ins is not None and cm.is_global_mem(e.def_ins)
                 and e.def_ins.base_opcode in cm.GLOBAL_LOADS and not cm.is_reorderable_load(e.def_ins)]
        if not plain:
            return ""
        stores = cm.loop_writes_global(r.fn, r.loop)
        at = cm.lines_text((i.loc.file, i.loc.line) for i in stores if i.loc is not None)
        return (f"; the loads are plain LDG and the loop writes global memory ({at}): the compiler must keep each "
                "load after the previous iteration's store, so declare the loaded pointer `const ... __restrict__` "
                "(or read it with __ldg) for unrolled iterations to load ahead, or load the next iteration's value "
                "by hand before the store")

    cap = rk.roofline_cap(view.profile.launch.throughput_pct, rk.units_for("loop_unrolling", "latency_hiding"),
                          reach_of=view.reach_now)
    ceiling = cap.cap if cap is not None else math.inf

    def advised(r: cm.Region) -> tuple[int, int | None]:
        """:func:`advise_factor` once per region (the hint, the quick-fix params and both estimates ask)."""
        got: tuple[int, int | None] = once("advised", r, lambda: advise_factor(r))
        return got

    def advise_factor(r: cm.Region) -> tuple[int, int | None]:
        """(unroll factor the binary shows, factor to ask for). An unrolled loop: twice its factor. A rolled one:
        by Little's law k loads in flight per wait leave 1/k of the loop's load wait (S = 1/(1 - f(1 - 1/k))),
        so the smallest power of two up to MAX_UNROLL whose S reaches the kernel's roofline ceiling (more
        loads in flight cannot go faster than the bandwidth allows), else MAX_UNROLL; None (the pragma's
        default) when the loop waits on no global loads."""
        main = cm.unrolled_loop(r.fn, r.loop) if (r.fn is not None and r.loop is not None) else None
        factor = cm.unroll_factor(r.fn, main) if (r.fn is not None and main is not None) else 1
        if factor >= cm.UNROLLED_MEDIAN_COPIES:
            return factor, 2 * factor
        f = load_share(r)
        if f <= 0:
            return factor, None
        k = 2
        while k < MAX_UNROLL and 1 / (1 - f * (1 - 1 / k)) < ceiling:
            k *= 2
        return factor, k

    def hint(r: cm.Region) -> str:
        loop = r.loop
        hs = cm.hotspots(view, r.edges, cm.latency_weight, 3)
        pairs = "; ".join(cm.unique(f"{cm.line_ref(h.use.file, h.use.line)} waits "
                                    f"{cm.plural(h.distance, 'instruction')} after "
                                    f"{cm.line_ref(h.def_.file, h.def_.line) if h.def_ else 'line ?'}" for h in hs))
        factor, ask = advised(r)
        how = "runs rolled in the binary and" if factor < cm.UNROLLED_MEDIAN_COPIES else \
            f"is unrolled about {factor}x in the binary, yet"
        more = "unroll it" if factor < cm.UNROLLED_MEDIAN_COPIES else "unroll it further"
        fix = ""
        src = view.source(loop.file) if loop is not None else None
        if loop is not None and src is not None and loop.first_line is not None:
            try:
                q = unroll_fix(src, loop.file or "", loop.first_line, loop.last_line, factor=ask)
            except QuickFixError:
                q = None
            if q is not None:
                fix = f" ({q.title.lower()})"
        return (f"the {cm.scope_ref(r.scope)} {how} each iteration waits for its own loads ({pairs}): "
                f"{more}{fix} so the loads of several iterations are issued before their first use"
                f"{aliasing_note(r)}")

    res = cm.latency_hiding_advice(view, "loop_unrolling", rows, hint,
                                   nothing="no dependency stalls inside rolled loops")
    full = _full_unroll_advice(view)
    local = _local_array_unroll_advice(view)
    if local is not None and (full is None or local.estimated_speedup > full.estimated_speedup):
        # the local arrays a full unroll turns into registers: what it removes outright, when larger
        full = local
    if not isinstance(res, Advice):
        if full is not None:
            full.priority = 1
            return full
        if joined and not rows:
            return Skipped("loop_unrolling", _joined_copies_reason(view, joined))
        return res
    for r, _ in rows:  # the quick fix asks for the factor the hint names
        ask = advised(r)[1]
        if ask is not None and r.scope.file and r.scope.line:
            res.params[f"unroll_factor@{r.scope.file}:{r.scope.line}"] = ask
    # Memory-level parallelism (Little's law): a rolled loop waits for each iteration's global loads; unrolled k
    # times it has k iterations' loads in flight per wait, so the loop's global-memory wait shrinks by about k.
    # GPA's eqs. 4-5 bound hiding by the active samples and miss this: S = 1 / (1 - sum_l f_l (1 - 1/k_l)),
    # f_l = the loop's global-load latency samples / T (with, in a rolled loop, the latency of dependency chains
    # that do not cross iterations: k copies interleave them too), k_l = new / current unroll factor.
    def mlp(restrict: bool) -> tuple[float, list[tuple[float, float]]]:
        saved, parts = 0.0, []
        for r, _ in rows:
            factor, ask = advised(r)
            k = (ask or DEFAULT_UNROLL) / max(1, factor)
            if k <= 1 or view.total <= 0:
                continue
            f = load_share(r, restrict)
            if f > 0:
                saved += f * (1 - 1 / k)
                parts.append((f, k))
        return saved, parts

    saved, parts = mlp(restrict=True)
    if parts and saved < 1:
        dram_pct = view.profile.launch.throughput_pct.get("dram", 0.0)
        s_mlp, lam = est.memory_parallelism_speedup(parts, dram_pct, dram_latency_factor)
        if s_mlp > res.estimated_speedup:
            eq5 = res.estimated_speedup
            inputs = {f"f{i}": f for i, (f, _) in enumerate(parts)} | {f"k{i}": k for i, (_, k) in enumerate(parts)}
            if lam > 1.0:
                inputs |= {"dram_pct": dram_pct, "lambda": lam}
            res.estimate = Estimate(s_mlp, "1/(1-sum_l f_l(1-lambda/k_l)), f_l = loop l's global-load latency (and, "
                                    "rolled, its uncarried dependency chains' latency) / T, k_l = unroll factor "
                                    "new/old (memory- and instruction-level parallelism), lambda = DRAM latency "
                                    "at the new load / unloaded", inputs,
                                    f"Little's law (loads in flight); GPA eq. 5 gave {eq5:.3f}x")
            alone, _ = mlp(restrict=False)
            if alone < saved and any(pinned(r) for r, _ in rows):
                # The quick fix inserts the pragma only: say what it gives while the store pins the loads.
                s_alone = max(eq5, 1 / (1 - alone))
                res.params["pragma_alone_speedup"] = s_alone
                res.hint += (f" (the estimate assumes `__restrict__`; the pragma alone leaves the loads in order: "
                             f"about {s_alone:.2f}x)")
    if full is not None and full.estimated_speedup > res.estimated_speedup:
        # the larger of the two: what full unrolling removes outright, or the loads it overlaps
        full.hint += f" (more loads in flight alone: {res.estimated_speedup:.3f}x)"
        res = full
    res.priority = 1  # the concrete fix for a loop's loads: ahead of generic reordering of the same samples
    return res


def _joined_copies_reason(view: KernelView, joined: list[tuple[cm.Region, cm.JoinedCopies]]) -> str:
    """Why loop_unrolling leaves the loops of ``joined`` alone (:func:`cm.loads_behind_joins`): one sentence naming
    the loops, their unroll factor in the binary and the branches each copy's loads wait behind."""
    parts = []
    for r, jc in joined:
        main = cm.unrolled_loop(r.fn, r.loop) if r.fn is not None and r.loop is not None else None
        factor = cm.unroll_factor(r.fn, main) if r.fn is not None and main is not None else 1
        at = cm.lines_text(jc.branches) if jc.branches else "its branches"
        parts.append(f"the {cm.scope_ref(r.scope)} is unrolled about {factor}x in the binary, and each copy's global "
                     f"loads are issued after a join of the previous copy's control flow (the branches and calls "
                     f"at {at}), a few instructions before their use")
    return ("; ".join(cm.unique(parts)) + ": the compiler does not move loads above a join, so more copies "
            "repeat that schedule and put no more loads in flight (remove the branches, e.g. the precise "
            "math's slow paths, or load the next iteration's values by hand before them)")


def _local_array_unroll_advice(view: KernelView) -> Advice | None:
    """loop_unrolling for local arrays indexed by loop counters (code.loop_indexed_locals): LDL/STL whose
    address is the stack pointer plus a loop counter, in a kernel whose stack frame fits in registers. With
    compile-time trip counts and a full unroll every index is a constant, so the compiler keeps the arrays in
    registers (CUDA C++ Best Practices Guide, "Local memory": arrays are placed in local memory when indexed
    with non-constant quantities). GPA eq. 2 over the removed LDL/STL and the stalls waiting on them
    (code._local_removal, register_reuse's estimator), then the roofline after the fix: their L1 wavefronts
    and L2 local sectors go, SM work shrinks with the instructions (r_sm = 1/S). None when no access
    qualifies."""
    from warpwise.analysis.advice.code import (
        _local_memory_edges,
        _local_removal,
        _spill_where,
        loop_indexed_locals,
        stack_frame_bytes,
    )

    keys = loop_indexed_locals(view)
    if not keys or view.program is None:
        return None
    evs = [e for e in _local_memory_edges(view)
           if (e.def_ins is not None and cm.ins_key(e.def_fn, e.def_ins) in keys)
           or cm.ins_key(e.use_fn, e.use_ins) in keys]
    fns = {name for name, _ in keys}
    frame = max(stack_frame_bytes(pf) for pf in view.program.functions.values() if pf.name in fns)
    where = _spill_where(view, evs) if evs else "the kernel"
    hint = (f"local arrays ({frame}-byte stack frame) indexed by loop counters stall {where}: the loops' trip "
            "counts are run-time values, so the compiler cannot unroll them and the arrays live in local memory "
            "(not register spills); make the trip counts compile-time constants (template parameters / "
            "constexpr) and #pragma unroll the loops fully, so every index is a constant and the arrays stay in "
            "registers")
    res = _local_removal(view, "loop_unrolling", evs, hint, keys=keys)
    if not isinstance(res, Advice):
        return None
    # register_reuse's estimate of the same removal, with its cap (the units a removal of local traffic leaves
    # unchanged: ranking.UNCHANGED_UNITS): the two findings are one fix seen from two ids
    cap = rk.roofline_cap(view.profile.launch.throughput_pct, rk.units_for("register_reuse", "stall_elimination"),
                          reach_of=view.reach_now)
    res.estimate, res.cap = rk.apply_cap(res.estimate, cap, soft=True)
    res.params["local_arrays"] = 1
    return res


def _full_unroll_advice(view: KernelView) -> Advice | None:
    """GPA eq. 2 over what fully unrolling the small-trip-count nests removes (:func:`full_unroll_nests`): the
    samples on those instructions and the stalls blamed on them (:func:`cm.removal_advice`). None when no nest
    qualifies or nothing is removed."""
    nests = full_unroll_nests(view)
    removed: dict[cm.InsKey, float] = {}
    for n in nests:
        removed |= n.removed
    if not removed:
        return None
    parts = []
    for n in nests:
        trips = " x ".join(f"{t:.1f}" for t in n.trips)
        where = (f"the loop at {cm.line_ref(n.loop.file, n.loop.first_line)}"
                 + (f"-{n.loop.last_line}" if n.loop.last_line not in (None, n.loop.first_line) else "")) \
            if n.loop.first_line is not None else "a loop"
        src = view.source(n.loop.file) if n.loop.file else None
        args: dict[int, list[str]] = {}
        if src is not None and n.loop.first_line is not None:
            try:
                args = loop_bound_arguments(src, n.loop.file or "", n.loop.first_line, n.loop.last_line)
            except QuickFixError:
                args = {}
        names = list(dict.fromkeys(a for v in args.values() for a in v))
        if names:
            origin = (f"its trip count comes from the kernel argument{'s' if len(names) > 1 else ''} "
                      f"{', '.join(f'`{a}`' for a in names)} (loop bound{'s' if len(args) > 1 else ''} at "
                      f"line{'s' if len(args) > 1 else ''} {', '.join(map(str, sorted(args)))})")
        elif n.params:
            origin = "its trip count is computed at run time from kernel parameters"
        else:
            origin = "it runs rolled"
        how = ("make the trip count a compile-time constant (template parameter / constexpr) and #pragma unroll"
               if names or n.params else "#pragma unroll it fully")
        parts.append(f"{where} runs {trips} iterations per entry and {origin}: {how}, so each copy's counter is "
                     f"a constant and {cm.plural(n.control, 'loop-control instruction')}, "
                     f"{cm.plural(n.index, 'index computation')}, "
                     f"{cm.plural(n.constant, 'register-indexed constant load')} (LDC c[bank][Rx] becomes a "
                     f"c[bank][imm] operand) and {cm.plural(n.idle, 'remainder instruction')} predicated off in "
                     "this run go away")
    res = cm.removal_advice(view, "loop_unrolling", removed, "; ".join(parts),
                            "the loop control, index arithmetic, register-indexed LDC and predicated-off remainder "
                            "copies that full unrolling removes")
    if not isinstance(res, Advice):
        return None
    # The SM's work shrinks with the instructions removed (their share of the executed warp instructions, the
    # profile's inst_executed): the SM roofline after the fix, not the SM's throughput now, bounds the gain, as
    # for inlining (code._after_fix_estimate); the memory units keep their traffic.
    from warpwise.analysis.advice.code import _after_fix_estimate

    executed = float(sum(s.inst_executed for s in view.profile.pcs.values()))
    gone = 0.0
    for (name, off), share in removed.items():
        smp = view.sample_at(name, off)
        gone += share * smp.inst_executed if smp is not None else 0
    if executed > 0:
        res = _after_fix_estimate(view, res, {"sm": 1.0 - min(gone, executed) / executed}, False,
                                  {"inst_removed": gone, "inst_executed": executed})
    res.params["full_unroll_trip"] = round(max(n.trips[0] for n in nests))
    return res


#: Largest mean trip count (of the source loop: the binary loop's iterations per entry times the copies of its
#: body the compiler already made) for which loop_unrolling estimates full unrolling: a fully unrolled loop
#: repeats its body once per iteration, and 16 copies is the top of the range CUB's tuned kernels unroll per
#: thread (4-16 items, as MAX_UNROLL below). A warpwise limit, not a compiler one.
SMALL_TRIP = 16

_CONST = re.compile(r"c\[(0x[0-9a-fA-F]+)\]\[([^\]]*)\]")
_NOT_FOLDABLE_OPS = frozenset({"S2R", "CS2R", "S2UR", "SHFL", "VOTE", "VOTEU", "MATCH", "REDUX", "CALL"})

#: A register's value as a function of the launch: the kernel-parameter words (constant bank 0, (bank,
#: offset)) it is computed from with immediates; absent from a state = varies (per thread, loaded, unknown).
_Fold = dict[str, frozenset[tuple[str, str]]]


#: Per SASS text, what the fold step needs of an instruction (:func:`_fold_static`): the SASS text fixes the
#: opcode, operands, register reads/writes and guard. Bounded like the def/use cache it reads.
_FOLD_STATIC: dict[str, tuple[set[str], frozenset[tuple[str, str]] | None, tuple[str, ...]]] = {}
_FOLD_STATIC_MAX = 1 << 18


def _fold_static(ins: Instruction) -> tuple[set[str], frozenset[tuple[str, str]] | None, tuple[str, ...]]:
    """(register defs, the bank-0 words its operands read — None when an operand makes the result vary —, the
    registers whose values the result joins) of ``ins``, cached by SASS text. The joined registers are its
    register reads and, for a predicated instruction, its defs too (a predicated write keeps the old value on
    the other lanes)."""
    hit = _FOLD_STATIC.get(ins.text)
    if hit is not None:
        return hit
    d = def_use(ins)
    defs = {r for r in d.defs if not r.startswith("SB")}
    consts: frozenset[tuple[str, str]] | None
    if ins.base_opcode in _NOT_FOLDABLE_OPS or d.clobbers_all:
        consts = None
    else:
        deps: set[tuple[str, str]] = set()
        for op in ins.operands:
            if "[" not in op:
                continue
            m = _CONST.fullmatch(op.lstrip("-|~!").rstrip("|"))
            if m is None or m.group(1) not in ("0x0", "0x00") or not m.group(2).startswith("0x"):
                deps = set()
                consts = None
                break
            deps.add((m.group(1), m.group(2)))
        else:
            consts = frozenset(deps)
    joins = tuple(d.reg_reads) if d.guard is None else (*d.reg_reads, *sorted(defs))
    out = (defs, consts, joins)
    if len(_FOLD_STATIC) < _FOLD_STATIC_MAX:
        _FOLD_STATIC[ins.text] = out
    return out


def _fold_step(ins: Instruction, state: _Fold) -> tuple[frozenset[tuple[str, str]] | None, set[str]]:
    """(parameter words the instruction's result is computed from, or None when it varies; its register defs).
    A result folds when every register it reads folds and every constant-bank operand is a bank-0 (launch)
    word at an immediate offset: no thread index, no loaded value."""
    defs, consts, joins = _fold_static(ins)
    if consts is None:
        return None, defs
    deps = set(consts)
    for r in joins:
        got = state.get(r)
        if got is None:
            return None, defs
        deps |= got
    return frozenset(deps), defs


def _fold_out(pf: ProgramFunction, blocks: Iterable[int]) -> dict[int, _Fold]:
    """Forward data flow over ``pf``'s CFG to its fixed point: the state at the end of each block (block start
    -> register -> parameter words), meeting paths by intersection (a register folds only if it folds on every
    path; loop-carried values such as a counter start optimistic and are dropped when a path makes them vary;
    a predecessor not yet visited is left out of the meet). Passes over the blocks in DFS preorder, each pass
    re-running only the blocks with a predecessor whose state changed (the same fixed point as re-running all:
    the transfer is deterministic), at most 50 passes.

    Demand-driven: only the blocks from which one of ``blocks`` can be reached (its CFG ancestors) are
    solved, once per function, and a later call solves only the ancestors not solved yet. A block's state
    depends only on its predecessors', so an ancestor-closed set of blocks has the same fixed point alone as
    within the whole CFG (the meet and transfer are monotone and every iteration starts from "not visited",
    the top: chaotic iteration reaches the one maximal fixed point whatever the order); blocks already solved
    are final, since none of their predecessors is new. Returns the per-function table of solved blocks."""
    flow: _FoldFlow = pf.memo("unroll_fold_flow", lambda: _FoldFlow(
        list(nx.dfs_preorder_nodes(pf.cfg, pf.entry)) if pf.entry in pf.cfg else []))
    out_state, solved = flow.out, flow.solved
    new: set[int] = set()
    work = [b for b in blocks if b not in solved]
    while work:
        b = work.pop()
        if b in solved or b in new or b not in pf.cfg:
            continue
        new.add(b)
        work.extend(q for q in pf.cfg.predecessors(b) if q not in solved and q not in new)
    if not new:
        return out_state
    solved |= new
    order = [b for b in flow.order if b in new]
    dirty = set(order)
    for _ in range(50):
        changed = False
        for b in order:
            if b not in dirty:
                continue
            dirty.discard(b)
            st = _fold_in(pf, b, out_state)
            _run_steps(_fold_steps(pf, b), st)
            if out_state.get(b) != st:
                out_state[b] = st
                changed = True
                dirty.update(pf.cfg.successors(b))
        if not changed:
            break
    return out_state


@dataclass
class _FoldFlow:
    """:func:`_fold_out`'s per-function state: the DFS preorder of the blocks, the out state of each solved
    and visited block, and the (ancestor-closed) set of blocks solved so far."""

    order: list[int]
    out: dict[int, _Fold] = field(default_factory=dict)
    solved: set[int] = field(default_factory=set)


#: One instruction's fold step, its :func:`_fold_static` part: (register defs, bank-0 words or None, joined registers).
_Step = tuple[set[str], frozenset[tuple[str, str]] | None, tuple[str, ...]]


def _fold_steps(pf: ProgramFunction, b: int) -> list[_Step]:
    """The :func:`_fold_static` part of each instruction of block ``b``, in order, once per function and block
    (the fixed point re-runs the blocks of loops)."""
    table: dict[int, list[_Step]] = pf.memo("unroll_fold_steps", dict)
    steps = table.get(b)
    if steps is None:
        steps = table[b] = [_fold_static(i) for i in pf.blocks[b].instructions]
    return steps


def _run_steps(steps: Iterable[_Step], st: _Fold) -> None:
    """Step ``st`` over a block's instructions, in place: each instruction's defs get :func:`_fold_step`'s result
    (the step written out on its static part), or leave the state when it varies."""
    for defs, consts, joins in steps:
        res: frozenset[tuple[str, str]] | None = None
        if consts is not None:  # _fold_step; the union kept in an existing frozenset while nothing new joins it
            deps = consts
            for r in joins:
                got = st.get(r)
                if got is None:
                    break
                if got is not deps and not got <= deps:
                    deps = deps | got
            else:
                res = deps
        if res is None:
            for r in defs:
                st.pop(r, None)
        else:
            for r in defs:
                st[r] = res


def _fold_in(pf: ProgramFunction, b: int, out_state: dict[int, _Fold]) -> _Fold:
    """The state entering block ``b``: the meet of its visited predecessors' out states (empty at the entry)."""
    preds = [out_state[q] for q in pf.cfg.predecessors(b) if q in out_state]
    if b == pf.entry or not preds:
        return {}
    if len(preds) == 1:
        return dict(preds[0])  # the meet of one state: itself (a copy: the caller steps it in place)
    keys = set(preds[0]).intersection(*preds[1:])
    out: _Fold = {}
    for r in keys:
        u = preds[0][r]
        for ps in preds[1:]:
            got = ps[r]
            if got is not u and not got <= u:
                u = u | got
        out[r] = u  # the union of the paths' words (an existing frozenset when one holds them all)
    return out


def _foldable(pf: ProgramFunction, blocks: Iterable[int]) -> dict[int, _Fold]:
    """The fixed point of :func:`_fold_out` as the state before each instruction of ``blocks`` (offset ->
    register -> parameter words). Made per call, not kept with the function: a nest asks for its blocks once per
    view, and a state per instruction kept for the program's life would be ~10^5 dicts for the cyclic
    collector to walk on a 200k-instruction cubin (the block out states it starts from are kept)."""
    blocks = list(blocks)
    out_state = _fold_out(pf, blocks)
    before: dict[int, _Fold] = {}
    for b in blocks:
        st = _fold_in(pf, b, out_state)
        for ins, step in zip(pf.blocks[b].instructions, _fold_steps(pf, b), strict=True):
            before[ins.offset] = dict(st)
            _run_steps((step,), st)
    return before


def trip_count(view: KernelView, pf: ProgramFunction, loop: Loop) -> float | None:
    """Mean iterations per entry of a binary loop from the profile's per-PC ``inst_executed``: the header's
    executions / the entries from outside the loop (the executions of each outside predecessor's last
    instruction, less those that left to its other successors when they have no other predecessor). None when
    the header never ran or the entries cannot be told apart."""
    def ex(off: int) -> int:
        s = view.sample_at(pf.name, off)
        return s.inst_executed if s is not None else 0

    head = pf.blocks[loop.header]
    runs = ex(head.instructions[0].offset)
    if runs <= 0:
        return None
    entries = 0
    for q in pf.cfg.predecessors(loop.header):
        if q in loop.blocks:
            continue
        n = ex(pf.blocks[q].last.offset)
        for s in pf.cfg.successors(q):
            if s == loop.header:
                continue
            if set(pf.cfg.predecessors(s)) != {q}:
                return None
            n -= ex(pf.blocks[s].instructions[0].offset)
        entries += max(n, 0)
    return runs / entries if entries > 0 else None


@dataclass
class FullUnroll:
    """A loop nest with a small run-time trip count (``trips``: mean iterations of each binary loop in it, the
    outermost first) and the instructions full unrolling with a compile-time trip count removes (``removed``:
    instruction keys; ``control``/``index``/``constant``: how many are loop control (branches and their
    predicates), index arithmetic, register-indexed constant loads, and copies predicated off for the run's
    trip count). ``params``: the kernel-parameter words
    (bank, offset) the trip count is computed from."""

    fn: ProgramFunction
    loop: Loop
    trips: list[float]
    removed: dict[cm.InsKey, float]
    control: int
    index: int
    constant: int
    idle: int
    params: frozenset[tuple[str, str]]


def full_unroll_nests(view: KernelView) -> list[FullUnroll]:
    """Loop nests whose source trip count (:func:`trip_count` times :func:`cm.unroll_factor`) is at most
    SMALL_TRIP in every loop of the nest that runs, outermost such nests only, with what full unrolling removes:
    in the nest, every instruction whose result folds (:func:`_foldable`) to a function of the trip count's own
    kernel parameters and immediates (counter updates, compares, predicate logic, index arithmetic: constants
    once each copy's counter is), every register-indexed LDC whose index folds (its word becomes a c[bank][imm]
    operand or a uniform load), and the branches whose predicate folds (unconditional ones too when every
    conditional branch of the nest folds: the nest's control flow is then loop control only), and of the other
    instructions guarded by a predicate that folds, the share of their executions with the guard off
    (``predicated_on_thread_inst_executed`` / ``thread_inst_executed``: copies for remainder iterations this run
    did not have, dead once the trip count is a constant). Per-thread
    arithmetic that unrolling merely lets the compiler share between copies (clamps of a column used by every
    row) is not counted."""
    if view.program is None:
        return []
    fns = view.use_functions()
    out = []
    for pf in fns.values():
        trips: dict[int, float | None] = {}
        for h, lp in pf.loops.items():
            t = trip_count(view, pf, lp)
            trips[h] = None if t is None else t * cm.unroll_factor(pf, lp)
        for lp in pf.loops.values():
            if not _runs(view, pf, lp) or not _small(view, pf, lp, trips) or (
                    lp.parent is not None and _small(view, pf, pf.loops[lp.parent], trips)):
                continue
            # eq. 2 over at most the nest's samples cannot pass the report's cut (filters.MIN_SPEEDUP) when they
            # are a smaller share of T than 1 - 1/MIN_SPEEDUP: skip the data flow for such nests
            if _nest_samples(view, pf, lp) < view.total * (1.0 - 1.0 / MIN_SPEEDUP):
                continue
            nest = _nest_removal(view, pf, lp)
            if nest is not None:
                removed, counts, params = nest
                ts = [float(trips[lp.header] or 0.0)] + [float(trips[c] or 0.0) for c in lp.children
                                                         if _runs(view, pf, pf.loops[c])]
                out.append(FullUnroll(pf, lp, ts, removed, *counts, params))
    return out


def _nest_samples(view: KernelView, pf: ProgramFunction, lp: Loop) -> float:
    """Warp samples of the instructions of ``lp`` (its nested loops included)."""
    total = 0.0
    for b in lp.blocks:
        for ins in pf.blocks[b].instructions:
            smp = view.sample_at(pf.name, ins.offset)
            total += smp.samples if smp is not None else 0
    return total


def _runs(view: KernelView, pf: ProgramFunction, lp: Loop) -> bool:
    """Whether the loop's header executed in the profiled run."""
    s = view.sample_at(pf.name, pf.blocks[lp.header].instructions[0].offset)
    return s is not None and s.inst_executed > 0


def _small(view: KernelView, pf: ProgramFunction, lp: Loop, trips: dict[int, float | None]) -> bool:
    """Whether the loop's source trip count is known and at most SMALL_TRIP, and so are its children's that run."""
    t = trips.get(lp.header)
    return t is not None and t <= SMALL_TRIP and all(
        _small(view, pf, pf.loops[c], trips) for c in lp.children if _runs(view, pf, pf.loops[c]))


def _nest_removal(view: KernelView, pf: ProgramFunction, lp: Loop) -> tuple[
        dict[cm.InsKey, float], tuple[int, int, int, int], frozenset[tuple[str, str]]] | None:
    """(removed instruction keys -> share removed, (control, index, constant, idle) counts, trip-count parameter
    words) of one nest; None when a conditional branch in it depends on data (the nest's control flow is not
    just loop control)."""
    fold = _foldable(pf, lp.blocks)
    body = [ins for b in sorted(lp.blocks) for ins in pf.blocks[b].instructions]
    params: set[tuple[str, str]] = set()
    for ins in body:
        d = def_use(ins)
        if ins.base_opcode in cm.BRANCH_OPS and d.guard is not None:
            got = fold[ins.offset].get(d.guard.lstrip("!"))
            if got is None:
                return None
            params |= got
    keys: dict[cm.InsKey, float] = {}
    control = index = constant = idle = 0
    for ins in body:
        st = fold[ins.offset]
        ran = view.sample_at(pf.name, ins.offset)
        if ran is None or (ran.inst_executed <= 0 and ran.samples <= 0):
            continue  # a copy this run never reached (the compiler's unrolled main loop for long trips)
        if ins.base_opcode in cm.BRANCH_OPS:
            keys[(pf.name, ins.offset)] = 1.0
            control += 1
            continue
        if ins.base_opcode in ("LDC", "ULDC"):
            m = next((_CONST.fullmatch(op) for op in ins.operands if _CONST.fullmatch(op)), None)
            regs = def_use(ins).reg_reads
            if m is not None and regs and all(r in st and st[r] <= params for r in regs):
                keys[(pf.name, ins.offset)] = 1.0
                constant += 1
                continue
        res, defs = _fold_step(ins, st)
        if res is None or not defs or not res <= params or ins.base_opcode in ("LDC", "ULDC"):
            g = def_use(ins).guard
            got = st.get(g.lstrip("!")) if g is not None else None
            smp = view.sample_at(pf.name, ins.offset) if got is not None and got <= params else None
            if smp is not None and smp.thread_inst_executed > 0:
                # a copy for a trip count the run did not have (a remainder tap): its guard is a constant once
                # the trip count is, so the share of its executions with the guard off goes
                off = 1.0 - min(smp.predicated_on_thread_inst_executed, smp.thread_inst_executed) / \
                    smp.thread_inst_executed
                if off > 0:
                    keys[(pf.name, ins.offset)] = off
                    idle += 1
            continue
        keys[(pf.name, ins.offset)] = 1.0
        if all(r.startswith(("P", "UP")) for r in defs):
            control += 1
        else:
            index += 1
    return keys, (control, index, constant, idle), frozenset(params)


#: Largest unroll factor loop_unrolling asks for in a rolled loop: each unrolled copy keeps its loads' registers
#: live, so deeper unrolling trades occupancy for loads in flight (a warpwise limit; CUB's tuned kernels use
#: 4-16 items per thread).
MAX_UNROLL = 8


# ---- code_reordering --------------------------------------------------------------------------------

@register("code_reordering", "Code reordering", "latency_hiding",
          "Global-memory and execution-dependency stalls: a value is used soon after the instruction that "
          "produces it.",
          "Move independent work between the load (or long-latency operation) and its first use: issue loads "
          "a few statements earlier.")
def code_reordering(view: KernelView) -> Advice | Skipped:
    """GPA Table 2 code reordering: eq. 5 per loop (else function) of the def. In a loop without barriers the
    work that can overlap a load moved ahead (the next iteration's load issued before this iteration's work)
    is that work's time, issue and fixed-latency waits alike (:func:`fixed_waits_in_loop`), against the loads'
    memory-dependency latency: the larger of that and eq. 4's min(A_l, M_Ll) is the loop's hidden latency."""
    # waits on a kernel's launch set-up (its first S2R/LDC c[0x0] reads) have nothing before them to move
    evs = [e for e in _dependency_edges(view) if not cm.launch_setup(e.def_fn, e.def_ins)]
    overlap = 0.0  # fixed-latency waits added to A (kernel-wide and per loop)
    regions: list[cm.Region] = []
    if view.program is None:
        region = cm.Region(scope=view.kernel_scope(), fn=None, loop=None, edges=evs)
        rows = [(region, float(view.active))]
    else:
        rows = []
        regions = cm.group_regions(view, evs, by_def=True)
        for r in regions:
            if r.fn is None:
                rows.append((r, float(view.active)))
            elif r.loop is None or r.fn.memo("barrier_offsets", lambda fn=r.fn: _barrier_offsets(fn)):
                # straight-line code, or a loop split by barriers: the work that can fill a wait is what does
                # not depend on the awaited value and is not already between the producer and its use
                rows += _barrier_intervals(view, r)
            elif r.loop is not None:
                # two ways to hide: other issue fills the stalls (GPA eq. 4, min(A_l, M_Ll)), or the loop's
                # loads start an iteration early and overlap the iteration's work, issue and fixed-latency waits
                # alike (min(A_l + W_l, M_Ll^mem), the loads' memory-dependency latency only); A_l is raised so
                # that eq. 4's min(A_l, M_Ll) gives the larger of the two
                a_l = view.active_in_loop(r.fn, r.loop)
                mem = sum(e.latency for e in r.edges if e.gpa_class == stalls.MEMORY_DEPENDENCY)
                a = max(a_l, min(a_l + fixed_waits_in_loop(view, r.fn, r.loop), mem))
                overlap += a - a_l
                rows.append((r, a))
            else:
                rows.append((r, view.active_in_function(r.fn)))

    def hint(r: cm.Region) -> str:
        hs = cm.hotspots(view, r.edges, cm.latency_weight, cm.TOP_HOTSPOTS)
        parts = cm.unique(f"{cm.line_ref(h.use.file, h.use.line)} ({h.use.opcode}) uses the result of "
                          f"{cm.line_ref(h.def_.file, h.def_.line) if h.def_ else 'line ?'} "
                          f"({h.def_.opcode if h.def_ else '?'}) "
                          f"{cm.plural(h.distance, 'instruction')} later" for h in hs)[:3]
        if not parts:
            return ""
        text = "; ".join(parts) + ": start these loads or long operations earlier, with independent work between " \
            "them and their first use"
        main = cm.unrolled_loop(r.fn, r.loop) if r.fn is not None and r.loop is not None else None
        jc = cm.loads_behind_joins(r.fn, main) if r.fn is not None and main is not None else None
        if jc is not None and jc.branches:
            # the compiler will not move them (cm.loads_behind_joins): only the source can
            text += (f"; the compiler keeps each unrolled copy's loads after the join of the previous copy's branches "
                     f"({cm.lines_text(jc.branches)}), so load the next iteration's values into registers by hand "
                     "before those branches (software pipelining one iteration deep)")
        return text

    res = cm.latency_hiding_advice(view, "code_reordering", rows, hint, nothing="no dependency stalls",
                                   active=view.active + overlap)
    if isinstance(res, Advice) and view.program is not None:
        return _pipelined_loads(view, res, regions)
    return res


def _pipelined_loads(view: KernelView, res: Advice, regions: list[cm.Region]) -> Advice:
    """``res`` with the estimate of explicit software pipelining where it is larger: in a loop the binary unrolls
    k times whose plain loads must stay behind the loop's own global stores (they may alias: each copy's load
    waits for the previous copy's store, so one load is in flight per warp), loading the next k iterations'
    values into registers before the k steps puts k loads in flight per wait. By Little's law that leaves 1/k
    of the loop's global-load latency: S = 1/(1 - f (1 - 1/k)), f = the loop's memory-dependency latency
    samples on plain global loads / T (as loop_unrolling's Little's-law step), capped by the roofline of the
    units the fix leaves unchanged (latency hiding moves no bytes). GPA eq. 4 (what ``res`` holds) bounds
    reordering by the issue that can fill the stalls (at most 2x, Theorem 5.1); a pipeline k deep is not
    bounded by it, since it adds loads in flight rather than filling stalls with other work. ``regions``: code
    reordering's edges grouped by the def's loop (``cm.group_regions(..., by_def=True)``, made once by the caller;
    none of its readers changes a region)."""
    if view.total <= 0:
        return res
    best: tuple[float, float, int] | None = None
    for r in regions:
        if r.fn is None or r.loop is None or not cm.loop_writes_global(r.fn, r.loop):
            continue
        main = cm.unrolled_loop(r.fn, r.loop)
        k = cm.unroll_factor(r.fn, main) if main is not None else 1
        if k < cm.UNROLLED_MEDIAN_COPIES:
            continue
        pinned = sum(e.latency for e in r.edges if e.gpa_class == stalls.MEMORY_DEPENDENCY and e.def_ins is not None
                     and cm.is_global_mem(e.def_ins) and e.def_ins.base_opcode in cm.GLOBAL_LOADS
                     and not cm.is_reorderable_load(e.def_ins))
        f = pinned / view.total
        if f <= 0:
            continue
        s = 1.0 / (1.0 - f * (1.0 - 1.0 / k))
        if best is None or s > best[0]:
            best = (s, f, k)
    if best is None or best[0] <= res.estimated_speedup:
        return res
    s, f, k = best
    cap = rk.roofline_cap(view.profile.launch.throughput_pct, rk.units_for("code_reordering", "latency_hiding"),
                          reach_of=view.reach_now)
    if cap is not None:
        s = min(s, cap.cap)
    if s <= res.estimated_speedup:
        return res
    res.estimate = Estimate(s, "1/(1 - f (1 - 1/k)), f = plain-load latency samples of the loop / T, k = the "
                            "binary's unroll copies (loads in flight once they are issued k iterations ahead)"
                            + (", roofline cap" if cap is not None else ""),
                            {"f": f, "k": float(k), **({"cap": cap.cap} if cap is not None else {})},
                            "Little's law (software pipelining k deep)")
    res.hint += (f"; the loads must stay behind the loop's own stores (they may alias), so one is in flight at a "
                 f"time: load the next {k} iterations' values into registers before the {k} steps (software "
                 "pipelining), or declare the pointers __restrict__ if they never alias")
    return res


def fixed_waits_in_loop(view: KernelView, pf: ProgramFunction, loop: Loop) -> float:
    """Not-issued samples of ``loop``'s instructions (nested loops included) stalled on a fixed-latency dependency
    (Nsight Compute's ``wait`` reason: "waiting on a fixed latency execution dependency", Kernel Profiling
    Guide, Warp Stall Reasons), e.g. the 4-cycle steps of a dependent FFMA chain.

    GPA eq. 4 bounds what reordering hides by the active samples A: another warp's issue fills a stalled warp's
    cycles. Within one warp, a load moved ahead of independent work is in flight for that work's whole time,
    and a dependent arithmetic chain takes its fixed latencies as well as its issue slots, so in a loop whose
    next iteration's load can start before this iteration's chain (software pipelining) the overlap A_l may
    draw on is issue + fixed-latency waits, against the loads' memory-dependency latency M_L^mem only: issued,
    ``wait`` and memory-dependency samples are disjoint, so A_l + waits + M_L^mem ≤ T and the hidden latency
    stays ≤ T/2 (eq. 4 ≤ 2, Theorem 5.1)."""
    def make() -> dict[int, dict[int, float]]:  # one pass over the profile: id(function) -> block start -> samples
        out: dict[int, dict[int, float]] = {}
        for smp, fn, start in view.pc_blocks():  # each PC's function and block, resolved once per view
            if start is None:
                continue
            w = smp.stalls_not_issued.get("wait", 0)  # not issued: disjoint from the issued samples A
            if not w:
                continue
            per = out.setdefault(id(fn), {})
            per[start] = per.get(start, 0.0) + w
        return out
    tables: dict[int, dict[int, float]] = view.memo("fixed_waits_by_block", make)
    by_block = tables.get(id(pf), {})
    return float(sum(by_block.get(b, 0.0) for b in loop.blocks))


def _barrier_offsets(fn: ProgramFunction) -> tuple[int, ...]:
    """Offsets of the block-wide barriers (BAR.SYNC/BAR.RED…, the SASS of __syncthreads) of ``fn``."""
    return tuple(i.offset for i in fn.instructions if i.base_opcode == "BAR")


def _issued_by_interval(view: KernelView, fn: ProgramFunction) -> list[tuple[int, int, float, int]]:
    """(barrier interval, block start, issued samples, offset) of each of ``fn``'s instructions with issued
    samples, in address order, once per view and function (:func:`_barrier_intervals` asks per region)."""
    def make() -> list[tuple[int, int, float, int]]:
        bars = fn.memo("barrier_offsets", lambda: _barrier_offsets(fn))
        out: list[tuple[int, int, float, int]] = []
        pcs, name = view.profile.pcs, fn.name
        table = pc_table(fn)
        for i in fn.instructions:
            off = i.offset
            b = table.block_at(fn, off)
            smp = pcs.get((name, off))  # view.sample_at, its first lookup written out
            if smp is None:
                smp = view.sample_at(name, off)
            if b is not None and smp is not None:
                n = smp.samples - smp.not_issued  # PCSample.issued
                if n:
                    out.append((bisect.bisect_right(bars, off), b.start, float(n), off))
        return out
    found: list[tuple[int, int, float, int]] = view.memo(("issued_by_interval", fn.name), make)
    return found


def _issued_by_block(view: KernelView, fn: ProgramFunction) -> dict[int, list[tuple[int, float, int]]]:
    """:func:`_issued_by_interval` grouped by block start: block -> (barrier interval, issued samples, offset) in
    address order, once per view and function."""
    def make() -> dict[int, list[tuple[int, float, int]]]:
        out: dict[int, list[tuple[int, float, int]]] = {}
        for k, b, n, off in _issued_by_interval(view, fn):
            rows = out.get(b)
            if rows is None:
                rows = out[b] = []
            rows.append((k, n, off))
        return out
    found: dict[int, list[tuple[int, float, int]]] = view.memo(("issued_by_block", fn.name), make)
    return found


#: :func:`_region_issue`: (offset -> issued samples, and per barrier interval the issued samples, the number of
#: issued instructions and the last one's offset, -1 when none)
_RegionIssue = tuple[dict[int, float], list[float], list[int], list[int]]


def _region_issue(view: KernelView, fn: ProgramFunction, blocks: frozenset[int] | None) -> _RegionIssue:
    """The issued instructions of ``fn`` (``blocks`` only, when given: a loop region) grouped by barrier interval.
    The whole function's once per view (every region outside loops asks); a loop's from its own blocks' rows."""
    def make(rows_of: Iterable[list[tuple[int, float, int]]]) -> _RegionIssue:
        n_iv = len(fn.memo("barrier_offsets", lambda: _barrier_offsets(fn))) + 1
        at: dict[int, float] = {}
        tot, cnt, end = [0.0] * n_iv, [0] * n_iv, [-1] * n_iv
        for rows in rows_of:
            for k, n, off in rows:
                at[off] = n
                tot[k] += n
                cnt[k] += 1
                if off > end[k]:
                    end[k] = off
        return at, tot, cnt, end

    by_block = _issued_by_block(view, fn)
    if blocks is None:
        found: _RegionIssue = view.memo(("region_issue", fn.name), lambda: make(by_block.values()))
        return found
    return make([by_block[b] for b in blocks if b in by_block])


def _barrier_intervals(view: KernelView, r: cm.Region) -> list[tuple[cm.Region, float]]:
    """``r`` split by the block-wide barriers of its function, each part with the active samples it can draw
    on: neither the compiler nor the programmer may move a memory access across __syncthreads() (it orders the
    block's shared and global accesses: CUDA C++ Programming Guide, "Synchronization Functions"), so the
    independent work that hides a stall lies between the barrier before its producer and the barrier after
    its use. Barrier intervals are taken in address order, per instruction; a part's A is the issued samples
    of the region's instructions in the intervals its edges span that do not depend on the stalled value
    (:func:`_independent_issue`).

    The region's issued instructions are grouped by interval once (offset -> samples, and per interval their
    sum and last offset), so a part costs its intervals and its slice pass, not a scan of the function's issued
    instructions; the sums are of integer sample counts, exact in any grouping. A part whose edges have no
    latency samples (M_Ll = 0: :func:`cm.latency_hiding_advice` leaves it out) gets its issued samples without
    the slice pass."""
    assert r.fn is not None
    fn = r.fn
    bars = fn.memo("barrier_offsets", lambda: _barrier_offsets(fn))
    blocks = r.loop.blocks if r.loop is not None else None

    # offset -> issued samples of the region's instructions; per barrier interval their sum (integer sample
    # counts: exact in any grouping), count and last offset
    at, tot, cnt, end = _region_issue(view, fn, blocks)
    spans: dict[tuple[int, int], list[EdgeView]] = {}
    for e in r.edges:
        use = e.use_ins.offset if e.use_ins is not None else None
        dfn = e.def_ins.offset if e.def_ins is not None and not e.is_self else use
        if use is None or dfn is None:
            continue
        a, c = bisect.bisect_right(bars, dfn), bisect.bisect_right(bars, use)
        spans.setdefault((a, c) if a <= c else (c, a), []).append(e)
    out = []
    for (lo, hi), edges in sorted(spans.items()):
        total: float = 0  # sum() of the part's samples in address order: an int 0 when none issued
        last: int | None = None
        for k in range(lo, hi + 1):
            if cnt[k]:
                total += tot[k]
                last = end[k]
        part = cm.Region(scope=r.scope, fn=fn, loop=r.loop, edges=edges)
        if sum(e.latency for e in edges) > 0:
            out.append((part, _independent_issue(fn, edges, at, total, last, bars[lo - 1] if lo > 0 else None)))
        else:
            # no latency samples to hide: latency_hiding_advice drops the part whatever its A (the same sum, the
            # same test), so its slice pass is skipped and the part keeps all its issued samples
            out.append((part, float(total)))
    return out


def _independent_issue(fn: ProgramFunction, edges: list[EdgeView], at: dict[int, float], total: float,
                       last: int | None, first: int | None = None) -> float:
    """Issued samples of the work that can fill the waits of ``edges`` within their barrier interval: for each
    edge, the issued instructions of the part (``total`` samples, the last at offset ``last``, None when none
    issued) other than its def and its use and not data-dependent on its def (the def's forward slice in address
    order through the registers each instruction reads and writes, blame/operands' def/use sets); averaged over
    the edges by their latency samples. A dependent chain — a scan step's two loads, the add that reads them,
    the store of the sum — has nothing to reorder however many samples it issues. Nor can a wait be filled by
    the work the def itself needs first (its backward slice: the instructions whose registers flow into the
    def's, and the branches before it with what they test, from ``first``, the part's first offset, None: the
    function's start; :func:`_backward_slices`), nor by independent work already between the def and its use
    (it overlaps the wait the samples measured): a thread whose loads are issued together right after their
    address arithmetic, then used (a stencil point), has nothing left to move.

    ``at``: offset -> issued samples of the region's instructions; only offsets in the part's intervals are
    read (the defs, the uses and the slice's instructions up to ``last`` all lie there)."""
    # sum over edges of w_e * (total - issued(slice of d_e) - issued(use_e) unless in it)
    #   = sum_e w_e * (total - x_e)  -  sum_d W_d * issued(slice of d),   W_d = sum of w_e over d's edges
    weights: dict[int, float] = {}
    pairs: list[tuple[int, int, float]] = []  # (def, use, weight) of each edge with a use, in edge order
    for e in edges:
        u = e.use_ins
        if u is not None:
            di = e.def_ins
            use = u.offset
            d = di.offset if di is not None and not e.is_self else use  # _edge_def, written out
            w = e.latency if e.latency > 0 else e.stall
            weights[d] = weights.get(d, 0.0) + w
            pairs.append((d, use, w))
    index, rows = fn.memo("slice_rows", lambda: _slice_rows(fn))
    weighted, masks, bit = _forward_slices(index, rows, weights, last, at)

    wsum = acc = 0.0
    get = masks.get
    order: list[int] | None = None
    for d, use, w in pairs:
        # dep_of(d, use): the use is d itself or in d's slice
        acc += w * (total - (0.0 if use == d or get(use, 0) & bit[d] else at.get(use, 0.0)))
        wsum += w
        if d < use:  # independent work already between the producer and its use overlaps the wait measured
            if order is None:
                order = sorted(at)
            b = bit[d]
            lo, hi = bisect.bisect_right(order, d), bisect.bisect_left(order, use)
            acc -= w * sum(at[o] for o in order[lo:hi] if not get(o, 0) & b)
    acc -= weighted + _backward_slices(fn, index, rows, weights, bit, at, first)
    return max(0.0, acc / wsum) if wsum > 0 else total


def _backward_slices(fn: ProgramFunction, index: dict[int, int], rows: list[tuple[int, frozenset[str], frozenset[str]]],
                     weights: dict[int, float], bit: dict[int, int], at: dict[int, float], first: int | None) -> float:
    """Sum over the defs d (``weights``' offsets, bits ``bit``) of weights[d] x the issued samples (``at``) of d's
    backward slice from ``first`` (an offset; None: the function's start) up to d: the instructions before d
    that write a register d reads, or that an instruction already in the slice reads (no kill on overwrite: a
    conservative slice), and the branches and exits before d with what they read (d runs only past them). One
    reverse pass for all the defs at once (each register carries the bit mask of the defs that need its value),
    the issued samples summed per distinct mask and each mask's weight summed once. ``index``, ``rows``:
    :func:`_slice_rows` of ``fn``."""
    starts = [index[d] for d in bit if d in index]
    if not starts:
        return 0.0
    lo = 0 if first is None else bisect.bisect_left([row[0] for row in rows], first)
    ins = fn.instructions
    need: dict[str, int] = {}
    seen = 0  # defs after the current row
    by_mask: dict[int, float] = {}
    for k in range(max(starts), lo - 1, -1):
        off, reads, writes = rows[k]
        own = bit.get(off, 0)
        m = 0
        for r in writes:
            m |= need.get(r, 0)
        if ins[k].base_opcode in cm.BRANCH_OPS or ins[k].base_opcode == "EXIT":
            m |= seen
        m &= ~own
        if m:
            n = at.get(off)
            if n:
                by_mask[m] = by_mask.get(m, 0.0) + n
        m |= own
        if m:
            for r in reads:
                need[r] = need.get(r, 0) | m
        seen |= own
    by_bit = [0.0] * len(bit)
    for d, b in bit.items():
        by_bit[b.bit_length() - 1] = weights[d]
    total = 0.0
    for m, n in by_mask.items():
        total += n * _bit_sum(m, by_bit, 0.0)
    return total


#: bin()'s digits as itertools.compress selectors (b"0" -> 0, b"1" -> 1)
_DIGITS = bytes.maketrans(b"01", b"\x00\x01")


def _bit_sum(m: int, by_bit: list[float], start: float) -> float:
    """``start`` plus ``by_bit[k]`` of each set bit k of the mask ``m`` (every bit < len(by_bit)), added one at a time
    in ascending k, left to right: the same float as ``w = start`` then ``w += by_bit[k]`` per bit in a loop (not
    ``sum()``, whose float rounding differs from 3.12 on). The bits are read off ``bin()`` of ``m`` shifted down to
    its lowest set bit and the weights picked by ``itertools.compress``, so a mask costs C loops over the span
    from its lowest to its highest bit, not a Python step per bit (masks of a few hundred bits on a 200k gemm's
    slices; on the generator's 50k-instruction kernels a mask's new bits over its base are a few, among 15k
    defs)."""
    if not m:
        return start
    lo = (m & -m).bit_length() - 1  # the selectors start at the lowest set bit: a mask of a few high bits is short
    m >>= lo
    return functools.reduce(operator.add, itertools.compress(by_bit[lo:lo + m.bit_length()],
                                                             bin(m)[:1:-1].encode().translate(_DIGITS)), start)


def _forward_slices(index: dict[int, int], rows: list[tuple[int, frozenset[str], frozenset[str]]],
                    weights: dict[int, float], last: int | None, at: dict[int, float]
                    ) -> tuple[float, dict[int, int], dict[int, int]]:
    """The forward slices of the instructions at ``weights``' offsets (the defs), in address order up to
    ``last``: an instruction is in the slice of d when it reads a register that d, or an instruction already in
    the slice, wrote after d (a register once tainted stays tainted: a conservative slice). Returns
    sum over d of weights[d] x (issued samples ``at`` (offset -> samples) of d's slice and of d itself), the mask
    of each instruction in some def's slice (offset -> bit mask of the defs whose slice holds it) and each def's
    bit: ``off`` is d or in d's slice when ``off == d or masks.get(off, 0) & bit[d]``.

    ``index``, ``rows``: :func:`_slice_rows` of the function (offset -> row, and one row per instruction). One
    pass over the function's instructions for all the defs at once: each register carries the set of defs whose
    value flows into it, as an int bit mask (bit k: the k-th def), and each mask its weight (the sum of its defs'
    weights), so an instruction costs the bits its mask gains over the largest mask it reads (taint only grows:
    a dependent chain adds a few bits per step), not one scan per def nor one step per bit it holds. (The
    weight lookups are written out in the loop: ~4 * 10^5 instruction steps on a 200k-instruction gemm.)

    A mask's weight is the float sum of its base's weight (the submask it was first derived from: the largest
    mask the instruction reads, or the mask written into a register) and the defs it adds, in ascending bit
    order. The pass records only each mask's base (:func:`_mask_weights`); the weights are summed after it for
    the masks of issued instructions and their bases, in that same order, so each is the same float as when
    every mask's weight was summed as it appeared (a third of the bits on a 200k gemm: 0.8 of 2.5 million)."""
    defs = list(weights)
    bit = {d: 1 << k for k, d in enumerate(defs)}

    weighted = 0.0
    masks: dict[int, int] = {}
    starts = [index[d] for d in defs if d in index]
    if starts and last is not None:
        taint: dict[str, int] = {}
        get = taint.get
        own = bit.get
        base: dict[int, int] = {0: 0}  # mask -> the submask its weight is summed from (0: from nothing)
        by_mask: dict[int, float] = {}  # issued samples per distinct mask
        stop = index.get(last)  # rows are in address order: the row of ``last`` ends the pass
        if stop is None:
            stop = bisect.bisect_right([row[0] for row in rows], last) - 1
        for off, reads, writes in itertools.islice(rows, min(starts), stop + 1):
            m = own(off, 0)
            big = bc = 0
            for r in reads:
                t = get(r)
                if t:  # taint keeps no empty masks
                    c = t.bit_count()
                    if c > bc:
                        big, bc = t, c
                    m |= t
            if not m:
                continue
            if m not in base:
                base[m] = big
            for r in writes:
                old = get(r, 0)
                new = old | m
                if new != old:
                    if new not in base:
                        base[new] = m
                    taint[r] = new
            masks[off] = m
            n = at.get(off)
            if n:
                by_mask[m] = by_mask.get(m, 0.0) + n
        wt = _mask_weights(by_mask, base, [weights[d] for d in defs])
        weighted = sum(n * wt[m] for m, n in by_mask.items())
    for d in defs:  # a def outside the function's index: its slice is itself
        if d not in index:
            weighted += weights[d] * at.get(d, 0.0)
    return weighted, masks, bit


def _mask_weights(need: Iterable[int], base: dict[int, int], by_bit: list[float]) -> dict[int, float]:
    """mask -> weight for each mask of ``need`` and the bases it is derived from: weight(m) = weight(base[m])
    plus ``by_bit[k]`` (bit k's def weight) of each bit k that ``m`` adds to ``base[m]``, in ascending bit order;
    weight(0) = 0.0. ``base``: every mask's base (a submask; 0 maps to 0), as :func:`_forward_slices` records
    them. The same float per mask however many other masks are asked: each sum depends only on its chain."""
    wt: dict[int, float] = {0: 0.0}
    chain: list[int] = []
    for m in need:
        if m in wt:
            continue
        while m not in wt:  # walk down to a mask whose weight is known, then sum back up
            chain.append(m)
            m = base[m]
        while chain:
            m = chain.pop()
            wt[m] = _bit_sum(m & ~base[m], by_bit, wt[base[m]])
    return wt


def _slice_rows(fn: ProgramFunction) -> tuple[dict[int, int], list[tuple[int, frozenset[str], frozenset[str]]]]:
    """(offset -> row number, rows): (offset, registers read, registers written) of each of ``fn``'s instructions
    in address order, from blame/operands' def/use sets (``function_def_use``, the list the blame index reads), built
    once per function: what the forward-slice pass reads per instruction."""
    ins = fn.instructions
    index = {i.offset: k for k, i in enumerate(ins)}
    # the DefUse's own frozensets (shared by every instruction of one SASS text), iterated in their fixed order
    return index, [(i.offset, du.reg_reads, du.defs) for i, du in zip(ins, function_def_use(fn), strict=True)]


# ---- function_inlining ------------------------------------------------------------------------------

def _is_math(pf: ProgramFunction) -> bool:
    return is_math_routine(pf.name)


#: Opcodes the call machinery adds (NVIDIA CUDA Binary Utilities, instruction set reference): CALL/RET
#: branch out and back, BSSY/BSYNC set up and wait at the convergence barrier around the call, BMOV saves a
#: barrier register. Local memory (STL/LDL) appears only when the ABI saves registers on the stack.
CALL_OPS = frozenset({"CALL", "RET"})
BARRIER_OPS = frozenset({"BSSY", "BSYNC", "BMOV", "WARPSYNC"})
STACK_OPS = frozenset({"STL", "LDL"})


def _stack_traffic(callee: ProgramFunction, sites: list[tuple[ProgramFunction, int]]) -> bool:
    """Whether the call saves/restores through local memory: STL/LDL in the callee, or in the caller's
    basic block around a call site."""
    if any(i.base_opcode in STACK_OPS for i in callee.instructions):
        return True
    for caller, off in sites:
        b = caller.block_of(off)
        if b is not None and any(i.base_opcode in STACK_OPS for i in b.instructions):
            return True
    return False


def _call_cost_text(r: cm.Region, stack: bool) -> str:
    """What the blame of a call shows, from the opcodes of its matched edges: call/return, convergence
    barriers, stack saves (only when STL/LDL exist, see :func:`_stack_traffic`)."""
    ops = {cm.base(i) for e in r.edges for i in (e.use_ins, e.def_ins) if i is not None}
    parts = []
    if ops & CALL_OPS:
        parts.append("the call and return (CALL/RET)")
    bar = sorted(ops & BARRIER_OPS)
    if bar:
        parts.append(f"the convergence barrier around the call ({'/'.join(bar)})")
    if stack:
        parts.append("register saves and restores through the stack (STL/LDL)")
    shown = f"stalls at {', '.join(parts[:-1]) + ' and ' + parts[-1] if len(parts) > 1 else parts[0]}" \
        if parts else "stalls inside the callee"
    return f"{shown}, and the compiler cannot schedule across the call"


def _inlinable_calls(prog: Program) -> tuple[dict[str, ProgramFunction], dict[str, list[tuple[ProgramFunction, int]]],
                                              set[str], dict[str, set[tuple[str, int]]]]:
    """The program's inlining candidates, computed once per program (not per kernel): callees by name
    (device functions, not math-library or device-runtime ones, below FUNCTION_SIZE_LIMIT instructions),
    their call sites (caller, offset), the names called at least once, and each callee's call-site lines
    (caller name, source line). Read-only for the callers."""
    # Device-runtime entry points (__cudaCDP2*) are called out of line too, but the user cannot inline them.
    callees = {pf.name: pf for pf in prog.functions.values()
               if not pf.is_kernel and not _is_math(pf) and not is_runtime_function(pf.name)
               and len(pf.instructions) < FUNCTION_SIZE_LIMIT}
    sites: dict[str, list[tuple[ProgramFunction, int]]] = {n: [] for n in callees}
    for pf in prog.functions.values():
        for cs in pf.calls:
            if cs.callee in sites:
                sites[cs.callee].append((pf, cs.offset))
    called = {n for n, s in sites.items() if s}
    site_lines: dict[str, set[tuple[str, int]]] = {}
    for n, ss in sites.items():
        site_lines[n] = set()
        for pf, off in ss:
            ins = pf.function.at(off)
            if ins is not None and ins.loc is not None:
                site_lines[n].add((pf.name, ins.loc.line))
    return callees, sites, called, site_lines


@register("function_inlining", "Function inlining", "latency_hiding",
          "Stalls inside device functions called with CALL (not inlined) and at their call sites.",
          "Inline the callee (__forceinline__ instead of __noinline__) so caller and callee are scheduled together "
          "and the call, its convergence barrier and any register saves disappear.")
def function_inlining(view: KernelView) -> Advice | Skipped:
    """GPA Table 2 function inlining: per-callee eq. 5 with A = callee + caller loop around the calls.

    Calls through a register (virtual functions, function pointers: common.IndirectCalls) are one more region:
    the functions they can reach that ran in this kernel (device functions never called directly, found
    without the vtables, so possibly a superset) and the indirect call sites' lines; the hint asks to
    devirtualize (flat arrays by type, a switch on a type tag, templates) so the call becomes direct and
    inlinable. The estimate is GPA eq. 2 over what the fix removes -- the call machinery of direct and
    indirect sites, the vtable loads feeding each indirect CALL's register, the ABI's stack traffic -- when it
    exceeds eq. 5, then the roofline after the fix (the L1 wavefronts and L2 sectors of the local memory the
    call forces go with it). It is an estimate, not an upper bound: eq. 2 counts only those samples, not the
    scheduling across the call that inlining also allows (which may gain more), and the after-fix roofline
    is a ceiling on it, not a prediction."""
    prog = view.program
    if prog is None:
        return Skipped("function_inlining", "needs the call graph of the binary (no cubin given)", missing=True)
    all_stall = view.edge_stalls()
    icache = sum(e.stall for e in view.edges_by(reason=cm.ICACHE_REASONS))
    if all_stall > 0 and icache / all_stall > IFETCH_UPPER:
        return Skipped("function_inlining",
                       f"instruction-fetch stalls are {icache / all_stall:.0%} of all stalls: more code would hurt")
    callees, sites, called, site_lines = prog.memo("function_inlining_calls", lambda: _inlinable_calls(prog))
    ind = cm.indirect_calls(prog)
    if not called and not ind.sites:
        return Skipped("function_inlining", "no device function is called out of line")
    ind_lines = {(pf.name, ins.loc.line) for pf, off in ind.sites
                 if (ins := pf.function.at(off)) is not None and ins.loc is not None}
    regions: dict[str, cm.Region] = {}
    virtual: list[EdgeView] = []  # edges of the functions reached only through indirect calls, and at their sites
    for e in view.edges:
        target = None
        if e.use_fn is not None and e.use_fn.name in called:
            target = e.use_fn.name
        elif e.use_fn is not None and e.use_fn.name in ind.callees:
            virtual.append(e)
            continue
        elif e.use_ins is not None and e.use_ins.loc is not None and e.use_fn is not None:
            for n in called:
                if (e.use_fn.name, e.use_ins.loc.line) in site_lines[n]:
                    target = n
                    break
            if target is None and (e.use_fn.name, e.use_ins.loc.line) in ind_lines:
                virtual.append(e)
                continue
        if target is None:
            continue
        if target not in regions:
            regions[target] = cm.Region(scope=view.function_scope(callees[target]), fn=callees[target], loop=None)
        regions[target].edges.append(e)
    # the indirect calls' candidates that have samples, hottest first; the sites in functions that run
    reached = _reached_indirectly(view, ind, virtual)
    hot_sites = [(pf, off) for pf, off in ind.sites if _ran(view, pf.name, off)]
    rows = []
    if reached:
        vr = cm.Region(scope=view.function_scope(reached[0]), fn=reached[0], loop=None, edges=virtual)
        a = sum(view.active_in_function(pf) for pf in reached) + _around_sites(view, hot_sites)
        rows.append((vr, a))
    for n, r in regions.items():
        a = view.active_in_function(callees[n]) + _around_sites(view, sites[n])
        rows.append((r, a))

    def hint(r: cm.Region) -> str:
        if r.fn is not None and r.fn.name in ind.callees:
            return _virtual_hint(view, r, reached, hot_sites)
        return direct_hint(r)

    def direct_hint(r: cm.Region) -> str:
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
        stack = r.fn is not None and _stack_traffic(r.fn, sites.get(r.fn.name, []))
        return f"{name} is called{at} as a real function: the blame shows {_call_cost_text(r, stack)}; inline it{fix}"

    res = cm.latency_hiding_advice(view, "function_inlining", rows, hint, nothing="no stalls in called functions")
    if not isinstance(res, Advice):
        return res
    # What inlining removes outright: the call machinery and the cost of jumping in and out (eq. 2 over those
    # samples). It is the larger effect on issue-bound code (noinline example: eq. 2 1.26x, measured 1.26x on
    # the H200; eq. 5 1.03x); the eq. 5 per-callee regions stay as the regions' estimates.
    overhead = _call_overhead_edges(view, {n: callees[n] for n in regions} | {pf.name: pf for pf in reached},
                                    sites, indirect=hot_sites, target_loads=ind.target_loads)
    m = sum(e.stall for e in overhead)
    if 0 < m < view.total:
        e2 = est.stall_elimination(view.total, m)
        if e2.speedup > res.estimated_speedup:
            vt = ", the vtable loads feeding the indirect calls' target registers" if reached else ""
            res.estimate = Estimate(e2.speedup, "T/(T-M), M = samples of the call machinery (CALL/RET, BSSY/BSYNC, "
                                    f"argument moves{vt}) and of branch/fetch stalls entering the callee",
                                    e2.inputs, "GPA eq. 2")
            res.matched_samples, res.share = m, m / view.total
            res.matched = cm.matched_pairs(overhead, cm.stall_weight)
    # The register saves and local arrays the call forces into local memory go with it: the L1 work after the
    # fix, not the L1 throughput now, bounds the gain (arch/roofline.after_fix), as for the other fixes that
    # remove L1 work (code._after_fix_estimate).
    from warpwise.analysis.advice.code import _after_fix_estimate, _l1_ratio, call_stack_keys, local_wavefronts

    stack = call_stack_keys(view)
    if stack:
        gone = local_wavefronts(view, stack)
        # SM work shrinks with the instructions eq. 2 removes (time after = T − M of T: r_sm = 1/S)
        ratios = {"l1": _l1_ratio(view, local_removed=gone), "sm": 1.0 / max(res.estimated_speedup, 1.0)}
        extra = {"wavefronts_local_removed": gone, "wavefronts_l1": view.profile.launch.l1_lsu_wavefronts}
        fns = [callees[n] for n in regions] + reached
        l2_gone, l2_all = _local_l2_sectors(view, stack, fns)
        if l2_gone > 0 and l2_all > 0:
            ratios["l2"] = max(0.0, 1.0 - l2_gone / l2_all)
            extra |= {"l2_sectors_local_removed": l2_gone, "l2_sectors": l2_all}
        res = _after_fix_estimate(view, res, ratios, False, extra)
    return res


def _local_l2_sectors(view: KernelView, stack: set[tuple[str, int]],
                      fns: list[ProgramFunction]) -> tuple[float, float]:
    """(L2 sectors of the local-memory traffic the call forces, L2 sectors of the launch), from the per-PC
    source counters ``memory_l2_theoretical_sectors_local`` / ``_global`` (Nsight Compute Source page:
    *theoretical* sectors, what each instruction requests from L2 if L1 misses, so the ratio is a share of the
    requested L2 traffic, an estimate). Removed: the sectors at the ABI's register saves (code.call_stack_keys)
    and at every instruction of the callees ``fns``, whose local traffic is their frame and the caller's
    objects they reach through reference parameters (generic LD/ST into the stack, which inlining turns into
    registers). The caller's own stack accesses outside the call's block are kept (conservative)."""
    keys = set(stack) | {(pf.name, i.offset) for pf in fns for i in pf.instructions}
    gone = 0.0
    for name, off in keys:
        s = view.sample_at(name, off)
        if s is not None:
            gone += s.l2_sectors_local
    total = float(sum(s.l2_sectors + s.l2_sectors_local for s in view.profile.pcs.values()))
    return gone, total


def _around_sites(view: KernelView, sites: list[tuple[ProgramFunction, int]]) -> float:
    """Σ A of the caller loops (or whole callers, outside loops) holding the call sites, each counted once:
    the part of GPA eq. 5's A_l that the caller contributes."""
    a = 0.0
    seen: set[tuple[str, int]] = set()
    for caller, off in sites:
        loop = caller.loop_of(off)
        key = (caller.name, loop.header if loop is not None else -1)
        if key in seen:
            continue
        seen.add(key)
        a += view.active_in_loop(caller, loop) if loop is not None else view.active_in_function(caller)
    return a


def _ran(view: KernelView, name: str, offset: int) -> bool:
    """Whether the instruction executed in this launch: its ``inst_executed`` counter, or its samples when the
    profile has no execution counts."""
    s = view.sample_at(name, offset)
    if s is None:
        return False
    counted = view.memo("has_inst_executed", lambda: any(p.inst_executed for p in view.profile.pcs.values()))
    return s.inst_executed > 0 if counted else s.samples > 0


def _reached_indirectly(view: KernelView, ind: cm.IndirectCalls, edges: list[EdgeView]) -> list[ProgramFunction]:
    """The candidates of the program's indirect calls (common.IndirectCalls) that ran in this kernel (an
    executed instruction, :func:`_ran`) and have stall samples, most stall samples first."""
    stall: dict[str, float] = {}
    for e in edges:
        if e.use_fn is not None and e.use_fn.name in ind.callees:
            stall[e.use_fn.name] = stall.get(e.use_fn.name, 0.0) + e.stall
    ran = [n for n in stall if stall[n] > 0 and any(_ran(view, n, i.offset) for i in ind.callees[n].instructions)]
    return [ind.callees[n] for n in sorted(ran, key=lambda n: (-stall[n], n))]


def qualified_name(name: str) -> str:
    """``Sphere::hit`` for a nested Itanium name (``$kernel$_ZNK6Sphere3hitERK3Ray...``), ``~Sphere`` for a
    destructor; else :func:`demangle_short`."""
    base = name.rsplit("$", 1)[-1] if name.startswith("$") else name
    if not base.startswith("_ZN"):
        return demangle_short(name)
    i, parts = 3, []
    while i < len(base) and base[i] in "KVL":
        i += 1
    while i < len(base):
        if base[i].isdigit():
            j = i
            while j < len(base) and base[j].isdigit():
                j += 1
            n = int(base[i:j])
            parts.append(base[j:j + n])
            i = j + n
        elif base[i] == "D" and parts:  # D0/D1/D2: destructor
            parts.append("~" + parts[-1])
            break
        elif base[i] == "C" and parts:  # C1/C2: constructor
            parts.append(parts[-1])
            break
        else:
            break
    return "::".join(parts) if parts else demangle_short(name)


def _virtual_hint(view: KernelView, r: cm.Region, reached: list[ProgramFunction],
                  sites: list[tuple[ProgramFunction, int]]) -> str:
    """The devirtualization hint: the indirect call sites' lines and the functions they reach."""
    locs = [(ins.loc.file, ins.loc.line) for pf, off in sites
            if (ins := pf.function.at(off)) is not None and ins.loc is not None]
    at = f" at {cm.lines_text(locs)}" if locs else ""
    names = ", ".join(dict.fromkeys(qualified_name(pf.name) for pf in reached[:3]))
    more = f" and {len(reached) - 3} more" if len(reached) > 3 else ""
    stack = any(_stack_traffic(pf, sites) for pf in reached)
    return (f"the calls{at} go through a register (virtual functions or function pointers: a vtable load and an "
            f"indirect CALL the compiler cannot inline) into {names}{more}: the blame shows "
            f"{_call_cost_text(r, stack)}; devirtualize so the call is direct and inlinable: store the objects by "
            "type in flat arrays (one loop per type), or switch on a type tag, or make the type a template "
            "parameter")


#: Reasons that show the cost of jumping into and out of a callee (branch target resolution, fetch of the
#: callee's code): Nsight Compute Kernel Profiling Guide, "Warp Stall Reasons".
JUMP_REASONS = frozenset({"branch_resolving", "no_instructions"})


def _call_overhead_edges(view: KernelView, callees: dict[str, ProgramFunction],
                         sites: dict[str, list[tuple[ProgramFunction, int]]],
                         keep_not_selected: bool = False, indirect: list[tuple[ProgramFunction, int]] | None = None,
                         target_loads: frozenset[tuple[str, int]] = frozenset()) -> list[EdgeView]:
    """Blame edges at instructions inlining removes: each call site's CALL, the BSSY/BSYNC of its block and
    the register moves right before the CALL (ABI argument setup); the callee's RET, BSSY/BSYNC; the ABI's
    register saves through local memory (code.call_stack_keys); and the branch/fetch stalls (JUMP_REASONS)
    inside the callee. ``indirect``: calls through a register (their callees among ``callees``), handled
    as the direct sites, plus ``target_loads`` (common.IndirectCalls): devirtualizing removes the vtable
    loads that fetch the target (the argument moves before the CALL are found past them)."""
    removable: set[tuple[str, int]] = set(target_loads)
    every = [(name, s) for name, ss in sites.items() if name in callees for s in ss]
    every += [("", s) for s in indirect or []]
    for callee in callees.values():
        for ins in callee.instructions:
            if ins.base_opcode in CALL_OPS | BARRIER_OPS:
                removable.add((callee.name, ins.offset))
    for _, (caller, off) in every:
        removable.add((caller.name, off))
        b = caller.block_of(off)
        if b is None:
            continue
        before = [i for i in b.instructions if i.offset < off]
        for ins in b.instructions:
            if ins.base_opcode in BARRIER_OPS:
                removable.add((caller.name, ins.offset))
        for ins in reversed(before):  # the contiguous moves that set up the arguments
            if ins.base_opcode == "MOV" or ins.opcode.startswith("IMAD.MOV"):
                removable.add((caller.name, ins.offset))
            elif (caller.name, ins.offset) not in target_loads:
                break
    from warpwise.analysis.advice.code import call_stack_keys  # local import: code imports this module's peers

    removable |= call_stack_keys(view)
    out = []
    for e in view.edges:
        if e.use_fn is None or e.use_ins is None or (e.gpa_class == stalls.NOT_SELECTED and not keep_not_selected):
            continue
        # an edge goes with the fix when its stalled instruction goes, or when it waits on the call itself
        # (CALL/RET: the branch's fixed latency, the ABI's return registers); a wait on a local load is not
        # counted: after inlining the use waits on the value's producer instead
        dk = cm.ins_key(e.def_fn, e.def_ins) if not e.is_self and cm.base(e.def_ins) in CALL_OPS else None
        if (e.use_fn.name, e.use_ins.offset) in removable or (dk is not None and dk in removable) or (
                e.use_fn.name in callees and e.edge.reason in JUMP_REASONS):
            out.append(e)
    return out


# ---- async_copy -------------------------------------------------------------------------------------

def _global_to_shared(e: EdgeView) -> bool:
    """Whether ``e`` is a global load's value waited on by a shared store that stores it (LDG then STS of the
    loaded register as data)."""
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
    stores = cm.SHARED_STORES  # _global_to_shared's use test first, written out: few edges wait at an STS
    evs = [e for e in view.edges if (u := e.use_ins) is not None and u.base_opcode in stores
           and _global_to_shared(e)]
    # One CTA per SM (a persistent kernel, __launch_bounds__(n, 1)): no other block issues while this one's warps
    # wait for the tile, so the barrier after the copy waits for the slowest warp's load and nothing hides it;
    # the double-buffered asynchronous copy fills the next tile during this one's compute and hides both.
    lone = bool(evs) and par.first_wave_ctas_per_sm(view) <= 1
    after = _barrier_after_copy(view, evs) if lone else []
    region = cm.Region(scope=view.kernel_scope(), fn=None, loop=None, edges=evs + after)

    def hint(r: cm.Region) -> str:
        hs = cm.hotspots(view, evs, cm.latency_weight, 3)
        text = (f"the shared-memory stores at {cm.lines_text((h.use.file, h.use.line) for h in hs)} wait for global "
                "loads they only copy: use cuda::memcpy_async (cp.async) and wait on the copy where the data is used")
        if after:
            bars = cm.lines_text((e.use_ins.loc.file, e.use_ins.loc.line) for e in after
                                 if e.use_ins is not None and e.use_ins.loc is not None)
            text += (f"; with one block per SM nothing else runs while the block waits for the tile at the barrier "
                     f"at {bars}: fill two buffers, the next tile in flight during this one's compute")
        return text

    res = cm.latency_hiding_advice(view, "async_copy", [(region, float(view.active))], hint,
                                   nothing="no global-to-shared copies stall")
    if isinstance(res, Advice) and after:
        res.priority = 2  # the fix for the copy and its barrier wait: ahead of unrolling the copy loop (priority 1)
        res.estimate = Estimate(res.estimate.speedup, res.estimate.formula + ", M_Ll = stalls of the global-to-shared "
                                "copies + barrier stalls after them (one CTA per SM)",
                                {**res.estimate.inputs, "M_barrier": sum(e.stall for e in after)},
                                res.estimate.equation)
    return res


def _barrier_after_copy(view: KernelView, copies: list[EdgeView]) -> list[EdgeView]:
    """The barrier-stall edges (Nsight Compute ``barrier``) of the first ``BAR`` that follows a copy's shared
    store in its function (program order): the warps of the block waiting there wait for the slowest warp's
    tile load. A warp waiting at a barrier is sampled at a PC between that BAR and the next one (nvcc 13 on
    sm_90: a few instructions after it, where the warp resumes), so the edges taken are those whose use lies in
    [first BAR after the copies, next BAR)."""
    last: dict[str, int] = {}  # function -> offset of the latest copy store
    for e in copies:
        if e.use_fn is not None and e.use_ins is not None:
            last[e.use_fn.name] = max(last.get(e.use_fn.name, -1), e.use_ins.offset)
    spans: dict[str, tuple[int, float]] = {}
    for name, off in last.items():
        pf = view.program.functions.get(name) if view.program is not None else None
        if pf is None:
            continue
        bars = [i.offset for i in pf.instructions if i.base_opcode == "BAR" and i.offset > off]
        if bars:
            spans[name] = (bars[0], float(bars[1]) if len(bars) > 1 else math.inf)
    out = []
    for e in view.edges_by(reason=("barrier",)):
        if e.use_fn is None or e.use_ins is None or e.use_fn.name not in spans:
            continue
        lo, hi = spans[e.use_fn.name]
        if lo <= e.use_ins.offset < hi:
            out.append(e)
    return out
