"""Shared pieces of the optimizers: SASS opcode classes, hotspot and scope selection, and the two code-
optimizer templates (stall elimination, GPA eq. 2; latency hiding, GPA eqs. 4–5).

Opcode classes are SASS semantics (NVIDIA CUDA Binary Utilities, "Instruction Set Reference"), not
per-architecture numbers: they hold on every Volta-and-later SM.
"""

from __future__ import annotations

import functools
import operator
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from warpwise.analysis.advice import estimate as est
from warpwise.analysis.advice.context import EdgeView, KernelView, is_math_routine, is_runtime_function
from warpwise.analysis.advice.model import Advice, Hotspot, RegionEstimate, Scope, Skipped
from warpwise.analysis.arch import stalls
from warpwise.analysis.arch.latency import MEMORY_CLASSES, latency_class, latency_of, latency_table

# the memory-write opcode classes live with the SASS model (arch/roofline needs them too); re-exported here
from warpwise.analysis.binary.model import GLOBAL_WRITES as GLOBAL_WRITES
from warpwise.analysis.binary.model import MEMORY_WRITES as MEMORY_WRITES
from warpwise.analysis.binary.model import Instruction, SourceLoc
from warpwise.analysis.blame.operands import def_use
from warpwise.analysis.program import cfg as cf
from warpwise.analysis.program.model import Loop, Program, ProgramFunction

#: Hotspots and regions listed per advice (GPA's released advisor: _top_hotspots = _top_regions = 5).
TOP_HOTSPOTS = 5
TOP_REGIONS = 5

BRANCH_OPS = frozenset({"BRA", "BRX", "JMP", "JMX"})
#: Opcodes the copy counts of unrolled code leave out (:func:`unroll_factor`, :func:`repeated_lines`).
NOT_COPIED_OPS = BRANCH_OPS | {"NOP"}
SHARED_STORES = frozenset({"STS"})
GLOBAL_LOADS = frozenset({"LDG", "LD"})

#: analysis/arch latency classes of non-memory arithmetic that can have long latency (GPA §5 strength
#: reduction: "execution dependency stalls of long latency arithmetic instructions").
ARITH_CLASSES = frozenset({"fp64", "conversion", "sfu"})


def mem_class(ins: Instruction | None) -> str:
    """analysis/arch latency class of the instruction (global, local, shared, constant, alu, ...)."""
    return "" if ins is None else latency_class(ins.opcode)


def instructions_of_class(view: KernelView, cls: str) -> frozenset[int]:
    """``id()`` of the view's program instructions whose :func:`mem_class` is ``cls`` (one pass per program and
    class; empty without a program). For per-edge tests, ``id(e.def_ins) in ...`` equals
    ``mem_class(e.def_ins) == cls``: every edge instruction is one of the program's, which outlive the view."""
    prog = view.program
    if prog is None:
        return frozenset()

    def make() -> dict[str, frozenset[int]]:
        by: dict[str, set[int]] = defaultdict(set)
        for pf in prog.functions.values():
            for i in pf.instructions:
                by[mem_class(i)].add(id(i))
        return {c: frozenset(ids) for c, ids in by.items()}

    table: dict[str, frozenset[int]] = prog.memo("instructions_by_class", make)
    return table.get(cls, frozenset())


def is_global_mem(ins: Instruction | None) -> bool:
    """Global (or generic) memory instruction."""
    return mem_class(ins) == "global"


def is_local_mem(ins: Instruction | None) -> bool:
    """Local memory instruction (LDL/STL: spills, stack)."""
    return mem_class(ins) == "local"


def is_reorderable_load(ins: Instruction | None) -> bool:
    """A global load the compiler may move above earlier stores: the read-only path (``LDG.*.CONSTANT``,
    ld.global.nc — data the kernel does not write, from ``const __restrict__`` or ``__ldg``). A plain LDG
    must stay after every store that may alias it (CUDA C++ Programming Guide, "__restrict__")."""
    return ins is not None and ins.base_opcode in GLOBAL_LOADS and ".CONSTANT" in ins.opcode


def loop_writes_global(fn: ProgramFunction, loop: Loop) -> list[Instruction]:
    """The global stores / reductions / atomics inside ``loop`` (nested loops included)."""
    return [i for b in loop.blocks for i in fn.blocks[b].instructions if i.base_opcode in GLOBAL_WRITES]


def is_shared_mem(ins: Instruction | None) -> bool:
    """Shared memory instruction."""
    return mem_class(ins) == "shared"


def is_memory(ins: Instruction | None) -> bool:
    """Any memory instruction with an address operand (global, local, shared, constant, texture)."""
    return mem_class(ins) in MEMORY_CLASSES


#: Sample classes that are not stalls of the sampled warp (it issued, or it was ready and another warp issued):
#: eliminating "them" removes no time.
NOT_STALLS = frozenset({stalls.ACTIVE, stalls.NOT_SELECTED})

#: Stall reasons that show instruction-cache misses (Nsight Compute Kernel Profiling Guide, "Warp Stall
#: Reasons": no_instructions = "an instruction cache miss").
ICACHE_REASONS = frozenset({"no_instructions"})


def base(ins: Instruction | None) -> str:
    """Mnemonic without modifiers (empty for None)."""
    return "" if ins is None else ins.base_opcode


def is_fp64_conversion(ins: Instruction | None) -> bool:
    """F2F between 32- and 64-bit floating point (``F2F.F64.F32`` / ``F2F.F32.F64``)."""
    return ins is not None and ins.base_opcode == "F2F" and ".F64" in ins.opcode


def is_integer_division_seed(ins: Instruction) -> bool:
    """The reciprocal seed of nvcc's integer division/modulo sequence: ``I2F.U32.RP`` / ``I2F.RP``
    (round-towards-+inf conversion of the divisor, followed by MUFU.RCP and a multiply-high fix-up)."""
    return ins.base_opcode == "I2F" and ".RP" in ins.opcode


#: nvcc's 64-bit integer division/modulo routines (``__cuda_sm20_rem_u64``, ``..._div_s64``): a 64-bit ``/`` or ``%``
#: by a run-time value calls one unless both operands fit in 32 bits at run time (then the I2F.U32.RP sequence runs).
DIV64_ROUTINE = re.compile(r"__cuda_sm\d+_(?:div|rem)_[su]64")


