"""The SASS model's opcode helpers: one parse of an opcode from SASS text, one set of memory writes."""

from __future__ import annotations

import pytest
from warpwise.analysis.binary.model import GLOBAL_WRITES, MEMORY_WRITES, opcode_of_sass, writes_memory


@pytest.mark.parametrize(("text", "opcode"), [
    ("@!P0 LDG.E.64 R2, desc[UR4][R4.64] ;", "LDG.E.64"),
    ("STG.E.128 desc[UR4][R6.64], R8 ;", "STG.E.128"),
    ("  EXIT ;", "EXIT"),
    ("@P1 BRA `(.L_x_3)", "BRA"),
    ("", ""),
    ("@P0", ""),
])
def test_opcode_of_sass(text: str, opcode: str) -> None:
    assert opcode_of_sass(text) == opcode


@pytest.mark.parametrize(("opcode", "writes"), [
    ("STG.E.128", True), ("ST.E", True), ("STS.64", True), ("STL", True), ("ATOMS.ADD", True),
    ("ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU", True), ("REDG.E.ADD.STRONG.GPU", True), ("RED.E.ADD", True),
    ("REDUX.SUM.S32", False), ("LDGSTS.E.BYPASS.LTC128B.128", False), ("LDG.E.CONSTANT", False),
    ("LDS.U8", False), ("STSM.16.M88.4", True), ("SUST.D.BA.2D", True), ("BAR.SYNC.DEFER_BLOCKING", False),
])
def test_writes_memory(opcode: str, writes: bool) -> None:
    assert writes_memory(opcode) is writes


def test_global_writes_are_memory_writes() -> None:
    assert GLOBAL_WRITES < MEMORY_WRITES
    assert "STS" in MEMORY_WRITES - GLOBAL_WRITES
