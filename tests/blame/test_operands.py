"""Def/use sets of SASS instructions (widths, predicates, virtual barrier registers)."""

from __future__ import annotations

import pytest
from synth_sass import make_instruction
from warpwise.analysis.binary.model import ControlCode
from warpwise.analysis.blame.operands import def_use

PLAIN = ControlCode(stall=1, yield_flag=0, write_barrier=None, read_barrier=None, wait_mask=0, reuse=0)


@pytest.mark.parametrize(("sass", "defs", "uses"), [
    ("@P0 LDG.E.64 R4, desc[UR4][R2.64]", {"R4", "R5"}, {"P0", "R2", "R3", "UR4", "UR5"}),
    ("LDG.E.128 R8, desc[UR4][R2.64+0x10]", {"R8", "R9", "R10", "R11"}, {"R2", "R3", "UR4", "UR5"}),
    ("ISETP.GE.AND P0, PT, R7, UR4, PT", {"P0"}, {"R7", "UR4"}),
    ("IADD3 R2, P0, PT, R3, R4, RZ", {"R2", "P0"}, {"R3", "R4"}),
    ("IADD3.X R5, RZ, R5, RZ, P0, !PT", {"R5"}, {"R5", "P0"}),
    ("IMAD.WIDE R4, R7, 0x4, R4", {"R4", "R5"}, {"R7", "R4", "R5"}),
    ("STG.E.64 desc[UR4][R2.64], R6", set(), {"R2", "R3", "R6", "R7", "UR4", "UR5"}),
    ("STS [R3+0x4], R5", set(), {"R3", "R5"}),
    ("F2F.F64.F32 R2, R0", {"R2", "R3"}, {"R0"}),
    ("F2F.F32.F64 R0, R2", {"R0"}, {"R2", "R3"}),
    ("DFMA R2, R4, UR8, R8", {"R2", "R3"}, {"R4", "R5", "UR8", "UR9", "R8", "R9"}),
    ("SEL R0, R1, R2, !P3", {"R0"}, {"R1", "R2", "P3"}),
    ("ULDC.64 UR4, c[0x0][0x208]", {"UR4", "UR5"}, set()),
    ("LDC R1, c[0x0][R3]", {"R1"}, {"R3"}),
    ("FSEL R0, -R1, |R2|, PT", {"R0"}, {"R1", "R2"}),
    ("MOV R0, RZ", {"R0"}, set()),
    ("@!UP1 UIADD3 UR5, UR5, 0x1, URZ", {"UR5"}, {"UR5", "UP1"}),
    ("DEPBAR.LE SB0, 0x1", set(), {"SB0"}),
    ("BSSY B0, 0x1e0", set(), set()),   # convergence barrier B0 is not scoreboard SB0
    ("S2R R0, SR_TID.X", {"R0"}, set()),
])
def test_def_use(sass: str, defs: set[str], uses: set[str]) -> None:
    d = def_use(make_instruction(0, sass, PLAIN))
    assert set(d.defs) == defs
    assert set(d.uses) == uses


def test_virtual_barrier_registers() -> None:
    c = ControlCode(stall=1, yield_flag=0, write_barrier=2, read_barrier=4, wait_mask=0b100001, reuse=0)
    d = def_use(make_instruction(0, "LDG.E R0, desc[UR4][R2.64]", c))
    assert {"SB2", "SB4"} <= d.defs and {"SB0", "SB5"} <= d.uses
    assert d.write_barrier == "SB2" and d.read_barrier == "SB4"


def test_guard_and_call() -> None:
    assert def_use(make_instruction(0, "@!P2 BRA 0x40", PLAIN)).guard == "!P2"
    assert def_use(make_instruction(0, "@PT BRA 0x40", PLAIN)).guard is None
    call = def_use(make_instruction(0, "CALL.REL.NOINC 0x100", PLAIN))
    assert call.clobbers_all and call.defines("R17") and call.defines("SB3")


def test_def_use_cached_by_text_equals_direct_parse() -> None:
    """def_use parses a text once and adds each control code's barriers: same result as parsing with it."""
    from warpwise.analysis.binary.model import ControlCode, Instruction
    from warpwise.analysis.blame.operands import _def_use, def_use

    for hi in (0, (1 << 46) * 2 | (5 << 49) | (0b101 << 52), (7 << 46) | (7 << 49) | (0b10 << 52)):
        for text, opcode, pred, ops in (("@!P0 LDG.E.64 R2, desc[UR4][R6.64]", "LDG.E.64", "!P0",
                                         ["R2", "desc[UR4][R6.64]"]), ("CALL.REL.NOINC 0x40", "CALL.REL.NOINC", None,
                                                                        ["0x40"])):
            ins = Instruction(0, text, opcode, pred, ops, 0, hi, ControlCode.from_hi(hi))
            assert def_use(ins) == _def_use(ins, ins.control)