#: nvcc's internal arithmetic routines a kernel calls on a slow path (``$__internal_0_$__cuda_sm20_rem_u64``,
#: ``__cuda_sm3x_div_rn_noftz_f32_slowpath``: IEEE division's FCHK slow path, 64-bit division, sqrt/rcp fix-ups).
NVCC_ROUTINE = re.compile(r"__cuda_sm\d+x?_\w+")


def nvcc_routine_call(ins: Instruction) -> str | None:
    """The name of the nvcc-internal arithmetic routine a ``CALL`` instruction calls (:data:`NVCC_ROUTINE`), else
    None."""
    if ins.base_opcode != "CALL":
        return None
    m = next((m for op in ins.operands if (m := NVCC_ROUTINE.search(op)) is not None), None)
    return m.group(0) if m else None


def division_routine_64(ins: Instruction) -> str | None:
    """The 64-bit division routine an instruction belongs to or calls: the name (``__cuda_sm20_rem_u64``) for a
    ``CALL`` of one, ``"64-bit"`` for the routine's own reciprocal seed (``I2F.U64.RP`` / ``I2F.S64.RP``), else None
    (a 32-bit division's seed is ``I2F.U32.RP``)."""
    if ins.base_opcode == "CALL":
        m = next((m for op in ins.operands if (m := DIV64_ROUTINE.search(op)) is not None), None)
        return m.group(0) if m else None
    if is_integer_division_seed(ins) and "64" in ins.opcode:
        return "64-bit"
    return None


def division_lines_64(view: KernelView) -> dict[tuple[str, int], str]:
    """Source lines (file, line) whose integer division/modulo is 64-bit, with the routine's name when the line
    calls it (else ``"64-bit"``): :func:`division_routine_64` over the kernel's program."""
    out: dict[tuple[str, int], str] = {}
    if view.program is None:
        return out
    for pf in view.program.functions.values():
        for ins in pf.instructions:
            if ins.loc is not None and (r := division_routine_64(ins)) is not None:
                key = (ins.loc.file, ins.loc.line)
                if out.get(key, "64-bit") == "64-bit":
                    out[key] = r
    return out


def division_lines(view: KernelView) -> set[tuple[str, int]]:
    """Source lines (file, line) of integer divisions/modulos by run-time values in the kernel's program."""
    out: set[tuple[str, int]] = set()
    if view.program is None:
        return out
    for pf in view.program.functions.values():
        for ins in pf.instructions:
            if ins.loc is not None and is_integer_division_seed(ins):
                out.add((ins.loc.file, ins.loc.line))
    return out


def is_long_latency_arith(ins: Instruction | None, arch: str) -> bool:
    """Non-memory arithmetic whose latency on ``arch`` exceeds the fixed ALU latency bound (analysis/arch
    latency table): conversions, special functions (MUFU), FP64 (GPA §5 strength reduction; GPA's
    released code uses "latency >= 10 cycles and not memory")."""
    if ins is None or mem_class(ins) not in ARITH_CLASSES:
        return False
    return latency_of(ins.opcode, arch).cycles > latency_table(arch)["alu"].upper


_ADDR = re.compile(r"\[([^\]]*)\]")
#: The insides of an operand's ``[...]`` parts (``desc[UR4][R4.64+0x8]`` -> ``UR4``, ``R4.64+0x8``).
ADDRESS_PARTS = _ADDR
_REG = re.compile(r"(?<![\w])R(\d+)(?:\.(64|128))?")


def address_registers(ins: Instruction) -> set[str]:
    """General registers used inside ``[...]`` address operands (``desc[UR4][R2.64+0x10]`` -> {R2, R3})."""
    regs: set[str] = set()
    for op in ins.operands:
        regs.update(_operand_address_registers(op))
    return regs


@functools.lru_cache(maxsize=65536)  # operand strings repeat across instructions; asked per edge and block
def _operand_address_registers(op: str) -> tuple[str, ...]:
    """The registers of ``op``'s ``[...]`` parts in the order they appear (R2.64 -> R2, R3)."""
    out: list[str] = []
    for inner in _ADDR.findall(op):
        for num, width in _REG.findall(inner):
            n = int(num)
            out += [f"R{n + k}" for k in range({"64": 2, "128": 4}.get(width, 1))]
    return tuple(out)


def dest_registers(ins: Instruction) -> set[str]:
    """General registers the instruction writes (first operand for non-store ops; widened for .64/.WIDE)."""
    if not ins.operands:
        return set()
    return set(dest_registers_of(ins.opcode, ins.operands[0]))


@functools.lru_cache(maxsize=65536)  # (opcode, first operand) pairs repeat; asked per blame edge
def dest_registers_of(opcode: str, first: str) -> tuple[str, ...]:
    """:func:`dest_registers` of an instruction with ``opcode`` and first operand ``first``, in insertion order."""
    if opcode.split(".", 1)[0] in {"STG", "STS", "STL", "ST", "RED", "BRA", "EXIT"}:  # its base opcode
        return ()
    tok = first.split()[0]
    if not (tok.startswith("R") and tok[1:2].isdigit()):
        return ()
    name = tok.partition(".")[0]
    if ".64" in opcode or ".WIDE" in opcode or ".F64" in opcode.split(".")[1:2]:
        return name, f"R{int(name[1:]) + 1}"
    return (name,)


# ---- hotspots and scopes ---------------------------------------------------------------------------

def hotspots(view: KernelView, evs: Iterable[EdgeView], weight: Callable[[EdgeView], float],
             n: int = TOP_HOTSPOTS) -> list[Hotspot]:
    """The ``n`` heaviest (def, use) pairs of ``evs``, ``weight`` summed per pair, hottest first."""
    if isinstance(evs, list):  # a region's edges are ranked for its hint and again for its advice
        key = ("hotspots", id(evs), weight)
        hit = view._memo.get(key)
        if hit is not None and hit[0] is evs and hit[1] == len(evs):
            return _hotspot_rows(view, hit[2], weight, n)
        ranked = _rank_pairs(evs, weight)
        view._memo[key] = (evs, len(evs), ranked)  # evs kept alive with it, so its id is not reused
        return _hotspot_rows(view, ranked, weight, n)
    return _hotspot_rows(view, _rank_pairs(evs, weight), weight, n)


_Ranked = list[tuple[float, int, int, str, int | None, list[EdgeView]]]


