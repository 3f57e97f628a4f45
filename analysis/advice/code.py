"""Stall-elimination code optimizers (GPA Table 2 "Code Optimizers / Stall Elimination" and the matching
ones of GPA's released advisor). Each matches blamed stall samples to a pattern and estimates with GPA
eq. 2, S = T / (T − M), M = the matched stall samples.

Thresholds marked "GPA released" are the constants of HPCToolkit's ``GPUOptimizer.cpp`` (the GPA
implementation); they are heuristics of the advisor, not hardware facts.
"""

from __future__ import annotations

import functools
import re
import weakref
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from warpwise.analysis.advice import atomics
from warpwise.analysis.advice import common as cm
from warpwise.analysis.advice import estimate as est
from warpwise.analysis.advice import ranking as rk
from warpwise.analysis.advice.context import (
    EdgeView,
    KernelView,
    block_at,
    is_math_routine,
    is_user_function,
    user_loc,
)
from warpwise.analysis.advice.model import Advice, Estimate, Skipped
from warpwise.analysis.advice.quickfix import QuickFixError, float_literal_fixes
from warpwise.analysis.advice.registry import register
from warpwise.analysis.arch import roofline, stalls
from warpwise.analysis.arch.latency import latency_of
from warpwise.analysis.binary.model import Instruction
from warpwise.analysis.profile.model import PCSample
from warpwise.analysis.program.model import BasicBlock, Loop, Program, ProgramFunction

#: GPA released (GPUGlobalMemoryCoalesceOptimizer / GPUGlobalMemoryReductionOptimizer): accesses with an
#: L2 sector efficiency (ideal / actual sectors) below this are uncoalesced.
COALESCE_LIMIT = 0.5
#: GPA released (GPUDivergeReductionOptimizer): a branch whose active-thread efficiency is below this diverges.
DIVERGENCE_LIMIT = 0.5
#: GPA released (GPUBranchEliminationOptimizer): a branch taken (or not) by more than this share of threads
#: is decided.
PRED_LIMIT = 0.999
#: GPA released (GPUKernelMergeOptimizer): merge candidates run at least this often, each at most this long.
KERNEL_COUNT_LIMIT = 10
KERNEL_TIME_LIMIT_NS = 100_000.0
#: Name fragments of the CUDA math library's out-of-line routines (GPA released GPUFastMathOptimizer matches
#: "cuda_sm"; nvcc 13 names the precise division slow path ``__internal_0_$__cuda_sm3x_div_rn_...``).
MATH_ROUTINE_MARKERS = ("__cuda_sm", "__internal_", "__nv_")
#: Header files of the CUDA math library whose inlined code carries their own line info.
MATH_HEADERS = ("math_functions.h", "math_functions.hpp", "device_functions.h", "device_functions.hpp",
                "sm_20_intrinsics.hpp", "device_double_functions.hpp")


def _needs_binary(view: KernelView, opt_id: str) -> Skipped | None:
    """Skipped(missing) when the optimizer must see SASS instructions and no cubin was given."""
    if view.program is None:
        return Skipped(opt_id, "needs the kernel's SASS instructions (no cubin given)", missing=True)
    return None


def _cls(ev: EdgeView) -> str:
    return ev.gpa_class


def _sample(view: KernelView, ev: EdgeView, at_def: bool = False) -> PCSample | None:
    off = ev.edge.def_offset if at_def else ev.edge.use_offset
    return None if off is None else view.sample_at(ev.edge.function, off)


# ---- register_reuse / register_increase --------------------------------------------------------------

def _local_memory_edges(view: KernelView) -> list[EdgeView]:
    local = cm.instructions_of_class(view, "local")  # id(def_ins) in local == cm.is_local_mem(def_ins)
    return [e for e in view.edges_by(category=("local_memory",), gpa_class=(stalls.MEMORY_DEPENDENCY,))
            if e.edge.category == "local_memory" or
            (not e.is_self and _cls(e) == stalls.MEMORY_DEPENDENCY and id(e.def_ins) in local)]


def _spill_where(view: KernelView, evs: list[EdgeView]) -> str:
    """``line 17 in the loop at line 12``: where the spill stalls of ``evs`` are (their 3 hottest uses)."""
    hs = cm.hotspots(view, evs, cm.stall_weight, 3)
    where = cm.lines_text((h.use.file, h.use.line) for h in hs)
    loops = {cm.scope_ref(h.loop) for h in hs if h.loop is not None}
    return where + (f" in the {', '.join(sorted(loops))}" if loops else "")


def _spill_hint(view: KernelView, evs: list[EdgeView], extra: str, where: str | None = None) -> str:
    """The spill hint; ``where``: :func:`_spill_where` of ``evs`` when the caller has it already."""
    where = _spill_where(view, evs) if where is None else where
    return (f"values spilled to local memory (LDL/STL) stall {where}: the kernel uses "
            f"{view.profile.launch.registers_per_thread or '?'} registers per thread and the compiler ran out. "
            + extra)


@register("register_reuse", "Register reuse", "stall_elimination",
          "Memory-dependency stalls on local-memory loads/stores (LDL/STL): register spills.",
          "Reduce live values: reuse variables, split a large loop body in two, move rarely used values to "
          "shared memory, or allow more registers per thread.")
def register_reuse(view: KernelView) -> Advice | Skipped:
    """GPA Table 2 register reuse: local-memory (spill / local array) traffic, eq. 2 over what keeping the
    values in registers deletes — the LDL/STL instructions' samples and the stalls waiting on them. The hint
    tells register spills (nvdisasm's spill slots: the compiler ran out of registers) from local arrays
    indexed by loop counters (:func:`loop_indexed_locals`: run-time trip counts; loop_unrolling's fix, which
    that finding leads with the same estimate) and from arrays indexed by loaded data."""
    evs = _local_memory_edges(view)
    if not evs:
        return _local_removal(view, "register_reuse", evs, "")
    removed = _removed_local(view, spills_only=False)
    spills = view.program is not None and any(is_spill_slot(i) for pf, i in _local_instructions(view.program)
                                              if cm.ins_key(pf, i) in removed)
    owned = loop_indexed_locals(view)
    if spills or not owned:
        data = not spills and view.program is not None and any(
            "data" in (atomics.address_sources(pf, i) or ())
            for pf, i in _local_instructions(view.program) if cm.ins_key(pf, i) in removed)
        hint = (f"local arrays indexed by loaded data (LDL/STL) stall {_spill_where(view, evs)}: the index is known "
                "only at run time, so the array cannot live in registers; keep it in shared memory, or restructure "
                "so every index is a compile-time constant." if data else
                _spill_hint(view, evs, "Keep fewer values alive at once: reuse variables, split the loop body, or "
                                       "recompute cheap values instead of keeping them; index local arrays with "
                                       "compile-time constants so they stay in registers."))
    else:
        hint = (f"local arrays indexed by loop counters (LDL/STL, not register spills) stall "
                f"{_spill_where(view, evs)}: the loops' trip counts are run-time values, so the arrays stay in "
                "local memory at any register count; make the trip counts compile-time constants and unroll the "
                "loops fully so every index is a constant and the arrays live in registers (loop_unrolling).")
    return _local_removal(view, "register_reuse", evs, hint)


#: Instructions of a function's start searched for the stack pointer's lowering: ptxas emits it in the
#: prologue, within the first few instructions (a warpwise bound with room for the parameter loads before it).
PROLOGUE_SCAN = 32


def stack_frame_bytes(pf: ProgramFunction) -> int:
    """Bytes of the function's local stack frame: the stack pointer R1 lowered once at entry
    (``VIADD R1, R1, 0xffffff00`` / ``IADD3 R1, R1, -0x100, RZ``: 256 bytes). 0 when it is not."""
    for i in pf.instructions[:PROLOGUE_SCAN]:
        ops = i.operands
        if i.base_opcode in ("VIADD", "IADD3", "IADD") and len(ops) >= 3 and ops[0] == "R1" and ops[1] == "R1":
            try:
                v = int(ops[2], 0)
            except ValueError:
                return 0
            if v >= 1 << 31:
                v -= 1 << 32
            return -v if v < 0 else 0
    return 0


def loop_indexed_locals(view: KernelView) -> dict[cm.InsKey, float]:
    """Local-memory accesses of arrays indexed by loop counters (key -> 1.0): LDL/STL that are not spill slots
    (:func:`is_spill_slot`) nor the call ABI's saves, whose address adds a register to the stack pointer (an
    index known only at run time) built from constants, parameters and thread indices only — no loaded value
    (atomics.address_sources): a loop counter of a loop the compiler did not unroll, typically because its trip
    count is a run-time value. Only when the kernel's whole stack frame (:func:`stack_frame_bytes`) fits in the
    registers a thread may still take (frame / 4 + registers now <= the architecture's maximum): then
    compile-time trip counts and a full unroll turn every index into a constant and the arrays into
    registers, and with them the function's accesses at constant offsets of the frame ([R1+imm]). Empty
    otherwise, and when any local access of the program is indexed by loaded data."""
    prog = view.program
    if prog is None:
        return {}

    def make() -> dict[cm.InsKey, float]:
        abi = call_stack_keys(view)
        regs = view.profile.launch.registers_per_thread
        indexed: dict[str, list[cm.InsKey]] = defaultdict(list)
        fixed: dict[str, list[cm.InsKey]] = defaultdict(list)

        fit: dict[str, bool] = {}

        def fits(pf: ProgramFunction) -> bool:  # the frame, as registers, fits beside the ones in use (per function)
            if pf.name not in fit:
                frame = stack_frame_bytes(pf)
                fit[pf.name] = frame > 0 and frame // 4 + regs <= view.arch.max_registers_per_thread
            return fit[pf.name]

        for pf, i in _local_instructions(prog):
            k = cm.ins_key(pf, i)
            if k is None or k in abi or is_spill_slot(i):
                continue
            if not fits(pf):
                continue
            if not cm.address_registers(i) - {"R1"}:
                fixed[pf.name].append(k)  # [R1+imm]: an element at a constant index
                continue
            src = atomics.address_sources(pf, i)
            if src is None or "data" in src:
                return {}  # an index from loaded data: no unroll makes it a constant
            indexed[pf.name].append(k)
        # once every index is a constant the whole array is registers: its constant-index accesses go too
        return {k: 1.0 for name, ks in indexed.items() for k in ks + fixed[name]}

    return dict(view.memo("loop_indexed_locals", make))


def is_spill_slot(ins: Instruction) -> bool:
    """A register spill or refill: nvdisasm marks them (``[R1+0x6c] (*"SpillRefill"*)``, ``"SpillStore"``).
    Other local accesses are local arrays (indexed at run time, or too large for registers), which more
    registers per thread would not remove."""
    return cm.is_local_mem(ins) and any("Spill" in op for op in ins.operands)


def call_stack_keys(view: KernelView) -> set[cm.InsKey]:
    """Local-memory instructions that are the ABI's register saves around out-of-line calls: inside called
    device functions, or in a caller's basic block that holds a CALL. Inlining removes them (function_inlining
    counts them); register reuse does not."""
    prog = view.program
    if prog is None:
        return set()
    return set(prog.memo("call_stack_keys", lambda: _call_stack_keys(prog)))


def _call_stack_keys(prog: Program) -> frozenset[cm.InsKey]:
    out: set[cm.InsKey] = set()
    called = {cs.callee for pf in prog.functions.values() for cs in pf.calls} | set(cm.indirect_calls(prog).callees)
    for pf in prog.functions.values():
        if pf.name in called and not pf.is_kernel:
            out |= {(pf.name, i.offset) for i in pf.instructions if cm.is_local_mem(i)}
        for cs in pf.calls:
            b = pf.block_of(cs.offset)
            if b is not None:
                out |= {(pf.name, i.offset) for i in b.instructions if cm.is_local_mem(i)}
    return frozenset(out)


def _local_instructions(prog: Program) -> list[tuple[ProgramFunction, Instruction]]:
    """Local-memory instructions of the program in program order (once per program: every kernel asks)."""
    return prog.memo("local_instructions", lambda: [(pf, i) for pf in prog.functions.values()
                                                    for i in pf.instructions if cm.is_local_mem(i)])


def _removed_local(view: KernelView, spills_only: bool) -> dict[cm.InsKey, float]:
    """The local-memory instructions a fix keeping the values in registers deletes (key -> 1.0): every local
    access, or only the spill slots (:func:`is_spill_slot`) when ``spills_only``; never the call ABI's register
    saves (:func:`call_stack_keys`, function_inlining's)."""
    abi = call_stack_keys(view)
    return {k: 1.0 for pf, i in (_local_instructions(view.program) if view.program else ())
            if (not spills_only or is_spill_slot(i)) and (k := cm.ins_key(pf, i)) is not None and k not in abi}


def spill_dram_ratio(view: KernelView, keys: set[cm.InsKey]) -> tuple[float, dict[str, float]] | None:
    """DRAM work after / before (arch/roofline.after_fix ratio) of a fix that deletes the local-memory
    instructions ``keys`` (spill stores and refills), with its inputs; None when the launch's DRAM bytes or the
    local L2 sectors at ``keys`` are unknown.

    From the per-PC source counters (Nsight Compute Source page, *theoretical* L2 sectors: what each
    instruction requests from L2 when L1 misses): L_r local sectors at ``keys`` of all local L_a and global G
    sectors (32 bytes each). Every DRAM byte is moved for an L2 sector request (a miss's fill or a dirty
    sector's write-back), so the global accesses account for at most 32·G of the launch's D DRAM bytes
    (LaunchConfig.dram_bytes) and the local ones for at least D_l = max(0, D − 32·G) (a lower bound on the
    spills' part); the fix removes its share L_r / L_a of it: r_dram = 1 − D_l·(L_r / L_a) / D.
    """
    pcs = view.profile.pcs.values()
    glob = float(sum(s.l2_sectors for s in pcs))
    local_all = float(sum(s.l2_sectors_local for s in pcs))
    gone = min(local_all, float(sum(s.l2_sectors_local for k in keys if (s := view.sample_at(*k)) is not None)))
    dram = view.profile.launch.dram_bytes
    if gone <= 0 or local_all <= 0 or dram <= 0:
        return None
    d_local = max(0.0, dram - glob * SECTOR_BYTES)
    return (max(0.0, 1.0 - d_local * (gone / local_all) / dram),
            {"l2_sectors_local_removed": gone, "l2_sectors_local": local_all, "l2_sectors": glob,
             "dram_bytes": dram, "dram_bytes_local_min": d_local})


def _local_removal(view: KernelView, opt_id: str, evs: list[EdgeView], hint: str,
                   spills_only: bool = False, keys: dict[cm.InsKey, float] | None = None) -> Advice | Skipped:
    """eq. 2 over the local-memory instructions a fix deletes (``keys``; default :func:`_removed_local`)."""
    abi = call_stack_keys(view)
    removed = _removed_local(view, spills_only) if keys is None else keys
    if not removed and abi:
        return Skipped(opt_id, "the local-memory traffic is the call ABI's register saves around out-of-line "
                               "calls: see function_inlining")
    if spills_only and not removed:
        return Skipped(opt_id, "the local-memory accesses are run-time indexed arrays, not register spills: more "
                               "registers would not keep them in registers (see register_reuse)")
    if not removed:
        return cm.stall_elimination_advice(view, opt_id, evs, hint, nothing="no local-memory (spill) stalls")
    res = cm.removal_advice(view, opt_id, removed, hint, "the local-memory instructions (LDL/STL)",
                            nothing="no local-memory (spill) stalls")
    if isinstance(res, Advice) and not hint:
        res.hint = _spill_hint(view, _local_memory_edges(view), "")
    return res


@register("register_increase", "Register increase", "stall_elimination",
          "Spill stalls (LDL/STL) in a kernel that uses fewer registers per thread than the architecture allows.",
          "Raise the register limit: __launch_bounds__(threads, fewer min blocks) or -maxrregcount.")
def register_increase(view: KernelView) -> Advice | Skipped:
    """GPA released register increase: spill stalls while the register count is below the arch maximum."""
    regs = view.profile.launch.registers_per_thread
    if regs <= 0:
        return Skipped("register_increase", "the profile has no registers-per-thread value", missing=True)
    if regs >= view.arch.max_registers_per_thread:
        return Skipped("register_increase",
                       f"already at the architecture's limit of {view.arch.max_registers_per_thread} registers")
    evs = _local_memory_edges(view)
    relax = (f"{view.arch.arch} allows up to {view.arch.max_registers_per_thread}: relax __launch_bounds__ (fewer "
             "minimum blocks per SM) or raise -maxrregcount, and check that the lower occupancy costs less than the "
             "spills.")
    where = _spill_where(view, evs) if evs else ""  # the hint's, and the capped hint's below
    hint = _spill_hint(view, evs, relax, where) if evs else ""
    res = _local_removal(view, "register_increase", evs, hint, spills_only=True)
    if isinstance(res, Advice):
        # The spills' traffic goes with them: the roofline after the fix, not the DRAM/L2 throughput now
        # (which the spills are part of), bounds the gain (code._after_fix_estimate).
        # (only DRAM: the unit that caps register_increase, ranking.UNCHANGED_UNITS)
        got = spill_dram_ratio(view, set(_removed_local(view, spills_only=True)))
        if got is not None:
            res = _after_fix_estimate(view, res, {"dram": got[0]}, False, got[1], units=("dram",))
    if isinstance(res, Advice) and register_capped(view):
        # the register count is exactly a budget that __launch_bounds__/-maxrregcount imposes: lifting the cap is
        # the direct fix, register reuse the alternative
        res.priority = 1
        # one sentence on the cap and where the spills stall, then the fix (the register count said once)
        spills = (f"values spilled to local memory (LDL/STL) stall {where}" if evs
                  else "the kernel spills")
        res.hint = (f"{view.profile.launch.registers_per_thread} registers per thread is exactly the budget of "
                    f"{_budget_ctas(view)} CTAs of {view.profile.launch.threads_per_block} threads per SM (a "
                    f"__launch_bounds__ / -maxrregcount cap), and {spills}. {relax}")
    return res


