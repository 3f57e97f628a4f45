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

How much the fix wins is its aggregation factor k (:func:`aggregation`): the same-address atomics are served one
after another, so their time is proportional to their count, and the fix the hint names first divides that
count by k (a warp reduction: the active lanes per warp; a grid-stride loop over one wave: times the waves; a
per-block copy of B bins: the block's atomics per bin, with B bounded from the SASS by :func:`address_values`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from warpwise.analysis.advice import common as cm
from warpwise.analysis.advice import ranking as rk
from warpwise.analysis.advice.context import EdgeView, KernelView, block_at, user_loc
from warpwise.analysis.advice.model import Advice, Estimate, Skipped
from warpwise.analysis.advice.registry import register
from warpwise.analysis.arch import roofline, stalls
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

    Reaching definitions over the function's CFG (blame.slice.FunctionIndex.reaching_defs: a guarded definition
    and the ones it may leave in place), per register of the address operand, through the
    defining instructions' own operands and the predicates they read or are guarded by (a bin picked by SEL
    after a comparison of loaded values is data); a load ends the walk (its value is data). Never raises."""
    regs = cm.address_registers(ins)
    fx = pf.memo("function_index", lambda: FunctionIndex(pf))
    j = fx.index.get(ins.offset)
    if not regs or j is None:
        return None
    kinds: set[str] = set()
    seen: set[tuple[int, str]] = set()
    budget = _WALK_LIMIT
    work = [(j, r) for r in regs]  # (instruction index, a register or predicate it reads)
    while work:
        key = work.pop()
        if key in seen:
            continue
        seen.add(key)
        found, steps = fx.reaching_defs(key[0], key[1], budget)
        budget -= steps
        if found is None or budget < 0:
            return None  # live into the kernel (not something the SASS shows) or past the walk budget
        for k in found:
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
            # registers and predicates: a SEL/FSEL (or a guarded move) picks the address from a comparison, so
            # the address follows what the compared values came from (k-means' nearest centroid: FSETP of loaded
            # coordinates, then SEL of the bin number)
            work += [(k, u) for u in du.uses if _is_register_or_predicate(u)]
            if du.guard is not None and _is_register_or_predicate(du.guard.lstrip("!")):
                work.append((k, du.guard.lstrip("!")))
    return frozenset(kinds)


def _is_register_or_predicate(name: str) -> bool:
    """``R12``, ``UR4``, ``P0``, ``UP1`` (not ``RZ``/``URZ``/``PT``/``UPT``)."""
    for pre in ("UR", "UP", "R", "P"):
        if name.startswith(pre):
            return name[len(pre):].isdigit()
    return False


#: Distinct values a sub-word load can return: an 8- or 16-bit index (a histogram's bins of an 8-bit image).
_SUBWORD_VALUES = {".U8": 256, ".S8": 256, ".U16": 65536, ".S16": 65536}
#: Value counts above this are "unbounded" for the aggregation factor (a 32-bit index can take any value; 2^24
#: is a warpwise bound, far above any bin count a same-address atomic could still serialize on per warp).
_VALUES_CAP = 1 << 24
_REG_OPERAND = re.compile(r"^[-|!~]*(U?R\d+|U?P\d+)")


def address_values(pf: ProgramFunction, ins: Instruction) -> int | None:
    """How many distinct addresses the threads of one block can give the memory instruction ``ins`` of ``pf``: an
    upper bound from the value sets the SASS gives its address registers, or None when unbounded (a 32-bit loaded
    value, a thread index, a value carried around a loop) or not traceable.

    Rules (warpwise's value-set reasoning over the reaching definitions of blame.slice.FunctionIndex): the address
    is a function of *leaves*, definitions whose value count is known on their own, and takes at most the product
    of their counts, each leaf counted once however many paths reach it (the low word and the carry of one IADD3
    feeding both halves of an ``R8.64`` address are one leaf). Leaves: an 8-/16-bit load (``.U8``, ``.S16``) 256 /
    65536 (:data:`_SUBWORD_VALUES`); a SEL/FSEL the sum of its two inputs (k-means' nearest centroid: a chain of
    ``SEL R3, R3, 0x5, P4`` over 16 immediates is 16 bins); a register with several reaching definitions (a guarded
    definition and the value it may leave in place) the sum of theirs; a predicate-only definition 2; an
    instruction whose result an immediate confines to b bits (:func:`result_bits`: a radix digit ``key >> s & 15``)
    at most 2^b, whatever its inputs. A constant, kernel parameter, immediate or the block index (SR_CTAID) is 1
    value per block (no leaf); any other instruction is the function of its inputs' leaves. Never raises."""
    fx = pf.memo("function_index", lambda: FunctionIndex(pf))
    j = fx.index.get(ins.offset)
    regs = cm.address_registers(ins)
    if j is None or not regs:
        return None
    ev = _ValueSets(fx)
    return ev.product(j, sorted(regs))


#: A value's leaves (:func:`address_values`): key -> value count; a definition's index, or the frozen set of the
#: reaching definitions of a register that has several.
_Leaves = dict[object, int]


def _count(leaves: _Leaves) -> int:
    """The product of the leaves' value counts, at most :data:`_VALUES_CAP`."""
    n = 1
    for c in leaves.values():
        n = min(n * c, _VALUES_CAP)
    return n


class _ValueSets:
    """Memoised leaves of one function's definitions (:func:`address_values`)."""

    def __init__(self, fx: FunctionIndex) -> None:
        self.fx = fx
        self.memo: dict[int, _Leaves | None] = {}
        self.busy: set[int] = set()
        self.budget = _WALK_LIMIT

    def reaching(self, j: int, reg: str) -> frozenset[int] | None:
        """Indices of the definitions of ``reg`` that reach instruction ``j`` (FunctionIndex.reaching_defs, within
        what is left of the walk budget); None for a register live into the function or a walk past the budget."""
        ks, steps = self.fx.reaching_defs(j, reg, self.budget)
        self.budget -= steps
        return ks if self.budget >= 0 else None

    def of_reg(self, j: int, reg: str) -> _Leaves | None:
        """Leaves of ``reg`` at instruction ``j``: its one reaching definition's, or with several a leaf of its own
        whose count is the sum of theirs (a union bound); None when unbounded."""
        ks = self.reaching(j, reg)
        if ks is None:
            return None
        if len(ks) == 1:
            return self.of_def(next(iter(ks)))
        total = 0
        for k in ks:
            lv = self.of_def(k)
            if lv is None:
                return None
            total += _count(lv)
        return {ks: min(total, _VALUES_CAP)}

    def leaves(self, j: int, regs: list[str]) -> _Leaves | None:
        """The union of the leaves of the registers ``regs`` read at ``j``; None when one is unbounded."""
        out: _Leaves = {}
        for r in regs:
            lv = self.of_reg(j, r)
            if lv is None:
                return None
            out.update(lv)
        return out

    def product(self, j: int, regs: list[str]) -> int | None:
        """Values the registers ``regs`` read at ``j`` can take together: the product over their leaves; None at
        or above :data:`_VALUES_CAP`."""
        lv = self.leaves(j, regs)
        if lv is None:
            return None
        n = _count(lv)
        return n if n < _VALUES_CAP else None

    def of_def(self, k: int) -> _Leaves | None:
        if k in self.memo:
            return self.memo[k]
        if k in self.busy:
            return None  # carried around a loop: its values grow with the trip count
        self.busy.add(k)
        try:
            lv = self._of_def(k)
        finally:
            self.busy.discard(k)
        self.memo[k] = lv
        return lv

    def _of_def(self, k: int) -> _Leaves | None:
        fx = self.fx
        d, du = fx.ins[k], fx.du[k]
        if du.clobbers_all:
            return None
        op = d.base_opcode
        if op in ("S2R", "S2UR", "CS2R"):
            return {} if ("SR_CTAID" in d.text or "SRZ" in d.text) else None
        if cm.is_memory(d) and op not in ("LDC", "ULDC"):
            n = next((n for tag, n in _SUBWORD_VALUES.items() if tag in d.opcode), None)
            return None if n is None else {k: n}
        if du.defs and all(r.startswith(("P", "UP")) for r in du.defs):
            return {k: 2}  # a predicate (ISETP, FSETP): true or false
        if op in ("SEL", "FSEL", "USEL"):
            total = 0
            for o in d.operands[1:3]:
                m = _REG_OPERAND.match(o)
                if m is None or m.group(1) in ("RZ", "URZ"):
                    total += 1  # an immediate or zero
                    continue
                lv = self.of_reg(k, m.group(1))
                if lv is None:
                    return None
                total += _count(lv)
            return {k: min(total, _VALUES_CAP)}
        guard = du.guard.lstrip("!") if du.guard else None
        uses = sorted(u for u in du.uses if _is_register_or_predicate(u) and u != guard)
        lv = self.leaves(k, uses) if uses else {}
        bits = result_bits(d)
        if bits is not None and bits < 24 and (lv is None or _count(lv) > 1 << bits):
            return {k: 1 << bits}
        return lv


def result_bits(d: Instruction) -> int | None:
    """How many result bits of ``d`` can be non-zero whatever its register inputs hold, when an immediate bounds
    them: ``LOP3.LUT d, a, b, c, lut`` whose truth table ``lut`` gives 0 wherever one input, an immediate mask m, has
    a 0 bit (an AND with m: ``key >> shift & 15`` is ``LOP3.LUT R5, R5, 0xf, RZ, 0xc0``) -> popcount(m); a logical
    right shift of a 32-bit word by an immediate s (``SHF.R.U32.HI d, RZ, s, r``) -> 32 - s. None otherwise. A
    value with b such bits takes at most 2^b values (the digit of a radix sort, a masked bin index). LOP3's
    truth-table encoding: NVIDIA PTX ISA, ``lop3.b32`` (a = 0xF0, b = 0xCC, c = 0xAA)."""
    ops = d.operands
    if d.base_opcode == "LOP3" and len(ops) >= 5:
        lut = _immediate(ops[4])
        if lut is None:
            return None
        # truth-table entries where input a / b / c is 0 (index bit 2 / 1 / 0 of the entry clear)
        for pos, zero_rows in ((1, 0x0F), (2, 0x33), (3, 0x55)):
            m = _immediate(ops[pos])
            if m is not None and lut & zero_rows == 0:
                return bin(m & 0xFFFFFFFF).count("1")
        return None
    if d.base_opcode == "SHF" and ".R" in d.opcode and ".U32" in d.opcode and ".HI" in d.opcode and len(ops) >= 4 \
            and ops[1] == "RZ":
        s = _immediate(ops[2])
        if s is not None and 0 < s < 32:
            return 32 - s
    return None


def _immediate(op: str) -> int | None:
    """The value of an integer immediate operand (``0xf``, ``15``), else None."""
    try:
        return int(op, 0)
    except ValueError:
        return None


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


def _queued_behind(view: KernelView, sites: dict[cm.InsKey, str]) -> set[tuple[str, int | None]]:
    """The code regions, (function, innermost loop header or None outside loops), whose global memory
    instructions queue behind contended global atomics: regions holding a contended global atomic (not ``shared``),
    when neither DRAM nor L1 is busy (below code.MEMORY_BUSY of its reachable peak, arch/roofline.busy).

    ``lg_throttle`` is a warp waiting for the SM's local/global (LG) instruction queue to the L1 (Nsight Compute
    Kernel Profiling Guide, warp stall reasons). Global atomics and reductions enter the same queue as the loads
    and leave it at the rate the L2 slice serves the same address, one after another: a loop that issues a
    contended atomic per load (a radix-sort upsweep, ``atomicAdd(&counts[digit][tile], 1)`` per key) fills the
    queue with atomics, and its loads throttle behind them while DRAM and L1 idle (holdout13 radix_digit_counts:
    DRAM 4%, L1 17%, 62% of the loop line's samples lg_throttle, most at the loads; privatized, 22.9x). With a
    busy DRAM or L1 the loads' own traffic can fill the queue, so the throttles are not the atomics'."""
    from warpwise.analysis.advice.code import MEMORY_BUSY

    lc = view.profile.launch
    if any(roofline.busy(lc.throughput_pct, u, view.reach_now) >= MEMORY_BUSY for u in ("dram", "l1")):
        return set()
    assert view.program is not None
    out: set[tuple[str, int | None]] = set()
    for (fn, off), kind in sites.items():
        pf = view.program.functions.get(fn)
        ins = pf.function.at(off) if pf is not None else None
        if pf is None or kind == "shared" or ins is None or ins.base_opcode not in GLOBAL_ATOMICS:
            continue
        lp = pf.loop_of(off)
        out.add((fn, lp.header if lp is not None else None))
    return out


def _atomic_edges(view: KernelView, sites: dict[cm.InsKey, str]) -> tuple[list[EdgeView], float]:
    """Samples the atomics cost: every sample at them, stalls waiting on an ATOM's returned value, the drain
    stalls at the kernel's exits in proportion to the atomics among its global writes (warps that reached EXIT
    wait for their writes; stores drain too), and the ``lg_throttle`` stalls of the global memory instructions
    that queue behind the atomics (:func:`_queued_behind`). Returns (edges, M)."""
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
    queued = _queued_behind(view, sites)
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
        elif queued and e.edge.reason == "lg_throttle" and use is not None and e.use_fn is not None \
                and cm.is_global_mem(e.use_ins):
            lp = e.use_fn.loop_of(use[1])
            if (use[0], lp.header if lp is not None else None) in queued:
                evs.append(e)
                m += e.stall
    return evs, m


#: A per-block copy of the bins is the fix named for data-dependent addresses when it leaves at most half the
#: global atomics (k >= 2); below that the block's threads hit about as many bins as they have atomics, so the fix
#: must first give each block more elements (a grid-stride loop over one wave of blocks). A warpwise rule.
MIN_BLOCK_FACTOR = 2.0


@dataclass
class Aggregation:
    """What the named fix does to the same-address atomics: ``k`` = atomics on each address before / after (the
    aggregation factor; ``math.inf`` when the SASS and profile do not bound it), ``fix`` = the fix the estimate is
    for (named first in the hint), ``why`` = the arithmetic in words."""

    k: float
    fix: str
    why: str


def aggregation(view: KernelView, sites: dict[cm.InsKey, str]) -> Aggregation:
    """The aggregation factor of the fix atomic_privatization names first, over the kernel's contended global
    atomics (:func:`contended_atomics`).

    Serialized same-address atomics are performed one after another at the L2 slice that owns the address, so their
    time is proportional to how many there are (NVIDIA, "CUDA Pro Tip: Optimized Filtering with Warp-Aggregated
    Atomics": warp aggregation cuts the number of atomics by up to the warp's 32 threads (paraphrased); measured on the
    H200 in the committed pairs: loss_atomic_sum 8 M atomics on one address in 14.7 ms, image_means_atomic 16 M on
    16 neighbouring words in 29.4 ms, both ~1.8 ns each, and 32x fewer in the latter's fix ran 31.99x faster).
    Per site, with L = active lanes per executed atomic (predicated-on thread instructions / instructions, the
    profile's SourceCounters) and W = waves of CTAs (at least 1):

    - one address for the grid: a register accumulator over a grid-stride loop with one wave of blocks, a warp
      shuffle reduction and one atomic per warp: k = L x W (every thread of a resident wave covers W elements);
    - one address per block: a grid-stride loop would cross blocks that add elsewhere, so a warp shuffle reduction
      and one atomic per warp: k = L;
    - addresses from the data with B distinct values (:func:`address_values`): a per-block copy of the bins in
      shared memory flushed once per block: k = n / min(B, n), n = the block's atomics at the site; when that is
      below MIN_BLOCK_FACTOR, over a grid-stride loop with one wave of blocks (n x W atomics per block); B unknown:
      k = inf (the bound of removing them all).

    The kernel's factor weights the sites by their thread-level atomics: k = sum n_i / sum (n_i / k_i), the fix
    named is that of the sites with the most atomics. Shared-memory atomics (``shared`` sites, ATOMS) count with
    k = inf; sites the profile has no thread counts for are left out (no sites: k = inf)."""
    assert view.program is not None
    lc = view.profile.launch
    waves = max(1.0, lc.waves_per_sm)
    blocks = lc.blocks
    total = 0.0
    after = 0.0
    parts: dict[str, tuple[float, str, str]] = {}  # fix -> (atomics, fix, why) of its largest site
    for pf in view.program.functions.values():
        for i in pf.instructions:
            kind = sites.get((pf.name, i.offset))
            if kind is None or i.base_opcode not in GLOBAL_ATOMICS | SHARED_ATOMICS:
                continue  # the other instructions of a compare-and-swap loop are no atomics
            pc = view.profile.pcs.get((pf.name, i.offset))
            if pc is None or pc.inst_executed <= 0:
                continue
            lanes_n = pc.predicated_on_thread_inst_executed or pc.thread_inst_executed
            if lanes_n <= 0:
                continue
            lanes = lanes_n / pc.inst_executed
            k, fix, why = _site_factor(pf, i, kind, lanes, lanes_n, waves, blocks)
            total += lanes_n
            after += lanes_n / k
            if fix not in parts or parts[fix][0] < lanes_n:
                parts[fix] = (lanes_n, fix, why)
    if total <= 0 or not parts:
        return Aggregation(math.inf, "", "")
    _, fix, why = max(parts.values())
    k = total / after if after > 0 else math.inf
    return Aggregation(k, fix, why)


def _site_factor(pf: ProgramFunction, ins: Instruction, kind: str, lanes: float, n: float, waves: float,
                 blocks: int) -> tuple[float, str, str]:
    """(k, fix, why) of one contended global atomic (:func:`aggregation`); ``n``: its thread-level executions."""
    if kind == "grid":
        return (lanes * waves, "grid-stride",
                f"{lanes:.0f} active lanes per atomic x {waves:.1f} waves of blocks = {lanes * waves:,.0f}x fewer "
                "atomics on the address")
    if kind == "block":
        return (lanes, "warp", f"one atomic per warp of {lanes:.0f} active lanes: {lanes:.0f}x fewer atomics on "
                "each address")
    if kind == "shared":
        return math.inf, "shared", ""  # the per-warp reduction's factor on a CAS retry loop is not modelled
    values = address_values(pf, ins) if kind == "data" else None
    if values is None or blocks <= 0:
        return math.inf, "bins", ""
    per_block = n / blocks
    k = per_block / min(values, per_block)
    if k >= MIN_BLOCK_FACTOR:
        return (k, "bins", f"{per_block:,.0f} atomics per block on at most {values:,} bins: {k:,.1f}x fewer global "
                "atomics on each bin")
    per_wave = per_block * waves
    kw = per_wave / min(values, per_wave)
    return (kw, "bins-grid-stride",
            f"{per_block:,.0f} atomics per block on up to {values:,} bins would stay about one per bin, so each "
            f"block of one wave takes {waves:.1f} blocks' elements: {per_wave:,.0f} atomics on at most {values:,} "
            f"bins, {kw:,.1f}x fewer global atomics on each bin")


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
    """Amdahl over the samples contended atomics cost (:func:`_atomic_edges`, M of T) with the aggregation factor k
    of the fix the hint names first (:func:`aggregation`): S = 1/((1-f) + f/k), f = M/T (GPA eq. 2 when k is
    unbounded). Serialized atomics (f >= SERIAL_SHARE: the launch's time follows their queue, f = 1) give
    S = min(k, C), C the roofline of the busiest unit the fix leaves unchanged (SERIAL_UNITS); an upper bound when
    C binds. Skipped when k <= 1 (already one atomic per warp and wave). Warpwise's optimizer, not in GPA."""
    if view.program is None:
        return Skipped("atomic_privatization", "needs the binary's SASS (no cubin given)", missing=True)
    sites = contended_atomics(view)
    if not sites:
        return Skipped("atomic_privatization", "no atomics on shared addresses")
    evs, m = _atomic_edges(view, sites)
    if m <= 0 or view.total <= 0 or m >= view.total:
        return Skipped("atomic_privatization", "the contended atomics have no samples")
    # the samples at and waiting on the atomics, and the throttles queued behind them: not the exits' drain
    on = [e for e in evs if e.edge.reason != "drain"]
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
    agg = aggregation(view, sites)
    if agg.k <= 1.0:
        return Skipped("atomic_privatization", "the contended atomics are already one per warp and wave: "
                       "aggregating them further removes none")
    named = _FIXES.get(agg.fix)
    if named is not None and agg.why:
        how = f"{named[0]} (the estimate is for this fix: {agg.why}){named[1]}"
    else:
        how = (_FIXES["bins"][0] if "data" in kinds else
               "accumulate in a register over a grid-stride loop, reduce the warp with __shfl_down_sync (or the "
               "block in shared memory) and issue one atomic per warp or block")
        if "data" in kinds and not math.isfinite(agg.k):
            how += " (the bins' number is not bounded by the SASS: the estimate is the bound of removing them all)"
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
    f_s = m / view.total
    s_eq2 = view.total / (view.total - m)
    k = agg.k
    finite = math.isfinite(k)
    inputs: dict[str, float] = {"T": view.total, "M": m, **({"k": k} if finite else {})}
    if finite:
        s_samples = 1.0 / ((1.0 - f_s) + f_s / k)
        base.estimate = Estimate(s_samples, "1/((1-f)+f/k), f = M/T, M = samples at the contended atomics + stalls "
                                 "waiting on them + their share of the drain stalls, k = the fix's aggregation "
                                 "factor", inputs, "Amdahl over the atomics' samples (GPA eq. 2 with 1/k of "
                                 "them left)")
    else:
        s_samples = s_eq2
        base.estimate = Estimate(s_eq2, "T/(T-M), M = samples at the contended atomics + stalls waiting on them + "
                                 "their share of the drain stalls", inputs,
                                 "GPA eq. 2 (lower estimate: the atomics' queue also slows other memory operations)")
    base.matched_samples, base.share = m, f_s
    base.priority = 1
    # Serialized atomics: when they cost a large part of the kernel's samples (SERIAL_SHARE), its time follows
    # their queue (the other warps' waits are behind it too), and every unit the fix leaves unchanged sits far below
    # its roofline. The fix divides the queue by its aggregation factor k (f = 1 in Amdahl: S = k), until the next
    # bound (the busiest of those units, or the launch floor applied later), as for the other traffic fixes
    # (analysis/arch/roofline.after_fix): S = min(k, min_u a_u / p_u over DRAM, SM). With k unbounded, the roofline
    # alone: an upper bound.
    cap = rk.roofline_cap(view.profile.launch.throughput_pct, SERIAL_UNITS, reach_of=view.reach_now)
    if f_s >= SERIAL_SHARE and cap is not None and cap.cap > s_samples:
        if finite and k < cap.cap:
            base.estimate = Estimate(k, f"min(k; C_{cap.unit}), k = the fix's aggregation factor (the serialized "
                                     "atomics' time, f = 1, divided by k), C = a/p of the busiest unit privatization "
                                     f"leaves unchanged ({', '.join(SERIAL_UNITS)}) = {cap.cap:.1f}x; T/(T-M) = "
                                     f"{s_eq2:.3f}x from the samples",
                                     {**inputs, "p": cap.pct, f"C_{cap.unit}": cap.cap},
                                     "Amdahl with the aggregation factor (serialized atomics), roofline after the fix")
            base.cap, base.upper_bound = replace(cap, binding=False), False
        else:
            base.estimate = Estimate(cap.cap, f"C_{cap.unit} = a/p of the busiest unit privatization leaves "
                                     f"unchanged ({', '.join(SERIAL_UNITS)}); T/(T-M) = {s_eq2:.3f}x from the samples"
                                     + (f"; k = {k:,.0f}" if finite else ""),
                                     {**inputs, "p": cap.pct}, "roofline after the fix (upper bound)")
            base.cap, base.upper_bound = cap, True
    return base


#: What each named fix asks for (:func:`aggregation`'s ``fix``), first in the hint, and what goes further.
_FIXES = {
    "grid-stride": ("accumulate in a register over a grid-stride loop with one wave of blocks, reduce the warp with "
                    "__shfl_down_sync and issue one atomic per warp", "; a block reduction in shared memory then cuts "
                    "them further"),
    "warp": ("reduce the warp with __shfl_down_sync and issue one atomic per warp", "; a block reduction in shared "
             "memory (one atomic per block) cuts them further, while a register accumulator over a grid-stride loop "
             "would cross blocks that add to other addresses"),
    "bins": ("keep a per-block copy of the bins in shared memory (shared atomics), then add it to global memory "
             "once per block", ""),
    "bins-grid-stride": ("walk the data with a grid-stride loop over one wave of blocks and keep a per-block copy of "
                         "the bins in shared memory (shared atomics), then add it to global memory once per block",
                         ""),
}


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