def _rank_pairs(evs: Iterable[EdgeView], weight: Callable[[EdgeView], float]) -> _Ranked:
    """(−weight, use pc, first-seen order, function, def pc, edges) per (def, use) pair of positive weight, in
    the order of sorting the rows by (−samples, use pc), stably."""
    get = _getter(weight)
    # per pair: [its weight, summed in edge order as sum() would, its edges]
    agg: dict[tuple[str, int | None, int], list[Any]] = {}
    for ev in evs:
        e = ev.edge
        key = (e.function, e.def_offset, e.use_offset)
        row = agg.get(key)
        if row is None:
            agg[key] = [0 + get(ev), [ev]]
        else:
            row[0] += get(ev)
            row[1].append(ev)
    ranked = []
    for k, ((fn, d, u), (w, group)) in enumerate(agg.items()):
        if w > 0:
            ranked.append((-w, u, k, fn, d, group))
    ranked.sort(key=lambda r: r[:3])  # the order of sorting the rows by (-samples, use pc), stably
    return ranked


def _hotspot_rows(view: KernelView, ranked: _Ranked, weight: Callable[[EdgeView], float], n: int) -> list[Hotspot]:
    rows = []
    for negw, u, _k, fn, d, group in ranked[:n]:  # locations only for the rows returned
        w = -negw
        by_reason: dict[str, float] = defaultdict(float)
        for e in group:
            by_reason[e.edge.reason] += weight(e)
        reason = max(by_reason, key=lambda r: by_reason[r])
        ev0 = group[0]
        loop = ev0.use_loop
        loop_scope = view.loop_scope(ev0.use_fn, loop) if (loop is not None and ev0.use_fn is not None) else None
        rows.append(Hotspot(def_=None if d is None else view.location(fn, d), use=view.location(fn, u),
                            samples=w, distance=max(e.edge.distance for e in group), reason=reason,
                            loop=loop_scope))
    return rows


@dataclass
class Region:
    """A loop or function scope with the matched edges attributed to it."""

    scope: Scope
    fn: ProgramFunction | None
    loop: Loop | None
    edges: list[EdgeView] = field(default_factory=list)


def region_key(ev: EdgeView, by_def: bool = False) -> tuple[str, int, str] | None:
    """Key of the innermost loop (else the function) holding the use (or the def with ``by_def``)."""
    fn = ev.def_fn if by_def else ev.use_fn
    loop = ev.def_loop if by_def else ev.use_loop
    if fn is None:
        return None
    return (fn.name, loop.header, "loop") if loop is not None else (fn.name, -1, "function")


def group_regions(view: KernelView, evs: Iterable[EdgeView], by_def: bool = False) -> list[Region]:
    """Matched edges grouped by innermost loop (else function) of the use (or def)."""
    out: dict[tuple[str, int, str] | None, Region] = {}
    for ev in evs:
        fn = ev.def_fn if by_def else ev.use_fn
        loop = ev.def_loop if by_def else ev.use_loop
        # region_key(ev, by_def), inlined: asked per matched edge
        key = None if fn is None else (fn.name, loop.header, "loop") if loop is not None else (fn.name, -1, "function")
        region = out.get(key)
        if region is None:
            if fn is None:
                scope = view.kernel_scope()
            elif loop is not None:
                scope = view.loop_scope(fn, loop)
            else:
                scope = view.function_scope(fn)
            region = out[key] = Region(scope=scope, fn=fn, loop=loop)
        region.edges.append(ev)
    return list(out.values())


def fix_location(view: KernelView, ev: EdgeView) -> tuple[str | None, int | None]:
    """Where a fix applies: the def's source line for a dependency edge, the use's for a self-kept stall."""
    off = ev.edge.def_offset if ev.edge.def_offset is not None else ev.edge.use_offset
    loc = view.location(ev.edge.function, off)
    return loc.file, loc.line


def _fix_locations(view: KernelView, evs: list[EdgeView]) -> list[tuple[str | None, int | None]]:
    """:func:`fix_location` of each edge, in order (the view's location cache read here, a lookup per edge)."""
    locs = view._locs
    out: list[tuple[str | None, int | None]] = []
    for ev in evs:
        e = ev.edge
        key = (e.function, e.def_offset if e.def_offset is not None else e.use_offset)
        loc = locs.get(key)
        if loc is None:
            loc = view.location(*key)
        out.append((loc.file, loc.line))
    return out


#: Share of the matched samples the chosen scope must hold (the rest are stragglers elsewhere).
SCOPE_COVERAGE = 0.8


def narrow_scope(view: KernelView, evs: list[EdgeView], weight: Callable[[EdgeView], float]) -> Scope:
    """The narrowest scope holding at least SCOPE_COVERAGE of the matched samples at their fix locations:
    one line, else one loop, else one function, else the kernel."""
    get = _getter(weight)
    total = sum(get(e) for e in evs)
    if total <= 0:
        return view.kernel_scope()
    by_line: dict[tuple[str | None, int | None], float] = defaultdict(float)
    by_loop: dict[tuple[str, int], tuple[float, EdgeView]] = {}
    by_fn: dict[str, tuple[float, EdgeView]] = {}
    fixes = _fix_locations(view, evs)  # once per edge: the line test below reads them again
    for e, at in zip(evs, fixes, strict=True):
        w = get(e)
        by_line[at] += w
        dep = e.edge.def_offset is not None
        fn = e.def_fn if dep else e.use_fn
        if fn is not None:
            name = fn.name
            by_fn[name] = (by_fn.get(name, (0.0, e))[0] + w, e)
            loop = e.def_loop if dep else e.use_loop
            if loop is not None:
                k = (name, loop.header)
                by_loop[k] = (by_loop.get(k, (0.0, e))[0] + w, e)
    (file, line), w = max(by_line.items(), key=lambda kv: kv[1])
    if w >= SCOPE_COVERAGE * total and line is not None:
        first = next((f for e, at in zip(evs, fixes, strict=True) if at == (file, line)
                      for f in (e.def_fn or e.use_fn,) if f is not None), None)
        fn_name = first.name if first is not None else None
        return Scope(kind="line", file=file, line=line, end_line=line, function=fn_name, name=f"line {line}")
    if by_loop:
        (_, _), (w, e) = max(by_loop.items(), key=lambda kv: kv[1][0])
        fn = e.def_fn if e.edge.def_offset is not None else e.use_fn
        loop = e.def_loop if e.edge.def_offset is not None else e.use_loop
        if w >= SCOPE_COVERAGE * total and fn is not None and loop is not None:
            return view.loop_scope(fn, loop)
    if by_fn:
        _, (w, e) = max(by_fn.items(), key=lambda kv: kv[1][0])
        fn = e.def_fn if e.edge.def_offset is not None else e.use_fn
        if w >= SCOPE_COVERAGE * total and fn is not None and not fn.is_kernel:
            return view.function_scope(fn)
    return view.kernel_scope()


