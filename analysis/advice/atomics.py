"""Atomic privatization: global atomics that many threads aim at a few addresses (a warpwise optimizer; GPA
has none for atomics).

A global atomic (RED/ATOM) is performed at the L2 slice that owns its address, one after another for the same
address: a sum into one float (``atomicAdd(loss, d * d)``) or a histogram whose bins come from the data runs
at the rate of one L2 slice, with every other unit of the GPU idle. The sampled warps show it as ``drain``
(warps that reached EXIT wait for their outstanding atomics), throttles at the atomic, and waits on an ATOM's
returned value. The fix keeps the partial results private — a per-thread accumulator over a grid-stride loop,
a warp reduction (``__shfl_down_sync``) or a per-block copy in shared memory — and issues one global atomic
per warp or block (NVIDIA, "CUDA Pro Tip: Optimized Filtering with Warp-Aggregated Atomics"; the shared-
memory histogram of the CUDA samples' ``histogram64``/``histogram256``).

Which atomics contend is read from the SASS: the address of the atomic is traced back through its reaching
definitions. An address that depends on a thread or lane index (SR_TID, SR_LANEID) is distinct per thread and
not matched; one that depends only on constants and kernel parameters is a single address for the whole grid,
one that depends on the block index (SR_CTAID) a single address per block, and one that depends on loaded data
a data-dependent address (a histogram: as many addresses as bins).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import PurePosixPath

from warpwise.analysis.advice import common as cm
from warpwise.analysis.advice import ranking as rk
from warpwise.analysis.advice.context import EdgeView, KernelView, block_at, user_loc
from warpwise.analysis.advice.model import Advice, Estimate, Skipped
from warpwise.analysis.advice.registry import register
from warpwise.analysis.arch import stalls
from warpwise.analysis.binary.model import Instruction
from warpwise.analysis.blame.slice import FunctionIndex
from warpwise.analysis.program.model import ProgramFunction

#: SASS opcodes of global atomics and reductions (sm_70+: RED/ATOM with .E; sm_90: REDG/ATOMG).
GLOBAL_ATOMICS = frozenset({"RED", "REDG", "ATOM", "ATOMG"})
#: Shared-memory atomics. A float atomicAdd on shared memory has no native instruction on sm_90: nvcc emits a
#: compare-and-swap retry loop (LDS, FADD, ATOMS.CAST.SPIN, ISETP, BRA back; nvdisasm of nvcc 13 sm_90
#: cubins), which the lanes of a warp aiming at one address leave one per round.
SHARED_ATOMICS = frozenset({"ATOMS"})
#: How many (block, register) steps the reaching-definition walk takes; an address built further away is not
#: judged.
_WALK_LIMIT = 4096


def address_kind(pf: ProgramFunction, ins: Instruction) -> str | None:
    """How many distinct addresses the threads of a launch give the atomic ``ins`` of ``pf``: ``"grid"`` (one
    address: built from constants and parameters only), ``"block"`` (one per block: SR_CTAID), ``"data"``
    (built from loaded values: a histogram's bins), or None (per-thread: SR_TID/SR_LANEID, or not traceable).
    From :func:`address_sources`. Never raises."""
    kinds = address_sources(pf, ins)
    if kinds is None or "thread" in kinds:
        return None
    if "data" in kinds:
        return "data"
    return "block" if "block" in kinds else "grid"


def address_sources(pf: ProgramFunction, ins: Instruction) -> frozenset[str] | None:
    """What the address of the memory instruction ``ins`` of ``pf`` is built from: a set of ``"thread"``
    (SR_TID/SR_LANEID), ``"block"`` (SR_CTAID), ``"data"`` (a loaded value); empty for constants and parameters
    only; None when not traceable.

    Reaching definitions over the function's CFG (the blame slicer's per-function def tables,
    blame.slice.FunctionIndex, without its latency bound), per register of the address operand, through the
    defining instructions' own operands and the predicates they read or are guarded by (a bin picked by SEL
    after a comparison of loaded values is data); a load ends the walk (its value is data). Never raises."""
    regs = cm.address_registers(ins)
    fx = pf.memo("function_index", lambda: FunctionIndex(pf))
    j = fx.index.get(ins.offset)
    if not regs or j is None:
        return None
    kinds: set[str] = set()
    seen: set[tuple[int, int, str]] = set()
    # (block start, search below this instruction index, register)
    work = [(fx.block[j], j, r) for r in regs]
    while work:
        key = work.pop()
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > _WALK_LIMIT:
            return None
        start, end, reg = key
        found = fx.defs_before(start, end, reg)  # nearest first, CALLs included
        if not found:
            preds = fx.preds.get(start, [])
            if not preds:
                return None  # a register live into the kernel: not something the SASS shows
            work += [(p, fx.end[p], reg) for p in preds if p in fx.end]
            continue
        k = found[0]
        du, d = fx.du[k], fx.ins[k]
        if du.clobbers_all:
            return None  # a call in between: the register's origin is the callee's
        if d.base_opcode in ("S2R", "S2UR", "CS2R"):
            if "SR_TID" in d.text or "SR_LANEID" in d.text:
                kinds.add("thread")
            if "SR_CTAID" in d.text:
                kinds.add("block")
            continue
        if cm.is_memory(d) and d.base_opcode not in ("LDC", "ULDC"):
            kinds.add("data")
            continue
        # registers and predicates: a SEL/FSEL (or a guarded move) picks the address from a comparison, so the
        # address follows what the compared values came from (k-means' nearest centroid: FSETP of loaded
        # coordinates, then SEL of the bin number)
        work += [(start, k, u) for u in du.uses if _is_register_or_predicate(u)]
        if du.guard is not None and _is_register_or_predicate(du.guard.lstrip("!")):
            work.append((start, k, du.guard.lstrip("!")))
    return frozenset(kinds)


def _is_register_or_predicate(name: str) -> bool:
    """``R12``, ``UR4``, ``P0``, ``UP1`` (not ``RZ``/``URZ``/``PT``/``UPT``)."""
    for pre in ("UR", "UP", "R", "P"):
        if name.startswith(pre):
            return name[len(pre):].isdigit()
    return False


def contended_atomics(view: KernelView) -> dict[cm.InsKey, str]:
    """The kernel's global atomics whose threads share addresses: (function, offset) -> address kind
    (:func:`address_kind`). Empty without a program."""
    prog = view.program
    if prog is None:
        return {}

    def make() -> dict[cm.InsKey, str]:
        out: dict[cm.InsKey, str] = {}
        for pf in prog.functions.values():
            for i in pf.instructions:
                if i.base_opcode in GLOBAL_ATOMICS and (k := address_kind(pf, i)) is not None:
                    out[(pf.name, i.offset)] = k
                elif i.base_opcode in SHARED_ATOMICS and ".POPC" not in i.opcode and \
                        address_kind(pf, i) is not None:
                    # shared memory is per block: an address without a thread index is one per block. A
                    # .POPC atomic is already aggregated per warp by nvcc (one lane adds the popcount).
                    out[(pf.name, i.offset)] = "shared"
                    if ".CAST" in i.opcode:
                        # the compare-and-swap retry loop around it is the atomic's cost
                        lp = pf.loop_of(i.offset)
                        if lp is not None and lp.children == ():
                            for j in pf.instructions:
                                b = pf.block_of(j.offset)
                                if b is not None and b.start in lp.blocks:
                                    out.setdefault((pf.name, j.offset), "shared")
        return out

    return dict(prog.memo("contended_atomics", make))


def _atomic_edges(view: KernelView, sites: dict[cm.InsKey, str]) -> tuple[list[EdgeView], float]:
    """Samples the atomics cost: every sample at them, stalls waiting on an ATOM's returned value, and the
    drain stalls at the kernel's exits in proportion to the atomics among its global writes (warps that
    reached EXIT wait for their writes; stores drain too). Returns (edges, M)."""
    writes = atomics = 0
    assert view.program is not None
    for pf in view.program.functions.values():
        for i in pf.instructions:
            if i.base_opcode in cm.GLOBAL_WRITES:
                pc = view.profile.pcs.get((pf.name, i.offset))
                n = pc.inst_executed if pc is not None else 0
                writes += n
                atomics += n if i.base_opcode in GLOBAL_ATOMICS else 0
    drain_share = atomics / writes if writes else 1.0
    evs: list[EdgeView] = []
    m = 0.0
    for e in view.edges:
        use, dfn = cm.ins_key(e.use_fn, e.use_ins), cm.ins_key(e.def_fn, e.def_ins)
        if use is not None and use in sites:
            evs.append(e)
            m += e.stall
        elif dfn is not None and dfn in sites and e.gpa_class not in cm.NOT_STALLS:
            evs.append(e)
            m += e.stall
        elif e.edge.reason == "drain":
            evs.append(e)
            m += e.stall * drain_share
    return evs, m


_WHAT = {
    "grid": "one address for the whole grid",
    "block": "one address per block",
    "data": "addresses taken from the data (a histogram's bins)",
    "shared": "one shared-memory address per block",
}


@register("atomic_privatization", "Atomic privatization", "stall_elimination",
          "Global atomics (RED/ATOM) that the threads of a launch aim at one or a few addresses: one address for "
          "the grid or per block, or bins taken from the data; the warps drain them one after another.",
          "Keep partial results private and issue one global atomic per warp or block: accumulate in a "
          "register over a grid-stride loop, reduce the warp with __shfl_down_sync, or keep a per-block copy "
          "(a histogram's bins) in shared memory and add it to global memory once per block.")
def atomic_privatization(view: KernelView) -> Advice | Skipped:
    """Eq. 2 over the samples contended global atomics cost (:func:`_atomic_edges`). A lower estimate: the
    atomics are served one after another at one L2 slice, so their queue also slows the launch's other memory
    operations, which eq. 2 does not see (warpwise, not in GPA)."""
    if view.program is None:
        return Skipped("atomic_privatization", "needs the binary's SASS (no cubin given)", missing=True)
    sites = contended_atomics(view)
    if not sites:
        return Skipped("atomic_privatization", "no atomics on shared addresses")
    evs, m = _atomic_edges(view, sites)
    if m <= 0 or view.total <= 0 or m >= view.total:
        return Skipped("atomic_privatization", "the contended atomics have no samples")
    on = [e for e in evs if cm.ins_key(e.use_fn, e.use_ins) in sites or cm.ins_key(e.def_fn, e.def_ins) in sites]
    base = cm.stall_elimination_advice(view, "atomic_privatization", on or evs, "",
                                       nothing="the contended atomics have no samples")
    if not isinstance(base, Advice):
        return base
    kinds = sorted(set(sites.values()))
    # the user's line that calls the atomic, not the line of CUDA's atomic wrapper it was inlined from
    # (atomicAdd in device_atomic_functions.hpp): that header is only named as "via"
    user: set[tuple[str, int]] = set()
    via: set[tuple[str, int]] = set()
    for pf in view.program.functions.values():
        for i in pf.instructions:
            if (pf.name, i.offset) in sites and i.loc is not None:
                u = user_loc(i) or i.loc
                user.add((u.file, u.line))
                if (u.file, u.line) != (i.loc.file, i.loc.line):
                    via.add((i.loc.file, i.loc.line))
    lines = cm.lines_text(sorted(user))
    if via:
        headers = ", ".join(f"{PurePosixPath(f.replace(chr(92), '/')).name}:{ln}" for f, ln in sorted(via))
        lines += f" (via {headers}, the CUDA header's atomic function inlined there)"
    if base.scope.kind == "line" and (base.scope.file, base.scope.line) in via and len(user) == 1:
        (f, ln), = user
        base.scope = replace(base.scope, file=f, line=ln, end_line=ln, name=f"line {ln}")
    how = ("keep a per-block copy of the bins in shared memory (shared atomics), then add it to global memory "
           "once per block" if "data" in kinds else
           "accumulate in a register over a grid-stride loop, reduce the warp with __shfl_down_sync (or the block "
           "in shared memory) and issue one atomic per warp or block")
    space = "shared-memory" if kinds == ["shared"] else "global"
    cas = any(".CAST" in i.opcode for pf in view.program.functions.values() for i in pf.instructions
              if (pf.name, i.offset) in sites and i.base_opcode in SHARED_ATOMICS)
    spin = (" (a float atomicAdd on shared memory is a compare-and-swap retry loop, ATOMS.CAST.SPIN, that the "
            "warp's lanes leave one per round)") if cas else ""
    if kinds == ["shared"]:
        how = ("reduce each warp first (__shfl_xor_sync / __reduce_add_sync) and issue one shared atomic per "
               "warp")
    base.hint = (f"the {space} atomics at {lines or 'the atomic'} go to {' and '.join(_WHAT[k] for k in kinds)}"
                 f"{spin}: they are served one after another, and the warps wait for them; {how}")
    s_eq2 = view.total / (view.total - m)
    base.estimate = Estimate(s_eq2, "T/(T-M), M = samples at the contended atomics + stalls waiting on them + "
                             "their share of the drain stalls", {"T": view.total, "M": m},
                             "GPA eq. 2 (lower estimate: the atomics' queue also slows other memory operations)")
    base.matched_samples, base.share = m, m / view.total
    base.priority = 1
    # Serialized atomics: when they cost a large part of the kernel's samples (SERIAL_SHARE), its time follows
    # their queue, and every unit the fix leaves unchanged sits far below its roofline. Privatized, the launch
    # runs until the next bound (the busiest of those units, or the launch floor applied later): an upper bound,
    # as for the other traffic fixes (analysis/arch/roofline.after_fix): S <= min_u a_u / p_u over DRAM, SM.
    cap = rk.roofline_cap(view.profile.launch.throughput_pct, SERIAL_UNITS, reach_of=view.reach)
    if m / view.total >= SERIAL_SHARE and cap is not None and cap.cap > s_eq2:
        base.estimate = Estimate(cap.cap, f"C_{cap.unit} = a/p of the busiest unit privatization leaves unchanged "
                                 f"({', '.join(SERIAL_UNITS)}); T/(T-M) = {s_eq2:.3f}x from the samples",
                                 {"T": view.total, "M": m, "p": cap.pct}, "roofline after the fix (upper bound)")
        base.cap, base.upper_bound = cap, True
    return base


#: Units whose work privatizing the atomics leaves unchanged (the L1/L2 work shrinks with the atomics).
SERIAL_UNITS = ("dram", "sm")
#: Share of the kernel's samples the atomics cost above which its time is taken to follow their serialization
#: (a warpwise threshold, a third of the samples; set after seeing the two serialized-atomic kernels of the
#: hold-out sets, 41% and 57%, so not out of sample).
SERIAL_SHARE = 1 / 3


def feeds_atomic_address(view: KernelView, ev: EdgeView) -> bool:
    """Whether ``ev``'s loaded value picks an atomic's or reduction's address (ATOMS, ATOM/ATOMG, RED): the use is
    a contended atomic (:func:`contended_atomics`), or the value flows from the use on, through the register
    arithmetic of its block, into the address of any global or shared atomic — a histogram's or
    scatter-reduction's bin (``atomicAdd(&local[img[i]], 1)``: ``LDG.U8 R2`` then ``ATOMS.ADD [R2.X4]``, or the
    warp-aggregated ``ATOMS.POPC.INC`` nvcc builds). Indirect address elimination must not claim it: the index
    is the data being counted, so there is no index to compute, prefetch or store in the order it is read; the
    fix for waits there is privatization or more work per thread. The scan: the def's destination registers
    carry the value; a register written from a carried one carries it, an unpredicated write from other values
    stops it."""
    sites = contended_atomics(view)
    use, d, pf = ev.use_ins, ev.def_ins, ev.use_fn
    if use is None or d is None or pf is None:
        return False
    if (pf.name, use.offset) in sites:
        return True
    block = block_at(pf, use.offset)
    if block is None:
        return False
    last = _last_atomic(pf).get(block.start)
    if last is None or last < use.offset:
        return False  # no atomic from the use on in its block: the scan below could not return True
    tainted = set(cm.dest_registers(d))
    if not tainted:
        return False
    for i in block.instructions:
        if i.offset < use.offset:
            continue
        if i.base_opcode in GLOBAL_ATOMICS | SHARED_ATOMICS and tainted & cm.address_registers(i):
            return True
        written = set(cm.dest_registers(i))
        if tainted & _source_registers(i):
            tainted |= written
        elif not i.predicate:
            tainted -= written
        if not tainted:
            return False
    return False


def _last_atomic(pf: ProgramFunction) -> dict[int, int]:
    """Block start -> section offset of the last global or shared atomic (:data:`GLOBAL_ATOMICS`,
    :data:`SHARED_ATOMICS`) among the block's instructions, for the blocks of ``pf`` that hold one; made once per
    function (:func:`feeds_atomic_address` asks per load edge, and most blocks hold no atomic at all)."""
    def make() -> dict[int, int]:
        atomics = GLOBAL_ATOMICS | SHARED_ATOMICS
        out: dict[int, int] = {}
        for b in pf.blocks.values():
            for i in b.instructions:
                if i.base_opcode in atomics and i.offset > out.get(b.start, -1):
                    out[b.start] = i.offset
        return out

    table: dict[int, int] = pf.memo("advice_last_atomic", make)
    return table


def _source_registers(i: Instruction) -> set[str]:
    """General registers ``i`` reads: those of its operands after the destination, and of address operands."""
    regs = {m.group(1) for op in i.operands[1:] for m in _GPR.finditer(op)}
    return regs | cm.address_registers(i)


_GPR = re.compile(r"(?<![\w.])(R\d+)\b")


#: Waves of CTAs a grid must run for coarsening it to be worth it: with fewer, fewer larger blocks would leave
#: SMs idle (one wave of blocks per SM is what keeps every SM busy; two leave room to merge blocks in pairs).
FLUSH_MIN_WAVES = 2.0


def block_flush_sites(view: KernelView) -> dict[cm.InsKey, str]:
    """Global atomics after a barrier whose address is built from the thread index, constants and parameters
    only (:func:`address_sources` without ``block`` or ``data``): every block adds its per-block results (a
    privatized histogram's bins) to the same addresses, so the blocks' flushes contend at the same L2 slices.
    (function, offset) -> SASS text; empty without a program."""
    prog = view.program
    if prog is None:
        return {}

    def make() -> dict[cm.InsKey, str]:
        out: dict[cm.InsKey, str] = {}
        for pf in prog.functions.values():
            bars = [i.offset for i in pf.instructions if i.base_opcode == "BAR"]
            for i in pf.instructions:
                if i.base_opcode not in GLOBAL_ATOMICS or not bars or min(bars) > i.offset:
                    continue
                src = address_sources(pf, i)
                if src is not None and not src & {"block", "data"}:
                    out[(pf.name, i.offset)] = i.text
        return out

    return dict(prog.memo("block_flush_sites", make))


def flush_contention_advice(view: KernelView) -> Advice | None:
    """block_decrease for a many-wave grid whose blocks each handle one element per thread and end by flushing
    per-block results with global atomics to the same addresses (:func:`block_flush_sites`); None otherwise.

    Coarsening (c elements per thread, c times fewer blocks) does two things the profile shows: the per-block
    work — the flush atomics and the barriers around the privatized set-up — runs once per c elements, and each
    thread's c element loads are independent, so they are in flight together (Little's law: c times the bytes
    per warp) where one load per thread leaves the warp waiting on it. M = the samples at or waiting on the
    flush atomics + the barrier stalls + the stalls waiting on global loads outside loops (the one element per
    thread); GPA eq. 2, capped by the rooflines of the units the fix keeps (ranking). Needs at least
    FLUSH_MIN_WAVES waves of CTAs (``LaunchConfig.waves_per_sm``)."""
    prog = view.program
    lc = view.profile.launch
    if prog is None or view.total <= 0 or lc.waves_per_sm < FLUSH_MIN_WAVES:
        return None
    sites = block_flush_sites(view)
    if not sites:
        return None
    fns = {name for name, _ in sites}
    evs: list[EdgeView] = []
    for e in view.edges:
        if e.gpa_class in cm.NOT_STALLS or e.use_fn is None or e.use_fn.name not in fns:
            continue
        use_key, def_key = cm.ins_key(e.use_fn, e.use_ins), cm.ins_key(e.def_fn, e.def_ins)
        if use_key in sites or def_key in sites or e.gpa_class == stalls.SYNCHRONIZATION:
            evs.append(e)
        elif (not e.is_self and e.gpa_class == stalls.MEMORY_DEPENDENCY and cm.is_global_mem(e.def_ins)
              and e.def_ins is not None and e.def_fn is not None
              and e.def_fn.loop_of(e.def_ins.offset) is None):
            evs.append(e)
    if not any(cm.ins_key(e.use_fn, e.use_ins) in sites for e in evs):
        return None
    locs = [user_loc(i) for pf in prog.functions.values() if pf.name in fns for i in pf.instructions
            if (pf.name, i.offset) in sites]
    lines = sorted({(loc.file, loc.line) for loc in locs if loc is not None})
    hint = (f"{lc.blocks:,} blocks of {lc.threads_per_block} threads ({lc.waves_per_sm:.0f} waves) each handle one "
            f"element per thread and end by adding their per-block results to the same global addresses "
            f"(atomics at {cm.lines_text(lines) if lines else 'the flush'}): give each thread several elements "
            "(a loop over c elements, c times fewer blocks), so the set-up and flush run once per c elements "
            "and each thread's element loads are in flight together")
    res = cm.stall_elimination_advice(view, "block_decrease", evs, hint, nothing="no stalls at the block flush")
    if not isinstance(res, Advice):
        return None
    res.params["flush_contention"] = 1
    return res