def _budget_ctas(view: KernelView) -> int:
    lc, arch = view.profile.launch, view.arch
    wpc = -(-lc.threads_per_block // arch.warp_size) if lc.threads_per_block > 0 else 0
    if wpc <= 0 or lc.registers_per_thread <= 0:
        return 0
    per_cta = lc.registers_per_thread * arch.warp_size * wpc
    return arch.registers_per_sm // per_cta if arch.registers_per_sm % per_cta == 0 else 0


def register_capped(view: KernelView) -> bool:
    """Whether the kernel's registers per thread equal a register-file budget for a whole number of CTAs per
    SM (registers_per_sm / (threads × k)): the signature of __launch_bounds__(threads, k) or -maxrregcount."""
    return _budget_ctas(view) >= 1


# ---- strength_reduction ------------------------------------------------------------------------------

def _strength_kind(ins: Instruction | None, div_lines: set[tuple[str, int]], arch: str) -> str | None:
    if ins is None:
        return None
    if ins.loc is not None and (ins.loc.file, ins.loc.line) in div_lines and not cm.is_memory(ins):
        return "integer_division"
    if not cm.is_long_latency_arith(ins, arch):
        return None
    if cm.is_fp64_conversion(ins):
        return "fp64_conversion"
    if is_fp64_seed(ins):
        return "fp64"
    return {"fp64": "fp64", "sfu": "special_function", "conversion": "conversion"}[cm.mem_class(ins)]


_DIVISION_LINES: dict[int, tuple[weakref.ref[Any], set[tuple[str, int]]]] = {}


def _division_lines(view: KernelView) -> set[tuple[str, int]]:
    """:func:`common.division_lines`, computed once per program (it scans every instruction of the program,
    and each kernel of a cubin asks for it)."""
    prog = view.program
    if prog is None:
        return cm.division_lines(view)
    hit = _DIVISION_LINES.get(id(prog))
    if hit is not None and hit[0]() is prog:
        return hit[1]
    if len(_DIVISION_LINES) > 64:
        _DIVISION_LINES.clear()
    out = cm.division_lines(view)
    _DIVISION_LINES[id(prog)] = (weakref.ref(prog), out)
    return out


def strength_edges(view: KernelView) -> list[tuple[EdgeView, str]]:
    """Matched edges of strength reduction with the kind of long-latency def: execution-dependency stalls
    blamed on long-latency arithmetic (conversions, MUFU, FP64, integer division sequences), plus the
    throttle/pipe stalls the long-latency instruction keeps itself (they vanish with it)."""
    div = _division_lines(view)
    arch = view.arch.arch
    kinds: dict[int, str | None] = {}  # id(instruction) -> its kind (edges share defs and uses)

    def kind(ins: Instruction | None) -> str | None:
        key = id(ins)
        if key not in kinds:
            kinds[key] = _strength_kind(ins, div, arch)
        return kinds[key]

    out = []
    # (edges of other classes match neither branch below)
    for e in view.edges_by(gpa_class=(stalls.EXECUTION_DEPENDENCY, stalls.MEMORY_THROTTLE, stalls.PIPE_BUSY)):
        if not e.is_self and _cls(e) == stalls.EXECUTION_DEPENDENCY:
            k = kind(e.def_ins)
        elif e.is_self and _cls(e) in (stalls.MEMORY_THROTTLE, stalls.PIPE_BUSY):
            k = kind(e.use_ins)
        else:
            k = None
        if k is not None:
            out.append((e, k))
    return out


def _division_hint(view: KernelView, locs: set[tuple[str, int]]) -> str:
    """The integer-division part of the strength-reduction hint, by operand width: a 32-bit ``/``/``%`` is the
    I2F.U32.RP / MUFU.RCP / IMAD.HI.U32 sequence, whose multiply-high form is ``__umulhi``; a 64-bit one calls
    nvcc's 64-bit routine (common.division_lines_64), whose multiply-high form is ``__umul64hi`` (64 x 64 -> the
    high 64 bits of the product): a 32-bit reciprocal cannot divide a 64-bit value."""
    wide = cm.division_lines_64(view)
    lines64 = {loc for loc in locs if loc in wide}
    lines32 = locs - lines64
    if any(wide[loc] != "64-bit" for loc in lines64):
        # a line holding only the routine's body (nvcc places it at the kernel's last line) is not a division
        # the user wrote: name the lines that call it
        lines64 = {loc for loc in lines64 if wide[loc] != "64-bit"}
    fix32 = ("if the divisor is a power of two use shifts and masks (x >> s, x & (n - 1)); if it is reused, compute "
             "its fixed-point reciprocal once and use __umulhi")
    parts: list[str] = []
    if lines32:
        parts.append(f"the integer division/modulo by a run-time value at {cm.lines_text(lines32)} compiles to a "
                     "reciprocal and multiply-high sequence (I2F.RP, MUFU.RCP, IMAD.HI and fix-ups): " + fix32)
    if lines64:
        names = sorted({wide[loc] for loc in lines64} - {"64-bit"})
        routine = f"a call of nvcc's {' and '.join(names)}" if names else "nvcc's 64-bit division routine"
        parts.append(f"the 64-bit integer division/modulo by a run-time value at {cm.lines_text(lines64)} compiles to "
                     f"{routine} (I2F.U64.RP, MUFU.RCP and a chain of 64-bit multiply-high fix-ups; the short "
                     "I2F.U32.RP path runs only when both operands fit in 32 bits): if the divisor is a power of two "
                     "use shifts and masks; if it is reused, compute its 64-bit "
                     "fixed-point reciprocal once and use __umul64hi (the 32-bit __umulhi cannot divide a 64-bit "
                     "value); if the operands fit in 32 bits, make them unsigned int and use __umulhi")
    return "; ".join(parts)


def _strength_hint(view: KernelView, matched: list[tuple[EdgeView, str]]) -> str:
    by_kind: dict[str, list[EdgeView]] = defaultdict(list)
    for e, k in matched:
        by_kind[k].append(e)
    # the fix for double literals removes the conversions and the FP64 math they cause: weigh them together, so
    # the part that names the literals comes first when FP64 work is what costs most
    weight = {k: sum(e.stall for e in evs) for k, evs in by_kind.items()}
    family: dict[str, str] = {"fp64_conversion": "fp64", "fp64": "fp64"}
    fam_weight: dict[str, float] = defaultdict(float)
    for k, w in weight.items():
        fam_weight[family.get(str(k), str(k))] += w
    order = sorted(by_kind, key=lambda k: (-fam_weight[family.get(str(k), str(k))], k != "fp64_conversion",
                                           -weight[k]))
    parts: list[str] = []
    explained: set[tuple[str, int]] = set()  # lines whose FP64 work a double literal already explains
    for k in order:
        evs = by_kind[k]
        insns = [e.def_ins or e.use_ins for e in evs]
        # header code (std::pow's wrapper in <cmath>) at the user line that called it
        locs = {(u.file, u.line) for i in insns if i is not None and (u := user_loc(i)) is not None}
        where = cm.lines_text(locs)
        if k == "fp64_conversion":
            lits = []
            for file in sorted({f for f, _ in locs}):
                src = view.source(file)
                if src is None:
                    continue
                try:
                    lits += float_literal_fixes(src, file, {ln for f, ln in locs if f == file})
                except QuickFixError:
                    continue
            if len(lits) == 1:
                q = lits[0]
                explained.add((q.file, q.line))
                parts.append(f"the double literal {q.extra['literal']} at {cm.line_ref(q.file, q.line)} converts "
                             f"every float operand of '{q.extra['operator']}' to double (F2F.F64.F32, FP64 math, "
                             f"F2F.F32.F64): write {q.extra['literal']}f")
            elif lits:
                explained |= {(q.file, q.line) for q in lits}
                names = [q.extra["literal"] for q in lits]
                where = cm.lines_text((q.file, q.line) for q in lits)
                parts.append(f"the double literals {', '.join(names[:-1])} and {names[-1]} at {where} keep the "
                             "float arithmetic in double (F2F.F64.F32, FP64 math, F2F.F32.F64) — fixing only some "
                             f"leaves the conversions: write {', '.join(n + 'f' for n in names[:-1])} and "
                             f"{names[-1]}f")
            else:
                parts.append(f"{where} convert between float and double (F2F): keep the arithmetic in float "
                             "(f-suffixed literals, float math functions such as sqrtf and expf)")
        elif k == "integer_division":
            parts.append(_division_hint(view, locs))
        elif k == "fp64":
            if locs <= explained:
                continue
            parts.append(f"double-precision arithmetic at {where}: use float where the precision allows")
        elif k == "special_function":
            parts.append(f"special-function instructions (MUFU) at {where}: hoist them out of loops or replace "
                         "them by cheaper equivalent arithmetic (multiply by a precomputed reciprocal)")
        else:
            parts.append(f"type conversions at {where}: keep values in one type")
    return "; ".join(parts)


@register("strength_reduction", "Strength reduction", "stall_elimination",
          "Execution-dependency stalls on long-latency arithmetic: float/double conversions, FP64, special "
          "functions and integer division by run-time values.",
          "Use a cheaper equivalent: float literals (0.1f), shifts/masks or precomputed reciprocals for "
          "division, float math instead of double.")
def strength_reduction(view: KernelView) -> Advice | Skipped:
    """GPA Table 2 strength reduction, eq. 2. FP64 work in float code and integer division sequences are
    deleted by the fix (float literals / float math; shifts or a precomputed reciprocal), so M counts every
    sample on those instructions of the matched lines plus the stalls waiting on them; other long-latency
    arithmetic (MUFU, conversions) counts its dependency stalls as GPA does. Where the deleted instructions'
    stalls lead the matched ones (:func:`_deletion_leads`: the hint's first fix is the deletion), the estimate
    is the deletion's alone; otherwise the larger of the two. Where the deleted instructions' samples are mostly
    a saturated pipe's queue (THROTTLED_SHARE), the smaller of the two."""
    if (miss := _needs_binary(view, "strength_reduction")) is not None:
        return miss
    matched = strength_edges(view)
    evs = [e for e, _ in matched]
    if not evs:
        rp = _byte_repack_advice(view)
        return rp if rp is not None else Skipped("strength_reduction", "no stalls on long-latency arithmetic")
    hint = _strength_hint(view, matched)
    removed = _strength_removed(view, matched)
    base = cm.stall_elimination_advice(view, "strength_reduction", evs, hint,
                                       nothing="no stalls on long-latency arithmetic")
    if (pw := _integer_pow_advice(view, base)) is not None:
        return pw
    fm = _fmod_wrap_advice(view, matched)
    if fm is not None and (not isinstance(base, Advice) or fm.estimated_speedup > base.estimated_speedup):
        return fm
    rp = _byte_repack_advice(view)
    if rp is not None and (not isinstance(base, Advice) or rp.estimated_speedup > base.estimated_speedup):
        return rp
    if not removed or not isinstance(base, Advice):
        return base
    res = cm.removal_advice(view, "strength_reduction", removed, hint,
                            "the FP64/conversion and division instructions of the matched lines")
    if not isinstance(res, Advice):
        return base
    # Samples on a saturated pipe's instructions are mostly its queue (throttle stalls): removing the work
    # lets the next bottleneck take over, so the deletion's eq. 2 over-counts there and eq. 2 over the
    # dependents' stalls (GPA) stands -- unless it is the larger, when the deletion's count bounds it.
    evs_r, _ = cm.removal_edges(view, removed)
    on = [e for e in evs_r if cm.ins_key(e.use_fn, e.use_ins) in removed]
    total_on = sum(e.stall for e in on)
    throttled = sum(e.stall for e in on if e.gpa_class in (stalls.MEMORY_THROTTLE, stalls.PIPE_BUSY))
    if total_on <= 0 or throttled / total_on > THROTTLED_SHARE:
        return res if res.estimated_speedup < base.estimated_speedup else base
    if res.estimated_speedup <= base.estimated_speedup and not _deletion_leads(matched, removed):
        return base
    return res


# ---- strength_reduction: byte unpacking and re-packing around IDP --------------------------------------------

#: Integer dot-product opcodes: IDP.4A (four signed/unsigned byte products summed into a 32-bit accumulator) and
#: IDP.2A (two 16-bit x 8-bit products), the instructions behind the ``__dp4a`` / ``__dp2a_lo/hi`` intrinsics
#: (CUDA Math API, "Integer Intrinsics"; PTX ISA, ``dp4a`` / ``dp2a``).
DOT_PRODUCT_OPS = frozenset({"IDP"})
#: Copies a re-packing chain passes values through.
_COPY_OPS = frozenset({"MOV", "IMAD.MOV", "IMAD.MOV.U32"})
#: Immediates that move whole bytes: shifts by a multiple of 8 bits, multiplies by a power of 256.
_BYTE_SHIFTS = frozenset({8, 16, 24})
_BYTE_SCALES = frozenset({0x100, 0x10000, 0x1000000})
_IMMEDIATE = re.compile(r"^-?0x[0-9a-fA-F]+$")


def _immediates(ins: Instruction) -> list[int]:
    """The hexadecimal immediate source operands of ``ins`` (a LOP3's truth table included)."""
    out = []
    for o in ins.operands[1:]:
        if _IMMEDIATE.match(o):
            out.append(int(o, 16) & 0xFFFFFFFF)
    return out


def _byte_mask(v: int) -> bool:
    """Every byte of the 32-bit ``v`` is 0x00 or 0xff (0xff, 0xffff, 0xff00ff, ...): a mask that keeps or clears
    whole bytes."""
    return v != 0 and all(((v >> (8 * k)) & 0xFF) in (0, 0xFF) for k in range(4))


def is_byte_move(ins: Instruction) -> bool:
    """An integer instruction that only moves whole bytes or half-words of its operands: ``PRMT`` (byte
    permute), ``SHF`` by 8, 16 or 24 bits, ``LOP3`` whose immediate operands (besides its truth table) are whole-
    byte masks (``& 0xff``, ``& 0xffff``, or an OR/AND of two registers), ``IMAD.SHL`` by a power of 256, ``SGXT``
    by 8 or 16 bits (sign extension of a byte or half-word), ``I2I`` of a byte or half-word, and register copies.
    These are the instructions of the portable ``(signed char)((a >> 8 * k) & 0xff)`` extraction and of its
    re-packing (CUDA C++ Programming Guide: the SIMD video intrinsics ``__vadd4``/``__byte_perm`` and ``__dp4a``
    operate on the packed bytes directly)."""
    op, base = ins.opcode, ins.base_opcode
    if ins.predicate:
        return False
    if base == "PRMT" or op in _COPY_OPS:
        return True
    imms = _immediates(ins)
    if base == "SHF":
        return bool(imms) and all(v in _BYTE_SHIFTS for v in imms)
    if base == "LOP3":
        masks = imms[:-1] if imms else []  # the last immediate is the truth table
        return bool(imms) and all(_byte_mask(v) for v in masks)
    if op.startswith("IMAD.SHL"):
        return bool(imms) and all(v in _BYTE_SCALES for v in imms)
    if base == "SGXT":
        return bool(imms) and all(v in (8, 16) for v in imms)
    if base == "I2I":
        return any(t in op.split(".") for t in ("S8", "U8", "S16", "U16"))
    return False


def _register_operand(op: str) -> str | None:
    """The general register an operand names (``R23``, ``R23.reuse``, ``-R4`` -> ``R23``/``R4``), else None."""
    tok = op.lstrip("-|~!").split(".", 1)[0]
    return tok if tok.startswith("R") and tok[1:].isdigit() else None


def dot_product_repacking(pf: ProgramFunction) -> dict[int, frozenset[int]]:
    """The byte unpacking and re-packing that only feeds ``pf``'s integer dot products: IDP offset -> offsets of
    the byte-move instructions (:func:`is_byte_move`) that build its two packed operands and serve nothing else.

    Backward from each IDP's A and B operands through their reaching definitions in the IDP's basic block, every
    definition that is a byte move joins the chain and its own register sources are followed; any other
    definition (a load, the packed word itself, arithmetic) ends it. A chain instruction is kept only while every
    reader of its result, up to the next write of that register in the block, is another chain instruction or an
    IDP, and the result is overwritten before the block ends (a value live beyond the block may serve other code);
    the check repeats until nothing more drops. What stays is the work ``__dp4a(a, b, c)`` on the packed words
    removes: nvcc recognises the byte-wise ``sum of (signed char)(a >> 8k) * (signed char)(b >> 8k)`` as an IDP.4A
    but keeps the extraction and re-packing of both operands (holdout12 ``dp4a_embed_search``, nvcc 13.0: 512
    PRMT, 386 SHF, 386 LOP3 and 159 IMAD per 64 IDP.4A, the fix's __dp4a none). Block-local and register-level:
    chains across blocks are not followed (fewer instructions counted, never more)."""

    def make() -> dict[int, frozenset[int]]:
        from warpwise.analysis.blame.slice import FunctionIndex

        idps = [k for k, i in enumerate(pf.instructions) if i.base_opcode in DOT_PRODUCT_OPS and len(i.operands) >= 4]
        if not idps:
            return {}
        fx = pf.memo("function_index", lambda: FunctionIndex(pf))
        chain: dict[int, set[int]] = {}
        for j in idps:
            ins = fx.ins[j]
            got: set[int] = set()
            work = [(j, r) for r in (_register_operand(o) for o in ins.operands[1:3]) if r is not None]
            seen: set[tuple[int, str]] = set()
            while work:
                end, reg = work.pop()
                if (end, reg) in seen:
                    continue
                seen.add((end, reg))
                found = fx.defs_before(fx.block[j], end, reg)
                if not found:
                    continue
                k = found[0]
                d = fx.ins[k]
                if fx.du[k].clobbers_all or not is_byte_move(d) or k in got:
                    continue
                got.add(k)
                work += [(k, r) for r in fx.du[k].reg_reads if r.startswith("R") and r[1:].isdigit()]
            chain[j] = got
        members = set().union(*chain.values())
        consumers = set(idps)
        changed = True
        while changed:
            changed = False
            for k in sorted(members):
                b, e = fx.block[k], fx.end[fx.block[k]]
                ok = True
                for r in fx.du[k].defs:
                    dead = False
                    for m in range(k + 1, e):
                        du = fx.du[m]
                        if r in du.uses and m not in members and m not in consumers:
                            ok = False
                            break
                        if du.defines(r) and du.guard is None:
                            dead = True
                            break
                    if not ok or not dead:
                        ok = False
                        break
                del b
                if not ok:
                    members.discard(k)
                    changed = True
        return {fx.ins[j].offset: frozenset(fx.ins[k].offset for k in got if k in members)
                for j, got in chain.items() if got & members}

    found: dict[int, frozenset[int]] = pf.memo("dot_product_repacking", make)
    return found


#: Executed byte moves per executed dot product below which the operands are taken as packed already: a
#: deliberate ``__byte_perm`` per operand is at most two, while unpacking a word's four bytes and re-packing them
#: takes at least seven (four extractions, three merges) per operand that is not hoisted out of the loop; a
#: warpwise threshold between the two, two per operand.
REPACK_PER_IDP = 4


def _byte_repack_advice(view: KernelView) -> Advice | None:
    """Strength reduction for the byte extraction and re-packing around integer dot products
    (:func:`dot_product_repacking`): the fix, ``__dp4a`` on the packed 32-bit words (CUDA Math API, "Integer
    Intrinsics": ``__dp4a(srcA, srcB, c)`` is the four-way byte dot product with 32-bit accumulate), deletes those
    instructions, so the estimate is GPA eq. 2 over the samples on them plus the stalls waiting on them (as for
    FP64 work, :func:`common.removal_advice`). On an issue-bound kernel these samples are the issue slots the
    byte moves take. Offered only where the executed IDPs are fed by at least REPACK_PER_IDP executed byte moves
    each on average (per-PC ``inst_executed``: a word unpacked and re-packed in the loop, not a permute that lines
    up bytes); None otherwise."""
    prog = view.program
    if prog is None or view.total <= 0:
        return None
    removed: dict[cm.InsKey, float] = {}
    idps: list[cm.InsKey] = []
    lines: set[tuple[str, int]] = set()
    for pf in prog.functions.values():
        for off, chain in dot_product_repacking(pf).items():
            idps.append((pf.name, off))
            for c in chain:
                removed[(pf.name, c)] = 1.0
            i = pf.function.at(off)
            if i is not None and (u := user_loc(i)) is not None:
                lines.add((u.file, u.line))
    if not idps:
        return None
    executed_idp = sum(s.inst_executed for k in idps if (s := view.sample_at(*k)) is not None)
    executed_moves = sum(s.inst_executed for k in removed if (s := view.sample_at(*k)) is not None)
    per = executed_moves / executed_idp if executed_idp > 0 else len(removed) / len(idps)
    if per < REPACK_PER_IDP:
        return None
    hint = (f"the integer dot products at {cm.lines_text(lines)} compile to IDP.4A, but their operands are unpacked "
            f"byte by byte and re-packed first ({per:.0f} byte-move instructions, PRMT/SHF/LOP3, per IDP.4A): "
            "call __dp4a(a, b, acc) on the packed 32-bit words (signed char x4, or unsigned with the unsigned "
            "overload), which is one IDP.4A with no extraction; for other byte-wise SIMD work on packed words use "
            "__vadd4/__vsub4/__byte_perm")
    res = cm.removal_advice(view, "strength_reduction", removed, hint,
                            "the byte extraction and re-packing instructions feeding IDP.4A",
                            nothing="no samples on the byte re-packing around the dot products")
    if not isinstance(res, Advice):
        return None
    res.params["byte_repack"] = 1
    res.params["byte_moves_per_idp"] = per
    return res


#: Warp instructions per call of the floor-based wrap that replaces an exact fmodf of a phase kept in turns:
#: the add of the step, FRND.FLOOR and the subtraction (``p += s; p -= floorf(p)``; holdout8 synth_fmodf's fix).
FLOOR_WRAP_OPS = 3
#: Of those, the ones on the SFU/XU pipe: FRND (Nsight Compute's XU pipe runs the special functions and the
#: int/float conversions and roundings; CUDA C++ Programming Guide, 'Arithmetic Instructions': conversions at
#: 16 results per clock per SM on compute capability 9.0, as MUFU).
FLOOR_WRAP_SFU_OPS = 1
#: Convergence-barrier opcodes: issued once per diverged part of a warp, so their count is no call count.
_CONVERGENCE_OPS = frozenset({"BSSY", "BSYNC", "WARPSYNC", "BMOV"})
#: Base opcodes executed by the SFU/XU pipe with MUFU (the conversions and roundings; see FLOOR_WRAP_SFU_OPS).
XU_OPS = frozenset({"MUFU", "FRND", "F2I", "I2F", "F2F"})


def _fmod_wrap_advice(view: KernelView, matched: list[tuple[EdgeView, str]]) -> Advice | None:
    """Strength reduction of an exact ``fmodf``/``remainderf`` inlined at a user line (:func:`exact_fmod_sites`):
    the routine is a long-division loop on the exponent difference with FRND.TRUNC and fix-up branches, which
    -use_fast_math does not replace; a periodic wrap (an oscillator phase) needs only ``p -= floorf(p)`` with the
    phase kept in turns. Estimated by the issue/SFU roofline after the fix (:func:`_issue_sfu_roof`): the
    launch's warp instructions minus every non-memory instruction of the fmodf lines (per-PC ``inst_executed``),
    plus FLOOR_WRAP_OPS per call (calls: the sites on the line x the line's most-executed arithmetic
    instruction, the always-run entry of each inlined call; branches and convergence barriers, which issue once
    per diverged part, are not counted there), with the kept MUFU/conversion (XU) work plus FLOOR_WRAP_SFU_OPS per
    call on the SFU pipe. The roofline is the estimate where the launch is issue-bound, else it caps eq. 2 over
    the removed instructions. None without fmodf lines, their samples, or the launch's cycle count."""
    prog, lc = view.program, view.profile.launch
    if prog is None or lc.elapsed_cycles <= 0 or view.sm_count <= 0:
        return None
    sites = exact_fmod_sites(prog)
    if not sites:
        return None
    issued = xu = removed = 0.0
    most: dict[tuple[str, int], float] = defaultdict(float)
    keys: dict[cm.InsKey, float] = {}
    for (name, off), smp in view.profile.pcs.items():
        pf = view.resolve(name, off)
        ins = pf.function.at(off) if pf is not None else None
        n = float(smp.inst_executed)
        if pf is None or ins is None or n <= 0:
            continue
        issued += n
        loc = (ins.loc.file, ins.loc.line) if ins.loc is not None else None
        if loc in sites and is_user_function(pf.name) and not cm.is_memory(ins):
            removed += n
            keys[(pf.name, off)] = 1.0
            if ins.base_opcode not in cm.BRANCH_OPS and ins.base_opcode not in _CONVERGENCE_OPS:
                # a divergent region's reconvergence (BSYNC) issues once per diverged part: not an entry
                most[loc] = max(most[loc], n)
        elif ins.base_opcode in XU_OPS:
            xu += n
    calls = sum(sites[loc] * n for loc, n in most.items())
    if issued <= 0 or removed <= 0 or calls <= 0:
        return None
    added = FLOOR_WRAP_OPS * calls
    roof, c_issue, c_sfu, issue_bound = _issue_sfu_roof(view, issued - removed + added,
                                                        xu + FLOOR_WRAP_SFU_OPS * calls)
    where = cm.lines_text(most)
    hint = (f"the exact fmodf at {where} is a remainder loop on the exponent difference (FRND.TRUNC, compares "
            "and fix-up branches; --use_fast_math keeps it): for a periodic wrap such as a phase, keep the value "
            "in periods (turns) and wrap it with p -= floorf(p), scaling by the period where it is used")
    res = cm.removal_advice(view, "strength_reduction", keys, hint, "the instructions of the exact fmodf lines")
    if not isinstance(res, Advice):
        return None
    s = issue_bound_speedup(view, issued, res.estimated_speedup, roof, c_issue, c_sfu) if issue_bound else \
        min(res.estimated_speedup, roof)
    inputs = {**res.estimate.inputs, "C": lc.elapsed_cycles, "I": issued,
              "I_removed": removed, "I_added": added, "calls": calls, "N_sfu": xu + FLOOR_WRAP_SFU_OPS * calls,
              "C_issue": c_issue, "C_sfu": c_sfu}
    pipes = ("C/max(C_issue, C_sfu), C_issue = (I - I_removed + I_added)/(SMs x 4), C_sfu = 32 N_sfu/(SMs x 16), "
             f"I_added = {FLOOR_WRAP_OPS} x calls, N_sfu = MUFU and conversions kept + calls (FRND.FLOOR)")
    if issue_bound:
        res.estimate = Estimate(s, f"max(I/(SMs x 4)/max(C_issue, C_sfu); min({res.estimate.formula}; {pipes})) "
                                "(the SM is the busiest unit, at >= 60% of peak: the time follows issue and SFU "
                                "work, between the work's own scaling and the roofline)", inputs,
                                "issue/SFU roofline after the fix")
    else:
        res.estimate = Estimate(s, f"min({res.estimate.formula}; {pipes})", inputs,
                                f"{res.estimate.equation}, issue/SFU roofline after the fix")
    res.upper_bound = False
    return res


def _deletion_leads(matched: list[tuple[EdgeView, str]], removed: dict[cm.InsKey, float]) -> bool:
    """Whether the matched stalls on instructions the fix deletes (``removed``: FP64 work and conversions of the
    float statements, division sequences) outweigh those on the other long-latency arithmetic (float special
    functions: MUFU of sqrtf/expf/logf, other conversions). Then the hint leads with that fix (its parts are
    ordered by weight) and the estimate is what that fix removes (eq. 2 over the deleted instructions): GPA's
    eq. 2 over every matched stall would also count the MUFU latency of float math the literal fix leaves."""
    deleted = other = 0.0
    for e, _ in matched:
        if cm.ins_key(e.use_fn, e.use_ins) in removed or cm.ins_key(e.def_fn, e.def_ins) in removed:
            deleted += e.stall
        else:
            other += e.stall
    return deleted >= other


#: ``pow(x, n)`` / ``powf(x, n.0f)`` / ``std::pow`` with a small integral literal exponent: the general routine
#: (logarithm, exponential, special cases) where a few multiplications do; "for small integer powers (e.g., x²
#: or x³), explicit multiplication is almost certainly faster than the use of general exponentiation routines
#: such as pow()" (CUDA C++ Best Practices Guide, "Math Libraries").
_INTEGER_POW = re.compile(r"\b(?:std::)?powf?\s*\(\s*(?:[^(),;]|\([^()]*\))+,\s*\+?([0-9]{1,2})(?:\.0*)?[fF]?\s*\)")
#: Largest exponent the integer-power advice names (x^16 is four squarings).
MAX_INTEGER_POW = 16


def _integer_pow_lines(view: KernelView) -> dict[tuple[str, int], list[int]]:
    """(file, line) -> exponents of the integer-power ``pow`` calls on the user source lines the kernel's
    samples touch."""
    lines: set[tuple[str, int]] = set()
    for e in view.edges:
        ins = e.use_ins
        if ins is not None and ins.loc is not None and e.use_fn is not None and is_user_function(e.use_fn.name):
            lines.add((ins.loc.file, ins.loc.line))
    out: dict[tuple[str, int], list[int]] = {}
    for file in sorted({f for f, _ in lines}):
        src = view.source(file)
        if src is None:
            continue
        text = src.splitlines()
        for f, ln in lines:
            if f != file or not 0 < ln <= len(text):
                continue
            exps = [int(m.group(1)) for m in _INTEGER_POW.finditer(text[ln - 1])]
            exps = [n for n in exps if 2 <= n <= MAX_INTEGER_POW]
            if exps:
                out[(f, ln)] = exps
    return out


def _integer_pow_advice(view: KernelView, base: Advice | Skipped) -> Advice | None:
    """Strength reduction of ``pow`` with a small integral exponent (_INTEGER_POW) into multiplications: eq. 2 over
    the arithmetic of those lines — the few multiplications that remain are a small part of the general routine's
    tens of instructions, so this is an expected value, slightly high; None when no hot line has one or the
    estimate does not beat ``base``."""
    lines = _integer_pow_lines(view)
    if not lines:
        return None
    removed = {(name, i.offset): 1.0 for name, i in _instructions_on(view, set(lines))
               if not cm.is_memory(i) and i.base_opcode not in cm.BRANCH_OPS}
    exps = sorted({n for ns in lines.values() for n in ns})
    hint = (f"pow with the integer exponent{'s' if len(exps) > 1 else ''} {', '.join(map(str, exps))} at "
            f"{cm.lines_text(lines)} runs the general routine (logarithm, exponential, special cases): multiply "
            "instead (x2 = x*x, x4 = x2*x2, x6 = x4*x2, ...; CUDA C++ Best Practices Guide, 'Math Libraries')")
    res = cm.removal_advice(view, "strength_reduction", removed, hint,
                            "the arithmetic of the lines with an integer-power pow (a few multiplications remain)",
                            nothing="no samples on the integer-power pow lines")
    if not isinstance(res, Advice) or (isinstance(base, Advice) and base.estimated_speedup >= res.estimated_speedup):
        return None
    return res


#: Above this share of throttle stalls among the samples on the instructions a fix removes, those samples are a
#: saturated pipe's queue rather than the instructions' own cost (a warpwise threshold).
THROTTLED_SHARE = 0.4


def _strength_removed(view: KernelView, matched: list[tuple[EdgeView, str]]) -> dict[cm.InsKey, float]:
    """Instructions the strength-reduction fix deletes: FP64 arithmetic and float<->double conversions on the
    lines of FP64 matches, and the non-memory instructions of integer division lines."""
    if view.program is None:
        return {}
    fp64_lines: set[tuple[str, int]] = set()
    div_lines: set[tuple[str, int]] = set()
    for e, k in matched:
        ins = e.def_ins or e.use_ins
        if ins is None or ins.loc is None:
            continue
        if k in ("fp64", "fp64_conversion"):
            fp64_lines.add((ins.loc.file, ins.loc.line))
        elif k == "integer_division":
            div_lines.add((ins.loc.file, ins.loc.line))
    out: dict[cm.InsKey, float] = {}
    on_div: dict[str, list[Instruction]] = defaultdict(list)  # function -> its division-line instructions
    for name, i in _instructions_on(view, fp64_lines | div_lines):
        assert i.loc is not None
        where = (i.loc.file, i.loc.line)
        fp64 = i.base_opcode in FP64_OPS or ".F64" in i.opcode or is_fp64_seed(i)
        if where in fp64_lines and fp64:
            out[(name, i.offset)] = 1.0
        if where in div_lines:
            on_div[name].append(i)
    for name, ins in on_div.items():
        seq = division_sequence(ins)
        kept = fixed_point_kept_share(seq)
        for i in seq:
            out[(name, i.offset)] = 1.0 - kept
    return out


def is_multiply_high(i: Instruction) -> bool:
    """``IMAD.HI`` (the high 32 bits of a 32x32-bit product)."""
    return i.base_opcode == "IMAD" and ".HI" in i.opcode


def _reused_quotients(seq: list[Instruction]) -> tuple[int, int]:
    """(quotients, multiply-highs) of a function's 32-bit division sequences ``seq`` (:func:`division_sequence`):
    quotients = multiply-highs − seeds (I2F.U32.RP), 0 unless each reciprocal serves more than one quotient
    (quotients > seeds > 0). 64-bit seeds (I2F.U64.RP, a called routine) are not counted."""
    seeds = sum(1 for i in seq if cm.is_integer_division_seed(i) and ".U64" not in i.opcode and ".S64" not in i.opcode)
    highs = sum(1 for i in seq if is_multiply_high(i))
    quotients = highs - seeds
    return (quotients, highs) if seeds > 0 and quotients > seeds else (0, highs)


def reused_reciprocal_share(seq: list[Instruction]) -> float:
    """The share of the multiply-highs of a function's division sequences (``seq``, :func:`division_sequence`)
    that are quotients of a reused reciprocal, 0..1: (multiply-highs − seeds) / multiply-highs.

    nvcc's 32-bit unsigned division by a run-time divisor computes the divisor's reciprocal once (seed
    I2F.U32.RP, MUFU.RCP, F2I, and one IMAD.HI refining it), then per quotient one IMAD.HI by the dividend
    and its corrections (SASS of nvcc 13, sm_90). With more quotient multiply-highs than seeds (I2F.U32.RP),
    the compiler already reuses each reciprocal for several operations: the hint's fix for a reused divisor is
    a host-precomputed reciprocal, q = __umulhi(n, m) >> s (Granlund & Montgomery, "Division by invariant
    integers using multiplication", PLDI 1994). With at most one quotient per seed (a divisor used once) the
    division goes altogether (a power-of-two shift, or index math without it): 0. 64-bit sequences
    (I2F.U64.RP, a called routine) are left out: 0. A positive share is the reuse test of
    :func:`fixed_point_kept_share`, which sets what the fix keeps (FIXED_POINT_QUOTIENT_OPS per quotient)."""
    quotients, highs = _reused_quotients(seq)
    return quotients / highs if quotients else 0.0


#: Instructions per quotient of division by a run-time invariant divisor through a precomputed fixed-point
#: reciprocal, for every 32-bit unsigned dividend: t1 = MULUH(m', n); q = SRL(t1 + SRL(n - t1, sh1), sh2)
#: (Granlund & Montgomery, "Division by invariant integers using multiplication", PLDI 1994, Figure 4.1: one
#: multiply-high and four adds/shifts). nvcc 13 (sm_90) builds the 33-bit form of the same quotient,
#: (__umulhi(n, m) + n) >> s, as IMAD.HI with a carry, IADD3.X and SHF.R.U64, and a modulo's remainder
#: n - q * d as a negate and an IMAD: five per modulo as well (bench/advice/pairs/periodic_divmod/fix.cu).
FIXED_POINT_QUOTIENT_OPS = 5


def fixed_point_kept_share(seq: list[Instruction]) -> float:
    """The share of a function's division sequences (``seq``, :func:`division_sequence`) that the hint's fix for a
    reused divisor keeps, 0..1: FIXED_POINT_QUOTIENT_OPS instructions per quotient of the
    (quotient multiply-highs − seeds) quotients (:func:`_reused_quotients`) over the sequences'
    instructions; 0 where a divisor is used once (the division goes altogether).

    The share is taken of the whole sequence, not of the instructions that look alike in both forms: nvcc's
    sequence is straight-line integer code issued once per execution, and where warps wait to issue
    (not_selected, dispatch and math-pipe throttle stalls lead periodic_divmod's sequence) a sample on one of its
    instructions measures where a warp waited for an issue slot, not what that instruction costs (its ISETPs
    hold 359 samples, a multiply-high 3): the sequence costs its issue slots, and a replacement of c of its n
    instructions keeps c/n of its samples (GPA eq. 2 over the rest)."""
    quotients, _ = _reused_quotients(seq)
    return min(1.0, FIXED_POINT_QUOTIENT_OPS * quotients / len(seq)) if quotients else 0.0


def is_fp64_seed(i: Instruction) -> bool:
    """``MUFU.RCP64H`` / ``MUFU.RSQ64H``: the seed of a double-precision division, reciprocal or square root (an
    approximation of the high word that DFMA Newton steps refine): FP64 work, which a float statement's fix
    replaces with the FP32 form along with the DFMAs (NVIDIA CUDA Binary Utilities, "Instruction Set Reference":
    MUFU.RCP64H "reciprocal approximation, high 32 bits of a double")."""
    return i.base_opcode == "MUFU" and "64H" in i.opcode


_REGISTER = re.compile(r"(?<![\w.])(U?R\d+)\b")
_PREDICATE = re.compile(r"(?<![\w.])(U?P[0-6])\b")


def division_sequence(ins: list[Instruction]) -> list[Instruction]:
    """The instructions of nvcc's integer division/modulo sequences among ``ins`` (one function's instructions
    of a division line, in program order): each reciprocal seed (I2F.RP, common.is_integer_division_seed) and
    the integer arithmetic that reads its result, directly or through the sequence (MUFU.RCP, F2I, the
    multiply-high by the dividend, the remainder and its fix-ups, predicated writes of the result included),
    followed register by register. The line's
    other work — what the program does with the quotient (a compare, the body of an ``if`` it guards, the
    address math of a load) — stays: the fix replaces the division, not its uses. A guard predicate is not data
    (an instruction predicated on the remainder's test is the ``if`` body), memory accesses and branches end
    the walk."""
    seq: set[int] = set()  # positions in ins
    tainted: set[str] = set()
    divisors: set[str] = set()
    for k, i in enumerate(ins):
        dests = _written_registers(i)
        if cm.is_integer_division_seed(i):
            seq.add(k)
            tainted |= dests
            divisors |= _read_registers(i)
            continue
        if not tainted or cm.is_memory(i) or i.base_opcode in cm.BRANCH_OPS:
            tainted -= dests  # (a load into a register of the sequence ends its value there)
            continue
        reads = _read_registers(i)
        if reads & tainted or (i.predicate and dests & tainted and reads <= divisors):
            # (a predicated write of the result from the divisor alone is one of its fix-ups, ~0 for a zero
            # divisor: the lanes it skips keep the sequence's value)
            seq.add(k)
            tainted |= dests
        else:
            tainted -= dests
    if not seq:
        return []
    # The operands the sequence prepares from the divisor alone (its negation, its zero test, a zero addend) are
    # part of it too: between its first seed and its last instruction, what reads only the divisors and writes
    # a register a later sequence instruction reads.
    needed: set[str] = set()
    for k in range(max(seq), min(seq) - 1, -1):
        i = ins[k]
        if k not in seq and not cm.is_memory(i) and i.base_opcode not in cm.BRANCH_OPS and \
                _written_registers(i) & needed and _read_registers(i) <= divisors:
            seq.add(k)
        if k in seq:
            needed |= _read_registers(i) | ({i.predicate.lstrip("@!")} if i.predicate else set())
    return [ins[k] for k in sorted(seq)]


def _read_registers(i: Instruction) -> frozenset[str]:
    """Registers (R/UR) and predicates among the source operands of ``i`` (all operands after the first): the
    union of :func:`_operand_registers` of those operands."""
    ops = i.operands
    if len(ops) < 2:
        return frozenset()
    out = _operand_registers(ops[1])
    for op in ops[2:]:
        out = out | _operand_registers(op)
    return out


@functools.lru_cache(maxsize=65536)  # operand strings repeat across instructions; the block scans ask per edge
def _operand_registers(op: str) -> frozenset[str]:
    """Registers (R/UR, :data:`_REGISTER`) and predicates (:data:`_PREDICATE`) named in one operand string."""
    return frozenset(_REGISTER.findall(op)) | frozenset(_PREDICATE.findall(op))


def _written_registers(i: Instruction) -> frozenset[str]:
    """Registers (R/UR) and predicates the instruction writes: its first operand, widened for 64-bit results
    (common.dest_registers), and a predicate or uniform register named there (:func:`_written_of`)."""
    if not i.operands:
        return frozenset()
    return _written_of(i.opcode, i.operands[0])


@functools.lru_cache(maxsize=65536)  # (opcode, first operand) pairs repeat across instructions; asked per scanned one
def _written_of(opcode: str, first_op: str) -> frozenset[str]:
    """:func:`_written_registers` of an instruction with ``opcode`` and first operand ``first_op``."""
    out = set(cm.dest_registers_of(opcode, first_op))
    first = first_op.split()[0].partition(".")[0]
    if first.startswith(("P", "UP", "UR")) and first not in ("PT", "UPT"):
        out.add(first)
    return frozenset(out)


def _instructions_on(view: KernelView, lines: set[tuple[str, int]]) -> list[tuple[str, Instruction]]:
    """(function name, instruction) of the instructions on one of ``lines`` (file, line) in the functions the
    view's blame edges touch, in program order (functions, then addresses), from a per-program (function,
    line) index. The callers only look the result up by those edges' instructions, so other functions'
    instructions (a template's line is in every instantiation: all kernels of a cubin) change nothing; scanning
    them per kernel was quadratic in the kernel count."""
    prog = view.program
    assert prog is not None

    def index() -> dict[tuple[str, str, int], list[tuple[int, Instruction]]]:
        by: dict[tuple[str, str, int], list[tuple[int, Instruction]]] = {}
        seq = 0
        for pf in prog.functions.values():
            for i in pf.instructions:
                if i.loc is not None:
                    by.setdefault((pf.name, i.loc.file, i.loc.line), []).append((seq, i))
                seq += 1
        return by

    def functions() -> set[str]:
        return {f.name for e in view.edges for f in (e.use_fn, e.def_fn) if f is not None}

    by = prog.memo("instructions_by_function_line", index)
    hits = [(k, name, i) for name in view.memo("edge_functions", functions) for ln in lines
            for k, i in by.get((name, *ln), ())]
    hits.sort(key=lambda x: x[0])
    return [(name, i) for _, name, i in hits]


# ---- function_split / loop_no_unroll / kernel_merge ----------------------------------------------------

def _icache_edges(view: KernelView) -> list[EdgeView]:
    return view.edges_by(reason=cm.ICACHE_REASONS)


@register("function_split", "Function split", "stall_elimination",
          "Instruction-cache misses (no_instructions) inside code inlined from device functions.",
          "Split a large inlined function or keep its rarely taken paths out of line (__noinline__ on cold "
          "helpers) so the hot path fits the instruction cache.")
def function_split(view: KernelView) -> Advice | Skipped:
    """GPA Table 2 function split: instruction-fetch stalls in inlined code, eq. 2."""
    if view.program is None:
        return Skipped("function_split", "needs the binary's inline information (no cubin given)", missing=True)
    # copies of a fully unrolled loop body are loop_no_unroll's (the fix is the unroll factor, not a split)
    evs = [e for e in _icache_edges(view) if e.use_ins is not None and e.use_ins.inline_chain
           and cm.fully_unrolled_line(e.use_fn, e.use_ins) is None]
    hint = ""
    if evs:
        calls = {(e.use_ins.inline_chain[0].file, e.use_ins.inline_chain[0].line) for e in evs if e.use_ins}
        hint = (f"instruction-cache misses in code inlined at {cm.lines_text(calls)}: the inlined body is large; "
                "split it so the hot path stays small, or mark cold helpers __noinline__")
    return cm.stall_elimination_advice(view, "function_split", evs, hint,
                                       nothing="no instruction-fetch stalls in inlined code")


#: Least share of all samples (T) that instruction-fetch stalls in unrolled loops must hold before
#: loop_no_unroll advises anything. GPA's released GPULoopNoUnrollOptimizer has no such threshold; warpwise
#: sets 1% (eq. 2 then gives at least 1.0101x) so a few cold-start misses never suggest rolling a loop up.
ICACHE_MIN_SHARE = 0.01


@register("loop_no_unroll", "Loop no-unroll", "stall_elimination",
          "Instruction-cache misses (no_instructions) inside loops the compiler unrolled: a loop unrolled too "
          "far for the instruction cache.",
          "Lower the unroll factor (#pragma unroll 2) or unroll by hand only what is needed.")
def loop_no_unroll(view: KernelView) -> Advice | Skipped:
    """GPA released loop no-unroll: instruction-fetch stalls in loops, eq. 2. warpwise matches only loops
    the binary shows unrolled (:func:`common.unrolled_loop`: repeated body copies, or the remainder loop of
    such a loop) and only when those stalls reach ICACHE_MIN_SHARE of T; stalls where a call returns
    (:func:`common.call_refetch`) are the call's, not the unrolled body's."""
    if view.program is None:
        return Skipped("loop_no_unroll", "needs the loop structure of the binary (no cubin given)", missing=True)
    icache = [e for e in _icache_edges(view) if e.use_fn is not None]
    in_loops = [e for e in icache if e.use_loop is not None]
    if not in_loops:
        return _fully_unrolled(view, icache) or Skipped("loop_no_unroll", "no instruction-fetch stalls in loops")
    # a call's return point (and a callee's entry) waits for the fetch of the jump's target: inlining's, not the
    # cache capacity an unrolled body overflows (common.call_refetch)
    in_loops = [e for e in in_loops if not cm.call_refetch(e.use_fn, e.use_ins, view.program)]
    if not in_loops:
        return Skipped("loop_no_unroll", "the instruction-fetch stalls in loops are at call return points "
                                         "(the fetch after CALL/RET: see function_inlining)")
    evs = [e for e in in_loops if e.use_fn is not None and e.use_loop is not None
           and cm.unrolled_loop(e.use_fn, e.use_loop) is not None]
    if not evs:
        return _fully_unrolled(view, icache) or \
            Skipped("loop_no_unroll", "the loops with instruction-fetch stalls are not unrolled in the binary")
    m = sum(e.stall for e in evs if e.gpa_class not in cm.NOT_STALLS)
    if view.total <= 0 or m < ICACHE_MIN_SHARE * view.total:
        return Skipped("loop_no_unroll", f"instruction-fetch stalls in unrolled loops are {m:.0f} samples "
                                         f"({m / view.total if view.total else 0:.1%} of all), below the "
                                         f"{ICACHE_MIN_SHARE:.0%} minimum")
    loops: dict[str, int] = {}
    for e in evs:
        if e.use_fn is not None and e.use_loop is not None:
            main = cm.unrolled_loop(e.use_fn, e.use_loop)
            if main is not None:
                loops[view.loop_scope(e.use_fn, main).name] = cm.unroll_factor(e.use_fn, main)
    what = ", ".join(f"the {n} (unrolled about {f}x)" for n, f in sorted(loops.items()))
    hint = (f"instruction-cache misses in {what}: the unrolled body does not fit the instruction cache; lower "
            "its unroll factor (#pragma unroll 2) or unroll by hand only what is needed")
    return cm.stall_elimination_advice(view, "loop_no_unroll", evs, hint,
                                       nothing="no instruction-fetch stalls in unrolled loops")


def _fully_unrolled(view: KernelView, icache: list[EdgeView]) -> Advice | None:
    """loop_no_unroll for a loop the compiler unrolled completely (no back edge left in the SASS): the
    instruction-fetch stalls (``icache``, edges with a function) on copies of one source line's instructions
    (:func:`common.fully_unrolled_line`), outside any loop the binary shows unrolled (those are the caller's),
    when they reach ICACHE_MIN_SHARE of T; eq. 2 over them (the SM roofline caps it: ranking.UNCHANGED_UNITS).
    None when there are none or too few."""
    assert view.program is not None
    evs: list[EdgeView] = []
    lines: dict[tuple[str, int, int], int] = {}
    for e in icache:
        if e.use_loop is not None and e.use_fn is not None and cm.unrolled_loop(e.use_fn, e.use_loop) is not None:
            continue
        if cm.call_refetch(e.use_fn, e.use_ins, view.program):
            continue
        hit = cm.fully_unrolled_line(e.use_fn, e.use_ins)
        if hit is not None:
            evs.append(e)
            lines[hit[:3]] = max(lines.get(hit[:3], 0), hit[3])
    m = sum(e.stall for e in evs if e.gpa_class not in cm.NOT_STALLS)
    if not evs or view.total <= 0 or m < ICACHE_MIN_SHARE * view.total:
        return None
    # the loop's own lines: the outermost of the repeated frames (a helper it calls repeats with it)
    top = min(d for _, _, d in lines)
    body = {(f, ln): c for (f, ln, d), c in lines.items() if d == top}
    copies = sorted(body.values())[len(body) // 2]
    hint = (f"instruction-cache misses in straight-line copies of the loop body at {cm.lines_text(body)} "
            f"(each line's instructions repeated about {copies} times, no loop left in the binary): the loop is "
            "unrolled completely and its code does not fit the instruction cache; limit the unroll "
            "(#pragma unroll 4, or #pragma unroll 1 before the loop)")
    out = cm.stall_elimination_advice(view, "loop_no_unroll", evs, hint,
                                      nothing="no instruction-fetch stalls in fully unrolled loops")
    return out if isinstance(out, Advice) else None


@register("kernel_merge", "Kernel merge", "stall_elimination",
          "Instruction-fetch stalls of a short kernel launched many times.",
          "Merge the small kernel into its neighbour or loop inside one launch so the code stays cached.")
def kernel_merge(view: KernelView) -> Advice | Skipped:
    """GPA released kernel merge: short (≤ 100 µs), frequent (≥ 10 launches) kernel with ifetch stalls, eq. 2."""
    if view.launches is None:
        return Skipped("kernel_merge", "needs how many times the kernel was launched; the profile holds one launch",
                       missing=True)
    dur = view.profile.launch.duration_ns
    if dur <= 0:
        return Skipped("kernel_merge", "the profile has no kernel duration", missing=True)
    if view.launches < KERNEL_COUNT_LIMIT or dur > KERNEL_TIME_LIMIT_NS:
        return Skipped("kernel_merge", f"{view.launches} launches of {dur / 1000:.1f} us each: not short and frequent")
    evs = _icache_edges(view)
    hint = (f"the kernel runs {view.launches} times for {dur / 1000:.1f} us each and waits on instruction fetch: "
            "merge it with the kernel before or after it, or loop over the work inside one launch")
    return cm.stall_elimination_advice(view, "kernel_merge", evs, hint, nothing="no instruction-fetch stalls")


# ---- fast_math --------------------------------------------------------------------------------------

#: Name fragments of the single-precision routines --use_fast_math replaces (nvcc: -prec-div=false,
#: -prec-sqrt=false, -ftz=true; CUDA C++ Programming Guide, "Intrinsic Functions"): IEEE division,
#: reciprocal and square root slow paths (``__cuda_sm3x_div_rn_noftz_f32_slowpath``,
#: ``__cuda_sm20_sqrt_rn_f32_slowpath``, ``__cuda_sm20_rcp_rn_f32_slowpath``). Double-precision routines
#: (``..._f64``, ``__internal_trig_reduction_slowpathd``) are not touched by the flag.
FAST_MATH_SP = ("_f32",)
#: Opcodes of double-precision work: a math routine doing it is an FP64 routine (fast math cannot help).
FP64_OPS = frozenset({"DADD", "DMUL", "DFMA", "DSETP", "DMNMX"})


def _single_precision_routine(fn: ProgramFunction) -> bool:
    """A compiler-emitted math routine whose precise single-precision path fast math replaces: named ``*_f32*``
    and free of FP64 arithmetic."""
    name = fn.name.rsplit("$", 1)[-1]
    if not any(m in name for m in MATH_ROUTINE_MARKERS) or not any(k in name for k in FAST_MATH_SP):
        return False
    return not any(i.base_opcode in FP64_OPS or ".F64" in i.opcode for i in fn.instructions)


def _is_math_routine(view: KernelView, ev: EdgeView) -> bool:
    """Stalls inside a precise single-precision math routine (see FAST_MATH_SP), or inside single-precision
    code inlined from a CUDA math header (older nvcc keeps those lines); FP64 code never matches."""
    fn = ev.use_fn
    if fn is not None and not fn.is_kernel and any(m in fn.name for m in MATH_ROUTINE_MARKERS):
        if view.program is None:
            return _single_precision_routine(fn)
        return view.program.memo(("single_precision_routine", fn.name), lambda: _single_precision_routine(fn))
    ins = ev.use_ins
    if ins is None or ins.loc is None:
        return False
    if ins.base_opcode in FP64_OPS or ".F64" in ins.opcode:
        return False
    return _is_math_header(ins.loc.file)


def _may_stall_in_math(prog: Program) -> bool:
    """Whether :func:`_is_math_routine` can hold for any edge of ``prog``'s kernels: the program has a non-kernel
    function named like a math routine, or an instruction on a line of a CUDA math header (once per program,
    so programs without either skip the per-edge test)."""
    def make() -> bool:
        return any(not pf.is_kernel and any(m in pf.name for m in MATH_ROUTINE_MARKERS)
                   for pf in prog.functions.values()) or \
            any(_is_math_header(f) for f in {i.loc.file for pf in prog.functions.values() for i in pf.instructions
                                             if i.loc is not None})
    found: bool = prog.memo("may_stall_in_math", make)
    return found


@functools.lru_cache(maxsize=1024)  # pure in the path; asked once per blame edge
def _is_math_header(path: str) -> bool:
    return path.replace("\\", "/").rsplit("/", 1)[-1] in MATH_HEADERS


def _call_lines(view: KernelView, callee: str) -> set[tuple[str, int]]:
    out: set[tuple[str, int]] = set()
    if view.program is None:
        return out
    for pf in view.program.functions.values():
        for cs in pf.calls:
            if cs.callee == callee:
                ins = pf.function.at(cs.offset)
                if ins is not None and ins.loc is not None:
                    out.add((ins.loc.file, ins.loc.line))
    return out


@register("fast_math", "Fast math", "stall_elimination",
          "Stalls inside the CUDA math library's precise routines (e.g. the IEEE division slow path).",
          "Compile with --use_fast_math, or use intrinsics (__fdividef, __expf, __sinf) where precision allows.")
def fast_math(view: KernelView) -> Advice | Skipped:
    """GPA Table 2 fast math: stalls in CUDA math functions, eq. 2."""
    if view.program is None:
        return Skipped("fast_math", "needs the binary's function symbols (no cubin given)", missing=True)
    prog = view.program
    evs = [e for e in view.edges if _is_math_routine(view, e)] if _may_stall_in_math(prog) else []
    if not evs and prog.memo("has_math_routines", lambda: any(
            not pf.is_kernel and any(m in pf.name for m in MATH_ROUTINE_MARKERS) for pf in prog.functions.values())):
        return Skipped("fast_math", "the binary's precise math routines are double precision or cold: "
                                    "--use_fast_math changes only single-precision division, sqrt and "
                                    "transcendentals")
    hint = ""
    names: list[str] = []
    sites: set[tuple[str, int]] = set()
    routine_kinds: set[str] = set()  # slow paths of the out-of-line routines the stalls are in
    if evs:
        names = sorted({e.use_fn.name for e in evs if e.use_fn is not None and not e.use_fn.is_kernel})
        sites = set().union(*(_call_lines(view, n) for n in names)) if names else set()
        what = ", ".join(n.rsplit("$", 1)[-1] for n in names) or "CUDA math header code"
        at = f" called from {cm.lines_text(sites)}" if sites else ""
        # name the fast form of the routines the SASS calls only (a division slow path: not __sinf)
        routine_kinds = {k for n in names if (k := _slow_path_kind(n)) is not None}
        instead = (f"{slow_path_text(routine_kinds)[1]} at that line" if routine_kinds
                   else "the fast intrinsic at that line")
        hint = (f"time goes into the precise math routine {what}{at}: --use_fast_math (or {instead}) replaces "
                "it by hardware approximations that change the results")
    base = cm.stall_elimination_advice(view, "fast_math", evs, hint, nothing="no stalls in CUDA math routines")
    by_line = precise_math_kinds(view)
    lines = set(by_line)
    if not lines:
        return _with_accuracy(base, routine_kinds)
    removed = {(name, i.offset): 1.0 for name, i in _instructions_on(view, lines)
               if not cm.is_memory(i) and i.base_opcode not in cm.BRANCH_OPS}
    where = cm.lines_text(lines)
    # only the slow paths these lines' SASS holds (fresh-user: sin/cos was named in a kernel without any)
    line_kinds = frozenset().union(*by_line.values())
    has, fast_forms = slow_path_text(line_kinds)
    slow = ""
    if names and sites and sites <= lines:
        # the out-of-line slow path is called from these very lines: one sentence, the routine named in it
        slow = f", {', '.join(n.rsplit('$', 1)[-1] for n in names)} called out of line"
    inline_hint = (f"precise single-precision math is inlined at {where} ({has}{slow}): --use_fast_math, or "
                   f"{fast_forms} at {'that line' if len(lines) == 1 else 'those lines'}, replaces it by a few "
                   "hardware approximations (MUFU) that change the results")
    if isinstance(base, Advice) and base.hint and not slow:
        inline_hint = f"{base.hint}; {inline_hint}"
    res = cm.removal_advice(view, "fast_math", removed, inline_hint,
                            "the arithmetic of the lines holding precise math (upper bound: part of it remains)")
    kinds = routine_kinds | line_kinds
    if not isinstance(res, Advice) or (isinstance(base, Advice) and base.estimated_speedup >= res.estimated_speedup):
        return _with_accuracy(base, kinds)
    res.upper_bound = True
    return _with_accuracy(_sfu_roofline(view, res, lines), kinds)


def _with_accuracy(res: Advice | Skipped, kinds: set[str] | frozenset[str]) -> Advice | Skipped:
    """``res`` with :func:`fast_math_accuracy` appended to its hint (an Advice; a Skipped unchanged)."""
    if isinstance(res, Advice):
        res.hint = f"{res.hint}; {fast_math_accuracy(kinds)}" if res.hint else fast_math_accuracy(kinds)
    return res


def _sfu_roofline(view: KernelView, res: Advice, lines: set[tuple[str, int]]) -> Advice:
    """``res`` (eq. 2 over the arithmetic of the precise-math ``lines``, an upper bound) with the issue and SFU
    rooflines of the code after --use_fast_math.

    After the flag each precise routine is its hardware approximation: one MUFU (and a multiply or two) per
    division, reciprocal, square root, exp/log (nvcc documents ``__fdividef``, ``__expf``, ``__sinf``… as
    MUFU-based; CUDA C++ Programming Guide, "Intrinsic Functions"). Counted from the launch's per-instruction
    ``inst_executed`` (warp level): the MUFUs of user code stay, each sin/cos reduction (its 2/pi multiply)
    becomes one MUFU.SIN/COS, the other arithmetic of the precise lines and the slow-path routines go, and one
    multiply per MUFU of those lines is added. The launch then needs at least
    C_issue = I_after / (SMs × schedulers) cycles (one instruction per scheduler per cycle) and
    C_sfu = 32 × N_mufu / (SMs × R_sfu) cycles (R_sfu: arch facts, 16 results per clock per SM), so
    S ≤ C / max(C_issue, C_sfu) with C the launch's elapsed cycles (the roofline argument, Williams et al. 2009,
    per pipe). On a line whose only precise math is IEEE division and expf, only those sequences go
    (DIVISION_SEQUENCE per FCHK, EXP_SEQUENCE per expf, SQRT_SEQUENCE per sqrtf: a line's asinf/atan2f, which
    have no fast form, stay); on a line with sin/cos or another slow path all its arithmetic but the MUFUs is
    counted as removed (an upper bound). For a kernel whose time follows its issue work (the SM its busiest
    unit, at or above roofline.THROUGHPUT_FRACTION of its reachable peak) that roofline is the expected
    speedup; otherwise it caps eq. 2.
    ``res`` unchanged when the launch's elapsed cycles or per-instruction counts are unknown."""
    prog, lc = view.program, view.profile.launch
    if prog is None or lc.elapsed_cycles <= 0 or view.sm_count <= 0:
        return res
    # lines whose only precise math is IEEE division: there the flag removes the division's own sequence
    # (FCHK, the Newton-Raphson FFMAs after MUFU.RCP but the one that becomes the quotient's FMUL, the branch
    # to the slow path: DIVISION_SEQUENCE per FCHK), and the line's other arithmetic stays
    other = _precise_non_division_lines(prog)
    issued = kept_mufu = added = removed = 0.0
    for (name, off), smp in view.profile.pcs.items():
        pf = view.resolve(name, off)
        ins = pf.function.at(off) if pf is not None else None
        n = float(smp.inst_executed)
        if ins is None or n <= 0:
            continue
        issued += n
        on_line = ins.loc is not None and (ins.loc.file, ins.loc.line) in lines and is_user_function(pf.name)
        slow = not pf.is_kernel and not is_user_function(pf.name) and _single_precision_routine(pf)
        counted = not on_line or (ins.loc is not None and (ins.loc.file, ins.loc.line) not in other)
        if ins.base_opcode == "MUFU" and not slow:
            kept_mufu += n
            added += 0.0 if counted else n
        elif on_line and pf is not None and off in _trig_reductions(pf):
            kept_mufu += n  # the reduction's multiply becomes the MUFU.SIN/COS of __sinf/__cosf
            removed += n
            added += n
        elif slow:
            removed += n
        elif counted:
            # a line whose precise math is division or expf: only those sequences go
            if ins.base_opcode == "FCHK" and on_line:
                removed += DIVISION_SEQUENCE * n
            elif ins.base_opcode == "FFMA" and is_user_function(pf.name) and \
                    any(_EXPF_LOG2E_LO in op for op in ins.operands):
                removed += EXP_SEQUENCE * n
            elif on_line and ins.base_opcode in ("VIADD", "IADD3") and any(_SQRT_RANGE in op for op in ins.operands):
                removed += SQRT_SEQUENCE * n
        elif not cm.is_memory(ins) and ins.base_opcode not in cm.BRANCH_OPS:
            removed += n
    if issued <= 0 or removed <= 0:
        return res
    roof, c_issue, c_sfu, issue_bound = _issue_sfu_roof(view, issued - removed + added, kept_mufu)
    s = issue_bound_speedup(view, issued, res.estimated_speedup, roof, c_issue, c_sfu) if issue_bound else \
        min(res.estimated_speedup, roof)
    inputs = {**res.estimate.inputs, "C": lc.elapsed_cycles, "I": issued,
              "I_removed": removed, "I_added": added, "N_mufu": kept_mufu, "C_issue": c_issue, "C_sfu": c_sfu}
    pipes = "C/max(C_issue, C_sfu), C_issue = (I - I_removed + I_added)/(SMs x 4), C_sfu = 32 N_mufu/(SMs x 16)"
    if issue_bound:
        res.estimate = Estimate(s, f"max(I/(SMs x 4)/max(C_issue, C_sfu); min({res.estimate.formula}; {pipes})) "
                                "(the SM is the busiest unit, at >= 60% of peak: the time follows issue and SFU "
                                "work, between the work's own scaling and the roofline)", inputs,
                                "issue/SFU roofline after the fix")
        res.upper_bound = False
    else:
        res.estimate = Estimate(s, f"min({res.estimate.formula}; {pipes})", inputs,
                                f"{res.estimate.equation}, issue/SFU roofline after the fix")
    return res


def issue_bound_speedup(view: KernelView, issued: float, eq2: float, roof: float, c_issue: float,
                        c_sfu: float) -> float:
    """The expected speedup of a fix that changes an issue-bound launch's instruction mix: between the work's own
    scaling and the roofline, S = max(P, min(S_eq2, R)).

    ``issued``: the launch's warp instructions now; ``eq2``: GPA eq. 2 over the samples of the instructions the fix
    removes (their issue and their stalls); ``roof``: R = C / max(C_issue, C_sfu) (:func:`_issue_sfu_roof`);
    ``c_issue``/``c_sfu``: the issue and SFU cycles after the fix. P = (issued / (SMs x schedulers)) /
    max(C_issue, C_sfu) is the time scaled by the issue work (the launch keeps its issue efficiency, C_issue_now /
    C); R assumes the launch then issues every cycle, i.e. that every stall it has now goes too, which only the
    stalls of the removed code do: eq. 2 over those samples says how much of the time goes with them. So a fix
    that removes a sliver of the work of a kernel at 75% of its issue peak gets about that sliver (holdout13
    philox_box_muller_mpi: a precise sqrtf, 2.5% of the instructions and 3.6% of the samples; R 1.364x, P 1.026x,
    eq. 2 1.038x; the strength reduction of its FP64 sin/cos, 26% of the samples, measured 1.446x), while one that
    removes most of it keeps the roofline (quat_expmap_steps: eq. 2 12.2x, R 2.485x). Roofline argument: Williams
    et al., CACM 2009."""
    now = issued / (view.sm_count * view.arch.schedulers_per_sm)
    prop = now / max(c_issue, c_sfu, 1.0)
    return max(1.0, prop, min(eq2, roof))


def _issue_sfu_roof(view: KernelView, issued_after: float, sfu_after: float) -> tuple[float, float, float, bool]:
    """The issue and SFU rooflines of a launch after a fix that changes its instruction mix: (S, C_issue, C_sfu,
    issue_bound). ``issued_after``: warp instructions the launch issues after the fix; ``sfu_after``: warp
    instructions of the special-function unit (MUFU) after it. C_issue = issued_after / (SMs x schedulers)
    cycles (one instruction per scheduler per clock), C_sfu = 32 x sfu_after / (SMs x R_sfu) cycles (R_sfu: arch
    facts, 16 results per clock per SM), S = C / max(C_issue, C_sfu) >= 1 with C the launch's elapsed cycles
    (the roofline argument, Williams et al. 2009, per pipe). ``issue_bound``: the SM is the launch's busiest
    unit at or above roofline.THROUGHPUT_FRACTION of its reachable peak, so the time follows issue and SFU work
    and S is the expected speedup (otherwise a cap). Call only with a launch whose elapsed cycles and SM count
    are known (> 0)."""
    lc = view.profile.launch
    c_issue = max(1.0, issued_after) / (view.sm_count * view.arch.schedulers_per_sm)
    c_sfu = view.arch.warp_size * sfu_after / (view.sm_count * view.arch.sfu_results_per_sm_cycle)
    roof = max(1.0, lc.elapsed_cycles / max(c_issue, c_sfu, 1.0))
    busy = {u: roofline.busy(lc.throughput_pct, u, view.reach) for u in lc.throughput_pct if u in roofline.ACHIEVABLE}
    issue_bound = busy.get("sm", 0.0) >= roofline.THROUGHPUT_FRACTION and busy["sm"] >= max(busy.values())
    return roof, c_issue, c_sfu, issue_bound


#: Instructions the fast division (MUFU.RCP and a multiply, CUDA C++ Programming Guide "Intrinsic Functions",
#: __fdividef) saves per IEEE division: nvcc 13's sm_90 sequence is MUFU.RCP, FCHK, five FFMAs (two refine the
#: reciprocal, three the quotient) and a branch to the slow path; the fast form keeps the MUFU.RCP and one of
#: the FFMAs as its FMUL, so FCHK, four FFMAs and the branch go (SASS of examples/noinline, nvdisasm 13).
DIVISION_SEQUENCE = 6
#: The low part of log2(e) in the Cody-Waite split of nvcc's precise expf (sm_90, nvcc 13): one FFMA per expf
#: multiplies by it. That expf is FFMA.SAT, FFMA.RM, FADD, two FFMAs, SHF.L, MUFU.EX2 and FMUL; __expf is a
#: multiply and MUFU.EX2, so the flag saves EXP_SEQUENCE instructions per expf (SASS of
#: bench/advice/holdout3/pairs/gmm_loglik, nvdisasm 13).
_EXPF_LOG2E_LO = "1.925963033500011079e-08"
EXP_SEQUENCE = 6


#: The range check of nvcc's precise sqrtf (sm_90, nvcc 13): VIADD r, x, 0xf3000000 and an unsigned compare
#: with 0x727fffff pick the slow-path call for denormal, huge or negative x. The fast path around it is
#: VIADD, MUFU.RSQ, ISETP, BRA, FMUL.FTZ, FMUL.FTZ, two FFMAs (Newton step) inside a BSSY/BSYNC pair; the
#: fast sqrtf (-prec-sqrt=false, implied by --use_fast_math) is one MUFU.SQRT, so the flag saves
#: SQRT_SEQUENCE instructions per sqrtf (SASS of bench/advice/holdout5/pairs/haversine_fastmath, orig vs the
#: same source built with -use_fast_math, nvdisasm 13).
_SQRT_RANGE = "0xf3000000"
SQRT_SEQUENCE = 9


def _is_precise_call(callee: str | None) -> bool:
    """A call of a precise single-precision math routine (see FAST_MATH_SP); an unresolved callee (an indirect
    call through a register, e.g. a virtual function) is not one."""
    return callee is not None and any(k in callee for k in FAST_MATH_SP) and \
        any(m in callee for m in MATH_ROUTINE_MARKERS)


def _precise_non_division_lines(prog: Program) -> frozenset[tuple[str, int]]:
    """User lines with precise math other than IEEE division and square root: a sin/cos reduction (its 2/pi
    multiply) or a call of a single-precision slow path other than the division's and the square root's (once
    per program). On a division/sqrt line the flag replaces only those sequences (DIVISION_SEQUENCE,
    SQRT_SEQUENCE): the line's other math (asinf, atan2f: routines with no fast form) stays."""
    def make() -> frozenset[tuple[str, int]]:
        out: set[tuple[str, int]] = set()
        for pf in prog.functions.values():
            if not is_user_function(pf.name):
                continue
            calls = {cs.offset for cs in pf.calls if _is_precise_call(cs.callee)
                     and _slow_path_kind(cs.callee or "") not in ("div", "sqrt")}
            trig = _trig_reductions(pf)
            for i in pf.instructions:
                if i.loc is not None and (i.offset in calls or i.offset in trig):
                    out.add((i.loc.file, i.loc.line))
        return frozenset(out)
    found: frozenset[tuple[str, int]] = prog.memo("precise_non_division_lines", make)
    return found


#: The constant 2/pi that the precise sinf/cosf/tanf argument reduction multiplies by (CUDA's libdevice
#: __internal_trig_reduction; the fast __sinf is a single MUFU.SIN after a multiply by 1/(2 pi)).
_TWO_OVER_PI = "0.63661974668502807617"
#: The Cody-Waite split of pi/2 that the precise sinf/cosf/tanf reduction subtracts after its 2/pi multiply
#: (high and middle parts: FFMA q, -1.5707962513, x; FFMA q, -7.5497894e-08, ...; nvcc 13, sm_90, SASS of
#: bench/advice/holdout5/pairs/haversine_fastmath, holdout7 fft1024_sincos, examples' raytrace_virtual). An
#: exact ``fmodf(x, 2 pi)`` multiplies by the same 2/pi (the reciprocal of 2 pi's mantissa, 1.5707963705) in its
#: exponent loop but has no split: -use_fast_math leaves that routine as it is (holdout8 synth_fmodf: the same
#: sequence with and without the flag), so only a 2/pi multiply in a function with the split is a sin/cos
#: reduction.
_CODY_WAITE_PI_2 = ("1.5707962512969970703", "7.5497894158615963534e-08")


def _trig_reductions(pf: ProgramFunction) -> frozenset[int]:
    """Offsets of the 2/pi multiplies (FMUL/FFMA by :data:`_TWO_OVER_PI`) of ``pf`` that are a precise sin/cos/tan
    argument reduction: ``pf`` holds the Cody-Waite pi/2 split (:data:`_CODY_WAITE_PI_2`) and the multiply's
    line is not an exact ``fmodf`` (:func:`exact_fmod_sites`) unless that line holds the split itself."""
    def make() -> frozenset[int]:
        two = [i for i in pf.instructions
               if i.base_opcode in ("FMUL", "FFMA") and any(_TWO_OVER_PI in op for op in i.operands)]
        if not two:
            return frozenset()
        split_lines = {(i.loc.file, i.loc.line) if i.loc is not None else None for i in pf.instructions
                       if i.base_opcode in ("FFMA", "FMUL") and any(c in op for op in i.operands
                                                                    for c in _CODY_WAITE_PI_2)}
        if not split_lines:
            return frozenset()
        fmod = _fmod_sites_of(pf)
        return frozenset(i.offset for i in two if i.loc is None or (i.loc.file, i.loc.line) not in fmod
                         or (i.loc.file, i.loc.line) in split_lines)
    return _memo_fn(pf, "trig_reductions", make)


_FN_MEMO: dict[tuple[int, str], tuple[weakref.ref[Any], Any]] = {}


def _memo_fn(pf: ProgramFunction, key: str, make: Callable[[], Any]) -> Any:
    """``make()`` once per function object and ``key`` (the scans walk every instruction of the function)."""
    k = (id(pf), key)
    hit = _FN_MEMO.get(k)
    if hit is not None and hit[0]() is pf:
        return hit[1]
    if len(_FN_MEMO) > 4096:
        _FN_MEMO.clear()
    out = make()
    _FN_MEMO[k] = (weakref.ref(pf), out)
    return out


#: The exponent step of the exact single-precision remainder's loop (nvcc 13, sm_90, fmodf/remainderf inlined):
#: VIMNMX.U32 d, e, 0xb800000 takes at most 23 exponent bits (23 << 23) per pass of the long-division loop on
#: the exponent difference, after FRND.TRUNC of the quotient estimate (SASS of holdout8 synth_fmodf and of a
#: generic fmodf(x[i], y[i]), with and without -use_fast_math: the flag keeps the whole sequence).
_FMOD_EXPONENT_STEP = "0xb800000"


def _fmod_sites_of(pf: ProgramFunction) -> dict[tuple[str, int], int]:
    """User lines of ``pf`` holding an inlined exact ``fmodf``/``remainderf``, with the number of inlined calls
    on each (one exponent-step VIMNMX per call, :data:`_FMOD_EXPONENT_STEP`; the line must hold an FRND.TRUNC
    too)."""
    def make() -> dict[tuple[str, int], int]:
        steps: dict[tuple[str, int], int] = defaultdict(int)
        trunc: set[tuple[str, int]] = set()
        for i in pf.instructions:
            if i.loc is None:
                continue
            key = (i.loc.file, i.loc.line)
            if i.base_opcode == "VIMNMX" and any(op == _FMOD_EXPONENT_STEP for op in i.operands):
                steps[key] += 1
            elif i.opcode.startswith("FRND.TRUNC"):
                trunc.add(key)
        return {k: n for k, n in steps.items() if k in trunc}
    found: dict[tuple[str, int], int] = _memo_fn(pf, "fmod_sites", make)
    return found


def exact_fmod_sites(prog: Program) -> dict[tuple[str, int], int]:
    """:func:`_fmod_sites_of` over the user functions of ``prog``: line -> inlined exact fmodf calls."""
    def make() -> dict[tuple[str, int], int]:
        out: dict[tuple[str, int], int] = {}
        for pf in prog.functions.values():
            if is_user_function(pf.name):
                for k, n in _fmod_sites_of(pf).items():
                    out[k] = out.get(k, 0) + n
        return out
    found: dict[tuple[str, int], int] = prog.memo("exact_fmod_sites", make)
    return found


def precise_math_lines(view: KernelView) -> set[tuple[str, int]]:
    """User lines holding inlined precise single-precision math that --use_fast_math replaces: an FCHK (IEEE
    division check), a call of a ``*_f32_slowpath`` routine, or the 2/pi multiply of the sin/cos reduction, on
    a line without the fast forms (MUFU.SIN/COS). nvcc 13 attributes inlined math to the calling line."""
    return set(precise_math_kinds(view))


def precise_math_kinds(view: KernelView) -> dict[tuple[str, int], frozenset[str]]:
    """:func:`precise_math_lines` with what each line's SASS holds, as keys of :data:`SLOW_PATHS`: ``div`` (an
    FCHK, or a call of the division slow path), ``rcp``/``sqrt`` (a call of that slow path), ``trig`` (the
    2/pi multiply of the sin/cos/tan argument reduction)."""
    prog = view.program
    if prog is None:
        return {}
    return dict(prog.memo("precise_math_kinds", lambda: _precise_math_kinds(prog)))


#: The precise single-precision paths the fast-math hint can name: what the SASS shows (the routine-name
#: fragment of the slow-path call, or the instruction), and the fast form that replaces it (CUDA C++
#: Programming Guide, "Intrinsic Functions"; nvcc's -prec-div=false / -prec-sqrt=false).
SLOW_PATHS: dict[str, tuple[str, str]] = {
    "div": ("IEEE division with its FCHK check and slow path", "__fdividef(x, y)"),
    "rcp": ("the IEEE reciprocal slow path", "__fdividef(1.0f, x)"),
    "sqrt": ("the IEEE square-root slow path", "-prec-sqrt=false (or rsqrtf where 1/sqrt is meant)"),
    "trig": ("the sin/cos argument reduction", "__sinf / __cosf"),
}


#: What each fast form trades, per key of :data:`SLOW_PATHS` (CUDA C++ Programming Guide, Mathematical Functions
#: appendix, "Intrinsic Functions"; libdevice's __nv_fast_fdividef).
FAST_FORM_ACCURACY: dict[str, str] = {
    "div": "__fdividef is within 2 ulp only for 2^-126 <= |y| <= 2^126 and returns 0 for larger |y|",
    "rcp": "the approximate reciprocal is not correctly rounded",
    "sqrt": "the approximate square root is not correctly rounded",
    "trig": "__sinf / __cosf are accurate (absolute error 2^-21.41) only for |x| <= pi",
}
#: What the flag changes besides (nvcc --help: --use_fast_math implies --ftz=true --prec-div=false
#: --prec-sqrt=false --fmad=true, and maps sinf/expf/... to their intrinsics).
FAST_MATH_FLAG_ACCURACY = ("--use_fast_math also flushes denormals to zero (-ftz=true) and makes every "
                           "single-precision division, square root and sinf/expf-style call of the file approximate")


def fast_math_accuracy(kinds: set[str] | frozenset[str]) -> str:
    """The accuracy caveat the fast-math hint ends with: what the fast forms of ``kinds`` (keys of
    :data:`SLOW_PATHS`) and the flag trade, e.g. ``"accuracy: __fdividef is within 2 ulp ...; --use_fast_math
    also flushes denormals to zero ... (CUDA C++ Programming Guide, "Intrinsic Functions"): check the results
    against your tolerance"``. The fix changes numerical results, so the advice says so wherever it is shown."""
    parts = [FAST_FORM_ACCURACY[k] for k in SLOW_PATHS if k in kinds] + [FAST_MATH_FLAG_ACCURACY]
    return (f"accuracy: {'; '.join(parts)} (CUDA C++ Programming Guide, \"Intrinsic Functions\"): check the results "
            "against your tolerance")


def _slow_path_kind(callee: str) -> str | None:
    """``div``/``rcp``/``sqrt`` for a single-precision slow-path routine's name
    (``__cuda_sm3x_div_rn_noftz_f32_slowpath``, ``__cuda_sm20_rcp_rn_f32_slowpath``, ...), else None."""
    name = callee.rsplit("$", 1)[-1]
    return next((k for k in ("div", "rcp", "sqrt") if f"_{k}_" in name), None)


def slow_path_text(kinds: set[str] | frozenset[str]) -> tuple[str, str]:
    """(what the SASS has, the fast forms that replace it) for ``kinds`` (keys of :data:`SLOW_PATHS`, in its
    order), e.g. ``("IEEE division with its FCHK check and slow path", "__fdividef(x, y)")``."""
    ks = [k for k in SLOW_PATHS if k in kinds]
    return ", ".join(SLOW_PATHS[k][0] for k in ks), " / ".join(SLOW_PATHS[k][1] for k in ks)


def _precise_math_kinds(prog: Program) -> dict[tuple[str, int], frozenset[str]]:
    out: dict[tuple[str, int], set[str]] = {}
    fast: set[tuple[str, int]] = set()
    for pf in prog.functions.values():
        if not is_user_function(pf.name):
            continue
        calls = {cs.offset: _slow_path_kind(cs.callee) or "div" for cs in pf.calls
                 if cs.callee is not None and _is_precise_call(cs.callee)}
        trig = _trig_reductions(pf)
        for i in pf.instructions:
            if i.loc is None:
                continue
            key = (i.loc.file, i.loc.line)
            if i.opcode.startswith(("MUFU.SIN", "MUFU.COS")):
                fast.add(key)
            elif i.base_opcode == "FCHK":
                out.setdefault(key, set()).add("div")
            elif i.offset in calls:
                out.setdefault(key, set()).add(calls[i.offset])
            elif i.offset in trig:
                out.setdefault(key, set()).add("trig")
    return {k: frozenset(v) for k, v in out.items() if k not in fast}


# ---- warp_balance -----------------------------------------------------------------------------------

@register("warp_balance", "Warp balance", "stall_elimination",
          "Synchronization stalls: warps wait at a barrier (__syncthreads, fences) for slower warps.",
          "Balance the work before the barrier, use warp shuffles instead of block-wide synchronization, or "
          "split arrive/wait barriers.")
def warp_balance(view: KernelView) -> Advice | Skipped:
    """GPA Table 2 warp balance: synchronization stalls, eq. 2."""
    evs = view.edges_by(gpa_class=(stalls.SYNCHRONIZATION,))
    hint = ""
    if evs:
        hs = cm.hotspots(view, evs, cm.stall_weight, 3)
        hint = (f"warps wait at the barrier at {cm.lines_text((h.use.file, h.use.line) for h in hs)} for the slower "
                "warps of their block: even out the work before it, or replace block-wide synchronization by warp "
                "shuffles (__shfl_*_sync) where only a warp shares data")
    res = cm.stall_elimination_advice(view, "warp_balance", evs, hint, nothing="no synchronization stalls")
    if not isinstance(res, Advice):
        return res
    exchanged = _exchange_wavefronts(view, evs)
    if exchanged <= 0:
        return res
    # Threads of a block that exchange data through shared memory between barriers (a tree reduction or scan):
    # the shuffles the hint proposes replace that exchange, so the L1 data pipe's work shrinks with it and the
    # roofline after the fix, not the L1 throughput now, bounds the gain (arch/roofline.after_fix).
    # The shuffles also take the exchange's stores and barriers off the SM (issue slots), so the SM roofline
    # after the fix, not the SM throughput now, bounds the gain as well (holdout6 softmax_tree1024: two barrier
    # trees, SM at 77% of peak, was capped at 1.29x for 1.81x measured).
    ratios = {"l1": _l1_ratio(view, shared_removed=exchanged), "sm": _exchange_sm_ratio(view, evs)}
    return _after_fix_estimate(view, res, ratios, False, {"wavefronts_exchanged": exchanged,
                                                          "wavefronts_l1": view.profile.launch.l1_lsu_wavefronts})


def _exchange_wavefronts(view: KernelView, sync_edges: list[EdgeView]) -> float:
    """Shared-memory wavefronts (Nsight Compute's per-instruction counters) of the loads and stores between the
    first and the last instruction that waits at a barrier in each function, and in the loops holding such a
    wait (:func:`_exchange_code`): the data the block's threads exchange from one barrier to the next. 0 without
    wavefront counts or with a single barrier wait."""
    keys = {k for k, i in _exchange_code(sync_edges).items() if cm.is_shared_mem(i)}
    return float(sum(s.shared_wavefronts for s in view.profile.pcs.values() if (s.function, s.offset) in keys))


def _exchange_sm_ratio(view: KernelView, sync_edges: list[EdgeView]) -> float:
    """SM work (warp-level executed instructions, Nsight Compute's per-PC ``inst_executed``) after / before the
    hint's fix of a shared-memory exchange between barriers (a tree reduction or scan), 0..1.

    Each step of such an exchange is a shared store, a barrier and a shared load; the warp-shuffle form
    (``__shfl_down_sync``/``__shfl_xor_sync``, CUDA C++ Programming Guide, "Warp Shuffle Functions") moves the
    value register to register in one SHFL and needs no barrier. So the exchange's shared stores and barriers
    (:func:`_exchange_code`) go, and each shared load becomes one SHFL (counted as kept); the rest of the
    kernel's instructions are kept. The exchange is the one :func:`_exchange_wavefronts` takes off the L1 data
    pipe. 1 without instruction counts."""
    total = float(sum(s.inst_executed for s in view.profile.pcs.values()))
    if total <= 0:
        return 1.0
    keys = {k for k, i in _exchange_code(sync_edges, with_last=True).items()
            if i.base_opcode == "BAR" or i.base_opcode in cm.SHARED_STORES}
    removed = float(sum(s.inst_executed for s in view.profile.pcs.values() if (s.function, s.offset) in keys))
    return max(0.0, 1.0 - removed / total)


def _exchange_code(sync_edges: list[EdgeView], with_last: bool = False) -> dict[cm.InsKey, Instruction]:
    """The instructions, by (function, offset), from the first to the last instruction that waits at a barrier
    (``sync_edges``) in each function (the last one included when ``with_last``), and those of the loops holding
    such a wait: the code of a block's exchange from one barrier to the next."""
    spans: dict[str, tuple[ProgramFunction, int, int]] = {}
    in_loops: dict[tuple[str, int], tuple[ProgramFunction, Loop]] = {}
    for e in sync_edges:
        fn, ins = e.use_fn, e.use_ins
        if fn is None or ins is None:
            continue
        lo, hi = spans.get(fn.name, (fn, ins.offset, ins.offset))[1:]
        spans[fn.name] = (fn, min(lo, ins.offset), max(hi, ins.offset))
        if e.use_loop is not None:
            in_loops[(fn.name, e.use_loop.header)] = (fn, e.use_loop)
    out: dict[cm.InsKey, Instruction] = {}
    for fn, lo, hi in spans.values():
        for i in fn.instructions:
            if lo <= i.offset < hi or (with_last and i.offset == hi):
                out[(fn.name, i.offset)] = i
    for fn, lp in in_loops.values():
        for i in fn.instructions:
            b = fn.block_of(i.offset)
            if b is not None and b.start in lp.blocks:
                out[(fn.name, i.offset)] = i
    return out


# ---- memory throttles: memory_transaction_reduction / global_memory_coalesce -------------------------------

def _efficiency(s: PCSample | None) -> float | None:
    if s is None or s.l2_sectors <= 0:
        return None
    return s.l2_sectors_ideal / s.l2_sectors


def _throttle_edges(view: KernelView) -> list[EdgeView]:
    return [e for e in view.edges_by(gpa_class=(stalls.MEMORY_THROTTLE,)) if cm.is_global_mem(e.use_ins)]


def _throttle_split(view: KernelView) -> tuple[list[EdgeView], list[EdgeView], list[EdgeView]]:
    """(coalesced, uncoalesced, unknown) global-memory throttle edges by L2 sector efficiency."""
    good: list[EdgeView] = []
    bad: list[EdgeView] = []
    unknown: list[EdgeView] = []
    for e in _throttle_edges(view):
        eff = _efficiency(_sample(view, e))
        (unknown if eff is None else bad if eff < COALESCE_LIMIT else good).append(e)
    return good, bad, unknown


@register("memory_transaction_reduction", "Memory transaction reduction", "stall_elimination",
          "Global-memory throttle stalls (lg_throttle, drain) at coalesced accesses: too many requests.",
          "Read shared read-only data once (constant memory, __ldg, shared memory tiles) or use wider "
          "loads (float4) to issue fewer transactions.")
def memory_transaction_reduction(view: KernelView) -> Advice | Skipped:
    """GPA Table 2 memory transaction reduction: memory throttling at coalesced global accesses, eq. 2."""
    if (miss := _needs_binary(view, "memory_transaction_reduction")) is not None:
        return miss
    res = _global_transaction_reduction(view)
    const = _constant_lookup_advice(view)
    if const is not None and (not isinstance(res, Advice) or const.estimated_speedup > res.estimated_speedup):
        res = const
    sub = _subline_access_advice(view)
    if sub is not None and (not isinstance(res, Advice) or sub.estimated_speedup > res.estimated_speedup):
        res = sub
    split = _split_field_advice(view)
    if split is not None and (not isinstance(res, Advice) or split.estimated_speedup > res.estimated_speedup):
        return split
    return res


def _constant_memory_clause(view: KernelView, evs: list[EdgeView]) -> str:
    """", read-only values shared by all threads in constant memory" when one of the throttled loads in ``evs``
    has a warp-uniform address (built from constants, parameters and the block index only:
    atomics.address_sources without ``thread`` or ``data``), else "". The constant cache serves one address per
    request and serializes a warp's distinct ones (CUDA C++ Programming Guide, "Device Memory Accesses",
    Constant Memory), so it is the answer only for values every thread of a warp reads alike."""
    prog = view.program
    if prog is None:
        return ""
    for e in evs:
        ins, fn = e.use_ins, e.use_fn
        if ins is None or fn is None or not ins.base_opcode.startswith("LDG"):
            continue
        pf = prog.functions.get(fn.name)
        src = atomics.address_sources(pf, ins) if pf is not None else None
        if src is not None and not src & {"thread", "data"}:
            return ", read-only values shared by all threads in constant memory"
    return ""


def access_bytes(ins: Instruction | None) -> int:
    """Bytes one thread moves with a global load or store (SASS width suffix: .U8/.S8 1, .U16/.S16 2, .64 8,
    .128 16, none 4); 0 for other instructions."""
    if ins is None or not cm.is_global_mem(ins):
        return 0
    parts = set(ins.opcode.split("."))
    if parts & {"U8", "S8"}:
        return 1
    if parts & {"U16", "S16"}:
        return 2
    return 16 if "128" in parts else 8 if "64" in parts else 4


#: The inside of an address operand that is one register plus an immediate (``R4.64+-0x8``, ``R4``, ``R6+0x10``):
#: the register's number, the sign and the hexadecimal offset.
_BASE_PLUS_IMM = re.compile(r"^R(\d+)(?:\.64)?(?:\+(-?)0x([0-9a-fA-F]+))?$")
#: Operands of an add that are no value: predicates (carry outputs, ``!PT``) and the zero register.
_NO_VALUE = re.compile(r"^!?P(\d+|T)$|^RZ$")


def _base_and_offset(ins: Instruction) -> tuple[str, int] | None:
    """(base register, immediate byte offset) of a load whose address is one register plus an immediate
    (``LDG.E.U8 R18, desc[UR4][R4.64+-0x8]`` -> (``R4``, -8)); None for other address forms."""
    for op in ins.operands:
        for inner in cm.ADDRESS_PARTS.findall(op):
            m = _BASE_PLUS_IMM.match(inner.strip())
            if m:
                return f"R{m.group(1)}", (-1 if m.group(2) else 1) * int(m.group(3) or "0", 16)
    return None


def _self_increment(ins: Instruction, reg: str) -> int | None:
    """The immediate ``ins`` adds to ``reg`` in place (``IADD3 R4, P1, R4, 0x10, RZ``, ``VIADD R4, R4, 0x10``),
    else None."""
    if ins.base_opcode not in ("IADD3", "VIADD", "IADD") or ins.predicate or not ins.operands or \
            ins.operands[0] != reg:
        return None
    vals = [o for o in ins.operands[1:] if not _NO_VALUE.match(o)]
    if len(vals) != 2 or reg not in vals:
        return None
    imm = vals[1] if vals[0] == reg else vals[0]
    try:
        return int(imm, 16) if imm.lstrip("-").startswith("0x") else None
    except ValueError:
        return None


def contiguous_walks(pf: ProgramFunction) -> dict[int, tuple[int, int]]:
    """Global loads of ``pf`` that walk each thread's own bytes contiguously: offset -> (bytes per load w, bytes
    the thread's address advances per iteration).

    In an innermost loop, the loads off one base register whose only write in the loop adds an immediate to it
    in place (the pointer nvcc strength-reduces ``p[i]`` into), with immediate offsets n consecutive multiples of
    w (an unrolled ``for (i...) f(k[i])``: ``[R4-0x8]``, ``[R4-0x7]``, ... ``[R4+0x7]``) and the base advanced
    by n × w per iteration: every iteration reads the n·w bytes after the previous iteration's, so the thread's
    walk is contiguous. A load after the increment in address order counts its offset from the advanced base.
    Register-level and approximate (a loop body of several paths is read in address order, like
    parallel.carried_recurrence); index-form addresses (``IMAD.WIDE`` of the counter each iteration) are not
    recognised. Empty when no loop has such loads."""

    def make() -> dict[int, tuple[int, int]]:
        out: dict[int, tuple[int, int]] = {}
        for lp in pf.loops.values():
            if lp.children:
                continue
            # the loop's instructions in address order: its blocks' (disjoint, each in address order) by block
            # start; the scan of every instruction of the function per loop was quadratic (17,930 loops on
            # ptx_loops 200k)
            body = [i for s in sorted(lp.blocks) if (b := pf.blocks.get(s)) is not None for i in b.instructions]
            writes: dict[str, list[Instruction]] = defaultdict(list)
            loads: dict[str, list[tuple[Instruction, int]]] = defaultdict(list)
            for i in body:
                for r in cm.dest_registers(i):
                    writes[r].append(i)
                if i.base_opcode == "LDG" and (bo := _base_and_offset(i)) is not None:
                    loads[bo[0]].append((i, bo[1]))
            for reg, group in loads.items():
                if len(writes.get(reg, [])) != 1 or reg in {r for i, _ in group for r in cm.dest_registers(i)}:
                    continue
                inc = writes[reg][0]
                step = _self_increment(inc, reg)
                widths = {access_bytes(i) for i, _ in group}
                if step is None or len(widths) != 1:
                    continue
                w = widths.pop()
                offs = sorted(o + (step if i.offset > inc.offset else 0) for i, o in group)
                if w <= 0 or step != len(offs) * w or offs != [offs[0] + j * w for j in range(len(offs))]:
                    continue
                for i, _ in group:
                    out[i.offset] = (w, step)
        return out

    return pf.memo("contiguous_walks", make)


#: Alignment (bytes) taken for a pointer passed as a kernel parameter: "any address of a variable residing in
#: global memory or returned by one of the memory allocation routines from the driver or runtime API is always
#: aligned to at least 256 bytes" (CUDA C++ Programming Guide, "Device Memory Accesses"). An assumption for a
#: pointer into the middle of an allocation, which the widening hint states.
PARAMETER_ALIGNMENT = 256
#: Definitions followed when deriving an address's alignment (a walk over more gives up: alignment 1).
_ALIGN_WALK_LIMIT = 256


def _low_bit(v: int) -> int:
    """The largest power of two dividing ``v`` (PARAMETER_ALIGNMENT for 0, which every alignment divides)."""
    return v & -v if v else PARAMETER_ALIGNMENT


def address_alignment(pf: ProgramFunction, ins: Instruction, reg: str) -> int:
    """The largest power of two (bytes, at most PARAMETER_ALIGNMENT) that the value of ``reg`` at ``ins`` of ``pf``
    is a multiple of, for the low register of an address: reaching definitions over the CFG
    (blame.slice.FunctionIndex, as :func:`index_roots`) through copies and address arithmetic, combined by the
    rules of multiples (a + b: the smaller alignment; a * b and a << s: the product; IMAD.WIDE a, b, c: a * b + c),
    every definition reaching a use taken at its worst (the minimum). A kernel parameter (a constant-bank read or
    operand) counts PARAMETER_ALIGNMENT, an immediate its lowest set bit, any other definition (a loaded value, a
    thread index) 1; a kernel parameter counts as a pointer only where it is read as 64 bits (``LDC.64``) or
    feeds a 64-bit address (IMAD.WIDE's addend, an add with a carry out), since a 32-bit parameter may be an
    int whose alignment is unknown. A loop-carried value (a pointer advanced by an immediate) is its initial
    value's alignment and its increments'. Returns 1 when not traceable."""
    from warpwise.analysis.blame.slice import FunctionIndex

    fx = pf.memo("function_index", lambda: FunctionIndex(pf))
    j0 = fx.index.get(ins.offset)
    if j0 is None:
        return 1
    memo: dict[tuple[int, str], int] = {}
    busy: set[tuple[int, str]] = set()
    steps = [0]

    def operand(k: int, op: str, wide: bool = False) -> int:
        tok = op.lstrip("-|~").split(".", 1)[0]
        if _CONST_OPERAND.search(op):
            return PARAMETER_ALIGNMENT if wide else 1
        if _IMMEDIATE.match(op):
            return _low_bit(int(op, 16) & 0xFFFFFFFF)
        if tok in ("RZ", "URZ"):
            return PARAMETER_ALIGNMENT
        if tok.startswith(("R", "UR")) and tok.lstrip("U")[1:].isdigit():
            return value(fx.block[k], k, tok)
        return 1

    def of_def(k: int) -> int:
        d, du = fx.ins[k], fx.du[k]
        if du.clobbers_all or d.predicate:
            return 1
        ops = [o for o in d.operands[1:] if not _NO_VALUE.match(o) or o in ("RZ", "URZ")]
        base, op = d.base_opcode, d.opcode
        # a 64-bit parameter is a pointer; a 32-bit one may be an int (a row length), whose alignment is unknown.
        # A parameter read inside the arithmetic is a pointer's low half where the result is a 64-bit address:
        # the 64-bit addend of IMAD.WIDE, or an add that carries into the high half (a predicate destination)
        wide = op.startswith("IMAD.WIDE") or (len(d.operands) > 1 and _PREDICATE.fullmatch(d.operands[1]) is not None)
        if base in cm.CONSTANT_READS:
            return PARAMETER_ALIGNMENT if ".64" in op and any(o.startswith("c[0x0]") for o in d.operands) else 1
        if base in ("MOV", "UMOV") or op.startswith("IMAD.MOV"):
            return operand(k, ops[-1]) if ops else 1
        if base in ("IADD3", "UIADD3", "VIADD", "IADD") and not op.endswith(".X"):
            return min((operand(k, o, wide) for o in ops), default=1)
        if base in ("IMAD", "UIMAD") and len(ops) >= 3 and (op in ("IMAD", "IMAD.U32", "UIMAD")
                                                            or op.startswith("IMAD.WIDE")):
            return min(PARAMETER_ALIGNMENT, operand(k, ops[0]) * operand(k, ops[1]), operand(k, ops[2], wide))
        if op.startswith("IMAD.SHL") and len(ops) >= 2:
            return min(PARAMETER_ALIGNMENT, operand(k, ops[0]) * operand(k, ops[1]))
        if base in ("LEA", "ULEA") and not op.endswith(".X") and ".HI" not in op and len(ops) >= 3 \
                and _IMMEDIATE.match(ops[2]):
            return min(PARAMETER_ALIGNMENT, operand(k, ops[0]) << int(ops[2], 16), operand(k, ops[1], wide))
        return 1

    def value(block: int, end: int, reg: str) -> int:
        key = (end, reg)
        if key in memo:
            return memo[key]
        if key in busy:  # a loop-carried value: its other definitions decide
            return PARAMETER_ALIGNMENT
        steps[0] += 1
        if steps[0] > _ALIGN_WALK_LIMIT:
            return 1
        busy.add(key)
        found = fx.defs_before(block, end, reg)
        if found:
            got = of_def(found[0])
        else:
            preds = [p for p in fx.preds.get(block, []) if p in fx.end]
            got = min((value(p, fx.end[p], reg) for p in preds), default=1)
        busy.discard(key)
        if not busy:  # a value found while a loop-carried one was assumed aligned holds only under that assumption
            memo[key] = got
        return got

    return value(fx.block[j0], j0, reg)


def contiguous_runs(pf: ProgramFunction, widest: int) -> dict[int, int]:
    """Global loads of ``pf`` that read one thread's contiguous, aligned run of bytes within one pass of its
    code: offset -> k, the loads of the run one ``widest``-byte access (or the widest the run's alignment allows)
    replaces each.

    A run is two or more loads of one width w < ``widest`` in one basic block, off the same value of one base
    register (no write of it between them), whose immediate offsets are consecutive multiples of w
    (``[R2.64+-0x20]``, ``[R2.64+-0x1c]``, ... ``[R2.64+0x1c]``: sixteen floats of a 4 x 4 block). With the base
    aligned to A bytes (:func:`address_alignment`), the run is read with accesses of g bytes, the largest power of
    two up to ``widest`` and A that divides the run's first offset and its length: k = g / w loads become one
    (CUDA C++ Programming Guide, "Device Memory Accesses": a vector access must be naturally aligned). Runs with
    k < 2 are left out."""

    def make() -> dict[int, int]:
        out: dict[int, int] = {}
        for blk in pf.blocks.values():
            groups: dict[tuple[str, int], list[tuple[Instruction, int]]] = defaultdict(list)
            last_write: dict[str, int] = {}
            for i in blk.instructions:
                if i.base_opcode == "LDG" and not i.predicate and (bo := _base_and_offset(i)) is not None:
                    groups[(bo[0], last_write.get(bo[0], -1))].append((i, bo[1]))
                for r in cm.dest_registers(i):
                    last_write[r] = i.offset
            for (reg, _), group in groups.items():
                widths = {access_bytes(i) for i, _ in group}
                if len(group) < 2 or len(widths) != 1:
                    continue
                w = widths.pop()
                offs = sorted(o for _, o in group)
                if not 0 < w < widest or offs != [offs[0] + j * w for j in range(len(offs))]:
                    continue
                align = address_alignment(pf, group[0][0], reg)
                length = len(offs) * w
                g = widest
                while g > w and (g > align or offs[0] % g or length % g):
                    g //= 2
                if g // w >= 2:
                    for i, _ in group:
                        out[i.offset] = g // w
        return out

    return pf.memo(("contiguous_runs", widest), make)


def _walk_key(fn: ProgramFunction | None, ins: Instruction | None) -> cm.InsKey | None:
    """(function name, offset) of an edge's instruction, the key of :func:`widenable_walks`; None without one."""
    return (fn.name, ins.offset) if fn is not None and ins is not None else None


def widenable_walks(view: KernelView, runs: bool = True) -> dict[cm.InsKey, int]:
    """The kernel's uncoalesced narrow loads that walk each thread's own bytes (:func:`contiguous_walks`):
    key -> k, the loads one ArchFacts.widest_access_bytes access per thread replaces (widest / w).

    Such a load moves w < 4 bytes per thread (a warp request of w × 32 bytes, under a cache line) with lanes
    apart (L2 sector efficiency below COALESCE_LIMIT: each request touches a sector per lane or two and uses w
    bytes of each), and the thread's next loads read the rest of those sectors, from L1. Its cost is the
    request count, not the bytes: one widest access per thread reads k consecutive elements with one request
    touching the same sectors (each lane's 16 bytes lie in the sector its first byte did), so the fix is wider
    per-thread loads, not a layout change across lanes, which would leave a request of w × 32 bytes per
    element. Kept only where the thread walks at least the widest access's bytes (its per-thread executed
    count, per-PC ``inst_executed`` / warps launched, times the advance per iteration).

    Also the uncoalesced loads of one thread's contiguous, aligned run within one pass (:func:`contiguous_runs`:
    the sixteen 4-byte loads of a 4 x 4 block, lanes on different blocks), of any width below the widest: their
    lanes are apart as well, each request uses w bytes of every sector it touches and the run's next loads re-read
    those sectors from L1, so k = g / w of them become one g-byte access (g: the widest the run's alignment
    allows), with the same sectors and no layout change across lanes (helper modelI, 2026-12-04: holdout12's
    bsr4_spmv_scalar, float4 loads of each block and of x measured 1.441x). Only runs that the widest access
    reads whole (g = ArchFacts.widest_access_bytes: the 16-byte-aligned float4 blocks of a BSR matrix): where the
    alignment allows only narrower pieces (holdout5's kmeans_rowmajor, 136-byte points read as float2 at best),
    the layout change across lanes (global_memory_coalesce, measured 1.454x there) stays the fix. Unlike the
    narrow walks, such runs stay global_memory_coalesce's too (``runs=False`` leaves them out): a 4-byte element
    per lane coalesced across lanes fills whole lines, so the layout fix is a real alternative and the two
    estimates rank it (holdout6's stats_blocked_chunks, 64 floats per thread: the layout fix measured 4.281x).
    Empty without a program or launch shape."""
    prog = view.program
    lc = view.profile.launch
    warps = lc.blocks * -(-lc.threads_per_block // view.arch.warp_size) if lc.threads_per_block > 0 else 0
    if prog is None or warps <= 0:
        return {}
    facts = view.arch
    out: dict[cm.InsKey, int] = {}
    for pf in prog.functions.values():
        for off, k in (contiguous_runs(pf, facts.widest_access_bytes) if runs else {}).items():
            s = view.sample_at(pf.name, off)
            eff = _efficiency(s)
            ins = pf.function.at(off)
            if s is not None and s.inst_executed > 0 and eff is not None and eff < COALESCE_LIMIT \
                    and ins is not None and k * access_bytes(ins) == facts.widest_access_bytes:
                out[(pf.name, off)] = k
        for off, (w, step) in contiguous_walks(pf).items():
            if w * facts.warp_size >= facts.cache_line_bytes or facts.widest_access_bytes % w:
                continue
            s = view.sample_at(pf.name, off)
            eff = _efficiency(s)
            if s is None or eff is None or eff >= COALESCE_LIMIT:
                continue
            if s.inst_executed / warps * step < facts.widest_access_bytes:
                continue
            out[(pf.name, off)] = facts.widest_access_bytes // w
    return out


def _narrow_reach(pf: ProgramFunction, loads: frozenset[int]) -> frozenset[int]:
    """Offsets of ``pf``'s instructions that the values of the loads at ``loads`` reach (parallel.forward_taint)."""
    from warpwise.analysis.advice.parallel import forward_taint

    return forward_taint(pf, lambda ins: ins.offset in loads)


def _subline_access_advice(view: KernelView) -> Advice | None:
    """Memory transaction reduction for coalesced global loads of 1 or 2 bytes per thread (None when the kernel has none
    with stalls waiting on them, or when DRAM is already busy).

    A warp request of such loads moves ``warp_size x w`` bytes (64 for ``__half``/``uint16_t``), less than a cache
    line (ArchFacts.cache_line_bytes), so each request brings a fraction of the bytes a full-width one does, and a
    latency-bound kernel keeps that fraction of the bytes in flight (Little's law). Widening the access to
    ArchFacts.widest_access_bytes per thread (eight halves as one uint4/float4) moves the same bytes (DRAM and L2
    work unchanged) with k = widest/w times fewer requests, so the waits on them are hidden (GPA eq. 2 over M = the
    stalls waiting on the narrow loads, long_scoreboard, plus memory throttles at narrow accesses) up to the
    roofline after the fix, whose SM work keeps the instructions the loaded elements reach (parallel.forward_taint
    from the narrow loads: the per-element compare/convert/store work) and runs the rest of the thread's executed
    instructions (the narrow accesses, index and bounds arithmetic, set-up) once per k elements (per-PC
    ``inst_executed``; the unpacking of the wide access is not counted, so an upper bound on what goes; helper
    modelE 2026-12-03, holdout10 ``dict_filter_u8``: the SM cap had kept all of it). Only coalesced accesses count
    (L2 sector efficiency at least COALESCE_LIMIT): a scattered narrow access wastes sectors, which is
    global_memory_coalesce's. Not offered when DRAM is at MEMORY_BUSY of its reachable peak or more (the kernel's
    time then follows its bytes, which widening keeps), nor where blocks of one element per thread end with a per-
    block flush (atomics.flush_contention_advice): there more bytes per thread means more elements per thread, fewer
    blocks and fewer flushes, block_decrease's fix."""
    prog = view.program
    if prog is None or view.total <= 0:
        return None
    facts = view.arch
    lc = view.profile.launch
    if roofline.busy(lc.throughput_pct, "dram", view.reach) >= MEMORY_BUSY:
        return None
    if atomics.flush_contention_advice(view) is not None:
        return None  # one element per thread before a per-block flush: widening it is coarsening, block_decrease's

    walks = widenable_walks(view)

    def narrow(ins: Instruction | None, s: PCSample | None, key: cm.InsKey | None) -> bool:
        if key in walks:
            return True
        w = access_bytes(ins)
        if not 0 < w < 4 or w * facts.warp_size >= facts.cache_line_bytes:
            return False
        eff = _efficiency(s)
        return eff is None or eff >= COALESCE_LIMIT

    evs = [e for e in view.edges_by(gpa_class=(stalls.MEMORY_DEPENDENCY,))
           if not e.is_self and narrow(e.def_ins, _sample(view, e, at_def=True), _walk_key(e.def_fn, e.def_ins))]
    evs += [e for e in _throttle_edges(view) if narrow(e.use_ins, _sample(view, e), _walk_key(e.use_fn, e.use_ins))]
    if not evs:
        return None
    from warpwise.analysis.advice.parallel import TAINT_LIMIT

    total = executed = per_element = 0.0
    widths: list[int] = []
    for pf in prog.functions.values():
        loads = {i.offset for i in pf.instructions
                 if cm.mem_class(i) == "global" and i.base_opcode not in cm.MEMORY_WRITES
                 and narrow(i, view.sample_at(pf.name, i.offset), (pf.name, i.offset))}
        reached: frozenset[int] = frozenset()
        if loads and len(pf.instructions) <= TAINT_LIMIT:
            key = frozenset(loads)
            reached = pf.memo(("narrow_reach", key), functools.partial(_narrow_reach, pf, key))
        for i in pf.instructions:
            smp = view.sample_at(pf.name, i.offset)
            if smp is None:
                continue
            total += smp.inst_executed
            if narrow(i, smp, (pf.name, i.offset)) and smp.inst_executed > 0:
                executed += smp.inst_executed
                widths.append(access_bytes(i))
            elif i.offset in reached:
                per_element += smp.inst_executed
    if total <= 0 or not widths:
        return None
    walked = [e for e in evs if _walk_key(*((e.use_fn, e.use_ins) if e.is_self else (e.def_fn, e.def_ins)))
              in walks]
    # a walk's k is its own (widenable_walks); otherwise the widest of the narrow accesses sets it
    k = float(min(walks.values())) if walked else facts.widest_access_bytes / max(widths)
    # k elements per thread: the narrow accesses become one wide one, the work on each loaded element stays
    # (the instructions the narrow loads' values reach: parallel.forward_taint), and the rest of the thread's
    # work (index and bounds arithmetic, set-up) runs once per k elements; the unpacking of the wide access is
    # not counted (an upper bound on what goes)
    r_sm = max(0.0, min(1.0, (per_element + (total - per_element) / k) / total))
    runs = {(pf.name, off) for pf in prog.functions.values()
            for off in contiguous_runs(pf, facts.widest_access_bytes)}
    if walked and all(_walk_key(*((e.use_fn, e.use_ins) if e.is_self else (e.def_fn, e.def_ins))) in runs
                      for e in walked):
        # runs within one pass (contiguous_runs): the thread's loop and its other work stay as they are, only each
        # run's k loads become one
        gone = sum(smp.inst_executed * (1 - 1 / kw) for key, kw in walks.items()
                   if key in runs and (smp := view.sample_at(*key)) is not None)
        r_sm = max(0.0, min(1.0, (total - gone) / total))
    hs = cm.hotspots(view, evs, cm.stall_weight, 3)
    where = cm.lines_text((h.def_.file, h.def_.line) if h.def_ is not None else (h.use.file, h.use.line)
                          for h in hs)
    hint = (f"the global accesses at {where} move {max(widths)} byte{'s' if max(widths) > 1 else ''} per thread "
            f"({max(widths) * facts.warp_size} bytes per warp request, a part of a {facts.cache_line_bytes}-byte "
            f"line), and warps wait on them: have each thread move {facts.widest_access_bytes} bytes (e.g. "
            f"{int(k)} elements as one uint4/float4 load and store, unpacked in registers) so each request carries "
            f"{int(k)}x the bytes")
    ratios = {"dram": 1.0, "l2": 1.0, "sm": r_sm}
    extra = {"k_widen": k, "narrow_executed": executed, "executed": total, "per_element_executed": per_element}
    traffic_bound = False
    if walked:
        # Uncoalesced walks (widenable_walks): a wide request touches the sectors one narrow request did, and k
        # of them become one, so their L1 work (taken as following their sectors, like coalesced_ratios) falls
        # k-fold while L2 and DRAM move the same lines; with L1 busy the kernel's time follows that work.
        sectors = float(sum(smp.l2_sectors for smp in view.profile.pcs.values()))
        removed = sum(smp.l2_sectors * (1 - 1 / kw) for key, kw in walks.items()
                      if (smp := view.sample_at(*key)) is not None)
        if sectors > 0 and removed > 0:
            ratios["l1"] = _l1_ratio(view, global_ratio=(sectors - removed) / sectors)
            extra.update({"sectors": sectors, "walk_sectors_removed": removed})
            traffic_bound = roofline.busy(lc.throughput_pct, "l1", view.reach) >= MEMORY_BUSY
        whs = cm.hotspots(view, walked, cm.stall_weight, 3)
        wlines = cm.lines_text((h.def_.file, h.def_.line) if h.def_ is not None else (h.use.file, h.use.line)
                               for h in whs)
        effs = [eff for key in walks if (eff := _efficiency(view.sample_at(*key))) is not None]
        w = facts.widest_access_bytes // int(k)
        hint = (f"the global loads at {wlines} walk each thread's own consecutive bytes, {w} "
                f"byte{'s' if w > 1 else ''} per load, with the lanes apart: each warp request uses "
                f"{min(effs):.0%} of the sectors it touches and the thread's next loads re-read the rest from L1, "
                "so the cost is the number of requests. "
                f"Read {facts.widest_access_bytes} consecutive bytes per thread at once (one uint4 load for {int(k)} "
                f"elements, unpacked in registers; each thread's run aligned to {facts.widest_access_bytes} "
                f"bytes): {int(k)}x fewer requests for the same sectors, and no layout change across lanes")
    res = cm.stall_elimination_advice(view, "memory_transaction_reduction", evs, hint,
                                      nothing="no stalls on narrow global accesses")
    if not isinstance(res, Advice):
        return None
    res.params["subline_access"] = 1
    if walked:
        res.params["walk_widening"] = 1
    else:
        narrow_keys = {(pf.name, i.offset) for pf in prog.functions.values() for i in pf.instructions
                       if cm.is_global_mem(i) and i.base_opcode == "LDG"
                       and narrow(i, view.sample_at(pf.name, i.offset), (pf.name, i.offset))}
        now, after, comp = decoalesced_companions(view, narrow_keys, k)
        if comp and now > 0:
            # the element-indexed loads beside the narrow ones lose their coalescing (decoalesced_companions): the
            # L1 work after the fix follows the line requests of all global accesses
            ratios["l1"] = _l1_ratio(view, global_ratio=after / now)
            extra.update({"l1_line_requests": now, "l1_line_requests_after": after,
                          "companion_ratio": max(comp.values())})
            res.hint += (f"; the loads read per element beside them (x[e]-style, coalesced now) would then be "
                         f"{int(k)} elements per thread with the lanes {max(comp.values()):.0f}x as many lines apart "
                         "per request: widen only if those loads can stay coalesced (e.g. stage them in shared "
                         "memory), or keep one element per lane")
    return _after_fix_estimate(view, res, ratios, traffic_bound, extra)


def _lines_per_request(s: PCSample, facts: Any) -> float:
    """Cache lines one warp request of a global access touches, from its L2 sectors per execution (at least 1):
    sectors / (line / sector), the L1's tag lookups and data wavefronts for it (Kernel Profiling Guide,
    "Memory Tables": an L1 wavefront serves one line's sectors)."""
    per = s.l2_sectors / s.inst_executed if s.inst_executed > 0 else 0.0
    return max(1.0, per * SECTOR_BYTES / facts.cache_line_bytes)


def decoalesced_companions(view: KernelView, narrow_keys: set[cm.InsKey], k: float
                           ) -> tuple[float, float, dict[cm.InsKey, float]]:
    """What widening coalesced narrow loads to k elements per thread does to the other per-element global loads of
    their loops: (L1 line requests of the launch's global accesses now, after, per-companion after/before ratio).

    Giving each thread k consecutive elements instead of one moves every other access indexed by the element
    from consecutive lanes (d bytes apart, d = its sectors per request x 32 / 32 lanes, at least its width w) to
    lanes k x d bytes apart: a companion read as ``x[e]`` becomes a per-thread run of k elements, read with
    max(1, k w / 16) widest accesses each touching min(32, 32 k d / 128) lines, where k of its coalesced requests
    touched k x max(1, 32 d / 128) (a warp of lanes a line or more apart costs the L1 a wavefront per lane:
    Kernel Profiling Guide, "Memory Tables"). Companions: the global loads in the innermost loop of a narrow load,
    executed as often as it, coalesced (L2 sector efficiency at least COALESCE_LIMIT) and not warp-uniform (two
    sectors or more per request). The narrow loads themselves go from k requests of one line to one of
    widest x 32 / 128 lines. Counts are warp-level executions x lines per request (:func:`_lines_per_request`);
    (0, 0, {}) without a program or companions. Helper modelI, 2026-12-04: holdout11's gemv_int4_bytes, bytes of
    int4 weights per lane widened to 16 with x read as float4 per lane, measured 0.763x."""
    prog = view.program
    facts = view.arch
    if prog is None or k < 2:
        return 0.0, 0.0, {}
    loops: dict[tuple[str, int], float] = {}
    for fn, off in narrow_keys:
        pf = prog.functions.get(fn)
        lp = pf.loop_of(off) if pf is not None else None
        s = view.sample_at(fn, off)
        if lp is not None and s is not None and s.inst_executed > 0:
            loops[(fn, lp.header)] = max(loops.get((fn, lp.header), 0.0), float(s.inst_executed))
    if not loops:
        return 0.0, 0.0, {}
    now = after = 0.0
    ratio: dict[cm.InsKey, float] = {}
    line = facts.cache_line_bytes
    for pf in prog.functions.values():
        for i in pf.instructions:
            if not cm.is_global_mem(i):
                continue
            s = view.sample_at(pf.name, i.offset)
            if s is None or s.inst_executed <= 0:
                continue
            lines = _lines_per_request(s, facts)
            now += s.inst_executed * lines
            key = (pf.name, i.offset)
            if key in narrow_keys:
                after += s.inst_executed / k * max(1.0, facts.widest_access_bytes * facts.warp_size / line)
                continue
            lp = pf.loop_of(i.offset)
            eff = _efficiency(s)
            per = s.l2_sectors / s.inst_executed
            w = access_bytes(i)
            if lp is None or (pf.name, lp.header) not in loops or i.base_opcode != "LDG" or eff is None \
                    or eff < COALESCE_LIMIT or per < 2 or w < 4 or s.inst_executed != loops[(pf.name, lp.header)]:
                after += s.inst_executed * lines
                continue
            d = max(float(w), per * SECTOR_BYTES / facts.warp_size)
            wide = max(1.0, k * w / facts.widest_access_bytes)
            lanes = min(float(facts.warp_size), max(1.0, facts.warp_size * k * d / line))
            before_k = k * max(1.0, facts.warp_size * d / line)
            r = wide * lanes / before_k
            ratio[key] = r
            after += s.inst_executed * lines * r
    if not ratio:
        return 0.0, 0.0, {}
    return now, after, ratio


#: Integer opcodes that build an address from an index: copies, scaling, adds of a base (SASS: IMAD.WIDE idx, 4,
#: base; LEA lo, idx, base, shift; IADD3 carries; SHF sign extensions). An index root is the first definition
#: of another kind (a LOP3 mask, a loaded value, a thread index); a base is a parameter from the constant bank.
_ADDRESS_ARITH = frozenset({"MOV", "IMAD", "LEA", "IADD3", "SHF", "IADD", "VIADD"})
_CONST_OPERAND = re.compile(r"c\[0x[0-9a-f]+\]\[0x[0-9a-f]+\]")


def index_roots(pf: ProgramFunction, ins: Instruction) -> tuple[frozenset[int], frozenset[str]] | None:
    """What the address of the global access ``ins`` of ``pf`` indexes: (offsets of the index roots, constant-bank
    operands of the bases). Reaching definitions over the CFG (blame.slice.FunctionIndex, as
    atomics.address_sources) per address register, through the address arithmetic of _ADDRESS_ARITH (copies,
    scaling, base adds), to the first other definition (a root: its offset) or a constant-bank load (LDC/ULDC: a
    base, its ``c[..][..]`` operand; a ``c[..][..]`` operand of the arithmetic itself counts too). Two accesses
    with the same roots and different bases read two arrays at one index. None when not traceable (a CALL, a
    register live into the kernel, a walk over atomics._WALK_LIMIT steps)."""
    from warpwise.analysis.blame.slice import FunctionIndex

    regs = cm.address_registers(ins)
    fx = pf.memo("function_index", lambda: FunctionIndex(pf))
    j = fx.index.get(ins.offset)
    if not regs or j is None:
        return None
    roots: set[int] = set()
    bases: set[str] = set()
    seen: set[tuple[int, int, str]] = set()
    work = [(fx.block[j], j, r) for r in regs]
    while work:
        key = work.pop()
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > atomics._WALK_LIMIT:
            return None
        start, end, reg = key
        found = fx.defs_before(start, end, reg)
        if not found:
            preds = fx.preds.get(start, [])
            if not preds:
                return None
            work += [(p, fx.end[p], reg) for p in preds if p in fx.end]
            continue
        k = found[0]
        du, d = fx.du[k], fx.ins[k]
        if du.clobbers_all:
            return None
        if d.base_opcode in cm.CONSTANT_READS:
            bases.update(_CONST_OPERAND.findall(d.text))
            continue
        if d.base_opcode not in _ADDRESS_ARITH:
            roots.add(d.offset)
            continue
        bases.update(_CONST_OPERAND.findall(d.text))
        work += [(start, k, u) for u in du.reg_reads if atomics._is_register_or_predicate(u)]
    return frozenset(roots), frozenset(bases)


#: Scattered loads per function looked at for split fields (each costs a forward taint pass).
SPLIT_FIELD_CANDIDATES = 16


def split_field_loads(view: KernelView) -> dict[cm.InsKey, tuple[cm.InsKey, ...]]:
    """Scattered global loads that read a second array at the index of an earlier scattered load whose value they
    wait for (a hash probe's payload after its key compare: ``keys[s]``, then ``vals[s]``): load B -> the loads A it
    pairs with. B pairs with A when both have L2 sector efficiency below COALESCE_LIMIT (each thread's element in
    its own sector), B runs only on A's value (parallel.forward_taint from A, data and control dependence), their
    constant-bank operands differ (another array) and B's index roots (:func:`index_roots`) are all A's (over its
    partners). Storing the fields side by side (an array of structs) puts B's element in A's sector: one request for
    both. Functions over parallel.TAINT_LIMIT instructions are skipped."""
    from warpwise.analysis.advice.parallel import forward_taint

    prog = view.program
    out: dict[cm.InsKey, tuple[cm.InsKey, ...]] = {}
    if prog is None:
        return out
    # only the functions holding one of the view's PCs can have a load with a sample (view.sample_at finds a PC's
    # counters under its function's name or its section owner's, and both resolve to that function); the
    # per-function load lists are the program's, made once (a program-wide scan per kernel was 119 x 203k
    # instruction steps on gemm 200k)
    sampled = {id(pf) for _, pf, _ in view.pc_blocks() if pf is not None}
    for pf, global_loads in _global_loads(prog):
        if id(pf) not in sampled:
            continue
        loads = []
        for i in global_loads:
            eff = _efficiency(view.sample_at(pf.name, i.offset))
            if eff is not None and eff < COALESCE_LIMIT:
                loads.append(i)
        if not 2 <= len(loads) <= SPLIT_FIELD_CANDIDATES:
            continue
        traced = {i.offset: index_roots(pf, i) for i in loads}
        reach: dict[int, frozenset[int]] = {}
        for b in loads:
            rb = traced[b.offset]
            if rb is None or not rb[0] or not rb[1]:
                continue
            partners = []
            for a in loads:
                ra = traced[a.offset]
                if a is b or ra is None or not ra[1] or ra[1] == rb[1] or not ra[0] & rb[0]:
                    continue
                if a.offset not in reach:
                    reach[a.offset] = forward_taint(pf, lambda ins, off=a.offset: ins.offset == off)
                if b.offset in reach[a.offset]:
                    partners.append(a)
            if partners and rb[0] <= frozenset().union(*(traced[a.offset][0] for a in partners)):  # type: ignore[index]
                out[(pf.name, b.offset)] = tuple((pf.name, a.offset) for a in partners)
    return out


def _global_loads(prog: Program) -> list[tuple[ProgramFunction, list[Instruction]]]:
    """(function, its global loads in address order: GLOBAL_LOADS opcodes on global memory) of each of ``prog``'s
    functions of at most parallel.TAINT_LIMIT instructions, in program order; made once per program
    (:func:`split_field_loads`'s candidates, for every kernel's view)."""
    from warpwise.analysis.advice.parallel import TAINT_LIMIT

    def make() -> list[tuple[ProgramFunction, list[Instruction]]]:
        return [(pf, [i for i in pf.instructions if i.base_opcode in cm.GLOBAL_LOADS and cm.is_global_mem(i)])
                for pf in prog.functions.values() if len(pf.instructions) <= TAINT_LIMIT]

    return prog.memo("split_field_global_loads", make)


def _split_field_advice(view: KernelView) -> Advice | None:
    """Memory transaction reduction for split fields (:func:`split_field_loads`): B's sectors go (its element
    arrives in A's sector once the two are stored side by side, a slot of both fields within one 32-byte sector),
    so L2 and DRAM work scale by r = (sectors − B's) / sectors (SourceCounters' L2 sectors of the launch's global
    accesses; random sectors: DRAM the same), L1's with it (:func:`_l1_ratio`), the SM's unchanged; the waits on
    B (GPA eq. 2 over its memory-dependency and throttle stalls) go up to the roofline after the fix, the
    estimate itself when L2 or DRAM is at MEMORY_BUSY of its reachable peak (the kernel's time follows its
    sectors). The cap is computed on the traffic after the fix, with the launch's general reach (a new access
    pattern: KernelView.reach, not reach_now). None when the kernel has no split fields."""
    pairs = split_field_loads(view)
    if not pairs or view.total <= 0:
        return None
    evs = [e for e in view.edges_by(gpa_class=(stalls.MEMORY_DEPENDENCY,))
           if not e.is_self and cm.ins_key(e.def_fn, e.def_ins) in pairs]
    evs += [e for e in _throttle_edges(view) if cm.ins_key(e.use_fn, e.use_ins) in pairs]
    sectors = sum(s.l2_sectors for s in view.profile.pcs.values())
    moved = 0.0
    for name, off in pairs:
        smp = view.sample_at(name, off)
        moved += smp.l2_sectors if smp is not None else 0
    if not evs or sectors <= 0 or not 0 < moved < sectors:
        return None
    prog = view.program
    assert prog is not None

    def line(key: cm.InsKey) -> tuple[str | None, int | None]:
        ins = next((i for i in prog.functions[key[0]].instructions if i.offset == key[1]), None)
        return (ins.loc.file, ins.loc.line) if ins is not None and ins.loc is not None else (None, None)

    b_lines = cm.lines_text(line(b) for b in pairs)
    a_lines = cm.lines_text(line(a) for parts in pairs.values() for a in parts)
    hint = (f"the loads at {b_lines} read a second array at the index of the loads at {a_lines}, whose values they "
            "wait for: each thread's element of each array is its own scattered sector, two dependent requests "
            "per item; store the fields side by side (an array of structs, e.g. a uint2 {key, value} slot) so one "
            "load brings both")
    res = cm.stall_elimination_advice(view, "memory_transaction_reduction", evs, hint,
                                      nothing="no stalls on split-field loads")
    if not isinstance(res, Advice):
        return None
    res.params["split_fields"] = 1
    r = (sectors - moved) / sectors
    lc = view.profile.launch
    traffic_bound = max(roofline.busy(lc.throughput_pct, u, view.reach) for u in ("dram", "l2")) >= MEMORY_BUSY
    return _after_fix_estimate(view, res, {"l2": l2_ratio(view, moved), "dram": r,
                                           "l1": _l1_ratio(view, global_ratio=r)},
                               traffic_bound, {"sectors": float(sectors), "split_field_sectors": moved})


def _global_transaction_reduction(view: KernelView) -> Advice | Skipped:
    """Memory transaction reduction at the global accesses: GPA eq. 2 over their throttle stalls."""
    good, _, unknown = _throttle_split(view)
    missing = "the profile has no L2 sector counts for these accesses" if unknown and not good else ""
    evs = good or unknown
    hint = ""
    if evs:
        hs = cm.hotspots(view, evs, cm.stall_weight, 3)
        where = cm.lines_text((h.use.file, h.use.line) for h in hs)
        hint = (f"the memory system throttles the global accesses at {where}: "
                "issue fewer requests — wider loads (float4), data reused by the block staged in shared memory"
                f"{_constant_memory_clause(view, evs)}")
    # An access that already moves 16 bytes per thread (LDG/STG.128, the widest) cannot be split into fewer
    # requests for the same bytes: its throttle stalls are the traffic itself, which this fix does not change.
    narrow = [e for e in evs if not _widest(e.use_ins)]
    if evs and not narrow:
        return Skipped("memory_transaction_reduction", "the throttled global accesses already move 16 bytes per "
                                                       "thread (128-bit): fewer requests would need fewer bytes")
    if len(narrow) < len(evs):
        hs = cm.hotspots(view, narrow, cm.stall_weight, 3)
        hint = (f"the memory system throttles the global accesses at "
                f"{cm.lines_text((h.use.file, h.use.line) for h in hs)}: issue fewer requests — wider loads "
                f"(float4), data reused by the block staged in shared memory{_constant_memory_clause(view, narrow)} "
                "(the 128-bit accesses beside them are already as wide as they get)")
    return cm.stall_elimination_advice(view, "memory_transaction_reduction", narrow, hint, missing=missing,
                                       nothing="no global-memory throttle stalls")


def value_indexed_constant_loads(view: KernelView) -> dict[cm.InsKey, str]:
    """The kernel's constant-memory loads indexed by loaded data (``LDC R4, c[0x3][R4]`` whose index register
    comes from a global load: a lookup table in ``__constant__`` indexed by each thread's own value): key ->
    their SASS text. The index's origin is traced with the atomics' reaching-definition walk
    (atomics.address_kind == "data"); an index built from constants, parameters, the block index or a loop
    counter (``grid``/``block``) is the same for a warp and is broadcast, and one built from the thread index
    is not judged (its warps may or may not agree). Empty without a program."""
    prog = view.program
    if prog is None:
        return {}

    def make() -> dict[cm.InsKey, str]:
        out: dict[cm.InsKey, str] = {}
        for pf in prog.functions.values():
            for i in pf.instructions:
                if i.base_opcode == "LDC" and cm.address_registers(i) and atomics.address_kind(pf, i) == "data":
                    out[(pf.name, i.offset)] = i.text
        return out

    return dict(prog.memo("value_indexed_constant_loads", make))


def _constant_lookup_advice(view: KernelView) -> Advice | None:
    """Memory transaction reduction for a lookup table in constant memory indexed by data (None when the kernel
    has no such load or no stalls on constant loads).

    The constant cache serves one address per request: "a request is split into as many separate requests as
    there are different memory addresses in the initial request, decreasing throughput by a factor equal to the
    number of separate requests" (CUDA C++ Programming Guide, "Device Memory Accesses", Constant Memory; Best
    Practices Guide, "Constant Memory"). A table indexed by each thread's own data replays each warp's lookup
    about once per distinct value, and every constant load of the kernel (the kernel parameters' too) queues
    behind those replays in the MIO queue. Staged in shared memory, the table serves 32 banks per wavefront.
    M = the memory-throttle stalls kept at constant loads (LDC) + the stalls waiting on an LDC's result; eq. 2.
    The MIO-throttle stalls at other instructions (special registers, shared memory) are left out: the queue
    they wait for is shared with work the fix keeps."""
    sites = value_indexed_constant_loads(view)
    if not sites or view.total <= 0:
        return None
    fn_names = {name for name, _ in sites}
    evs = []
    for e in view.edges:
        if e.gpa_class in cm.NOT_STALLS:
            continue
        if e.is_self:
            ins, fn = e.use_ins, e.use_fn
            ok = e.gpa_class == stalls.MEMORY_THROTTLE
        else:
            ins, fn = e.def_ins, e.def_fn
            ok = e.gpa_class == stalls.EXECUTION_DEPENDENCY
        if ok and ins is not None and ins.base_opcode == "LDC" and fn is not None and fn.name in fn_names:
            evs.append(e)
    on_sites = sum(e.stall for e in evs if cm.ins_key(*((e.use_fn, e.use_ins) if e.is_self else
                                                         (e.def_fn, e.def_ins))) in sites)
    if on_sites <= 0:
        return None
    lines = sorted({(i.loc.file, i.loc.line) for pf in view.program.functions.values() if pf.name in fn_names
                    for i in pf.instructions if (pf.name, i.offset) in sites and i.loc is not None}) \
        if view.program is not None else []
    where = cm.lines_text(lines) if lines else "the table lookups"
    hint = (f"the __constant__ table read at {where} is indexed by each thread's own data: the constant cache "
            "serves one address per request, so a warp's lookup is replayed once per distinct value and every "
            "constant load waits behind those replays. Copy the table into shared memory once per block (a "
            "grid-stride loop amortizes the copy) and read it there (32 banks per wavefront)")
    res = cm.stall_elimination_advice(view, "memory_transaction_reduction", evs, hint,
                                      nothing="no stalls at constant loads")
    if not isinstance(res, Advice):
        return None
    res.estimate = Estimate(res.estimated_speedup, "T/(T-M), M = memory-throttle stalls at constant loads (LDC) + "
                            "stalls waiting on them, in a kernel with data-indexed constant loads",
                            {"T": view.total, "M": res.matched_samples, "M_indexed": on_sites,
                             "indexed_loads": float(len(sites))},
                            "GPA eq. 2 (constant-cache serialization, CUDA C++ Programming Guide)")
    res.params["constant_lookup"] = 1
    return res


def _widest(ins: Instruction | None) -> bool:
    """A 128-bit (16 bytes per thread) global load or store: the widest access there is."""
    return ins is not None and cm.is_global_mem(ins) and ".128" in ins.opcode


@register("global_memory_coalesce", "Global memory coalescing", "stall_elimination",
          "Global-memory throttle stalls at uncoalesced accesses (L2 sectors well above the ideal).",
          "Make neighbouring threads access neighbouring addresses (structure of arrays, transposed indexing).")
def global_memory_coalesce(view: KernelView) -> Advice | Skipped:
    """GPA released global memory coalesce: throttling at accesses with sector efficiency < 0.5, eq. 2. Narrow
    loads that walk each thread's own bytes (:func:`widenable_walks`) are left to memory_transaction_reduction:
    their fix is a wider load per thread, and a layout change across lanes would keep their request count."""
    if (miss := _needs_binary(view, "global_memory_coalesce")) is not None:
        return miss
    walks = widenable_walks(view, runs=False)
    _, bad, unknown = _throttle_split(view)
    walked = [e for e in bad if _walk_key(e.use_fn, e.use_ins) in walks]
    bad = [e for e in bad if _walk_key(e.use_fn, e.use_ins) not in walks]
    if walked and not bad and not unknown:
        hs = cm.hotspots(view, walked, cm.stall_weight, 3)
        return Skipped("global_memory_coalesce", f"the uncoalesced loads at "
                       f"{cm.lines_text((h.use.file, h.use.line) for h in hs)} walk each thread's own bytes: wider "
                       "loads per thread fix them (memory_transaction_reduction), not a layout across lanes")
    if not bad and unknown:
        return Skipped("global_memory_coalesce", "the profile has no L2 sector counts for the throttled accesses",
                       missing=True)
    hint = ""
    if bad:
        hs = cm.hotspots(view, bad, cm.stall_weight, 3)
        effs = [_efficiency(view.sample_at(h.use.function, h.use.pc)) for h in hs]
        eff_txt = ", ".join(f"{e:.0%}" for e in effs if e is not None)
        hint = (f"the global accesses at {cm.lines_text((h.use.file, h.use.line) for h in hs)} use only {eff_txt} of "
                "the sectors they fetch: make consecutive threads touch consecutive addresses")
    res = cm.stall_elimination_advice(view, "global_memory_coalesce", bad, hint,
                                      nothing="no throttle stalls at uncoalesced global accesses")
    if not isinstance(res, Advice) and not bad and not unknown:
        # No throttle stalls at them, but their waits: a traffic-bound kernel whose warps wait on the results of
        # the uncoalesced loads (long_scoreboard) rather than on a full LSU queue pays for the excess sectors all
        # the same, and its estimate is the roofline after the fix, which needs no stall count.
        waits = [e for e in _uncoalesced_waits(view) if _walk_key(e.def_fn, e.def_ins) not in walks]
        if waits:
            hs = cm.hotspots(view, waits, cm.stall_weight, 3)
            hint = (f"the global loads that {cm.lines_text((h.use.file, h.use.line) for h in hs)} wait for fetch "
                    "sectors they do not use: make consecutive threads touch consecutive addresses")
            res = cm.stall_elimination_advice(view, "global_memory_coalesce", waits, hint)
            got = coalesced_ratios(view, exclude=frozenset(walks))
            busy = max(roofline.busy(view.profile.launch.throughput_pct, u, view.reach) for u in ("dram", "l2", "l1"))
            if not isinstance(res, Advice) or got is None or busy < MEMORY_BUSY:
                return Skipped("global_memory_coalesce", "no throttle stalls at uncoalesced global accesses")
            return _after_fix_estimate(view, res, got[0], True, got[1])
    if not isinstance(res, Advice):
        return res
    # What coalescing changes is traffic: the sectors fetched beyond the ideal at uncoalesced accesses (Nsight
    # Compute's L2 theoretical sectors vs ideal) leave L1 and L2; DRAM loses them only where they reached it
    # (sectors that other warps reuse from cache never did). The roofline after the fix (arch/roofline.after_fix)
    # is the expected speedup of a kernel whose time follows its traffic, and caps eq. 2 otherwise.
    got = coalesced_ratios(view, exclude=frozenset(walks))
    if got is None:
        return res
    ratios, extra = got
    # the excess sectors are work of every unit they pass: L1 (tag lookups and wavefronts), L2 and DRAM
    traffic_bound = max(roofline.busy(view.profile.launch.throughput_pct, u, view.reach)
                        for u in ("dram", "l2", "l1")) >= MEMORY_BUSY
    res = _after_fix_estimate(view, res, ratios, traffic_bound, extra)
    return _warp_per_item(view, res, bad, ratios, extra)


#: Share of the throttle stalls at uncoalesced accesses that must lie in loops whose back edge diverges for
#: global_memory_coalesce to read the kernel as a thread-per-item walk (a warpwise threshold: most of them; the
#: rest are the loop's set-up loads, e.g. the row bounds before a CSR row's loop).
ITEM_WALK_SHARE = 0.5


def _warp_per_item(view: KernelView, res: Advice, bad: list[EdgeView], ratios: dict[str, float],
                   extra: dict[str, float]) -> Advice:
    """``res`` (global_memory_coalesce) with the estimate of giving each item a whole warp, where that is larger:
    when the uncoalesced accesses are a thread-per-item walk, a loop whose back edge diverges (each lane runs its
    own item's trip count, :func:`_idle_lanes` of a kernel that is not issue-bound) holding the throttled
    accesses, the lanes touch 32 different items, and the coalescing fix is one warp per item with its lanes
    striding the item (consecutive lanes, consecutive addresses; a __shfl_down_sync reduction): Bell and
    Garland's vector CSR ("Efficient Sparse Matrix-Vector Multiplication on CUDA", NVIDIA TR NVR-2008-004). The
    same rewrite ends the idle lanes of the uneven loop, so it removes divergence_reduction's matched samples
    M_lanes as well (GPA eq. 2, T/(T - M_lanes)), bounded by the roofline after the coalesced traffic
    (``ratios``, :func:`coalesced_ratios`) instead of today's: S = min(T/(T - M_lanes), C_after).
    ``bad``: the throttled uncoalesced edges; ``extra``: the sector inputs."""
    lanes = _idle_lanes(view)
    if lanes is None or lanes[3] or view.total <= 0:
        return res
    m, _, where, _ = lanes
    inside = _imbalanced_loop_instructions(view)
    total = sum(e.stall for e in bad)
    walked = sum(e.stall for e in bad if e.use_fn is not None and e.use_ins is not None
                 and (e.use_fn.name, e.use_ins.offset) in inside)
    if total <= 0 or walked < ITEM_WALK_SHARE * total:
        return res
    e = est.stall_elimination(view.total, m)
    cap = rk.after_fix_cap(view.profile.launch.throughput_pct, ratios, e.speedup, view.reach)
    s = min(e.speedup, cap.cap) if cap is not None else e.speedup
    if s <= res.estimated_speedup:
        return res
    inputs = {"T": view.total, "M_lanes": m, **extra, **{f"r_{u}": r for u, r in ratios.items()}}
    if cap is not None:
        inputs["C_after"] = cap.cap
    res.estimate = Estimate(s, "min(T/(T-M_lanes), C_after), M_lanes = the issue slots of lanes idle in the loops "
                            "whose back edge diverges (divergence_reduction's), C_after = the roofline after the "
                            "coalesced traffic (r_u = unit u's work after/before)", inputs,
                            "GPA eq. 2 (one warp per item: idle lanes and excess sectors), roofline after the fix")
    res.cap = replace(cap, binding=s >= cap.cap - 1e-9) if cap is not None else None
    res.hint += (f"; each thread walks its own item in the loop at {cm.lines_text(where)}, whose trip count "
                 "differs per lane: give each item a whole warp whose lanes stride it (consecutive lanes read "
                 "consecutive elements, __shfl_down_sync reduces the lanes' partial results), which coalesces "
                 "these loads and ends the lanes idle until the warp's longest item is done")
    return res


def _uncoalesced_waits(view: KernelView) -> list[EdgeView]:
    """Memory-dependency edges whose def is a global load with an L2 sector efficiency below COALESCE_LIMIT
    (the warps waiting on an uncoalesced load's result), leaving out gathers: a load whose address is built
    from loaded data (atomics.address_kind == "data", e.g. ``x[col[j]]``) touches whatever the data says, and
    re-laying out the arrays does not make its lanes consecutive."""
    out = []
    gather: dict[cm.InsKey, bool] = {}
    for e in view.edges_by(gpa_class=(stalls.MEMORY_DEPENDENCY,)):
        if e.is_self or e.def_ins is None or e.def_fn is None or not cm.is_global_mem(e.def_ins):
            continue
        eff = _efficiency(view.sample_at(e.def_fn.name, e.def_ins.offset))
        if eff is None or eff >= COALESCE_LIMIT:
            continue
        key = (e.def_fn.name, e.def_ins.offset)
        if key not in gather:
            gather[key] = atomics.address_kind(e.def_fn, e.def_ins) == "data"
        if not gather[key]:
            out.append(e)
    return out


def coalesced_ratios(view: KernelView, limit: float = COALESCE_LIMIT, exclude: frozenset[cm.InsKey] = frozenset()
                     ) -> tuple[dict[str, float], dict[str, float]] | None:
    """Work after / before per memory unit (l2, l1, dram) when the global accesses with a sector efficiency
    below ``limit`` (default COALESCE_LIMIT; 1 = every access) fetch only their ideal sectors, and the inputs
    (sectors, excess, DRAM bytes). None when no access fetches excess sectors. The excess leaves L1 and L2;
    DRAM loses it only where it reached DRAM: after the fix DRAM moves at most the sectors L2 still serves.
    ``exclude``: (function, offset) keys of accesses the fix leaves as they are (their sectors all stay)."""
    lc = view.profile.launch
    sectors = sum(s.l2_sectors for s in view.profile.pcs.values())
    excess = 0.0
    for key, s in view.profile.pcs.items():
        if key in exclude:
            continue
        if s.l2_sectors > 0 and s.l2_sectors_ideal > 0 and s.l2_sectors_ideal / s.l2_sectors < limit:
            excess += s.l2_sectors - s.l2_sectors_ideal
    if not 0 < excess < sectors:
        return None
    r_global = (sectors - excess) / sectors
    ratios = {"l2": l2_ratio(view, excess), "l1": _l1_ratio(view, global_ratio=r_global)}
    if lc.dram_bytes > 0:
        ratios["dram"] = min(1.0, (sectors - excess) * SECTOR_BYTES / lc.dram_bytes)
    return ratios, {"sectors": float(sectors), "excess": excess, "dram_bytes": lc.dram_bytes}


#: Bytes per L2/DRAM sector (CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory").
SECTOR_BYTES = 32


def l2_ratio(view: KernelView, removed: float) -> float:
    """L2 work after / before a fix that removes ``removed`` of the sectors the launch's instructions request from
    L2 (sectors, 32 bytes each): 1 - removed / (G + L), G and L the launch's global and local theoretical L2
    sectors (Nsight Compute Source page, memory_l2_theoretical_sectors_global / _local). Local memory (register
    saves, spills, a callee's frame) goes through L2 like global memory, so a ratio over the global sectors alone
    overstates what removing global sectors frees when local traffic is much of L2's work (holdout13
    ray_aabb_noinline: 403 M local sectors against 23.9 M global ones, L2 at 86% of peak; the 19.7 M excess
    global sectors are 5% of L2's requests, not 82%). 1.0 when no sector was counted."""
    pcs = view.profile.pcs.values()
    total = float(sum(s.l2_sectors + s.l2_sectors_local for s in pcs))
    return 1.0 if total <= 0 else max(0.0, 1.0 - removed / total)


def _l1_ratio(view: KernelView, global_ratio: float = 1.0, shared_removed: float = 0.0,
              local_removed: float = 0.0) -> float:
    """L1 data-pipe work after / before a fix that scales the global accesses' wavefronts by ``global_ratio``
    (taken as following their sectors), removes ``shared_removed`` shared-memory wavefronts and
    ``local_removed`` local-memory ones (:func:`local_wavefronts`). The launch's total LSU wavefronts
    (LaunchConfig.l1_lsu_wavefronts) split into the shared ones (per-PC counters), the removed local ones and
    the rest; without the total, the L1 work is taken as all global (ratio = global_ratio)."""
    total = view.profile.launch.l1_lsu_wavefronts
    shared = float(sum(s.shared_wavefronts for s in view.profile.pcs.values()))
    if total <= 0 or shared > total * 1.05:
        return global_ratio if shared_removed <= 0 else max(0.0, 1.0 - shared_removed / max(shared, 1.0))
    local = min(local_removed, max(0.0, total - shared))
    rest = max(0.0, total - shared - local)
    return max(0.0, (rest * global_ratio + shared - shared_removed) / total)


def local_wavefronts(view: KernelView, keys: set[cm.InsKey]) -> float:
    """L1 wavefronts of the local-memory instructions ``keys`` (function, offset) over the launch: warp-level
    executed instructions × bytes per thread / 4. Local memory is laid out so that consecutive 32-bit words
    belong to consecutive threads and a warp's access to one local address is fully coalesced (CUDA C++
    Programming Guide, "Device Memory Accesses", local memory): 128 bytes, one L1 wavefront, per 32-bit
    access of a warp (Kernel Profiling Guide: a wavefront is the unit one L1 pipeline stage processes per
    cycle); ``.64`` and ``.128`` accesses take 2 and 4."""
    out = 0.0
    for key in keys:
        s = view.sample_at(*key)
        if s is None:
            continue
        fn = view.program.functions.get(key[0]) if view.program is not None else None
        ins = fn.function.at(key[1]) if fn is not None else None
        op = ins.opcode if ins is not None else ""
        width = 4 if ".128" in op else 2 if ".64" in op else 1
        out += float(s.inst_executed) * width
    return out


def _after_fix_estimate(view: KernelView, res: Advice, ratios: dict[str, float], traffic_bound: bool,
                        extra: dict[str, float], units: tuple[str, ...] | None = None) -> Advice:
    """``res`` with the roofline after its fix (arch/roofline.after_fix over the work ``ratios``): the
    expected speedup when ``traffic_bound`` (the kernel's time follows the traffic the fix changes), else the
    ceiling of its eq. 2 estimate. ``units``: the only units whose rooflines count (default all measured: the
    others' work is taken as unchanged). Sets ``res.cap`` so no further unit cap applies."""
    tp = view.profile.launch.throughput_pct
    if units is not None:
        tp = {u: p for u, p in tp.items() if u in units}
    cap = rk.after_fix_cap(tp, ratios, res.estimated_speedup, view.reach)
    if cap is None:
        return res
    inputs = {**extra, **{f"r_{u}": r for u, r in ratios.items()},
              **{f"{u}_pct": tp[u] for u in roofline.ACHIEVABLE if u in tp}}
    rf = "1/max_u(p_u*r_u/a_u)"
    if traffic_bound:
        s, formula = cap.cap, f"{rf}, r_u = unit u's work after/before the fix (traffic-bound kernel)"
    else:
        s = min(res.estimated_speedup, cap.cap)
        formula = f"min({res.estimate.formula}; {rf}), r_u = unit u's work after/before the fix"
        inputs = {**res.estimate.inputs, **inputs}
    eq = "roofline after the fix (SpeedOfLight x traffic)" if traffic_bound else \
        f"{res.estimate.equation}, roofline after the fix"
    res.estimate = Estimate(s, formula, inputs, eq)
    res.cap = replace(cap, binding=s >= cap.cap - 1e-9)
    return res


#: Share of its reachable peak at which a memory unit makes the kernel's time follow its traffic (a warpwise
#: threshold: half the reachable bandwidth; Nsight Compute's SOL rule calls 60% of peak "high").
MEMORY_BUSY = 0.5


@register("shared_memory_coalesce", "Shared memory coalescing", "stall_elimination",
          "Execution-dependency stalls waiting on shared-memory loads (possible bank conflicts).",
          "Pad shared arrays (+1 column) or change the index mapping so a warp's accesses hit distinct banks.")
def shared_memory_coalesce(view: KernelView) -> Advice | Skipped:
    """GPA released shared memory coalesce: shared-memory dependency stalls, eq. 2. Nsight Compute's
    SourceCounters give no per-instruction bank-conflict counts in warpwise's profile model, so the advice
    carries a ``missing`` note instead of confirming conflicts."""
    conflicts = _shared_conflicts(view)
    if conflicts:
        worst = max(conflicts.values())
        hint = (f"{len(conflicts)} shared-memory instruction{'s' if len(conflicts) != 1 else ''} replay because of "
                f"bank conflicts (up to {1 / (1 - worst):.0f} wavefronts where 1 would do, Nsight Compute's shared "
                "wavefronts vs ideal): pad the array (e.g. [32][33]) or permute the index so a warp's accesses hit "
                "distinct banks")
        res = cm.removal_advice(view, "shared_memory_coalesce", conflicts, hint,
                                "the excess (conflict) wavefronts of shared-memory instructions",
                                nothing="no stalls at conflicting shared-memory instructions")
        if isinstance(res, Advice):
            res.params["confirmed"] = 1
            # The conflict wavefronts are L1 data-pipe work: a kernel that keeps L1 busy gains what removing them
            # frees, up to the next unit's roofline (arch/roofline.after_fix); otherwise that caps eq. 2.
            excess = float(sum(max(0, s.shared_wavefronts - s.shared_wavefronts_ideal)
                               for s in view.profile.pcs.values()
                               if s.shared_wavefronts_ideal > 0 and
                               s.shared_wavefronts >= CONFLICT_RATIO * s.shared_wavefronts_ideal))
            lc = view.profile.launch
            ratios = {"l1": _l1_ratio(view, shared_removed=excess)}
            l1_busy = roofline.busy(lc.throughput_pct, "l1", view.reach) >= MEMORY_BUSY
            res = _after_fix_estimate(view, res, ratios, l1_busy,
                                      {"wavefronts_excess": excess, "wavefronts_l1": lc.l1_lsu_wavefronts})
            return _latency_floor(view, res, conflicts, ratios["l1"]) if l1_busy else res
    if _has_wavefront_counts(view):
        return Skipped("shared_memory_coalesce", "the profile's shared-memory wavefront counters show no bank "
                                                 f"conflicts (no instruction at {CONFLICT_RATIO}x its ideal)")
    shared = cm.instructions_of_class(view, "shared")  # id(def_ins) in shared == cm.is_shared_mem(def_ins)
    evs = [e for e in view.edges if e.edge.category == "shared_memory" or
           (not e.is_self and id(e.def_ins) in shared)]
    hint = ""
    if evs:
        hs = cm.hotspots(view, evs, cm.stall_weight, 3)
        hint = (f"uses at {cm.lines_text((h.use.file, h.use.line) for h in hs)} wait for shared-memory loads: if a "
                "warp's addresses fall in the same bank, pad the array or permute the index")
    return cm.stall_elimination_advice(
        view, "shared_memory_coalesce", evs, hint,
        missing="the profile has no shared-memory bank-conflict counts per instruction; conflicts are not confirmed"
        if evs else "", nothing="no shared-memory dependency stalls")


def conflict_wait_removed(view: KernelView, conflicts: dict[cm.InsKey, float], l1_ratio: float
                          ) -> tuple[float, dict[str, float]]:
    """Samples a bank-conflict fix removes when every conflicting load's wait falls to the unloaded shared-memory
    latency and the MIO queue drains with the L1 work it loses, and the inputs: (M, {"L_shared",
    "cycles_per_sample", "M_mio"}).

    A PC sample stands for ``interval × W`` warp-cycles (the sampler takes one of the SM's W active warps per
    interval; ``LaunchConfig.sampling_interval_cycles`` × ``achieved_warps_per_sm``), so the stalls waiting on
    instruction k give its measured wait per execution (Little's law, KernelView.wait_per_execution), ``L_k = W_k ×
    interval × W / n_k`` cycles (``n_k`` = warp instructions executed). After the fix the wait is at least the
    unloaded latency ``L0`` (arch/latency ``shared``, H200-measured LDS 29 cycles), so ``W_k × max(0, 1 − L0 /
    L_k)`` of it goes, plus the excess share of the samples on k itself (issue and queueing of the replayed
    wavefronts). Warps stalled on a full MIO queue (``mio_throttle``, at any instruction: the queue in front of the
    shared-memory pipe, Kernel Profiling Guide, "Warp Stall Reasons") wait for the L1 work ahead of them, so ``1 −
    l1_ratio`` of those samples (``l1_ratio`` = L1 work after / before, :func:`_l1_ratio`) go with it. Shapes:
    counts in samples (float); 0 without a sampling interval or occupancy."""
    lc = view.profile.launch
    per_sample = lc.sampling_interval_cycles * lc.achieved_warps_per_sm
    l0 = latency_of("LDS", view.profile.arch).cycles
    if per_sample <= 0 or not conflicts:
        return 0.0, {}
    waits: dict[cm.InsKey, float] = defaultdict(float)
    own = mio = 0.0
    for e in view.edges:
        d, u = cm.ins_key(e.def_fn, e.def_ins), cm.ins_key(e.use_fn, e.use_ins)
        if e.edge.reason == "mio_throttle":
            mio += e.stall
        elif u is not None and u in conflicts and (e.is_self or d == u):
            own += e.stall * conflicts[u]
        elif d is not None and d in conflicts and not e.is_self and e.gpa_class not in cm.NOT_STALLS:
            waits[d] += e.stall
    m_mio = mio * max(0.0, 1.0 - l1_ratio)
    m = own + m_mio
    for k, w in waits.items():
        s = view.sample_at(*k)
        if s is None or s.inst_executed <= 0 or w <= 0:
            continue
        measured = view.wait_per_execution(w, s)
        m += w * max(0.0, 1.0 - l0 / measured)
    return m, {"L_shared": l0, "cycles_per_sample": per_sample, "M_mio": m_mio, "mio_throttle": mio,
               "conflict_waits": float(sum(waits.values()))}


def _latency_floor(view: KernelView, res: Advice, conflicts: dict[cm.InsKey, float], l1_ratio: float) -> Advice:
    """``res`` (a bank-conflict fix estimated by the roofline after it) bounded by the latency the fix leaves:
    the roofline assumes the kernel keeps L1 busy after the fix, but a kernel with few warps per scheduler and a
    dependent chain of shared accesses (a per-thread sweep) turns latency-bound once its waits fall to the
    unloaded latency. Which of the two the kernel is shows in its stalls: warps that wait more on the full MIO
    queue (``mio_throttle``) than on the conflicting accesses' results are queue-bound and keep the roofline;
    otherwise GPA eq. 2 over :func:`conflict_wait_removed`'s M bounds it and the smaller of the two is the
    estimate (holdout4 ``thomas_smem``: 12 warps per SM, a 32-step dependent sweep, 1% of its samples MIO
    throttle; a kernel that fills the MIO queue, like ``transpose_bank``, keeps the roofline). Queue-bound also
    needs the MIO queue to be the warps' main wait (:func:`_mio_queue_bound`): a kernel whose warps mostly wait
    on global loads, with 1% of its samples at a full MIO queue (holdout5 ``hist15_tailwave``: shared atomics
    with conflicts, 85% long_scoreboard), is not bound by the queue its conflicts fill."""
    m, inputs = conflict_wait_removed(view, conflicts, l1_ratio)
    if not 0 < m < view.total or (inputs["mio_throttle"] >= inputs["conflict_waits"] and _mio_queue_bound(view)):
        return res  # the warps wait on the full MIO queue more than on anything else: queue-bound, the roofline
    lat = est.stall_elimination(view.total, m)
    if lat.speedup >= res.estimated_speedup:
        return res
    formula = f"min({res.estimate.formula}; T/(T-M_lat)), M_lat = waits on the conflicting shared accesses above " \
              "the unloaded latency L_shared (wait per execution = stalls x cycles_per_sample / executions)"
    res.estimate = Estimate(lat.speedup, formula, {**res.estimate.inputs, "T": float(view.total), "M_lat": m, **inputs},
                            f"{res.estimate.equation}; GPA eq. 2 latency floor")
    if res.cap is not None:
        res.cap = replace(res.cap, binding=False)
    return res


def _mio_queue_bound(view: KernelView) -> bool:
    """Whether the full MIO queue (``mio_throttle``: the queue in front of the shared-memory pipe, Nsight Compute
    Kernel Profiling Guide, "Warp Stall Reasons") is the kernel's most frequent stall reason, over all its PC
    samples (the profile's, not the blame's: 'selected' and 'not_selected' are not stalls). Nsight Compute's
    guidance reads the top stall reason as the warps' bottleneck; only then does the kernel's time follow the
    L1 work the queue holds."""
    def make() -> bool:
        by = {r: c for r, c in view.stall_totals().items() if stalls.stall_class(r) not in cm.NOT_STALLS}
        return bool(by) and max(by, key=lambda r: by[r]) == "mio_throttle"
    bound: bool = view.memo("mio_queue_bound", make)
    return bound


#: A shared-memory instruction with at least this many wavefronts per ideal wavefront has bank conflicts
#: worth fixing (a warpwise threshold: 1.5 = half of its accesses replay once).
CONFLICT_RATIO = 1.5


def _has_wavefront_counts(view: KernelView) -> bool:
    """Whether the profile has Nsight Compute's per-instruction shared wavefront counters (SourceCounters)."""
    return any(s.shared_wavefronts_ideal > 0 for s in view.profile.pcs.values())


def _positions_by_name(shared: list[tuple[ProgramFunction, Instruction]]) -> dict[str, list[int]]:
    """Positions in ``shared`` by the names a profile may file them under: the function's own name and,
    for code in a ``.text.<kernel>`` section, that kernel's name."""
    out: dict[str, list[int]] = {}
    for k, (pf, _i) in enumerate(shared):
        out.setdefault(pf.name, []).append(k)
        sec = pf.function.section
        if sec.startswith(".text.") and sec[len(".text."):] != pf.name:
            out.setdefault(sec[len(".text."):], []).append(k)
    return out


def _shared_conflicts(view: KernelView) -> dict[cm.InsKey, float]:
    """Shared-memory instructions with bank conflicts: key -> share of their wavefronts that are excess
    (1 − ideal / actual), from Nsight Compute's per-instruction shared wavefront counters."""
    out: dict[cm.InsKey, float] = {}
    if view.program is None:
        return out
    prog = view.program
    shared = prog.memo("shared_instructions", lambda: [(pf, i) for pf in prog.functions.values()
                                                        for i in pf.instructions if cm.is_shared_mem(i)])
    # sample_at finds a PC only under its function's name or its section's kernel: only the instructions
    # filed under a profiled name are visited (program order kept), not the whole program per kernel
    by_name = prog.memo("shared_instructions_by_name", lambda: _positions_by_name(shared))
    profiled = {name for name, _ in view.profile.pcs}
    for k in sorted({k for name in profiled for k in by_name.get(name, ())}):
        pf, i = shared[k]
        s = view.sample_at(pf.name, i.offset)
        if s is None or s.shared_wavefronts_ideal <= 0:
            continue
        if s.shared_wavefronts >= CONFLICT_RATIO * s.shared_wavefronts_ideal:
            out[(pf.name, i.offset)] = 1.0 - s.shared_wavefronts_ideal / s.shared_wavefronts
    return out


# ---- branches ---------------------------------------------------------------------------------------

def _branch_efficiency(view: KernelView, s: PCSample | None) -> float | None:
    if s is None or s.inst_executed <= 0:
        return None
    return s.thread_inst_executed / (s.inst_executed * view.arch.warp_size)


def _at_branches(view: KernelView) -> list[EdgeView]:
    """The edges whose blamed instruction (the use for a self-kept stall, else the def) is a branch, in edge
    order (once per view: divergence reduction and branch elimination both filter them)."""
    def make() -> list[EdgeView]:
        branch = cm.BRANCH_OPS
        return [e for e in view.edges if (i := e.use_ins if e.is_self else e.def_ins) is not None
                and i.base_opcode in branch]

    edges: list[EdgeView] = view.memo("edges_at_branches", make)
    return edges


def _branch_edges(view: KernelView,
                  pred: Callable[[ProgramFunction | None, Instruction, PCSample | None], bool]) -> list[EdgeView]:
    """The :func:`_at_branches` edges whose blamed branch, its program function and its profile sample satisfy
    ``pred(fn, ins, sample)``, in edge order. ``pred`` is asked once per branch PC (the one memo of the rules
    that read the branch: its outcome, loop control, nvcc's dispatch): the edges of one PC (a stall reason and
    use each) share the function, the instruction and the sample (all fixed by the edge's function and the PC)."""
    out = []
    seen: dict[tuple[str, int | None], bool] = {}
    for e in _at_branches(view):
        self_ = e.is_self
        key = (e.edge.function, e.edge.use_offset if self_ else e.edge.def_offset)
        ok = seen.get(key)
        if ok is None:
            ins = e.use_ins if self_ else e.def_ins
            assert ins is not None  # _at_branches keeps edges with an instruction only
            s = _sample(view, e) if self_ else _sample(view, e, at_def=True)
            ok = seen[key] = bool(pred(e.use_fn if self_ else e.def_fn, ins, s))
        if ok:
            out.append(e)
    return out


@register("divergence_reduction", "Divergence reduction", "stall_elimination",
          "Stalls at or after branches where the threads of a warp go different ways.",
          "Make the branch condition uniform per warp (sort or bin the work), or compute both sides "
          "branch-free with selects.")
def divergence_reduction(view: KernelView) -> Advice | Skipped:
    """GPA released divergence reduction: stalls tied to branches whose thread efficiency is < 0.5, eq. 2."""
    if (miss := _needs_binary(view, "divergence_reduction")) is not None:
        return miss
    def diverged(fn: ProgramFunction | None, ins: Instruction, s: PCSample | None) -> bool:
        eff = _branch_efficiency(view, s)
        return (s is not None and (s.divergent_branches > 0 or (eff is not None and eff < DIVERGENCE_LIMIT))
                and not compiler_branch(fn, ins))

    evs = _branch_edges(view, diverged)
    hint = ""
    if evs:
        hs = cm.hotspots(view, evs, cm.stall_weight, 3)
        hint = (f"the branch at {cm.lines_text(((h.def_ or h.use).file, (h.def_ or h.use).line) for h in hs)} splits "
                "warps: group work so a warp's threads take the same side, or compute both sides with selects")
    lanes = _idle_lanes(view)
    if lanes is None:
        return cm.stall_elimination_advice(view, "divergence_reduction", evs, hint,
                                           nothing="no stalls at divergent branches")
    # An issue-bound kernel pays for divergence in issue slots: each side of the branch issues with only its
    # lanes active. Grouping the work so warps do not split issues the same thread-instructions in
    # efficiency-times fewer warp-instructions: M = sum_i s_i (1 - e_i / e_cta) over the instructions that run
    # with fewer lanes than the CTA shape allows (e_i = thread / warp instructions / warp size).
    m, keys, where, issue_bound = lanes
    if not issue_bound:
        hint = (f"the loop at {cm.lines_text(where)} runs a different number of iterations in each thread (its back "
                "edge diverges): a warp runs until its longest lane is done, with the others idle. Give the work "
                "of one item to a whole warp (lanes stride it, __shfl_down_sync reduces), or sort the items by "
                "length so a warp's threads loop about as long")
    elif not hint:
        hint = (f"warps run {cm.lines_text(where)} with part of their lanes idle (the threads of a warp take different "
                "sides of a branch): group the work so a warp's threads take the same side (sort or bin by the "
                "condition, e.g. one kind of item per warp)")
    res = cm.stall_elimination_advice(view, "divergence_reduction", evs, hint,
                                      nothing="no stalls at divergent branches")
    eq2 = res.estimated_speedup if isinstance(res, Advice) else 1.0
    e_lanes = est.stall_elimination(view.total, m)
    if e_lanes.speedup <= eq2:
        return res
    if not isinstance(res, Advice):
        res = cm.removal_advice(view, "divergence_reduction", keys, hint, "the idle lanes of divergent code",
                                nothing="no divergent code")
        if not isinstance(res, Advice):
            return res
    res.estimate = Estimate(e_lanes.speedup, "T/(T-M), M = T * sum_i n_i (1 - e_i/e_cta) / sum_i n_i, n_i = warp "
                            "instructions executed at PC i, over instructions run with idle lanes (e_i = thread/warp "
                            "instructions/32)" + ("" if issue_bound else " in loops whose back edge diverges"),
                            {"T": view.total, "M": m},
                            "GPA eq. 2 (issue slots of idle lanes, " +
                            ("issue-bound kernel)" if issue_bound else "lanes idle in loops of uneven trip counts)"))
    res.matched_samples, res.share = m, m / view.total if view.total else 0.0
    return res


def _idle_lanes(view: KernelView) -> tuple[float, dict[cm.InsKey, float], list[tuple[str | None, int]], bool] | None:
    """(M samples, instruction keys -> share removed, their sampled source lines, issue_bound) of the issue slots
    that divergent code wastes, when the kernel has divergent branches; None otherwise.

    An issue-bound kernel (SM at MEMORY_BUSY of its peak or more) counts every instruction run with idle lanes.
    Otherwise only the loops whose back edge diverges count: each thread runs its own trip count (a row of its
    own length), so a warp runs until its longest lane is done and its loads carry fewer and fewer lanes (load
    imbalance; CUDA C++ Best Practices Guide, "Branching and Divergence"; the vector CSR kernel of Bell and
    Garland, "Efficient Sparse Matrix-Vector Multiplication on CUDA", 2008, gives each row a warp for this).
    A latency-bound warp's time follows its warp instructions as an issue-bound one's does, one dependent round
    trip each; the other divergent branches of a latency-bound kernel (a rare insertion in a loop every lane
    runs as long) cost it little, since other warps fill the issue slots."""
    prof = view.profile
    issue_bound = roofline.busy(prof.launch.throughput_pct, "sm", view.reach) >= MEMORY_BUSY
    if not any(s.divergent_branches > 0 for s in prof.pcs.values()):
        return None
    ws = view.arch.warp_size
    tpb = prof.launch.threads_per_block
    e_cta = tpb / (ws * -(-tpb // ws)) if tpb > 0 else 1.0
    inside: set[cm.InsKey] | None = None if issue_bound else _imbalanced_loop_instructions(view)
    if inside is not None and not inside:
        return None
    # The kernel's time follows the warp instructions it issues, not where its warps are sampled (warps ready
    # to issue wait as not_selected wherever they are, e.g. at the kernel's entry): the wasted share is counted
    # in executed warp instructions (SourceCounters inst_executed per PC) and M = that share of T.
    issued = float(sum(s.inst_executed for s in prof.pcs.values() if s.inst_executed > 0))
    wasted, keys, where = 0.0, {}, []  # where: (file, line) of the lanes-wasting instructions
    for s in prof.pcs.values():
        if s.inst_executed <= 0 or (inside is not None and (s.function, s.offset) not in inside):
            continue
        if _in_compiler_routine(view, s.function, s.offset):
            continue  # nvcc's slow paths run with the lanes that need them: their fix is the arithmetic's
        e = s.thread_inst_executed / (ws * s.inst_executed)
        if e < DIVERGENCE_LANES * e_cta:
            share = 1 - e / e_cta
            wasted += s.inst_executed * share
            keys[(s.function, s.offset)] = share
            if s.line is not None and s.samples > 0:
                where.append((s.file, s.line))
    m = view.total * wasted / issued if issued > 0 else 0.0
    if m <= 0 or m >= view.total:
        return None
    return m, keys, where, issue_bound


def _in_compiler_routine(view: KernelView, function: str, offset: int) -> bool:
    """Whether the instruction at ``offset`` of profile function ``function`` is code of nvcc's routines: inside a
    compiler-emitted math routine, or in the block that calls one after its dispatch branch
    (:func:`compiler_branch`). Its idle lanes are the lanes that took the slow path, not a user's branch."""
    pf = view.resolve(function, offset)
    if pf is None:
        return False
    if _math_routine_function(pf):
        return True
    b = block_at(pf, offset)
    return b is not None and b.start in _routine_call_blocks(pf)


def _imbalanced_loop_instructions(view: KernelView) -> set[cm.InsKey]:
    """Profile keys (function, offset) of the instructions in loops whose back-edge branch diverges (Nsight
    Compute divergent-branch count > 0 at the latch's last instruction): loops whose trip count differs between
    the lanes of a warp."""
    out: set[cm.InsKey] = set()
    if view.program is None:
        return out
    # only functions with a divergent branch can hold such a loop (not every function of the program per kernel)
    fns = {pf.name: pf for s in view.profile.pcs.values() if s.divergent_branches > 0
           and (pf := view.resolve(s.function, s.offset)) is not None}
    for pf in fns.values():
        for lp in pf.loops.values():
            diverges = False
            for latch, _ in lp.back_edges:
                b = pf.block_of(latch)
                s = view.sample_at(pf.name, b.instructions[-1].offset) if b is not None and b.instructions else None
                diverges |= s is not None and s.divergent_branches > 0
            if diverges:  # keyed as the profile files them (a callee's PCs may be under its kernel's name)
                for start in lp.blocks:
                    if (b := pf.block_of(start)) is not None:
                        out.update((smp.function, smp.offset) for i in b.instructions
                                   if (smp := view.sample_at(pf.name, i.offset)) is not None)
    return out


#: An instruction runs "with idle lanes" below this share of the lanes its CTA shape gives (a warpwise
#: threshold: 10% below full, so a few exited threads at the grid's end do not count).
DIVERGENCE_LANES = 0.9


def _loop_test_lines(fn: ProgramFunction) -> dict[tuple[str, int], Loop]:
    """(file, line) of each loop's back-edge branch (the last instruction of a latch block) -> the loop: the
    source line of the loop statement's condition."""
    def make() -> dict[tuple[str, int], Loop]:
        out: dict[tuple[str, int], Loop] = {}
        for lp in fn.loops.values():
            for latch, _ in lp.back_edges:
                b = fn.blocks.get(latch)
                last = b.instructions[-1] if b is not None and b.instructions else None
                if last is not None and last.base_opcode in cm.BRANCH_OPS and last.loc is not None:
                    out.setdefault((last.loc.file, last.loc.line), lp)
        return out

    table: dict[tuple[str, int], Loop] = fn.memo("loop_test_lines", make)
    return table


def loop_control(fn: ProgramFunction | None, ins: Instruction | None) -> Loop | None:
    """The loop a branch steers, or None. A loop's control branches are
    - the branch of a latch (the back edge to the header: a rotated loop's trip-count compare),
    - a branch of the header that leaves the loop (a top-tested loop's condition),
    - a branch on the source line of a loop's back-edge branch outside that loop: the same ``for``/``while``
      condition compiled into the guard that skips the loop and the dispatch between an unrolled copy and its
      remainder loop (nvcc's unrolling: ``n > 0``, ``n >= 4``, ``n & 3``).
    Their conditions are the loop's trip count, not a decided condition that could be hoisted (a long loop's
    back edge is taken ≥ 99.9% of the time), so branch elimination does not advise them. A branch of another
    statement written on the loop's own line (``for (...) if (f) ...;``) is taken for loop control too.
    ``fn``: the function holding ``ins`` (program/model)."""
    if fn is None or ins is None or (b := block_at(fn, ins.offset)) is None:
        return None
    for lp in fn.loop_nest(ins.offset):
        if any(latch == b.start for latch, _ in lp.back_edges):
            return lp
        if b.start == lp.header and any(s not in lp.blocks for s in fn.cfg.successors(b.start)):
            return lp
    if ins.loc is None:
        return None
    return _loop_test_lines(fn).get((ins.loc.file, ins.loc.line))


def compiler_branch(fn: ProgramFunction | None, ins: Instruction | None) -> bool:
    """Whether a branch is nvcc's, not the user's: its dispatch to an internal arithmetic routine
    (:func:`routine_dispatch`: the FCHK test of an IEEE float division, a 64-bit division's 32-bit fast path) or
    a branch inside such a routine or another compiler-emitted math routine (``__cuda_sm3x_div_rn_noftz_f32_slowpath``,
    ``__internal_trig_reduction_slowpathd``: context.is_math_routine). The user cannot hoist, specialise or
    un-diverge them; the fix of that arithmetic (strength reduction, fast math) removes them. Branch elimination
    and divergence reduction both leave them out (one rule for both)."""
    if fn is not None and _math_routine_function(fn):
        return True
    return routine_dispatch(fn, ins)


def _math_routine_function(fn: ProgramFunction) -> bool:
    """Whether ``fn`` is a compiler-emitted math routine (context.is_math_routine; a kernel never is)."""
    return not fn.is_kernel and is_math_routine(fn.name)


def _routine_call_blocks(fn: ProgramFunction) -> frozenset[int]:
    """Start offsets of ``fn``'s blocks that call one of nvcc's internal arithmetic routines
    (common.nvcc_routine_call), found once per function: :func:`routine_dispatch` asks per branch and
    :func:`_in_compiler_routine` per sampled PC."""
    def make() -> frozenset[int]:
        return frozenset(s for s, b in fn.blocks.items() if any(cm.nvcc_routine_call(i) for i in b.instructions))
    found: frozenset[int] = fn.memo("nvcc_routine_call_blocks", make)
    return found


def routine_dispatch(fn: ProgramFunction | None, ins: Instruction | None) -> bool:
    """Whether a branch is nvcc's dispatch to one of its internal arithmetic routines: one of its successor blocks
    calls it (common.nvcc_routine_call) — a 64-bit division's ``__cuda_sm20_rem_u64`` (the other side runs the
    I2F.U32.RP path when both operands fit in 32 bits), an IEEE float division's FCHK slow path
    ``__cuda_sm3x_div_rn_noftz_f32_slowpath``. Compiler-made, not a condition of the user's to hoist: strength
    reduction and fast_math own that arithmetic."""
    if fn is None or ins is None or (b := block_at(fn, ins.offset)) is None:
        return False
    calls = _routine_call_blocks(fn)
    return any(s in calls for s in fn.cfg.successors(b.start))


@register("branch_elimination", "Branch elimination", "stall_elimination",
          "Stalls at predicated branches that (nearly) always go the same way.",
          "Hoist the decided condition out of the loop or kernel, or specialize the code (template parameter).")
def branch_elimination(view: KernelView) -> Advice | Skipped:
    """GPA released branch elimination: stalls at branches with a taken ratio ≥ 0.999 or ≤ 0.001, eq. 2 — except
    a loop's own control branches (:func:`loop_control`: a long loop's back edge is taken ≥ 99.9% of the time, yet
    its compare cannot be hoisted) and nvcc's own branches (:func:`compiler_branch`)."""
    if (miss := _needs_binary(view, "branch_elimination")) is not None:
        return miss
    def decided(fn: ProgramFunction | None, ins: Instruction, s: PCSample | None) -> bool:
        if ins.predicate is None or s is None or s.thread_inst_executed <= 0:
            return False
        r = s.predicated_on_thread_inst_executed / s.thread_inst_executed
        return ((r >= PRED_LIMIT or r <= 1 - PRED_LIMIT)
                and loop_control(fn, ins) is None and not compiler_branch(fn, ins))

    # one test per branch, not per edge (a ptx_loops 200k kernel: 125k edges at a few thousand branches)
    evs = _branch_edges(view, decided)
    hint = ""
    if evs:
        hs = cm.hotspots(view, evs, cm.stall_weight, 3)
        hint = (f"the branch at {cm.lines_text(((h.def_ or h.use).file, (h.def_ or h.use).line) for h in hs)} always "
                "goes the same way in this run: hoist the test out of the hot path or specialize the code")
    return cm.stall_elimination_advice(view, "branch_elimination", evs, hint, nothing="no stalls at decided branches")


# ---- indirect_address_elimination ---------------------------------------------------------------------

def _off_chip(i: Instruction) -> bool:
    """A memory instruction whose access leaves the SM (global, local, constant, texture; not shared memory):
    the dependent access of an indirection that :func:`_feeds_address` counts.

    A loaded value that only indexes shared memory (``t[in[i] & 0xff]``: a lookup table staged on chip, holdout13
    hist_eq_apply) is the data the kernel transforms, not an index array: the load's stall is its own DRAM
    latency, which any consumer would wait for (latency hiding, capped by the kernel's roofline like any other),
    and there is no second long-latency access in the chain to overlap (shared memory answers in ~30 cycles,
    NVIDIA Hopper tuning guide) and no index traffic a computed index would remove: the data must still be read.
    GPA's indirect address elimination (Zhou et al., CGO'21, Table 2) targets the chain ``a[b[i]]`` of two
    memory round trips."""
    return cm.is_memory(i) and not cm.is_shared_mem(i)


def _feeds_address(view: KernelView, ev: EdgeView) -> bool:
    """Whether the loaded value of ``ev``'s def forms an off-chip address (:func:`_off_chip`): the use is such a
    memory op with the value in its address operand, or an address computation whose result a later such memory
    op in the block uses, or a test whose predicate guards one."""
    use, d = ev.use_ins, ev.def_ins
    if use is None or d is None or ev.use_fn is None:
        return False
    loaded = cm.dest_registers(d)
    if not loaded:
        return False
    if cm.is_memory(use) and loaded & cm.address_registers(use):
        return _off_chip(use)
    if cm.is_memory(use):
        return False
    produced = cm.dest_registers(use)
    if produced and produced & _address_registers_after(view, ev.use_fn, use.offset) and \
            _reaches_address(ev.use_fn, use, set(produced)):
        return True
    return _guards_dependent_access(ev.use_fn, use, loaded)


def _reaches_address(pf: ProgramFunction, use: Instruction, produced: set[str]) -> bool:
    """Whether a value ``use`` writes (``produced``) reaches the address operand of a later off-chip memory
    instruction (:func:`_off_chip`) of its block, through the registers written from it, before an unpredicated
    write from other values replaces it. A register name alone is not enough: the allocator reuses names, so an
    FMUL's result register may later hold an unrelated address (holdout8 biquad_bank: the loaded sample multiplied
    by a coefficient, its register reused for the next store's address after the value was consumed)."""
    block = block_at(pf, use.offset)
    if block is None:
        return False
    tainted = set(produced)
    for i in _after_in_block(block, use):
        if _off_chip(i) and cm.address_registers(i) & tainted:
            return True
        guard = i.predicate.lstrip("@!") if i.predicate else ""
        if _read_registers(i) & tainted:
            tainted |= _written_data_registers(i)
        elif not guard:
            tainted -= _written_data_registers(i)
        if not tainted:
            return False
    return False


def _after_in_block(block: BasicBlock, use: Instruction) -> list[Instruction]:
    """The instructions of ``block`` after ``use`` (one of them), in address order: from its position, found by
    its offset's distance from the block's first instruction (16 bytes per instruction from Volta on: NVIDIA
    CUDA Binary Utilities, instruction set reference), checked, else by a scan."""
    ins = block.instructions
    if ins:
        k = (use.offset - ins[0].offset) // 16
        if 0 <= k < len(ins) and ins[k].offset == use.offset:
            return ins[k + 1:]
    for k, i in enumerate(ins):
        if i.offset == use.offset:
            return ins[k + 1:]
    return []


def _written_data_registers(i: Instruction) -> frozenset[str]:
    """:func:`_written_registers` less predicates (P*, UP*): the registers that carry a value."""
    if not i.operands:
        return frozenset()
    return _written_data_of(i.opcode, i.operands[0])


@functools.lru_cache(maxsize=65536)
def _written_data_of(opcode: str, first_op: str) -> frozenset[str]:
    """:func:`_written_data_registers` of an instruction with ``opcode`` and first operand ``first_op``."""
    return frozenset(r for r in _written_of(opcode, first_op) if not r.startswith(("P", "UP")))


def _guards_dependent_access(pf: ProgramFunction, use: Instruction, loaded: set[str]) -> bool:
    """Whether ``use`` (the first reader of the ``loaded`` registers) writes a predicate that guards a later
    memory instruction of its block whose address is computed from the loaded value: the validity test of a
    gathered index (``src >= 0 ? img[src] : 0`` compiles to ``ISETP P0, R5`` then ``@P0 IMAD.WIDE R2, R5`` and
    ``@P0 LDG [R2]``). The first use of the index is then the test, not the address, yet the gather waits for
    the index all the same. A forward scan from ``use`` to the end of its block: registers written from the
    loaded value (or from registers written from it) carry it; a register or predicate rewritten from other
    values stops carrying it (common.def_use semantics of the first operand as the destination)."""
    preds = {r for r in _written_registers(use) if r.startswith(("P", "UP"))}
    if not preds:
        return False
    block = block_at(pf, use.offset)
    if block is None:
        return False
    tainted = set(loaded)
    for i in _after_in_block(block, use):
        guard = i.predicate.lstrip("@!") if i.predicate else ""
        if _off_chip(i) and guard in preds and cm.address_registers(i) & tainted:
            return True
        written = _written_registers(i)
        if _read_registers(i) & tainted:
            tainted |= _written_data_registers(i)
        elif not guard:  # an unpredicated write from other values replaces the register
            tainted -= written
        if not guard:
            preds -= written
        if not preds or not tainted:
            return False
    return False


def _address_registers_after(view: KernelView, pf: ProgramFunction, offset: int) -> frozenset[str]:
    """Address registers of the off-chip memory instructions (:func:`_off_chip`) after ``offset`` in its block
    (suffix unions built once per block, so each edge costs a lookup instead of a scan of the block)."""
    block = block_at(pf, offset)
    if block is None:
        return frozenset()

    def make() -> dict[int, frozenset[str]]:
        out: dict[int, frozenset[str]] = {}
        acc: frozenset[str] = frozenset()
        for i in reversed(block.instructions):
            out[i.offset] = acc  # strictly after i
            if _off_chip(i):
                acc = acc | cm.address_registers(i)
        return out

    table: dict[int, frozenset[str]] = view.memo(("address_after", id(pf), block.start), make)
    return table.get(offset, frozenset())


@register("indirect_address_elimination", "Indirect address elimination", "stall_elimination",
          "Memory-dependency stalls where a loaded value is used to compute another load's address (a[b[i]]).",
          "Compute the index instead of loading it, load indices ahead (prefetch the next iteration's index), "
          "or reorder data so the indirection disappears.")
def indirect_address_elimination(view: KernelView) -> Advice | Skipped:
    """GPA released indirect address elimination: global-load → address dependency stalls, eq. 2."""
    if (miss := _needs_binary(view, "indirect_address_elimination")) is not None:
        return miss
    evs = [e for e in view.edges_by(gpa_class=(stalls.MEMORY_DEPENDENCY,))
           if not e.is_self and cm.base(e.def_ins) in cm.GLOBAL_LOADS and _feeds_address(view, e)
           and not atomics.feeds_atomic_address(view, e)]
    hint = ""
    if evs:
        hs = cm.hotspots(view, evs, cm.stall_weight, 3)
        h = hs[0]
        hint = (f"the address used at {cm.line_ref(h.use.file, h.use.line)} comes from the load at "
                f"{cm.line_ref(h.def_.file, h.def_.line) if h.def_ else 'line ?'}: every access waits for its index "
                "first. Load the index one "
                "iteration ahead (software prefetch), compute it when it follows a pattern, or store the data in "
                "the order it is read")
    res = cm.stall_elimination_advice(view, "indirect_address_elimination", evs, hint,
                                      nothing="no stalls on loaded addresses")
    if not isinstance(res, Advice):
        return res
    # Eliminating the index loads (computing the index) also removes their traffic, so the units they loaded
    # are not left unchanged: the roofline after the fix (their sectors gone) caps eq. 2.
    lc = view.profile.launch
    index_pcs = {(e.def_fn.name, e.def_ins.offset) for e in evs if e.def_fn is not None and e.def_ins is not None}
    sectors = sum(s.l2_sectors for s in view.profile.pcs.values())
    idx = sum(s.l2_sectors for s in view.profile.pcs.values() if (s.function, s.offset) in index_pcs)
    if sectors <= 0 or not 0 < idx < sectors:
        return res
    r = (sectors - idx) / sectors
    ratios = {"l2": l2_ratio(view, idx), "dram": r, "l1": _l1_ratio(view, global_ratio=r)}
    keep_traffic = rk.roofline_cap(lc.throughput_pct, rk.units_for("indirect_address_elimination",
                                                                    "stall_elimination"), reach_of=view.reach_now)
    res = _after_fix_estimate(view, res, ratios, False, {"sectors": float(sectors), "index_sectors": float(idx)})
    if keep_traffic is not None and res.estimated_speedup > keep_traffic.cap * 1.001:
        # more than a fix that keeps the index traffic could give: only computing the index (a pattern) gets it
        res.upper_bound = True
        res.hint += "; the estimate is an upper bound, as it assumes the index loads go away"
    return res