def matched_pairs(evs: Iterable[EdgeView], weight: Callable[[EdgeView], float]) -> dict[tuple[str, int | None, int],
                                                                                      float]:
    """``weight`` summed per (function, def pc, use pc): what an advice matched (Advice.matched)."""
    out: dict[tuple[str, int | None, int], float] = defaultdict(float)
    get = _getter(weight)
    for e in evs:
        w = get(e)
        if w > 0:
            out[(e.edge.function, e.edge.def_offset, e.edge.use_offset)] += w
    return dict(out)


def stall_weight(ev: EdgeView) -> float:
    """Stall samples of an edge (GPA eq. 2's matched samples M)."""
    return ev.stall


def latency_weight(ev: EdgeView) -> float:
    """Latency samples of an edge (GPA eqs. 4–5's matched latency samples M_L)."""
    return ev.latency


def _getter(weight: Callable[[EdgeView], float]) -> Callable[[EdgeView], float]:
    """``weight`` itself, or for the two standard weights the same attribute read without a Python call (the
    aggregations call it per edge)."""
    if weight is stall_weight:
        return operator.attrgetter("stall")
    if weight is latency_weight:
        return operator.attrgetter("latency")
    return weight


# ---- templates --------------------------------------------------------------------------------------

def stall_elimination_advice(view: KernelView, opt_id: str, evs: list[EdgeView], hint: str,
                             missing: str = "", nothing: str = "no matching stall samples") -> Advice | Skipped:
    """GPA eq. 2 over the matched edges: M = their stall samples, one region per loop/function of the
    stalled uses (each with its own eq. 2), scope = narrowest scope holding them all."""
    kept = [e for e in evs if e.gpa_class not in NOT_STALLS]
    # the caller's own list when nothing was left out: the hint's hotspots ranked it already (hotspots' memo)
    evs = evs if len(kept) == len(evs) else kept
    m = sum(e.stall for e in evs)
    if m <= 0 or view.total <= 0:
        return Skipped(opt_id, missing or nothing, missing=bool(missing))
    regions = []
    for r in group_regions(view, evs):
        rm = sum(e.stall for e in r.edges)
        if rm > 0:
            regions.append(RegionEstimate(r.scope, rm, est.stall_elimination(view.total, rm)))
    regions.sort(key=lambda r: -r.matched_samples)
    return Advice(optimizer=opt_id, kernel=view.profile.name, scope=narrow_scope(view, evs, stall_weight),
                  matched_samples=m, share=m / view.total, estimate=est.stall_elimination(view.total, m),
                  hotspots=hotspots(view, evs, stall_weight), regions=regions[:TOP_REGIONS], hint=hint,
                  missing=missing, matched=matched_pairs(evs, stall_weight))


def latency_hiding_advice(view: KernelView, opt_id: str, regions: list[tuple[Region, float]],
                          hint: Callable[[Region], str], missing: str = "",
                          nothing: str = "no matching latency samples", active: float | None = None
                          ) -> Advice | Skipped:
    """GPA eqs. 4–5 over disjoint regions, each given with its Σ_{l' ∈ nested(l)} A_l'.

    Region estimate: T / (T − min(A_nested, M_Ll)); optimizer estimate: T / (T − min(A, Σ_l min(A_l,
    M_Ll))) (GPA's released SequentialLatency estimator), A = ``active`` (default the kernel's active
    samples). Both are ≤ 2 (Theorem 5.1), asserted.
    """
    rows = []
    for r, a_nested in regions:
        ml = sum(e.latency for e in r.edges)
        if ml > 0:
            rows.append((r, a_nested, ml, est.scoped_latency_hiding(view.total, [a_nested], ml, view.latency)))
    if not rows or view.total <= 0:
        return Skipped(opt_id, missing or nothing, missing=bool(missing))
    rows.sort(key=lambda t: (-t[3].speedup, -t[2]))
    overall = est.combine_latency_regions(view.total, view.active if active is None else active,
                                          [min(a, ml) for _, a, ml, _ in rows], view.latency)
    assert overall.speedup <= est.LATENCY_HIDING_BOUND + 1e-9
    top = rows[0][0]
    all_edges = [e for r, _, _, _ in rows for e in r.edges]
    m_l = sum(ml for _, _, ml, _ in rows)
    return Advice(optimizer=opt_id, kernel=view.profile.name, scope=top.scope, matched_samples=m_l,
                  share=m_l / view.total, estimate=overall,
                  hotspots=hotspots(view, top.edges, latency_weight) or hotspots(view, all_edges, latency_weight),
                  regions=[RegionEstimate(r.scope, ml, e) for r, _, ml, e in rows[:TOP_REGIONS]],
                  hint=hint(top), missing=missing, matched=matched_pairs(all_edges, latency_weight))


InsKey = tuple[str, int]


def ins_key(fn: ProgramFunction | None, ins: Instruction | None) -> InsKey | None:
    """(program function name, offset) of an instruction, the key of a removal set."""
    return None if fn is None or ins is None else (fn.name, ins.offset)


def removal_edges(view: KernelView, removed: dict[InsKey, float]) -> tuple[list[EdgeView], float]:
    """What deleting instructions saves: every sample on them (issued, stalled or ready-but-not-selected: the
    work is gone) plus the stalls other instructions spend waiting on them, each weighted by the share of
    the instruction the fix removes (``removed``: key -> 0..1). Returns (edges, matched samples M)."""
    evs: list[EdgeView] = []
    m = 0.0
    for e in _edges_at(view, removed):
        use, dfn = ins_key(e.use_fn, e.use_ins), ins_key(e.def_fn, e.def_ins)
        if use is not None and use in removed:
            evs.append(e)
            m += e.stall * removed[use]
        elif dfn is not None and dfn in removed and e.gpa_class not in NOT_STALLS:
            evs.append(e)
            m += e.stall * removed[dfn]
    return evs, m


