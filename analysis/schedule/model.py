"""Legal-move model of SASS schedule tuning (SIP §3 search space and mutation policy, made static).

Never-executed placeholders (``@!PT LDS RZ, [RZ]``, ptxas padding) are not candidates.

A *schedule* of a kernel section is a permutation ``order`` of its original instruction indices
(``order[pos] = original index``). A *move* takes one memory instruction (SIP §3.1 prunes the space to
global loads/stores; LDS/STS/LDSM/LDGSTS are a second tier) and swaps it with its neighbour one slot up
(-1) or down (+1) inside its basic block (SIP §3.2). Each swap moves whole 16-byte words: the control
code (stall count, yield, barriers, wait mask, reuse) travels with its instruction.

Where SIP relies on testing alone, :func:`check_swap` rejects a swap statically unless every rule
holds for the adjacent pair (X at ``pos``, Y at ``pos+1``; after the swap Y issues first):

* ``pinned``: neither is control flow, a barrier/fence/sync (BAR, DEPBAR, LDGDEPBAR, MEMBAR, WARPSYNC,
  SYNCS, ...), PC-dependent (LEPC, clock reads), an instruction a relocation or ``.nv.info`` attribute
  refers to that the patcher cannot update (caller's ``pinned`` set), or padding (NOP).
* ``block``: Y is not a block leader (a branch target or the instruction after a control transfer):
  the pair lies in one basic block, and block starts stay where branches point.
* ``register``: no RAW/WAR/WAW between X and Y over general, uniform and predicate registers (guard
  predicates are uses; ``blame.operands.def_use(conservative=True)`` over-approximates).
* ``memory``: two memory instructions may swap only when neither can write what the other touches
  (loads of one space commute; stores, atomics, generic and local accesses do not).
* ``barrier``: scoreboard semantics stay the same: Y must not wait on a barrier X sets (Y would stop
  waiting for X), X must not wait on a barrier Y sets (X would newly wait for Y), and if X waits on
  barrier k then Y — which now issues before that wait — must not touch a register that barrier k
  guards anywhere in the function (write-barrier defs, read-barrier sources) unless Y waits on k
  itself, and must not be a memory write. Two setters of one barrier swap only if no DEPBAR counts
  that barrier (``DEPBAR.LE SBk, n`` relies on the issue order of its producers).
* ``barrier`` (in-order coverage): ptxas gives a scoreboard barrier only to the *last* of a run of
  variable-latency instructions and relies on issue order for the others (operands are read, and
  results of one pipe return, in order). So X, moving down below Y, must stay covered: every later
  instruction that overwrites a register X reads, or touches a register X writes, must still be
  preceded by a wait on a barrier set by X or by a same-opcode instruction after X. Rejected when Y's
  barrier was that cover (H200: ``LDSM R4,[R14..]`` below the SB2-setting ``LDSM R36,[R14..]`` before
  ``IMAD.WIDE R14`` waiting on SB2 raised CUDA_ERROR_ILLEGAL_INSTRUCTION).
* ``latency``: fixed-latency distances. The issue distance from P to C is the sum of the stall counts
  of P..C-1 (control-bit semantics, DESIGN.md "Binary model"). Swapping X,Y shortens exactly two
  kinds of window: those starting at X (they lose Y's stall) and those ending at Y (they lose X's
  stall); every other window keeps both or neither. For each dependent fixed-latency pair in those
  windows the new distance must be >= min(old distance, latency of the producer); a window that
  leaves the block before reaching the largest fixed latency (``KernelModel.max_fixed``) is rejected (its far end is
  unknown).
* ``distance`` (scoreboard set latency): a barrier counts its setter only from the cycle after issue,
  so an instruction waiting on it must issue >= ``SB_SET_CYCLES`` (2) cycles after the setter; checked
  for the windows the swap shortens (H200: ``FFMA R26`` waiting on SB3 one cycle after the SB3-setting
  ``LDS R25`` in sgemm_tiled, and ``FFMA R13`` one cycle after ``LDG R6`` in gather, failed the output
  tests; ptxas never emits less than 2 in the benchmark kernels).
* ``distance`` (uncovered WAR): a memory instruction D reads its (non-predicate) operands
  after issue; when a later W overwrites one without waiting on a barrier covering D (D's own, or a
  later same-opcode setter's, as in the in-order coverage rule; a wait on D's write barrier covers the
  read too), ptxas relies on the issue distance D→W, which must then not shrink unless it stays >=
  ``DEFERRED_READ_HORIZON`` cycles. Windows leaving the block are rejected when the read is uncovered
  at the block's end.
* ``reuse``: the instruction before X, X and Y carry no operand-reuse flags (the reuse cache is tied
  to the next instruction, which changes for all three).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from warpwise.analysis.arch.latency import latency_of
from warpwise.analysis.binary.model import Instruction
from warpwise.analysis.blame.operands import DefUse, def_use
from warpwise.analysis.program.cfg import CONTROL_TRANSFERS, CONVERGENCE

# SIP §3.1: global memory first; the second tier adds shared memory and async copies.
MOVABLE_GLOBAL = frozenset({"LDG", "STG"})
MOVABLE_ALL = frozenset({"LDG", "STG", "LDS", "STS", "LDSM", "LDGSTS"})

PINNED_OPCODES = CONTROL_TRANSFERS | CONVERGENCE | frozenset(
    {
        "NANOSLEEP",
        "BAR",
        "B2R",
        "R2B",
        "DEPBAR",
        "LDGDEPBAR",
        "MEMBAR",
        "FENCE",
        "ERRBAR",
        "CCTL",
        "CCTLL",
        "CCTLT",
        "SYNCS",
        "ARRIVES",
        "UTMALDG",
        "UTMASTG",
        "UTMAPF",
        "UTMACCTL",
        "UTMACMDFLUSH",
        "UBLKCP",
        "UBLKRED",
        "UBLKPF",
        "WARPGROUP",
        "HGMMA",
        "IGMMA",
        "BGMMA",
        "QGMMA",
        "WGMMA",
        "ELECT",
        "ACQBULK",
        "ENDCOLLECTIVE",
        "PMTRIG",
        "LEPC",
        "NOP",
        "SETCTAID",
        "SETLMEMBASE",
        "GETLMEMBASE",
        "USETMAXREG",
        "VOTE",
        "VOTEU",
        "MATCH",
        "REDUX",
        "SHFL",
    }
)

# Memory spaces an opcode reads / writes (for the ``memory`` rule). "any" = generic or unknown.
_MEM: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "LDG": (frozenset({"global"}), frozenset()),
    "STG": (frozenset(), frozenset({"global"})),
    "LDS": (frozenset({"shared"}), frozenset()),
    "LDSM": (frozenset({"shared"}), frozenset()),
    "STS": (frozenset(), frozenset({"shared"})),
    "STSM": (frozenset(), frozenset({"shared"})),
    "LDGSTS": (frozenset({"global"}), frozenset({"shared"})),
    "LDL": (frozenset({"local"}), frozenset()),
    "STL": (frozenset(), frozenset({"local"})),
    "LDC": (frozenset({"const"}), frozenset()),
    "ULDC": (frozenset({"const"}), frozenset()),
}
_ANY_MEM = frozenset(
    {
        "LD",
        "ST",
        "ATOM",
        "ATOMG",
        "ATOMS",
        "RED",
        "REDG",
        "REDAS",
        "TEX",
        "TLD",
        "TLD4",
        "TXQ",
        "TMML",
        "TXD",
        "SULD",
        "SUST",
        "SURED",
        "SUATOM",
        "SUQ",
        "LDTRAM",
        "ALD",
        "AST",
        "ISBERD",
        "ISBEWR",
    }
)

# Opcodes trusted to be fixed-latency (scheduled by stall counts, no scoreboard) when they set no write
# barrier. Their latency bound is the architecture table's upper bound (warpwise.analysis.arch.latency:
# ALU 6 and FP64 10 cycles on sm_90, measured on the H200 with Jia et al.'s dependent-chain method).
# Any other opcode without a write barrier never loses distance (unbounded).
FIXED_LATENCY_OPCODES = frozenset({
    "IADD3", "IADD", "IMAD", "IMUL", "IABS", "IMNMX", "VIADD", "VIADDMNMX", "VIMNMX", "LOP3", "LOP", "SHF",
    "SHL", "SHR", "LEA", "PRMT", "SEL", "MOV", "ISETP", "FSETP", "FSEL", "FADD", "FMUL", "FFMA", "FMNMX",
    "HADD2", "HMUL2", "HFMA2", "HSETP2", "HMNMX2", "P2R", "R2P", "PLOP3", "CS2R", "FADD2", "FMUL2", "FFMA2",
    "BMSK", "SGXT", "IDP", "UIADD3", "UIMAD", "ULOP3", "USHF", "UMOV", "USEL", "UISETP", "ULEA", "UPRMT",
    "UPLOP3", "ULDC", "UP2UR", "UR2UP", "UBMSK", "USGXT", "DADD", "DMUL", "DFMA", "DSETP", "DMNMX",
})  # fmt: skip
UNBOUNDED = 1 << 30

# A scoreboard barrier counts its setter only from the cycle after issue: a waiter on it must issue at
# least this many cycles after the setter (maxas wiki "Control Codes"; ptxas 13.0 never emits less in
# any of the five benchmark kernels; on the H200 the sgemm_tiled and gather candidates that put a
# waiter 1 cycle after its setter failed their output tests).
SB_SET_CYCLES = 2
# Memory instructions read their register operands some cycles after issue. Where no barrier wait
# covers the read before an overwrite, ptxas relies on the issue distance. The read delay is
# undocumented; distances of at least this many cycles are taken as safe: the shortest such distance
# ptxas 13.0 itself relied on in the five benchmark kernels (attn_fwd: STS.128 [..], R28 → LDSM R28,
# 40 cycles; matmul_leaky: 42). Everywhere else it sets a read barrier.
DEFERRED_READ_HORIZON = 40


def fixed_latency_bound(opcode: str, arch: str) -> int:
    """Upper bound (cycles) of a fixed-latency producer's latency on ``arch``; :data:`UNBOUNDED` when
    the opcode is not trusted to be fixed-latency.

    Raises:
        UnknownArchError: no latency table for ``arch``.
    """
    if opcode.split(".", 1)[0] not in FIXED_LATENCY_OPCODES:
        return UNBOUNDED
    lat = latency_of(opcode, arch)
    return math.ceil(lat.upper) if lat.fixed else UNBOUNDED


_DEPBAR_SB = re.compile(r"SB(\d)")
_CLOCK = re.compile(r"SR_CLOCK|SR_GLOBALTIMER")


@dataclass(frozen=True)
class Move:
    """Move original instruction ``index`` one slot ``direction`` (-1 = up, +1 = down)."""

    index: int
    direction: int

    def to_json(self) -> list[int]:
        """``[index, direction]``."""
        return [self.index, self.direction]


@dataclass(frozen=True)
class Verdict:
    """Result of a legality check: ``ok``; else the ``rule`` that failed and a human ``reason``."""

    ok: bool
    rule: str = ""
    reason: str = ""


OK = Verdict(True)


def _sets_barriers(ins: Instruction) -> set[int]:
    c = ins.control
    return {b for b in (c.write_barrier, c.read_barrier) if b is not None}


def _is_mem(ins: Instruction) -> bool:
    return ins.base_opcode in _MEM or ins.base_opcode in _ANY_MEM


def _writes_mem(ins: Instruction) -> bool:
    b = ins.base_opcode
    return b in _ANY_MEM or bool(_MEM.get(b, (frozenset(), frozenset()))[1])


_ADDR = re.compile(r"^(?:desc\[(UR\d+)\])?\[(U?R\d+(?:\.64)?)(?:\+(-?0x[0-9a-f]+|-?\d+))?\]$")


def _access(ins: Instruction) -> tuple[str, int, int] | None:
    """(base expression, byte offset, bytes) of a global/shared access, if its address is base+constant."""
    ops = [o for o in ins.operands if "[" in o]
    if len(ops) != 1:
        return None
    m = _ADDR.match(ops[0])
    if not m:
        return None
    mods = ins.opcode.split(".")[1:]
    size = (
        16
        if "128" in mods
        else 8
        if "64" in mods
        else 1
        if {"U8", "S8"} & set(mods)
        else 2
        if {"U16", "S16"} & set(mods)
        else 4
    )
    off = int(m.group(3), 0) if m.group(3) else 0
    return f"{m.group(1)}:{m.group(2)}", off, size


def _disjoint(x: Instruction, y: Instruction) -> bool:
    """Both address the same base register (+ descriptor) at non-overlapping constant offsets.

    Sound for adjacent instructions: the register check already guarantees neither redefines the base.
    """
    ax, ay = _access(x), _access(y)
    if ax is None or ay is None or ax[0] != ay[0]:
        return False
    return ax[1] + ax[2] <= ay[1] or ay[1] + ay[2] <= ax[1]


def memory_conflict(x: Instruction, y: Instruction) -> bool:
    """True when swapping memory instructions ``x`` and ``y`` could change what either reads or writes."""
    if not (_is_mem(x) and _is_mem(y)):
        return False
    if _disjoint(x, y) and x.base_opcode in _MEM and y.base_opcode in _MEM:
        return False
    if x.base_opcode in _ANY_MEM or y.base_opcode in _ANY_MEM:
        return True
    if x.base_opcode == y.base_opcode == "LDGSTS":
        return False  # async copies complete in no defined order among themselves anyway
    rx, wx = _MEM[x.base_opcode]
    ry, wy = _MEM[y.base_opcode]
    return bool(wx & (ry | wy)) or bool(wy & (rx | wx))


class KernelModel:
    """Static facts of one kernel section that legality needs, independent of the current order.

    ``instructions``: original order (``instructions[i].offset == 16*i``); ``leaders``: original
    indices that start a basic block — block starts are *positions*, so a leader position stays a
    leader whatever instruction occupies it; ``pinned``: original indices that must never move
    (relocations/attributes the patcher cannot update). ``movable``: base opcodes a move may pick.
    ``arch``: ``sm_NN`` for the latency table (raises UnknownArchError if there is none).
    """

    def __init__(
        self,
        instructions: Sequence[Instruction],
        leaders: Iterable[int],
        pinned: Iterable[int] = (),
        movable: frozenset[str] = MOVABLE_GLOBAL,
        arch: str = "sm_90",
    ) -> None:
        self.instructions = list(instructions)
        self.arch = arch
        bounds = [fixed_latency_bound(op, arch) for op in FIXED_LATENCY_OPCODES]
        self.max_fixed = max(b for b in bounds if b < UNBOUNDED)
        self.leader_positions = set(leaders) | {0}
        self.pinned = set(pinned)
        self.movable = movable
        # the one def/use engine in its legality mode: never misses a register (widens where in doubt)
        self.du: list[DefUse] = [def_use(i, conservative=True) for i in self.instructions]

    @cached_property
    def guarded(self) -> dict[int, frozenset[str]]:
        """Registers each scoreboard barrier 0..5 guards anywhere in the section.

        Write barrier k guards the defs of its setters, read barrier k the sources of its setters.
        """
        g: dict[int, set[str]] = {k: set() for k in range(6)}
        for ins, du in zip(self.instructions, self.du, strict=True):
            if ins.control.write_barrier is not None:
                g[ins.control.write_barrier] |= du.defs
            if ins.control.read_barrier is not None:
                g[ins.control.read_barrier] |= du.uses
        return {k: frozenset(v) for k, v in g.items()}

    @cached_property
    def depbar_counted(self) -> frozenset[int]:
        """Barriers a ``DEPBAR`` counts (``DEPBAR.LE SB0, 0x1``); all six if one names none."""
        out: set[int] = set()
        for ins in self.instructions:
            if ins.base_opcode == "DEPBAR":
                sbs = _DEPBAR_SB.findall(ins.text)
                out |= {int(s) for s in sbs} if sbs else set(range(6))
        return frozenset(out)

    @cached_property
    def reg_latency(self) -> dict[str, int]:
        """Per register: the largest fixed latency of any instruction in the section that writes it
        without a write barrier (unknown fixed-latency opcodes count as unbounded)."""
        out: dict[str, int] = {}
        for idx, du in enumerate(self.du):
            lat = self._fixed_latency(idx)
            if lat is not None:
                for r in du.defs:
                    out[r] = max(out.get(r, 0), lat)
        return out

    def is_pinned(self, idx: int) -> str:
        """Why original instruction ``idx`` may never move ('' when it may)."""
        ins = self.instructions[idx]
        if idx in self.pinned:
            return "referenced by a relocation or .nv.info attribute the patcher cannot update"
        if ins.base_opcode in PINNED_OPCODES:
            return f"{ins.base_opcode} is control flow, synchronisation or PC-dependent"
        if _CLOCK.search(ins.text):
            return "reads a clock: moving it changes what it measures"
        return ""

    def is_movable(self, idx: int) -> bool:
        """A move may pick original instruction ``idx``: its opcode is in the movable tier and it is
        not a never-executed placeholder (``@!PT LDS RZ, [RZ]``, which ptxas pads with; moving it can
        only shift stall cycles around, never hide latency)."""
        ins = self.instructions[idx]
        return ins.base_opcode in self.movable and ins.predicate != "!PT"

    def candidates(self, order: Sequence[int]) -> list[Move]:
        """All moves of movable instructions in ``order`` (legal or not; see :meth:`legal`)."""
        out = []
        for pos, idx in enumerate(order):
            if self.is_movable(idx):
                if pos > 0:
                    out.append(Move(idx, -1))
                if pos + 1 < len(order):
                    out.append(Move(idx, +1))
        return out

    def legal_moves(self, order: Sequence[int]) -> list[Move]:
        """Moves from :meth:`candidates` that :meth:`legal` accepts (each check looks only at a window
        of neighbours, so this is O(movable instructions × window))."""
        out = []
        n = len(order)
        for pos, idx in enumerate(order):
            if not self.is_movable(idx):
                continue
            if pos > 0 and self.check_swap(order, pos - 1).ok:
                out.append(Move(idx, -1))
            if pos + 1 < n and self.check_swap(order, pos).ok:
                out.append(Move(idx, +1))
        return out

    def legal(self, order: Sequence[int], move: Move) -> Verdict:
        """Legality of ``move`` applied to schedule ``order`` (see the module docstring's rules)."""
        pos = list(order).index(move.index)
        first = pos - 1 if move.direction < 0 else pos
        if first < 0 or first + 1 >= len(order):
            return Verdict(False, "block", "no slot there: start or end of the section")
        return self.check_swap(order, first)

    def check_swap(self, order: Sequence[int], pos: int) -> Verdict:
        """May the instructions at positions ``pos`` (X) and ``pos+1`` (Y) of ``order`` swap?"""
        xi, yi = order[pos], order[pos + 1]
        x, y = self.instructions[xi], self.instructions[yi]
        for idx in (xi, yi):
            why = self.is_pinned(idx)
            if why:
                return Verdict(False, "pinned", f"{self.instructions[idx].text}: {why}")
        if pos + 1 in self.leader_positions:
            return Verdict(False, "block", f"{y.text} starts a basic block: the swap would cross it")
        dx, dy = self.du[xi], self.du[yi]
        for a, b, kind in ((dx.defs, dy.uses, "RAW"), (dx.uses, dy.defs, "WAR"), (dx.defs, dy.defs, "WAW")):
            common = a & b
            if common:
                return Verdict(False, "register", f"{kind} on {','.join(sorted(common))}: {x.text} / {y.text}")
        if memory_conflict(x, y):
            return Verdict(False, "memory", f"{x.text} and {y.text} may touch the same memory")
        v = self._barriers(x, y, dy)
        if not v.ok:
            return v
        v = self._order_coverage(order, pos)
        if not v.ok:
            return v
        v = self._latency(order, pos)
        if not v.ok:
            return v
        v = self._barrier_set_distance(order, pos)
        if not v.ok:
            return v
        v = self._deferred_distance(order, pos)
        if not v.ok:
            return v
        for p in (pos - 1, pos, pos + 1):
            if p >= 0 and self.instructions[order[p]].control.reuse:
                return Verdict(False, "reuse", f"{self.instructions[order[p]].text} sets operand-reuse flags")
        return OK

    def _barriers(self, x: Instruction, y: Instruction, dy: DefUse) -> Verdict:
        cx, cy = x.control, y.control
        sx, sy = _sets_barriers(x), _sets_barriers(y)
        for k in cy.waits_on:
            if k in sx:
                return Verdict(False, "barrier", f"{y.text} waits on SB{k} set by {x.text}: it would stop waiting")
        for k in cx.waits_on:
            if k in sy:
                return Verdict(False, "barrier", f"{x.text} would newly wait on SB{k} set by {y.text}")
            if k not in cy.waits_on:
                touched = (dy.defs | dy.uses) & self.guarded[k]
                if touched:
                    return Verdict(
                        False,
                        "barrier",
                        f"{y.text} would issue before the wait on SB{k} that guards {','.join(sorted(touched))}",
                    )
        if cx.wait_mask and _writes_mem(y):
            return Verdict(False, "barrier", f"memory write {y.text} would pass the wait of {x.text}")
        shared = sx & sy & self.depbar_counted
        if shared:
            k = min(shared)
            return Verdict(False, "barrier", f"both set SB{k}, which a DEPBAR counts in issue order")
        return OK

    def _deferred_reader(self, idx: int) -> bool:
        """Reads its source registers some time after issue (memory and other variable-latency
        instructions); fixed-latency ALU instructions without barriers read them at issue."""
        ins = self.instructions[idx]
        return _is_mem(ins) or bool(_sets_barriers(ins)) or ins.base_opcode not in FIXED_LATENCY_OPCODES

    @cached_property
    def waiter_regs(self) -> dict[int, tuple[frozenset[str], frozenset[str]]]:
        """Per barrier 0..5: (registers written, registers read or written) by the instructions that
        wait on it anywhere in the section."""
        g: dict[int, tuple[set[str], set[str]]] = {k: (set(), set()) for k in range(6)}
        for ins, du in zip(self.instructions, self.du, strict=True):
            for k in ins.control.waits_on:
                g[k][0].update(du.defs)
                g[k][1].update(du.defs | du.uses)
        return {k: (frozenset(d), frozenset(a)) for k, (d, a) in g.items()}

    def _covered(
        self, order: Sequence[int], start: int, cov: set[int], reg: str, result: bool, same: str | None
    ) -> bool | None:
        """Walk ``order`` from position ``start`` until the deferred access to ``reg`` of the
        instruction issued just before ``start`` is known safe or not.

        True when an instruction waits on a barrier in ``cov`` first; False when one overwrites ``reg``
        first (``result``: ``reg`` is the instruction's result, so reading it counts too); None when
        the block ends first. Barriers set on the way join ``cov`` — operands are read and results of
        one pipe come back in issue order, which ptxas relies on (it gives the barrier to the last of a
        run of loads only) — only from setters with base opcode ``same`` when given.
        """
        cov = set(cov)
        for p in range(start, len(order)):
            if p in self.leader_positions:
                return None
            z = self.instructions[order[p]]
            if cov.intersection(z.control.waits_on):
                return True
            du = self.du[order[p]]
            if reg in du.defs or (result and reg in du.uses):
                return False
            if same is None or z.base_opcode == same:
                cov |= _sets_barriers(z)
        return None

    def _order_coverage(self, order: Sequence[int], pos: int) -> Verdict:
        """In-order-coverage rule: X (moving down below Y) keeps every deferred access covered.

        A later instruction W that overwrites a register X reads (WAR), or reads or writes a register
        X writes (RAW/WAW), must wait on a barrier that covers X: one X sets, or one an instruction
        issued after X sets (operands are read, and results of one pipe return, in issue order).
        ptxas gives the barrier to the *last* instruction of such a run only; when that is Y, moving
        X below Y leaves X uncovered. Seen on the H200: ``LDSM R4, [R14+..]`` moved below the
        SB2-setting ``LDSM R36, [R14+..]`` ahead of ``IMAD.WIDE R14`` waiting on SB2 →
        CUDA_ERROR_ILLEGAL_INSTRUCTION; ``LDS R24`` (no barrier) moved below ``LDS.128 R8`` (SB4)
        ahead of an FFMA reading R24 after waiting on SB4 → wrong results. After the swap only
        setters of X's own opcode count as later coverage. The swap is rejected when X was covered
        before and is not after; when the block ends first, when the awaited barrier lay in the block
        or a waiter on Y's barriers anywhere touches the register.
        """
        xi, yi = order[pos], order[pos + 1]
        sy = _sets_barriers(self.instructions[yi])
        if not sy or not self._deferred_reader(xi):
            return OK
        x = self.instructions[xi]
        sx = _sets_barriers(x)
        du = self.du[xi]
        for result, regs in ((False, du.uses - du.defs), (True, du.defs)):
            for reg in sorted(regs):
                after = self._covered(order, pos + 2, sx, reg, result, x.base_opcode)
                if after is True:
                    continue
                before = self._covered(order, pos + 2, sx | sy, reg, result, None)
                if after is False:
                    lost = before is not False  # both False: unprotected already, not this swap's doing
                else:
                    lost = before is True or any(reg in self.waiter_regs[k][int(result)] for k in sy - sx)
                if lost:
                    kind = "result" if result else "operand"
                    return Verdict(
                        False,
                        "barrier",
                        f"{x.text} would issue after {self.instructions[yi].text}, whose barrier "
                        f"(SB{','.join(str(k) for k in sorted(sy))}) covers its {kind} {reg} in issue order",
                    )
        return OK

    def _barrier_set_distance(self, order: Sequence[int], pos: int) -> Verdict:
        """Scoreboard set latency: a waiter must issue >= ``SB_SET_CYCLES`` after the barrier's setter.

        The swap shortens windows starting at X (by Y's stall) and ending at Y (by X's stall); each
        setter→first-waiter window among them must stay >= min(old distance, ``SB_SET_CYCLES``). A
        window that leaves the block within that distance is rejected (its far end is unknown).
        """
        ins = self.instructions
        stall = _stall_at(ins, order)
        xi, yi = order[pos], order[pos + 1]
        sx, wy = _sets_barriers(ins[xi]), set(ins[yi].control.waits_on)
        if sx and stall(pos + 1):
            old = stall(pos) + stall(pos + 1)
            for p in range(pos + 2, len(order) + 1):
                new = old - stall(pos + 1)
                if new >= SB_SET_CYCLES:
                    break
                if p >= len(order):
                    break  # the section ends: nothing waits
                if p in self.leader_positions:
                    return Verdict(
                        False, "distance", f"{ins[xi].text} sets SB{min(sx)} and the block ends {new} cycle(s) later"
                    )
                if sx.intersection(ins[order[p]].control.waits_on):
                    return Verdict(
                        False,
                        "distance",
                        f"{ins[order[p]].text} would wait {new} cycle(s) after {ins[xi].text} sets the barrier "
                        f"(was {old}; a barrier counts from {SB_SET_CYCLES} cycles)",
                    )
                old += stall(p)
        if wy and stall(pos):
            new = 0
            for p in range(pos - 1, -2, -1):
                if new >= SB_SET_CYCLES:
                    break
                if p < 0:
                    break  # the section starts: nothing set a barrier
                if p + 1 in self.leader_positions:
                    return Verdict(
                        False,
                        "distance",
                        f"{ins[yi].text} waits on a barrier and the block starts {new} cycle(s) before",
                    )
                new += stall(p)
                if wy & _sets_barriers(ins[order[p]]) and new < SB_SET_CYCLES:
                    return Verdict(
                        False,
                        "distance",
                        f"{ins[yi].text} would wait {new} cycle(s) after {ins[order[p]].text} sets the barrier "
                        f"(was {new + stall(pos)}; a barrier counts from {SB_SET_CYCLES} cycles)",
                    )
        return OK

    def _late(self, idx: int) -> bool:
        """Reads its operands late: a memory instruction or one that sets a barrier, except barrier-less
        fixed-latency opcodes (ULDC: the ``latency`` rule). Other barrier-less instructions read at
        issue: ptxas overwrites the sources of F2FP, F2F, ... 1 cycle later in attn_fwd/matmul_leaky."""
        ins = self.instructions[idx]
        if ins.base_opcode in FIXED_LATENCY_OPCODES and not _sets_barriers(ins):
            return False
        return _is_mem(ins) or bool(_sets_barriers(ins))

    def _uncovered_war(
        self, order: Sequence[int], d: int, reg: str, stop: int | None = None, reader: int | None = None
    ) -> tuple[str, int]:
        """Follow the deferred read of ``reg`` by the instruction at position ``d`` (original index
        ``reader`` when given: the reader issued just before position ``d + 1``) forward.

        Returns ("covered", p) when the instruction at p waits on a barrier the reader sets, or one a
        later same-opcode instruction sets (a wait on a write barrier means the reader completed, so
        its operands were read long before); ("writer", p) when the instruction at p overwrites ``reg``
        first; ("end", p) when the block ends at p first, ("exit", p) when the section does (nothing
        executes after it). ``stop``: treat position ``stop`` as the end.
        """
        ins = self.instructions
        x = ins[order[d] if reader is None else reader]
        cov = set(_sets_barriers(x))
        p = d + 1
        while p < len(order) and p not in self.leader_positions and p != stop:
            z = ins[order[p]]
            if cov.intersection(z.control.waits_on):
                return "covered", p
            if reg in self.du[order[p]].defs:
                return "writer", p
            if z.base_opcode == x.base_opcode:
                cov |= _sets_barriers(z)
            p += 1
        return ("exit" if p >= len(order) else "end"), p

    @cached_property
    def escaping_reads(self) -> frozenset[str]:
        """Registers some variable-latency instruction reads without a wait covering the read before
        its basic block ends (original order): an overwrite of one near a block start may race."""
        order = list(range(len(self.instructions)))
        out: set[str] = set()
        for d, du in enumerate(self.du):
            if self._late(d):
                out |= {r for r in _late_read(du) if self._uncovered_war(order, d, r)[0] == "end"}
        return frozenset(out)

    def _deferred_distance(self, order: Sequence[int], pos: int) -> Verdict:
        """WAR distance of variable-latency operand reads that no barrier covers.

        A memory instruction D (or one that sets a barrier, :meth:`_late`) reads its operands some
        cycles after issue. When a later instruction W overwrites a register D reads and
        W does not wait on a barrier covering D (one D sets, or one a later same-opcode instruction
        sets, as in :meth:`_order_coverage`), ptxas relies on the issue distance D→W (sum of the stall
        counts of D..W-1). The swap must not shorten such a window: D = X loses Y's stall, W = Y loses
        X's stall. Windows of at least ``DEFERRED_READ_HORIZON`` cycles after the swap are safe. A
        window that leaves the block is rejected when the read is uncovered at the block's end
        (:attr:`escaping_reads`, computed on the original order). Results (RAW/WAW) of variable-latency
        instructions have unbounded latency, so ptxas always waits for them: the in-order coverage rule
        and :meth:`_barrier_set_distance` cover those.
        """
        ins = self.instructions
        stall = _stall_at(ins, order)
        xi, yi = order[pos], order[pos + 1]
        sy = stall(pos + 1)
        # (1) D = X: windows X..W lose Y's stall. Y neither writes X's operands (register rule) nor,
        # after the swap, issues between them, so follow X's reads from pos+2.
        if sy and self._late(xi):
            x, du = ins[xi], self.du[xi]
            for reg in sorted(_late_read(du)):
                how, p = self._uncovered_war(order, pos + 1, reg, reader=xi)
                if how in ("covered", "exit"):
                    continue
                old = sum(stall(q) for q in range(pos, p))
                if old - sy >= DEFERRED_READ_HORIZON:
                    continue
                if how == "end":
                    return Verdict(
                        False,
                        "distance",
                        f"{x.text}: its read of {reg} is not covered by a wait and the block ends "
                        f"{old - sy} cycles later (< {DEFERRED_READ_HORIZON})",
                    )
                return Verdict(
                    False,
                    "distance",
                    f"{ins[order[p]].text} would overwrite {reg} {old - sy} cycles after {x.text} (was {old}), "
                    "which reads it late with no barrier covering the read",
                )
        # (2) W = Y: windows D..Y lose X's stall.
        if not stall(pos):
            return OK
        swapped = [*order[:pos], yi, xi]
        war = set(self.du[yi].defs)
        new = 0
        for p in range(pos - 1, -2, -1):
            if not war or new >= DEFERRED_READ_HORIZON or p < 0:
                break  # (p < 0: the section starts, nothing read before)
            if p + 1 in self.leader_positions:
                esc = war & self.escaping_reads
                if esc:
                    return Verdict(
                        False,
                        "distance",
                        f"{ins[yi].text}: the block starts {new} cycles before it (< {DEFERRED_READ_HORIZON}) "
                        f"and a read of {','.join(sorted(esc))} that no wait covers may still be pending",
                    )
                break
            new += stall(p)
            di, dd = order[p], self.du[order[p]]
            if self._late(di):
                for reg in sorted(war & _late_read(dd)):
                    how, q = self._uncovered_war(swapped, p, reg, stop=pos + 1)
                    if how == "writer" and q == pos:
                        return Verdict(
                            False,
                            "distance",
                            f"{ins[yi].text} would overwrite {reg} {new} cycles after {ins[di].text} "
                            f"(was {new + stall(pos)}), which reads it late with no barrier covering the read",
                        )
            war -= dd.defs  # older reads precede this earlier overwrite
        return OK

    def _fixed_latency(self, idx: int) -> int | None:
        """Latency bound of a fixed-latency producer; None when a write barrier guards its results."""
        ins = self.instructions[idx]
        if ins.control.write_barrier is not None or _is_mem(ins):
            return None  # variable latency: consumers must wait on a barrier, never on stall counts
        return fixed_latency_bound(ins.opcode, self.arch)

    def _latency(self, order: Sequence[int], pos: int) -> Verdict:
        n = len(order)
        xi, yi = order[pos], order[pos + 1]
        ins = self.instructions

        class _Stalls:
            def __getitem__(self, p: int) -> int:
                return ins[order[p]].control.stall

        stall = _Stalls()
        # (1) windows starting at X lose Y's stall: X's fixed-latency results and later consumers.
        lat_x = self._fixed_latency(xi)
        if lat_x is not None and self.du[xi].defs and stall[pos + 1]:
            old = stall[pos] + stall[pos + 1]
            p = pos + 2
            while old - stall[pos + 1] < min(lat_x, self.max_fixed):
                if p >= n or p in self.leader_positions:
                    return Verdict(False, "latency", f"{self.instructions[xi].text}: block ends within its latency")
                c = self.du[order[p]]
                if self.du[xi].defs & (c.uses | c.defs):
                    if old - stall[pos + 1] < min(old, lat_x):
                        return Verdict(
                            False,
                            "latency",
                            f"{self.instructions[order[p]].text} would issue {old - stall[pos + 1]} cycles after "
                            f"{self.instructions[xi].text} (was {old}, latency {lat_x})",
                        )
                    break
                old += stall[p]
                p += 1
        # (2) windows ending at Y lose X's stall: fixed-latency producers before X that Y depends on.
        need = (self.du[yi].uses | self.du[yi].defs) if stall[pos] else frozenset()
        horizon = max((self.reg_latency.get(r, 0) for r in need), default=0)
        old = stall[pos]
        p = pos - 1
        while need and old - stall[pos] < horizon:
            if p < 0 or p + 1 in self.leader_positions:
                return Verdict(
                    False,
                    "latency",
                    f"{self.instructions[yi].text}: the block starts within "
                    f"{horizon if horizon < UNBOUNDED else 'unbounded'} cycles and a "
                    "fixed-latency producer of its operands may precede it",
                )
            pi = order[p]
            old += stall[p]
            hit = self.du[pi].defs & need
            if hit:
                lat = self._fixed_latency(pi)
                if lat is not None and old - stall[pos] < min(old, lat):
                    return Verdict(
                        False,
                        "latency",
                        f"{self.instructions[yi].text} would issue {old - stall[pos]} cycles after "
                        f"{self.instructions[pi].text} (was {old}, latency {lat})",
                    )
                need = need - hit
                horizon = max((self.reg_latency.get(r, 0) for r in need), default=0)
            p -= 1
        return OK


_PREDICATE = re.compile(r"U?P\d$")


def _late_read(du: DefUse) -> frozenset[str]:
    """Registers a variable-latency instruction may read after issue: its sources that it does not
    also write, less predicates (guard and operand predicates are read at issue: ptxas overwrites
    them 3-5 cycles after a barrier-less ``@!P0 LDGSTS`` in sgemm_tiled and matmul_leaky)."""
    return frozenset(r for r in du.uses - du.defs if not _PREDICATE.match(r))


def _stall_at(ins: Sequence[Instruction], order: Sequence[int]) -> Callable[[int], int]:
    return lambda p: ins[order[p]].control.stall


def apply_move(order: Sequence[int], move: Move) -> list[int]:
    """``order`` with ``move`` applied (no legality check).

    Raises:
        ValueError: the instruction is not in ``order`` or there is no slot in that direction.
    """
    new = list(order)
    pos = new.index(move.index)
    other = pos + move.direction
    if not 0 <= other < len(new):
        raise ValueError(f"move {move} leaves the section")
    new[pos], new[other] = new[other], new[pos]
    return new
