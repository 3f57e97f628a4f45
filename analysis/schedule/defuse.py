"""Conservative register def/use sets of SASS instructions, for schedule legality (GPA §4 step 1 terms).

Registers are named ``R<n>``, ``UR<n>``, ``P<n>``, ``UP<n>``; RZ, URZ, PT, UPT are not registers.
Unlike the blamer, legality must never *miss* a dependency, so every doubt widens a set:
an operand of an instruction whose register widths are not known here counts as 4 consecutive
registers; a predicate right after the destination register (carry-out or source, depending on the
opcode) is both a def and a use; instructions with no destination operand are listed in NO_DEST.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from warpwise.analysis.binary.model import Instruction

_REG = re.compile(r"(?<![\w.])(U?R)(\d+|Z)(\.64|\.128)?")
_PRD = re.compile(r"(?<![\w.])!?(U?P)([0-6T])")

# Instructions whose first operand is not a destination.
NO_DEST = frozenset(
    {
        "STG",
        "STS",
        "STL",
        "ST",
        "STSM",
        "RED",
        "REDG",
        "REDAS",
        "REDUX_NONE",
        "LDGSTS",
        "SUST",
        "SURED",
        "BAR",
        "BRA",
        "BRX",
        "BRXU",
        "JMP",
        "JMX",
        "JMXU",
        "CALL",
        "RET",
        "EXIT",
        "KILL",
        "BSSY",
        "BSYNC",
        "BREAK",
        "WARPSYNC",
        "MEMBAR",
        "FENCE",
        "ERRBAR",
        "DEPBAR",
        "LDGDEPBAR",
        "CCTL",
        "CCTLL",
        "CCTLT",
        "NOP",
        "YIELD",
        "NANOSLEEP",
        "BPT",
        "ARRIVES",
        "UTMASTG",
        "UTMALDG",
        "UTMAPF",
        "UBLKCP",
        "UBLKRED",
        "UBLKPF",
        "SYNCS",
        "WARPGROUP",
        "ACQBULK",
        "PMTRIG",
    }
)

# Opcodes whose register operands are 32-bit unless a width is written (``.64``, ``.128``, ``.WIDE``).
KNOWN_WIDTH = frozenset(
    {
        "IADD3",
        "IADD",
        "IMAD",
        "IMUL",
        "IABS",
        "IMNMX",
        "VIADD",
        "VIADDMNMX",
        "VIMNMX",
        "LOP3",
        "LOP",
        "SHF",
        "SHL",
        "SHR",
        "LEA",
        "PRMT",
        "SEL",
        "MOV",
        "ISETP",
        "FSETP",
        "FSEL",
        "FADD",
        "FMUL",
        "FFMA",
        "FMNMX",
        "FCHK",
        "FRND",
        "FMUL2",
        "FADD2",
        "FFMA2",
        "HADD2",
        "HMUL2",
        "HFMA2",
        "HSETP2",
        "HMNMX2",
        "I2F",
        "F2I",
        "F2F",
        "I2I",
        "I2IP",
        "F2FP",
        "MUFU",
        "POPC",
        "FLO",
        "BREV",
        "BMSK",
        "SGXT",
        "P2R",
        "R2P",
        "PLOP3",
        "S2R",
        "S2UR",
        "CS2R",
        "LDC",
        "ULDC",
        "SHFL",
        "VOTE",
        "VOTEU",
        "MATCH",
        "IDP",
        "R2UR",
        "UIADD3",
        "UIMAD",
        "ULOP3",
        "USHF",
        "UMOV",
        "USEL",
        "UISETP",
        "ULEA",
        "UPRMT",
        "UPLOP3",
        "UFLO",
        "UPOPC",
        "UBREV",
        "USGXT",
        "UBMSK",
        "UP2UR",
        "UR2UP",
        "USETMAXREG",
        "LDG",
        "LDS",
        "LDL",
        "LD",
        "STG",
        "STS",
        "STL",
        "ST",
        "ATOM",
        "ATOMG",
        "ATOMS",
        "RED",
        "REDG",
        "LDGSTS",
        "DADD",
        "DMUL",
        "DFMA",
        "DSETP",
        "DMNMX",
    }
)
CONVERSIONS = frozenset({"F2F", "F2I", "I2F", "I2I"})
_TYPE = re.compile(r"[FSU](8|16|32|64)")
DOUBLE = frozenset({"DADD", "DMUL", "DFMA", "DSETP", "DMNMX"})
SETP = frozenset({"ISETP", "FSETP", "DSETP", "HSETP2", "PLOP3", "UISETP", "UPLOP3", "FCHK", "VOTEU"})


@dataclass(frozen=True)
class DefUse:
    """Registers an instruction writes (``defs``) and reads (``uses``, the guard predicate included)."""

    defs: frozenset[str]
    uses: frozenset[str]


def _data_width(ins: Instruction) -> int:
    mods = ins.opcode.split(".")[1:]
    if ins.base_opcode in DOUBLE:
        return 2
    if "128" in mods:
        return 4
    if any("64" in m for m in mods):
        return 2  # .64, .F64, .U64, .S64: a conversion's 64-bit side may be either operand
    return 1


def _regs(operand: str, width: int) -> set[str]:
    """Registers named in one operand; ``width``: registers covered by a bare register name."""
    out: set[str] = set()
    for kind, num, suffix in _REG.findall(operand):
        if num == "Z":
            continue
        n = int(num)
        w = {".64": 2, ".128": 4}.get(suffix, 0) or width
        if "desc[" in operand and kind == "UR" and f"desc[{kind}{num}]" in operand:
            w = max(w, 2)  # a memory descriptor is a 64-bit uniform pair
        out.update(f"{kind}{n + k}" for k in range(w))
    for kind, num in _PRD.findall(operand):
        if num != "T":
            out.add(f"{kind}{num}")
    return out


def def_use(ins: Instruction) -> DefUse:
    """Conservative def/use sets of one instruction (see module docstring for how doubts widen them).

    Widths: ``.64``/``.128`` on the opcode widen data registers to 2/4, ``.WIDE`` widens the
    destination and the addend to 2, FP64 opcodes use pairs, ``R2.64`` in an operand is a pair,
    ``desc[URn]`` is a uniform pair. ``CS2R`` without ``.32`` writes a pair.
    """
    base = ins.base_opcode
    mods = ins.opcode.split(".")[1:]
    known = base in KNOWN_WIDTH
    dw = _data_width(ins) if known else 4
    src_w = dw
    types = [m for m in mods if _TYPE.fullmatch(m)]
    if base in CONVERSIONS and len(types) == 2:
        # F2F.F64.F32: destination type first, source type second
        dw, src_w = (2 if "64" in types[0] else 1), (2 if "64" in types[1] else 1)
    defs: set[str] = set()
    uses: set[str] = set()
    if ins.predicate:
        p = ins.predicate.lstrip("!")
        if p not in ("PT", "UPT"):
            uses.add(p)
    ops = [o.replace(".reuse", "") for o in ins.operands]
    i = 0
    if base in SETP:
        while i < len(ops) and _PRD.fullmatch(ops[i].strip()):
            defs |= _regs(ops[i], 1)
            i += 1
    elif base not in NO_DEST and ops:
        w = dw
        if "WIDE" in mods or (base == "CS2R" and "32" not in mods):
            w = 2
        if base in ("LDSM", "MOVM"):
            w = 4
        defs |= _regs(ops[0], w if known else 4)
        i = 1
        # predicates right after the destination: carry-outs (IADD3, LEA) or sources (VOTE): both
        while i < len(ops) and _PRD.fullmatch(ops[i].strip()):
            r = _regs(ops[i], 1)
            defs |= r
            uses |= r
            i += 1
    for k, o in enumerate(ops[i:], start=i):
        if o.startswith("c[") and "][" in o and "R" not in o.split("][", 1)[0]:
            uses |= _regs(o.split("][", 1)[1], 1)
            continue
        w = src_w
        if "[" in o:
            w = 1  # address operands: widths are written (R2.64) or 32-bit
        elif "WIDE" in mods and k == len(ops) - 1:
            w = 2
        uses |= _regs(o, w if known or "[" in o else 4)
    return DefUse(frozenset(defs), frozenset(uses))
