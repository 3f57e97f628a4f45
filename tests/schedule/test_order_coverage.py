"""In-order barrier coverage (the rule the first H200 run lacked) and placeholder instructions.

ptxas gives a scoreboard barrier only to the last instruction of a run of same-pipe loads and relies on
issue order for the others (operands are read, and results of one pipe return, in order). A move that
puts an earlier member below the barrier setter leaves it uncovered. Real cases from the H200 run
(matmul_leaky, Triton 3.6, the cubin compiled on the H200: fixtures/matmul_leaky_h200.sm_90.cubin) and
sgemm_tiled, plus synthetic SASS for each half of the rule.
"""

from __future__ import annotations

from pathlib import Path

from synth import model
from warpwise.analysis.schedule.model import MOVABLE_ALL, Move, apply_move
from warpwise.analysis.schedule.target import load_target

FIX = Path(__file__).parent / "fixtures"
PAD = "NOP ; S1"


def _rule(lines: list[str], pos: int) -> tuple[str, str]:
    v = model(lines).check_swap(list(range(len(lines))), pos)
    return ("ok", "") if v.ok else (v.rule, v.reason)


# ---- synthetic -----------------------------------------------------------------------------------
def test_war_reader_may_not_move_below_the_read_barrier_setter() -> None:
    # two LDSM read R14; only the second sets read barrier SB2; IMAD overwrites R14 after waiting on SB2
    lines = (
        [PAD] * 8
        + [
            "LDSM.16.M88.4 R4, [R14+0x1800] ; W5 S4",
            "LDSM.16.M88.4 R36, [R14+0x1c00] ; W5 R2 S2",
            "IMAD.WIDE R14, R0, 0x2, R42 ; M2 S4",
            "STG.E.128 desc[UR4][R40.64], R4 ; M5",
        ]
        + [PAD] * 4
    )
    rule, reason = _rule(lines, 8)
    assert rule == "barrier" and "R14" in reason and "SB2" in reason
    # if the first reader sets its own barrier that the writer also waits on, the swap is covered
    lines[8] = "LDSM.16.M88.4 R4, [R14+0x1800] ; W5 R3 S4"
    lines[10] = "IMAD.WIDE R14, R0, 0x2, R42 ; M23 S4"
    assert _rule(lines, 8)[0] == "ok"
    # no later writer of R14 in the block and none anywhere waiting on SB2: nothing to protect
    lines = (
        [PAD] * 8
        + [
            "LDSM.16.M88.4 R4, [R14+0x1800] ; W5 S4",
            "LDSM.16.M88.4 R36, [R14+0x1c00] ; W5 R2 S2",
        ]
        + [PAD] * 4
    )
    assert _rule(lines, 8)[0] == "ok"
    # moving the setter *up* past the barrier-less reader is the same swap seen from Y
    assert model(lines).legal(list(range(len(lines))), Move(9, -1)).ok


def test_raw_result_covered_by_a_later_loads_write_barrier() -> None:
    # LDS R24 has no barrier: its consumer waits on SB4 of the later LDS.128 (in-order completion)
    lines = (
        [PAD] * 8
        + [
            "LDS R24, [R18] ; S4",
            "LDS.128 R8, [R20] ; W4 S4",
            "FFMA R8, R24, R8, R23 ; M4 S3",
        ]
        + [PAD] * 4
    )
    rule, reason = _rule(lines, 8)
    assert rule == "barrier" and "R24" in reason
    # the same pair where the first load has its own barrier awaited by the consumer: fine
    lines[8] = "LDS R24, [R18] ; W3 S4"
    lines[10] = "FFMA R8, R24, R8, R23 ; M34 S3"
    assert _rule(lines, 8)[0] == "ok"


def test_placeholders_are_not_candidates() -> None:
    m = model([PAD] * 2 + ["@!PT LDS RZ, [RZ]", "@!PT LDS RZ, [RZ]", "LDS R2, [R3]"] + [PAD] * 2)
    order = list(range(7))
    assert not m.is_movable(2) and m.is_movable(4)
    assert {mv.index for mv in m.candidates(order)} == {4}
    assert {mv.index for mv in m.legal_moves(order)} <= {4}


def test_conversion_reads_only_its_source_width() -> None:
    du = model(["F2F.F64.F32 R14, R20", "F2F.F32.F64 R12, R12", "I2F.F64 R4, R2"]).du
    assert du[0].defs == {"R14", "R15"} and du[0].uses == {"R20"}
    assert du[1].defs == {"R12"} and du[1].uses == {"R12", "R13"}
    assert du[2].uses == {"R2", "R3"}  # one type only: both sides stay conservative


# ---- the H200 run's real failures ----------------------------------------------------------------
def _replay(t, moves: list[list[int]]) -> list[int]:  # type: ignore[no-untyped-def]
    order = t.identity
    for i, d in moves:
        order = apply_move(order, Move(i, d))
    return order


def test_h200_matmul_leaky_illegal_instruction_move_is_rejected() -> None:
    t = load_target((FIX / "matmul_leaky_h200.sm_90.cubin").read_bytes(), "matmul_leaky", "h200", MOVABLE_ALL)
    texts = [i.text for i in t.code.instructions]
    assert texts[580] == "LDSM.16.M88.4 R4, [R14+UR8+0x1800]"
    assert texts[581] == "LDSM.16.M88.4 R36, [R14+UR8+0x1c00]"
    assert texts[582] == "IMAD.WIDE R14, R0, 0x2, R42"
    c580, c581, c582 = (t.code.instructions[i].control for i in (580, 581, 582))
    assert c581.read_barrier == 2 and c580.read_barrier is None and 2 in c582.waits_on
    # the accepted path of the run up to the candidate that raised CUDA_ERROR_ILLEGAL_INSTRUCTION
    accepted = [
        [168, 1], [271, -1], [285, -1], [155, -1], [200, -1], [274, 1], [180, 1], [153, 1], [196, 1],
        [523, 1], [155, -1], [188, 1], [187, -1], [153, -1], [282, 1], [270, -1],
    ]  # fmt: skip
    order = _replay(t, accepted)
    v = t.model.legal(order, Move(581, -1))
    assert v.rule == "barrier" and "R14" in v.reason
    assert Move(581, -1) not in t.model.legal_moves(order)
    # iteration 9's candidate failed the output test: LDGSTS [R43+0x6000] below the SB2 setter,
    # then CS2R R42 (R42:R43) after the wait on SB2
    order9 = _replay(t, accepted[:8])
    v = t.model.legal(order9, Move(192, 1))
    assert v.rule == "barrier" and "R43" in v.reason
    # the placeholders the run moved (153-155, 187-189, 270-271) are no longer candidates
    assert {mv.index for mv in t.model.candidates(t.identity)}.isdisjoint({153, 154, 155, 187, 188, 189, 270, 271})


def test_h200_sgemm_tiled_output_mismatches_are_rejected() -> None:
    # all eight candidates of the run that failed the output test, at the states where they ran
    t = load_target((FIX / "tiled.sm_90.cubin").read_bytes(), "sgemm", "tiled", MOVABLE_ALL)
    texts = [i.text for i in t.code.instructions]
    assert texts[77] == "LDS R24, [R18]" and texts[78] == "LDS.128 R8, [R20]"
    v = t.model.legal(t.identity, Move(77, 1))
    assert v.rule == "barrier" and "R24" in v.reason
    assert t.model.legal(t.identity, Move(78, -1)).rule == "barrier"
