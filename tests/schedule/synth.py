"""Synthetic SASS for rule-by-rule legality tests.

``sass("LDG.E R2, desc[UR4][R4.64] ; S1 W0", ...)``: text, then after ``;`` control fields ``S<stall>``,
``W<write barrier>``, ``R<read barrier>``, ``M<barriers waited on, as digits>``, ``U<reuse bits>``,
``Y`` (yield). The control bits are encoded into a real high word and decoded by ControlCode.from_hi.
"""

from __future__ import annotations

from warpwise.analysis.binary.model import ControlCode, Instruction
from warpwise.analysis.schedule.model import MOVABLE_ALL, KernelModel
from warpwise.analysis.schedule.sass import _split


def hi_word(
    stall: int = 1, wb: int | None = None, rb: int | None = None, wait: str = "", reuse: int = 0, yld: int = 0
) -> int:
    """A high instruction word carrying the given control bits (layout of ControlCode)."""
    mask = sum(1 << int(c) for c in wait)
    return (
        (stall & 0xF) << 41
        | yld << 45
        | (7 if wb is None else wb) << 46
        | (7 if rb is None else rb) << 49
        | mask << 52
        | reuse << 58
    )


def ins(i: int, line: str) -> Instruction:
    text, _, ctrl = line.partition(";")
    kw: dict = {"stall": 1}
    for f in ctrl.split():
        if f[0] == "S":
            kw["stall"] = int(f[1:])
        elif f[0] == "W":
            kw["wb"] = int(f[1:])
        elif f[0] == "R":
            kw["rb"] = int(f[1:])
        elif f[0] == "M":
            kw["wait"] = f[1:]
        elif f[0] == "U":
            kw["reuse"] = int(f[1:])
        elif f == "Y":
            kw["yld"] = 1
    hi = hi_word(**kw)
    pred, opcode, ops = _split(text.strip())
    return Instruction(16 * i, text.strip(), opcode, pred, ops, i, hi, ControlCode.from_hi(hi))


def model(lines: list[str], leaders: set[int] | None = None) -> KernelModel:
    """A KernelModel of the lines (all movable tiers), leaders default {0}."""
    return KernelModel([ins(i, s) for i, s in enumerate(lines)], leaders or {0}, movable=MOVABLE_ALL)