def _edges_at(view: KernelView, keys: dict[InsKey, float]) -> list[EdgeView]:
    """The edges whose use or def instruction is one of ``keys``, in edge order (a superset is fine: callers test
    each edge). From a per-view index instruction key -> edge positions, built on first use; all edges when
    ``keys`` outnumber them."""
    edges = view.edges
    if len(keys) >= len(edges):
        return edges

    def index() -> tuple[dict[InsKey, list[int]], dict[InsKey, list[int]]]:
        at_use: dict[InsKey, list[int]] = {}
        at_def: dict[InsKey, list[int]] = {}
        # the edges of one use come one after another (build_view): its list is looked up once per run of them;
        # a def's list is found through its function's offset -> list table (no key tuple per edge)
        use_fn: ProgramFunction | None = None
        use_ins: Instruction | None = None
        use_list: list[int] | None = None
        def_fn: ProgramFunction | None = None
        def_lists: dict[int, list[int]] = {}
        per_fn: dict[int, dict[int, list[int]]] = {}
        for k, e in enumerate(edges):
            if e.use_ins is not use_ins or e.use_fn is not use_fn:
                use_fn, use_ins = e.use_fn, e.use_ins
                use_list = (None if use_fn is None or use_ins is None
                            else at_use.setdefault((use_fn.name, use_ins.offset), []))
            if use_list is not None:
                use_list.append(k)
            d = e.def_ins
            if d is None or e.def_fn is None:
                continue
            if e.def_fn is not def_fn:
                def_fn = e.def_fn
                def_lists = per_fn.setdefault(id(def_fn), {})
            off = d.offset
            got = def_lists.get(off)
            if got is None:
                got = def_lists[off] = at_def.setdefault((def_fn.name, off), [])
            got.append(k)
        return at_use, at_def

    at_use, at_def = view.memo("edges_by_instruction", index)
    pos = {k for key in keys for by in (at_use, at_def) for k in by.get(key, ())}
    return [edges[k] for k in sorted(pos)]


def barrier_samples(view: KernelView, matched: Iterable[EdgeView] = ()) -> float:
    """Samples of warps waiting at a block barrier (Nsight Compute's ``barrier`` reason), less those already in
    ``matched``."""
    seen = {id(e) for e in matched}
    return float(sum(e.stall for e in view.edges_by(reason=("barrier",)) if id(e) not in seen))


def removal_advice(view: KernelView, opt_id: str, removed: dict[InsKey, float], hint: str, what: str,
                   nothing: str = "nothing to remove") -> Advice | Skipped:
    """GPA eq. 2 for a fix that deletes instructions: S = T / (T − M) with M from :func:`removal_edges`
    (``what`` names the instructions in the formula). Scope, regions and hotspots as for stall elimination."""
    evs, m = removal_edges(view, removed)
    if m <= 0 or view.total <= 0 or m >= view.total:
        return Skipped(opt_id, nothing)
    base = stall_elimination_advice(view, opt_id, evs, hint, nothing=nothing)
    if not isinstance(base, Advice):
        return base
    b = barrier_samples(view, evs)
    e = est.work_removal(view.total, m, b)
    base.estimate = type(e)(e.speedup, f"{e.formula}, M = samples on {what} + stalls waiting on them", e.inputs,
                            e.equation if b > 0 else "GPA eq. 2 (instructions removed)")
    base.matched_samples, base.share = m, m / view.total
    return base


#: A line reference inside a hint, ``⟦FILE␟line 16⟧``: hints are built from recorded paths before any path
#: mapping, so the renderers resolve each reference (:func:`resolve_refs`) against the advice's own file.
_REF_OPEN, _REF_SEP, _REF_CLOSE = "\u27e6", "\u241f", "\u27e7"
_REF = re.compile(f"{_REF_OPEN}([^{_REF_SEP}{_REF_CLOSE}]*){_REF_SEP}([^{_REF_CLOSE}]*){_REF_CLOSE}")


def _ref(file: str | None, phrase: str) -> str:
    return phrase if file is None else f"{_REF_OPEN}{file}{_REF_SEP}{phrase}{_REF_CLOSE}"


def _numbers(nums: list[int]) -> str:
    if len(nums) == 1:
        return f"line {nums[0]}"
    return "lines " + ", ".join(str(n) for n in nums[:-1]) + f" and {nums[-1]}"


def line_ref(file: str | None, line: int | None) -> str:
    """``line 16`` of the recorded ``file`` as a reference: rendered ``line 16`` in the advice's own file and
    ``line 16 of include/x.cuh`` in another (:func:`resolve_refs`); ``line ?`` without a line."""
    return "line ?" if line is None else _ref(file, f"line {line}")


def lines_text(locs: Iterable[tuple[str | None, int | None]]) -> str:
    """``line 16`` / ``lines 16 and 17`` / ``lines 3, 5 and 9`` for the distinct lines given, one phrase per
    file (a reference, see :func:`line_ref`: a file other than the advice's is named when rendered)."""
    by_file: dict[str | None, set[int]] = defaultdict(set)
    for f, ln in locs:
        if ln is not None:
            by_file[f].add(ln)
    if not by_file:
        return "unknown lines"
    # files in name order: callers pass sets, whose order changes with the hash seed between processes
    parts = [_ref(f, _numbers(sorted(nums))) for f, nums in sorted(by_file.items(), key=lambda kv: kv[0] or "")]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + f" and {parts[-1]}"


def scope_ref(scope: Scope) -> str:
    """The scope's name for a hint (``loop at line 8``), its line a reference into the scope's file (named
    when the hint is shown in another file, e.g. at a hotspot in a header)."""
    name = scope.name or scope.kind
    if scope.file is None:
        return name
    return re.sub(r"\bline (\d+)\b", lambda m: line_ref(scope.file, int(m.group(1))), name)


