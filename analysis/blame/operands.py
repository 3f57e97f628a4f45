"""Def/use sets of SASS instructions (GPA §4 "Backward slicing", Table 1).

Register names: general ``R0``..``R254``, uniform ``UR0``..``UR62``, predicates ``P0``..``P6`` and
``UP0``..``UP6``, and six *virtual barrier registers* ``SB0``..``SB5`` (GPA's B0–B5; named SB here so they
do not clash with the convergence barriers ``B0``..``B15`` that BSSY/BSYNC name). Setting a write or read
barrier defines SBi; a wait-mask bit (or a ``DEPBAR ... SBi`` operand) uses SBi. ``RZ``, ``URZ``, ``PT``,
``UPT`` and special registers (``SR_*``) are not registers.

Widths (GPA Table 1: a 64-bit address is two registers): an explicit vector operand ``R2.64`` covers R2,R3;
a ``.64``/``.128`` size modifier on a load/store/``LDC``/``ULDC``/``MOV`` widens its data register to 2/4;
``IMAD.WIDE`` writes 2 and reads a 2-register addend; FP64 ops (``D*``) use 2 per register operand;
``F2F/F2I/I2F/I2I`` take their dst/src widths from their type modifiers in that order (``F2F.F64.F32``:
dst 2, src 1); ``CS2R`` writes 2; MMA operands are over-approximated as 4 registers.

A CALL is treated as defining every register and barrier (its callee's effects are unknown), so an
intra-function slice stops at it (GPA slices within a function).

``def_use(ins, conservative=True)`` is the same engine for schedule legality (analysis/schedule: SIP moves
of memory instructions), which must never *miss* a dependency: registers only (no SB barriers: the schedule
reads the control bits itself), and every doubt widens a set — an operand of an opcode whose register widths
are not listed in CONSERVATIVE_KNOWN_WIDTH counts as 4 consecutive registers, a ``.64`` anywhere in the
opcode widens every data operand to a pair (a conversion's 64-bit side may be either), a predicate right
after the destination register (carry-out or source, depending on the opcode) is both a def and a use, and a
predicate named anywhere in an operand is read. The result always contains the precise sets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from warpwise.analysis.binary.model import ControlCode, Instruction

if TYPE_CHECKING:
    from warpwise.analysis.program.model import ProgramFunction

_REG = re.compile(r"(?<![\w.])(U?R)(\d+)(\.64|\.128)?")
_PRED = re.compile(r"^!?(U?P)([0-6])$")
_SB = re.compile(r"\bSB([0-5])\b")
_DESC = re.compile(r"desc\[UR(\d+)\]")

# Opcodes whose operands are all sources (no register destination).
_NO_DST = frozenset({
    "ST", "STG", "STS", "STL", "STSM", "RED", "REDG", "SUST", "SURED", "BAR", "BRA", "BRX", "JMP", "JMX",
    "EXIT", "RET", "CALL", "BSSY", "BSYNC", "WARPSYNC", "NOP", "MEMBAR", "FENCE", "DEPBAR", "ERRBAR",
    "CCTL", "CCTLL", "YIELD", "BPT", "KILL", "NANOSLEEP", "BREAK", "ARRIVES", "UTMASTG", "UTMAPF",
    "UTMALDG", "UBLKCP", "LDGSTS", "LDGDEPBAR", "WARPGROUP", "UTMACCTL", "ACQBULK",
})
# Set-predicate family: leading predicate operands are the destinations.
_SETP = frozenset({"ISETP", "FSETP", "DSETP", "HSETP2", "PSETP", "UISETP", "PLOP3", "UPLOP3", "FCHK",
                   "VOTE", "VOTEU", "UPSETP"})
_LOADS = frozenset({"LD", "LDG", "LDS", "LDL", "LDC", "ULDC", "LDSM", "ATOM", "ATOMG", "ATOMS", "SULD", "TEX",
                    "TLD", "TLD4", "MOV", "UMOV", "SHFL", "LDTRAM"})
_STORES = frozenset({"ST", "STG", "STS", "STL", "RED", "REDG", "SUST", "STSM"})
_MMA = frozenset({"HMMA", "IMMA", "DMMA", "BMMA", "HGMMA", "IGMMA", "QGMMA"})
_CONV = frozenset({"F2F", "F2I", "I2F", "I2I", "FRND"})
_TYPE_WIDTH = {"F64": 2, "S64": 2, "U64": 2}
_TYPES = re.compile(r"^(F16|F32|F64|S8|U8|S16|U16|S32|U32|S64|U64|BF16|E4M3|E5M2)$")

ALL_BARRIERS = tuple(f"SB{i}" for i in range(6))

# Conservative mode (schedule legality): opcodes whose first operand is not a destination ...
CONSERVATIVE_NO_DST = frozenset({
    "STG", "STS", "STL", "ST", "STSM", "RED", "REDG", "REDAS", "REDUX_NONE", "LDGSTS", "SUST", "SURED", "BAR",
    "BRA", "BRX", "BRXU", "JMP", "JMX", "JMXU", "CALL", "RET", "EXIT", "KILL", "BSSY", "BSYNC", "BREAK",
    "WARPSYNC", "MEMBAR", "FENCE", "ERRBAR", "DEPBAR", "LDGDEPBAR", "CCTL", "CCTLL", "CCTLT", "NOP", "YIELD",
    "NANOSLEEP", "BPT", "ARRIVES", "UTMASTG", "UTMALDG", "UTMAPF", "UBLKCP", "UBLKRED", "UBLKPF", "SYNCS",
    "WARPGROUP", "ACQBULK", "PMTRIG",
})
# ... and opcodes whose register operands are 32-bit unless a width is written (.64, .128, .WIDE).
CONSERVATIVE_KNOWN_WIDTH = frozenset({
    "IADD3", "IADD", "IMAD", "IMUL", "IABS", "IMNMX", "VIADD", "VIADDMNMX", "VIMNMX", "LOP3", "LOP", "SHF",
    "SHL", "SHR", "LEA", "PRMT", "SEL", "MOV", "ISETP", "FSETP", "FSEL", "FADD", "FMUL", "FFMA", "FMNMX",
    "FCHK", "FRND", "FMUL2", "FADD2", "FFMA2", "HADD2", "HMUL2", "HFMA2", "HSETP2", "HMNMX2", "I2F", "F2I",
    "F2F", "I2I", "I2IP", "F2FP", "MUFU", "POPC", "FLO", "BREV", "BMSK", "SGXT", "P2R", "R2P", "PLOP3", "S2R",
    "S2UR", "CS2R", "LDC", "ULDC", "SHFL", "VOTE", "VOTEU", "MATCH", "IDP", "R2UR", "UIADD3", "UIMAD", "ULOP3",
    "USHF", "UMOV", "USEL", "UISETP", "ULEA", "UPRMT", "UPLOP3", "UFLO", "UPOPC", "UBREV", "USGXT", "UBMSK",
    "UP2UR", "UR2UP", "USETMAXREG", "LDG", "LDS", "LDL", "LD", "STG", "STS", "STL", "ST", "ATOM", "ATOMG",
    "ATOMS", "RED", "REDG", "LDGSTS", "DADD", "DMUL", "DFMA", "DSETP", "DMNMX",
})
_C_SETP = frozenset({"ISETP", "FSETP", "DSETP", "HSETP2", "PLOP3", "UISETP", "UPLOP3", "FCHK", "VOTEU"})
_C_DOUBLE = frozenset({"DADD", "DMUL", "DFMA", "DSETP", "DMNMX"})
_C_TYPE = re.compile(r"[FSU](8|16|32|64)")
_ANY_PRED = re.compile(r"(?<![\w.])!?(U?P)([0-6])")
_PRED_OPERAND = re.compile(r"!?U?P[0-6T]")


@dataclass(frozen=True)
class DefUse:
    """Registers an instruction writes (``defs``) and reads (``uses``), plus barrier details.

    ``guard``: the predicate condition under which it executes (``P0``, ``!P0``, ``UP1``; None =
    unpredicated, GPA's ``_``). ``write_barrier``/``read_barrier``: ``SBi`` names it defines (or None).
    ``clobbers_all``: a CALL (defines everything).
    """

    defs: frozenset[str]
    uses: frozenset[str]
    guard: str | None
    write_barrier: str | None = None
    read_barrier: str | None = None
    clobbers_all: bool = False
    reg_reads: frozenset[str] = frozenset()  # register (R/UR/P) reads, without barrier uses

    def defines(self, reg: str) -> bool:
        """Whether the instruction writes ``reg`` (always true for a CALL)."""
        return self.clobbers_all or reg in self.defs


def _expand(kind: str, num: int, width: int) -> list[str]:
    if (kind == "R" and num == 255) or (kind == "UR" and num == 63):
        return []  # RZ / URZ spelled numerically
    return [f"{kind}{num + k}" for k in range(width)]


# Operand strings repeat across instruction texts (R2, RZ, desc[UR4][R2.64], ...): the per-operand parses
# are cached, so a text's first parse costs mostly its split (blame parses ~10^5 distinct texts at 200k).
@lru_cache(maxsize=65536)
def _regs(opnd: str, default_width: int) -> tuple[str, ...]:
    out: list[str] = []
    for m in _REG.finditer(opnd):
        w = {".64": 2, ".128": 4}.get(m.group(3) or "", 0)
        out += _expand(m.group(1), int(m.group(2)), w or default_width)
    return tuple(out)


@lru_cache(maxsize=65536)
def _pred(opnd: str) -> str | None:
    m = _PRED.match(opnd.strip())
    return f"{m.group(1)}{m.group(2)}" if m else None


@lru_cache(maxsize=65536)
def _is_pred_operand(opnd: str) -> bool:
    s = opnd.strip().lstrip("!")
    return s in ("PT", "UPT") or _PRED.match(s) is not None


def _size_width(mods: list[str]) -> int:
    for m in mods:
        if m == "64":
            return 2
        if m == "128":
            return 4
    return 1


#: def/use with barriers, keyed by (text, write barrier, read barrier, wait mask): the only control-code fields
#: that change a def/use (small ints and None hash in C, where the ControlCode dataclass's hash is Python code)
_CACHE: dict[tuple[str, int | None, int | None, int], DefUse] = {}
_CACHE_MAX = 200_000


def def_use(ins: Instruction, conservative: bool = False) -> DefUse:
    """Def/use sets of ``ins`` (see module doc). Never raises: unknown syntax contributes no registers.

    ``conservative``: the schedule-legality sets (module doc): register defs/uses only, widened wherever a
    width or role is in doubt; ``uses`` then includes the guard predicate and ``reg_reads`` equals ``uses``.
    Results are cached by SASS text and the control code's barrier fields: both fully determine them.
    """
    if conservative:
        c = _CONSERVATIVE.get(ins.text)
        if c is None:
            c = _CONSERVATIVE[ins.text] = _conservative(ins)
            if len(_CONSERVATIVE) > _CACHE_MAX:
                _CONSERVATIVE.clear()
        return c
    # the operand parsing depends on the text alone: done once per text, barriers added per control code
    d = _TEXT_CACHE.get(ins.text)
    if d is None:
        d = _text_part(ins)
    cc = ins.control
    wb, rb, wm = cc.write_barrier, cc.read_barrier, cc.wait_mask
    if wb is None and rb is None and not wm:
        return d  # no barrier: the text's sets as they are (what _with_control returns for it)
    key = (ins.text, wb, rb, wm)
    hit = _CACHE.get(key)
    if hit is None:
        hit = _with_control(d, cc)
        if len(_CACHE) > _CACHE_MAX:
            _clear_caches()
        _CACHE[key] = hit
    return hit


def function_def_use(pf: ProgramFunction) -> list[DefUse]:
    """``def_use_all(pf.instructions)``, computed once per function (``pf.memo``): the blame index, the advice
    stage's taint and slice passes read the same list (one def/use per function). Must not be mutated."""
    return pf.memo("def_use", lambda: def_use_all(pf.instructions))


def def_use_all(instructions: list[Instruction]) -> list[DefUse]:
    """``[def_use(i) for i in instructions]`` (precise sets), with the per-text cache lookup inlined: the
    blame index asks this for every instruction of every function (10^5..10^6 calls on large cubins)."""
    text_cache, cache = _TEXT_CACHE, _CACHE
    out: list[DefUse] = []
    append = out.append
    for ins in instructions:
        t = ins.text
        d = text_cache.get(t)
        if d is None:
            d = _text_part(ins)
        cc = ins.control
        wb, rb, wm = cc.write_barrier, cc.read_barrier, cc.wait_mask
        if wb is None and rb is None and not wm:
            append(d)
            continue
        hit = cache.get((t, wb, rb, wm))
        append(hit if hit is not None else def_use(ins))
    return out


def _clear_caches() -> None:
    _CACHE.clear()
    _TEXT_CACHE.clear()
    _CONSERVATIVE.clear()


_TEXT_CACHE: dict[str, DefUse] = {}
_CONSERVATIVE: dict[str, DefUse] = {}


def _text_part(ins: Instruction) -> DefUse:
    d = _TEXT_CACHE.get(ins.text)
    if d is None:
        if len(_TEXT_CACHE) > _CACHE_MAX:
            _clear_caches()
        d = _TEXT_CACHE[ins.text] = _def_use(ins, _NO_CONTROL)
    return d


@lru_cache(maxsize=65536)
def _sb_named(opnd: str) -> tuple[str, ...]:
    """Barrier registers an operand names (``DEPBAR.LE SB0, 0x1``)."""
    return tuple(f"SB{m.group(1)}" for m in _SB.finditer(opnd))


def _wide_regs(operand: str, width: int) -> set[str]:
    """Registers and predicates named anywhere in one operand; ``width``: registers a bare name covers
    (``desc[URn]`` is a uniform pair)."""
    out = set(_regs(operand, width))
    for m in _DESC.finditer(operand):
        out.update(_expand("UR", int(m.group(1)), 2))
    out.update(f"{k}{n}" for k, n in _ANY_PRED.findall(operand))
    return out


def _conservative(ins: Instruction) -> DefUse:
    """Schedule-legality def/use (module doc): the precise sets widened where in doubt."""
    precise = _text_part(ins)
    base = ins.base_opcode
    mods = ins.opcode.split(".")[1:]
    known = base in CONSERVATIVE_KNOWN_WIDTH
    dw = 1
    if base in _C_DOUBLE:
        dw = 2
    elif "128" in mods:
        dw = 4
    elif any("64" in m for m in mods):
        dw = 2  # .64, .F64, .U64, .S64: a conversion's 64-bit side may be either operand
    if not known:
        dw = 4
    src_w = dw
    types = [m for m in mods if _C_TYPE.fullmatch(m)]
    if base in _CONV and base != "FRND" and len(types) == 2:  # F2F.F64.F32: destination type first
        dw, src_w = (2 if "64" in types[0] else 1), (2 if "64" in types[1] else 1)
    defs = {r for r in precise.defs if not r.startswith("SB")}
    uses = set(precise.reg_reads)
    ops = [o.replace(".reuse", "").strip() for o in ins.operands]
    i = 0
    if base in _C_SETP:
        while i < len(ops) and _PRED_OPERAND.fullmatch(ops[i]):
            defs |= _wide_regs(ops[i], 1)
            i += 1
    elif base not in CONSERVATIVE_NO_DST and ops:
        w = dw
        if "WIDE" in mods or (base == "CS2R" and "32" not in mods):
            w = 2
        if base in ("LDSM", "MOVM"):
            w = 4
        defs |= _wide_regs(ops[0], w if known else 4)
        i = 1
        while i < len(ops) and _PRED_OPERAND.fullmatch(ops[i]):  # carry-outs (IADD3, LEA) or sources (VOTE)
            r = _wide_regs(ops[i], 1)
            defs |= r
            uses |= r
            i += 1
    for k, o in enumerate(ops[i:], start=i):
        if o.startswith("c[") and "][" in o and "R" not in o.split("][", 1)[0]:
            uses |= _wide_regs(o.split("][", 1)[1], 1)
            continue
        w = src_w
        if "[" in o:
            w = 1  # address operands: widths are written (R2.64) or 32-bit
        elif "WIDE" in mods and k == len(ops) - 1:
            w = 2
        uses |= _wide_regs(o, w if known or "[" in o else 4)
    fdefs, fuses = frozenset(defs), frozenset(uses)
    return DefUse(fdefs, fuses, precise.guard, None, None, precise.clobbers_all, fuses)
_NO_CONTROL = ControlCode(stall=0, yield_flag=0, write_barrier=None, read_barrier=None, wait_mask=0, reuse=0)


def _with_control(d: DefUse, c: ControlCode) -> DefUse:
    """``d`` (def/use of the text under no barriers) plus control code ``c``'s barriers: setting a write/read
    barrier defines SBi, the wait mask uses SBi."""
    wb = None if c.write_barrier is None else f"SB{c.write_barrier}"
    rb = None if c.read_barrier is None else f"SB{c.read_barrier}"
    if wb is None and rb is None and not c.wait_mask:
        return d
    defs = d.defs | {x for x in (wb, rb) if x}
    uses = d.uses | {f"SB{i}" for i in c.waits_on}
    return DefUse(frozenset(defs), frozenset(uses), d.guard, wb, rb, d.clobbers_all, d.reg_reads)


def _def_use(ins: Instruction, c: ControlCode) -> DefUse:
    parts = ins.opcode.split(".")
    base, mods = parts[0], parts[1:]
    ops = [o.strip() for o in ins.operands]
    wb = None if c.write_barrier is None else f"SB{c.write_barrier}"
    rb = None if c.read_barrier is None else f"SB{c.read_barrier}"
    guard = ins.predicate if ins.predicate not in (None, "PT", "UPT") else None
    uses: set[str] = {f"SB{i}" for i in c.waits_on}
    reg_reads: set[str] = set()
    if guard is not None:
        g = guard.lstrip("!")
        if g not in ("PT", "UPT"):
            reg_reads.add(g)
    for o in ops:
        uses.update(_sb_named(o))
    defs: set[str] = set()
    if base == "CALL":
        reg_reads |= {r for o in ops for r in _regs(o, 1)}
        d = {x for x in (wb, rb) if x}
        return DefUse(frozenset(d), frozenset(uses | reg_reads), guard, wb, rb, True, frozenset(reg_reads))

    dst_idx: list[int] = []
    if base not in _NO_DST and ops and not ops[0].lstrip("-|~!").startswith(("[", "desc[", "c[", "cx[")):
        if base in _SETP:
            k = 0
            while k < len(ops) and k < 2 and _is_pred_operand(ops[k]):
                dst_idx.append(k)
                k += 1
            if base in ("VOTE", "VOTEU") and len(ops) >= 2:
                dst_idx = [0, 1]
        else:
            k = 0
            while k < len(ops) and _is_pred_operand(ops[k]) and k < 2:  # ATOM PT, R0, ... / LOP3 P0, RZ
                dst_idx.append(k)
                k += 1
            if k < len(ops):
                dst_idx.append(k)
                k += 1
            while k < len(ops) and _is_pred_operand(ops[k]) and len(dst_idx) < 4:  # carry-outs
                if base.endswith(".X") or ("X" in mods and k == len(ops) - 1):
                    break
                dst_idx.append(k)
                k += 1

    # widths
    dst_w, src_w = 1, 1
    data_src_w = 1
    if base in ("DFMA", "DADD", "DMUL", "DMNMX", "DSETP"):
        dst_w = src_w = 2
        if base == "DSETP":
            dst_w = 1
    elif base in _CONV:
        tys = [m for m in mods if _TYPES.match(m)]
        if tys:
            dst_w = _TYPE_WIDTH.get(tys[0], 1)
            src_w = _TYPE_WIDTH.get(tys[1] if len(tys) > 1 else tys[0], 1)
    elif base in _MMA:
        dst_w = src_w = 4
    elif base == "CS2R":
        dst_w = 1 if "32" in mods else 2
    elif base in _LOADS or (base.startswith("U") and base[1:] in _LOADS):
        dst_w = _size_width(mods)
    elif base in _STORES:
        data_src_w = _size_width(mods)
    wide_addend = base == "IMAD" and "WIDE" in mods
    if wide_addend:
        dst_w = 2

    for k, o in enumerate(ops):
        if k in dst_idx:
            p = _pred(o)
            if p is not None:
                defs.add(p)
            elif not _is_pred_operand(o):
                defs.update(_regs(o, dst_w))
            continue
        p = _pred(o.lstrip("!"))
        if p is not None:
            reg_reads.add(p)
            continue
        w = src_w
        if base in _STORES and k == len(ops) - 1 and not o.startswith(("[", "desc[")):
            w = data_src_w
        if wide_addend and k == len(ops) - 1:
            w = 2
        if "[" in o:
            w = 1  # address registers: explicit .64 says otherwise
            for m in _DESC.finditer(o):  # desc[URx]: a 64-bit memory descriptor in URx, URx+1
                reg_reads.update(_expand("UR", int(m.group(1)), 2))
        reg_reads.update(_regs(o, w))
    if wb:
        defs.add(wb)
    if rb:
        defs.add(rb)
    return DefUse(frozenset(defs), frozenset(uses | reg_reads), guard, wb, rb, False, frozenset(reg_reads))
