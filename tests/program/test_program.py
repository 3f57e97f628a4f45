"""Program structure on synthetic SASS and on the examples' real sm_90 cubins."""

from __future__ import annotations

from pathlib import Path

import pytest
from synth_sass import function
from warpwise.analysis.binary.load import load_cubin
from warpwise.analysis.program.build import ProgramError, build_function, build_program
from warpwise.analysis.program.cfg import decoded_target

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def programs() -> dict:
    return {e: build_program(load_cubin(EXAMPLES / e / f"{e}.sm_90.cubin"))
            for e in ("gather", "intdiv", "noinline", "stencil", "cdp")}


def test_nested_loops_synthetic() -> None:
    f = build_function(function("""
        MOV R0, RZ ; L1
        MOV R1, RZ ; L2
        IADD3 R1, R1, 0x1, RZ ; L3
        ISETP.GE.AND P0, PT, R1, 0x8, PT ; L3
        @!P0 BRA 0x20 ; L3
        IADD3 R0, R0, 0x1, RZ ; L4
        ISETP.GE.AND P1, PT, R0, 0x4, PT ; L4
        @!P1 BRA 0x10 ; L4
        EXIT ; L5
    """))
    assert sorted(f.blocks) == [0x0, 0x10, 0x20, 0x50, 0x80]
    assert sorted(f.loops) == [0x10, 0x20]
    outer, inner = f.loops[0x10], f.loops[0x20]
    assert (outer.depth, inner.depth) == (1, 2)
    assert inner.parent == 0x10 and outer.children == (0x20,)
    assert (outer.first_line, outer.last_line) == (2, 4)
    assert (inner.first_line, inner.last_line) == (3, 3)
    assert f.loop_of(0x30) is inner and f.loop_of(0x60) is outer and f.loop_of(0x80) is None
    assert [lp.header for lp in f.loop_nest(0x40)] == [0x20, 0x10]
    # the predicated branch falls through too; EXIT ends the function
    assert set(f.cfg.successors(0x20)) == {0x20, 0x50}
    assert f.exits == [0x80]
    assert f.dominates(0x10, 0x50) and not f.dominates(0x50, 0x10)
    assert f.postdominates(0x80, 0x0) and f.postdominates(0x50, 0x20)


def test_predicated_exit_and_unreachable_trap_loop() -> None:
    f = build_function(function("""
        ISETP.GE.AND P0, PT, R0, 0x8, PT
        @P0 EXIT
        MOV R1, RZ
        EXIT
        BRA 0x40
    """))
    assert f.exits == [0x0, 0x20]
    assert set(f.cfg.successors(0x0)) == {0x20}
    assert f.loops == {}  # the `BRA .` trap after EXIT is unreachable, not a loop


def test_call_does_not_end_block_and_bad_input() -> None:
    f = build_function(function("""
        MOV R8, 0x20
        CALL.REL.NOINC 0x40
        EXIT
    """))
    assert len(f.blocks) == 1 and f.calls[0].offset == 0x10
    empty = function("NOP")
    empty.instructions = []
    with pytest.raises(ProgramError, match="no instructions"):
        build_function(empty)


def test_gather_k_loop(programs: dict) -> None:
    k = programs["gather"].function("_Z8spmv_ellPKiPKfS2_Pfii")
    assert len(k.loops) == 1
    (lp,) = k.loops.values()
    assert (lp.depth, lp.first_line, lp.last_line) == (1, 15, 17)
    ldgs = [i for i in k.instructions if i.base_opcode == "LDG"]
    in_loop = [i for i in ldgs if k.loop_of(i.offset) is lp]
    assert len(in_loop) == 3  # cols[..], vals[..], x[c]
    assert k.loop_of(k.instructions[0].offset) is None


def test_intdiv_rounds_loop(programs: dict) -> None:
    k = programs["intdiv"].function("_Z12bucket_scorePKjPjijji")
    # unrolled-by-4 main loop and its remainder loop, both lines 14-18, not nested
    assert sorted((lp.depth, lp.first_line, lp.last_line) for lp in k.loops.values()) == [(1, 14, 18)] * 2
    assert all(lp.parent is None for lp in k.loops.values())


def test_noinline_steps_loop_with_call(programs: dict) -> None:
    p = programs["noinline"]
    k = p.function("_Z7advancePfPKfiif")
    damp = p.function("$_Z7advancePfPKfiif$_Z4dampfff")
    assert damp.function.section == k.function.section and damp.function.start == 0x3B0
    assert not damp.is_kernel and damp.loops == {}
    assert len(k.loops) == 2
    calls = sorted(len(lp.calls) for lp in k.loops.values())
    assert calls == [1, 4]  # remainder loop: one CALL; main loop unrolled by 4
    assert all(c.callee == damp.name and c.target == 0x3B0 for c in k.calls)
    assert p.function_at(k.function.section, 0x3C0) is damp
    assert p.loop_of(damp.name, 0x3C0) is None
    assert any(i.base_opcode == "RET" for i in damp.blocks[max(damp.blocks)].instructions)


def test_stencil_unrolled_no_loop(programs: dict) -> None:
    assert programs["stencil"].function("_Z9blur_rowsPKfPfii").loops == {}


def test_decoded_targets_match_nvdisasm_labels(programs: dict) -> None:
    # every direct branch of the CDP cubin (device runtime included) decodes inside its function
    n = 0
    for f in programs["cdp"].functions.values():
        for i in f.instructions:
            if i.base_opcode == "BRA":
                t = decoded_target(i)
                assert t is not None and f.function.start <= t < f.function.start + f.function.size
                n += 1
    assert n > 100