def resolve_refs(text: str, here: str | Callable[[str], bool] | None, name_file: Callable[[str], str],
                 own: Callable[[str], str] | None = None, plain: Callable[[str], str] | None = None) -> str:
    """``text`` with its line references (:func:`line_ref`) written out: a reference into the file where the
    text is shown (``here``: its recorded path, or a predicate on recorded paths) stays ``line 16`` (``own``
    may rewrite that phrase, e.g. to the editor's current line numbers); one into another file becomes
    ``line 16 of NAME`` with ``name_file(recorded)`` (relative to the workspace where the renderer knows it).
    ``plain`` rewrites the text outside references."""
    from warpwise.analysis.profile.paths import normalize

    if callable(here):
        is_here = here
    else:
        home = normalize(here) if here else None

        def is_here(f: str) -> bool:
            return home is not None and normalize(f) == home

    out: list[str] = []
    pos = 0
    for m in _REF.finditer(text):
        out.append(plain(text[pos:m.start()]) if plain is not None else text[pos:m.start()])
        f, phrase = m.group(1), m.group(2)
        if is_here(f):
            out.append(own(phrase) if own is not None else phrase)
        else:
            out.append(f"{phrase} of {name_file(f)}")
        pos = m.end()
    out.append(plain(text[pos:]) if plain is not None else text[pos:])
    return "".join(out)


def strip_refs(text: str) -> str:
    """``text`` with the references' markers removed (their phrases kept): for matching, not for display."""
    return _REF.sub(lambda m: m.group(2), text)


def plural(n: float, word: str, many: str | None = None) -> str:
    """``1 instruction`` / ``3 instructions`` (``many`` overrides the plural form)."""
    return f"{n:g} {word if n == 1 else (many or word + 's')}"


def unique(items: Iterable[str]) -> list[str]:
    """``items`` without repeats, first occurrence kept (hint phrases of distinct PCs can read the same)."""
    return list(dict.fromkeys(items))


# ---- loop unrolling in the binary ----------------------------------------------------------------------

#: A loop body counts as unrolled when the median (line, opcode) pair occurs at least this often in it:
#: unrolling by N repeats the body's instructions of each source line about N times, while a rolled body has
#: each pair about once (two different loads on one line still give a median of 1). A warpwise heuristic.
UNROLLED_MEDIAN_COPIES = 2


def unroll_factor(pf: ProgramFunction, loop: Loop) -> int:
    """Estimated unroll factor of ``loop`` in the binary: the median number of copies of the (source line,
    opcode) pairs of its body, branches and NOPs left out (1 = rolled). Needs line info; 1 without it."""
    if pf.loops.get(loop.header) is not loop:
        return _unroll_factor(pf, loop)
    return pf.memo(("unroll_factor", loop.header), lambda: _unroll_factor(pf, loop))


def _unroll_factor(pf: ProgramFunction, loop: Loop) -> int:
    counts: dict[tuple[int, str], int] = defaultdict(int)
    for b in loop.blocks:
        for ins in pf.blocks[b].instructions:
            if ins.loc is not None and ins.base_opcode not in NOT_COPIED_OPS:
                counts[(ins.loc.line, ins.opcode)] += 1
    if not counts:
        return 1
    return max(1, round(statistics.median(counts.values())))


#: Opcodes that read what the launch sets up: special registers (thread/block index, clock: S2R, S2UR, CS2R) and,
#: with a ``c[0x0][...]`` operand, constant bank 0 (kernel parameters, blockDim, gridDim, the stack pointer).
LAUNCH_READS = frozenset({"S2R", "S2UR", "CS2R"})
CONSTANT_READS = frozenset({"LDC", "ULDC"})


def _reads_launch_state(ins: Instruction) -> bool:
    op = ins.base_opcode
    return op in LAUNCH_READS or (op in CONSTANT_READS and any(o.startswith("c[0x0]") for o in ins.operands))


def launch_setup(pf: ProgramFunction | None, ins: Instruction | None) -> bool:
    """Whether ``ins`` is part of a kernel's launch set-up: one of the leading instructions of its entry block that
    read special registers or constant bank 0 (``LDC R1, c[0x0][0x28]; S2R R0, SR_TID.X; S2UR UR4, SR_CTAID.X;
    LDC R3, c[0x0][0x0]``), before any other instruction. A new warp's first instructions: no code comes before
    them to move in between, so the waits on them are the warp's start (the kernel entry's samples, which the hot
    lines leave out too), not a load issued too late for code reordering. False for a non-kernel or None."""
    if pf is None or ins is None or not pf.is_kernel:
        return False
    def make() -> frozenset[int]:
        b = pf.blocks.get(pf.entry)
        out: set[int] = set()
        for i in b.instructions if b is not None else []:
            if not _reads_launch_state(i):
                break
            out.add(i.offset)
        return frozenset(out)
    lead: frozenset[int] = pf.memo("launch_setup", make)
    return ins.offset in lead


def call_refetch(pf: ProgramFunction | None, ins: Instruction | None, prog: Program | None) -> bool:
    """Whether ``ins`` is where a call jumps to: the instruction after a CALL (where the callee's RET lands) or
    the first instruction of a called function. A warp there waits for the fetch of the jump's target
    (no_instructions: "excessively jumping across large blocks of assembly code", Nsight Compute Kernel Profiling
    Guide, Warp Stall Reasons), the cost of calling out of line that inlining removes (function_inlining), not
    an instruction cache too small for an unrolled body. ``prog``: the program holding ``pf`` (for the callees'
    entries); False when any is None."""
    if pf is None or ins is None or prog is None:
        return False
    def make() -> frozenset[tuple[str, int]]:
        out: set[tuple[str, int]] = set()
        for f in prog.functions.values():
            order = f.instructions
            pos = {i.offset: k for k, i in enumerate(order)}
            for cs in f.calls:
                k = pos.get(cs.offset)
                if k is not None and k + 1 < len(order):
                    out.add((f.name, order[k + 1].offset))
                callee = prog.functions.get(cs.callee) if cs.callee is not None else None
                if callee is not None and callee.instructions:
                    out.add((callee.name, callee.instructions[0].offset))
        return frozenset(out)
    points: frozenset[tuple[str, int]] = prog.memo("call_refetch_points", make)
    return (pf.name, ins.offset) in points


def unrolled_loop(pf: ProgramFunction, loop: Loop) -> Loop | None:
    """The unrolled copy of ``loop`` in the binary: the loop itself when its body repeats
    (:func:`unroll_factor` ≥ UNROLLED_MEDIAN_COPIES), else a sibling loop of the same function over the same
    source lines that does (the main loop of which ``loop`` is the remainder). None when the compiler kept
    the loop rolled."""
    if unroll_factor(pf, loop) >= UNROLLED_MEDIAN_COPIES:
        return loop
    if pf.loops.get(loop.header) is not loop:
        return _unrolled_sibling(pf, loop, list(pf.loops.values()))
    return pf.memo(("unrolled_loop", loop.header), lambda: _unrolled_sibling(pf, loop, _loops_sharing_lines(pf, loop)))


#: A source line's instructions (same file, line and inline call sites) count as copies of a fully unrolled
#: loop body when their median opcode occurs at least this often in the function and the line has at least
#: FULL_UNROLL_MIN_OPCODES opcodes (the median, as in :func:`unroll_factor`: code the compiler hoisted out of
#: the loop leaves a few single opcodes on the body's lines). CUDA C++ Programming Guide, "#pragma unroll":
#: without an argument "the loop will be completely unrolled if its trip count is constant", and the compiler
#: unrolls small loops with a known trip count by default; a fully unrolled loop has no back edge, so the
#: SASS shows its body as straight-line copies. A line that calls an inlined helper twice, or a one-opcode
#: expression such as a Horner chain (FFMA x degree), repeats too, but not with the median opcode of a
#: multi-opcode line four times or more. A warpwise heuristic.
FULL_UNROLL_MIN_COPIES = 4
FULL_UNROLL_MIN_OPCODES = 2

LineContext = tuple[str, int, tuple[SourceLoc, ...]]


def line_context(ins: Instruction) -> LineContext | None:
    """(file, line, inline call sites innermost first: ``ins.inline_chain``, SourceLocs compared by file and line)
    of ``ins``; None without line info."""
    if ins.loc is None:
        return None
    return (ins.loc.file, ins.loc.line, ins.inline_chain)


def repeated_lines(pf: ProgramFunction) -> dict[LineContext, int]:
    """Line contexts of ``pf`` whose instructions are copies of a fully unrolled loop body
    (FULL_UNROLL_MIN_COPIES, FULL_UNROLL_MIN_OPCODES), each with its copy count: the median count of its
    opcodes (branches and NOPs left out); a one-opcode line repeated as often counts too when a multi-opcode
    line of the same file and inline call sites repeats (a one-instruction statement of the same body).
    Memoized per function."""
    def make() -> dict[LineContext, int]:
        counts: dict[LineContext, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for ins in pf.instructions:
            ctx = line_context(ins)
            if ctx is not None and ins.base_opcode not in NOT_COPIED_OPS:
                counts[ctx][ins.opcode] += 1
        out: dict[LineContext, int] = {}
        for ctx, ops in counts.items():
            med = int(statistics.median(ops.values()))  # the copies of a line: its opcodes' median count, floored
            if len(ops) >= FULL_UNROLL_MIN_OPCODES and med >= FULL_UNROLL_MIN_COPIES:
                out[ctx] = med
        # a one-opcode statement of the same body (``sum += s``: one FADD per step) repeats with it: it counts
        # when a multi-opcode line of the same file and inline call sites does
        bodies = {(ctx[0], ctx[2]) for ctx in out}
        for ctx, ops in counts.items():
            n = next(iter(ops.values()))
            if len(ops) == 1 and (ctx[0], ctx[2]) in bodies and n >= FULL_UNROLL_MIN_COPIES:
                out[ctx] = n
        return out
    out: dict[LineContext, int] = pf.memo("repeated_lines", make)
    return out


def fully_unrolled_line(pf: ProgramFunction | None, ins: Instruction | None) -> tuple[str, int, int, int] | None:
    """(file, line, depth, copies) of the source line of the fully unrolled loop body that ``ins`` is a copy
    of: the outermost frame of ``ins``'s location and inline call sites whose line context repeats
    (:func:`repeated_lines`; an inlined helper's line repeats because the loop's call of it does); ``depth``:
    how many inline call sites that frame sits in (0: the function's own code). None when ``ins`` is not in
    repeated code, or either argument is None."""
    if pf is None or ins is None or (ctx := line_context(ins)) is None:
        return None
    rep = repeated_lines(pf)
    if ctx not in rep:
        return None
    chain = ctx[2]
    best = (ctx[0], ctx[1], len(chain), rep[ctx])
    for j in range(len(chain)):
        outer: LineContext = (chain[j].file, chain[j].line, chain[j + 1:])
        if outer not in rep:
            break
        best = (outer[0], outer[1], len(outer[2]), rep[outer])
    return best


def _unrolled_sibling(pf: ProgramFunction, loop: Loop, cands: Iterable[Loop]) -> Loop | None:
    for other in cands:
        if other is not loop and other.lines & loop.lines and unroll_factor(pf, other) >= UNROLLED_MEDIAN_COPIES:
            return other
    return None


@dataclass(frozen=True)
class JoinedCopies:
    """How the binary schedules an unrolled loop's global loads when its copies are split by control flow (see
    :func:`loads_behind_joins`): ``blocks``, start offsets of the loop blocks holding them (each a join of the
    body's control flow); ``branches``, the (file, line)s of the loop's conditional branches and calls between
    the copies, loop control left out."""

    blocks: tuple[int, ...]
    branches: tuple[tuple[str, int], ...]


def loads_behind_joins(pf: ProgramFunction, loop: Loop) -> JoinedCopies | None:
    """Whether the binary's copies of an unrolled ``loop`` keep each copy's global loads behind a join of the body's
    control flow, so that more copies give no more loads in flight.

    Unrolling hides load latency only when the compiler issues later copies' loads ahead of earlier copies' work
    (the loads of the k copies are in flight together). ptxas schedules within a basic block and does not hoist a
    load above a join (a block with two or more predecessors: the loop header, or the reconvergence after a
    conditional branch such as a precise sqrt/division's slow-path call): when every block of ``loop`` (its own
    instructions, inner loops left out) holding a global load is such a join, and there are at least as many of
    them as copies (and two: each copy has its own), each copy's loads wait behind the previous copy's branches,
    issued a few instructions before their use as in a rolled loop; a pragma asking for more copies repeats that
    schedule (checked on holdout8
    nbody_direct_precise: ``#pragma unroll 8`` built 8 copies each loading after the previous copy's BSYNC, and
    measured 1.012x on the H200). None when ``loop`` is not unrolled (:func:`unroll_factor` <
    UNROLLED_MEDIAN_COPIES: no copies to see the schedule of), when a load sits in a block with one predecessor,
    or when fewer load blocks than copies show that some copies' loads share a block."""
    factor = unroll_factor(pf, loop)
    if factor < UNROLLED_MEDIAN_COPIES:
        return None

    def make() -> JoinedCopies | None:
        own = [b for b in sorted(loop.blocks) if pf.loop_of(b) is loop]
        with_loads = [b for b in own if any(ins.base_opcode in GLOBAL_LOADS and is_global_mem(ins)
                                            for ins in pf.blocks[b].instructions)]
        if len(with_loads) < max(2, factor) or any(pf.cfg.in_degree(b) < 2 for b in with_loads):
            return None
        latches = {latch for latch, _ in loop.back_edges}
        branches: list[tuple[str, int]] = []
        for b in own:
            for ins in pf.blocks[b].instructions:
                conditional = ins.base_opcode == "BRA" and ins.predicate is not None and b not in latches
                if (conditional or ins.base_opcode == "CALL") and ins.loc is not None:
                    branches.append((ins.loc.file, ins.loc.line))
        return JoinedCopies(tuple(with_loads), tuple(dict.fromkeys(branches)))
    got: JoinedCopies | None = pf.memo(("loads_behind_joins", loop.header), make)
    return got


def _loops_sharing_lines(pf: ProgramFunction, loop: Loop) -> list[Loop]:
    """Loops of ``pf`` with a source line in common with ``loop``, in ``pf.loops`` order, from a per-function
    line -> loops index (checking every loop per loop is quadratic in functions of thousands of loops)."""
    def index() -> tuple[list[Loop], dict[tuple[str, int], list[int]]]:
        loops = list(pf.loops.values())
        by: dict[tuple[str, int], list[int]] = {}
        for pos, lp in enumerate(loops):
            for ln in lp.lines:
                by.setdefault(ln, []).append(pos)
        return loops, by

    loops, by = pf.memo("loops_by_line", index)
    return [loops[p] for p in sorted({p for ln in loop.lines for p in by.get(ln, ())})]


def same_loop(a: Scope, b: Scope) -> bool:
    """Whether two loop scopes name the same source loop (an unrolled loop and its remainder share one)."""
    return a.kind == b.kind == "loop" and (a.function, a.file, a.line, a.end_line) == \
        (b.function, b.file, b.line, b.end_line)


#: Loads that carry a virtual call's target into its register: the object's vtable pointer, the vtable slot,
#: the constant-bank entry the slot indexes (``LD.E.64 R12, [R12]``; ``LD.E R3, [R12+0x10]``;
#: ``LDC.64 R2, c[0x2][R3]``; ``CALL.REL.NOINC R2``: nvcc 13 sm_90, bench/advice/holdout4 raytrace_virtual).
_TARGET_LOADS = frozenset({"LD", "LDG", "LDC", "ULDC", "LDS", "LDL"})


@dataclass(frozen=True)
class IndirectCalls:
    """A program's calls through a register and what they can reach.

    ``sites``: (caller, CALL offset) of every CALL whose target is a register (virtual calls, function
    pointers: :func:`program.cfg.is_indirect_call`); ``callees``: by name, the functions such a call can
    reach, found without the vtables' relocations (analysis/binary does not read them): device functions
    never called directly, not kernels, not math-library or device-runtime routines — every such function of
    a program with an indirect call is a candidate, so this is a superset (e.g. a virtual destructor no hot
    path reaches; advice weighs each by its own samples); ``target_loads``: (function, offset) of the loads
    feeding each site's target register (:func:`_target_loads`)."""

    sites: tuple[tuple[ProgramFunction, int], ...]
    callees: dict[str, ProgramFunction]
    target_loads: frozenset[tuple[str, int]]


def indirect_calls(prog: Program) -> IndirectCalls:
    """:class:`IndirectCalls` of ``prog``, computed once per program."""
    return prog.memo("indirect_calls", lambda: _indirect_calls(prog))


def _indirect_calls(prog: Program) -> IndirectCalls:
    sites: list[tuple[ProgramFunction, int]] = []
    loads: set[tuple[str, int]] = set()
    for pf in prog.functions.values():
        for cs in pf.calls:
            ins = pf.function.at(cs.offset)
            if cs.callee is None and ins is not None and cf.is_indirect_call(ins):
                sites.append((pf, cs.offset))
                loads |= _target_loads(pf, cs.offset)
    if not sites:
        return IndirectCalls((), {}, frozenset())
    direct = {cs.callee for pf in prog.functions.values() for cs in pf.calls if cs.callee is not None}
    callees = {pf.name: pf for pf in prog.functions.values()
               if not pf.is_kernel and pf.name not in direct and not is_math_routine(pf.name)
               and not is_runtime_function(pf.name)}
    return IndirectCalls(tuple(sites), callees, frozenset(loads))


def _target_loads(pf: ProgramFunction, off: int) -> set[tuple[str, int]]:
    """The chain of loads in the CALL's basic block that computes its target register, walking back: a load
    defining a register of the chain joins it and its address registers are followed; any other definition
    ends that register's chain (a register move or address arithmetic is not a vtable access), and so does an
    earlier CALL (it may write any register). Registers as the def/use engine reads them
    (:func:`warpwise.analysis.blame.operands.def_use`, :func:`address_registers`): a 64-bit result names its
    pair (``IMAD.WIDE R10, R23, 0x8, R10`` writes R10 and R11), a constant-bank offset is one 32-bit
    register (``c[0x2][R12]``: R12), an address ``[R14.64+0x10]`` the pair it spells."""
    ins = pf.function.at(off)
    b = pf.block_of(off)
    reg = cf.call_target_register(ins) if ins is not None else None
    if b is None or reg is None:
        return set()
    want = {reg, f"R{int(reg[1:]) + 1}"}  # the call target is a 64-bit pair
    out: set[tuple[str, int]] = set()
    for i in reversed([i for i in b.instructions if i.offset < off]):
        du = def_use(i)
        if du.clobbers_all or not want:
            break
        if not du.defs & want:
            continue
        want -= du.defs
        if i.base_opcode in _TARGET_LOADS:
            out.add((pf.name, i.offset))
            want |= address_registers(i)
    return out
