"""Variable-latency distances (rule ``distance``): scoreboard set latency and uncovered WAR windows.

Real cases from the second H200 run (notes tune2): gather's candidate that put ``FFMA R13`` (waiting on
SB3) one cycle after the SB3-setting ``LDG R6``, and sgemm_tiled's 14 candidates that put
``FFMA R26`` (waiting on SB3) one cycle after the SB3-setting ``LDS R25``, all failed the output
test. Plus synthetic SASS for each half of both rules.
"""

from __future__ import annotations

from pathlib import Path

from synth import model
from warpwise.analysis.schedule.model import DEFERRED_READ_HORIZON, MOVABLE_ALL, Move, apply_move
from warpwise.analysis.schedule.target import load_target

ROOT = Path(__file__).resolve().parents[2]
PAD = "NOP ; S1"
TAIL = ["NOP ; S15"] * 3  # keeps windows inside the block


def _rule(lines: list[str], pos: int, leaders: set[int] | None = None) -> tuple[str, str]:
    v = model(lines, leaders).check_swap(list(range(len(lines))), pos)
    return ("ok", "") if v.ok else (v.rule, v.reason)


# ---- scoreboard set latency ----------------------------------------------------------------------
def test_waiter_may_not_come_within_one_cycle_of_the_setter() -> None:
    # X sets SB3 with stall 1; Y (stall 2) sits between X and the waiter: after the swap the waiter
    # issues 1 cycle after X, before SB3 counts X
    lines = (
        [PAD] * 4
        + ["LDS R25, [R18+0x180] ; W3 S1", "LDS R22, [R18+0x240] ; W1 S2", "FFMA R26, R26, R5, R21 ; M3 S2"]
        + TAIL
    )
    rule, reason = _rule(lines, 4)
    assert rule == "distance" and "FFMA R26" in reason and "1 cycle" in reason
    # X's own stall of 2 keeps the waiter 2 cycles away: fine
    lines[4] = "LDS R25, [R18+0x180] ; W3 S2"
    assert _rule(lines, 4)[0] == "ok"


def test_moving_a_waiter_up_next_to_the_setter_is_rejected() -> None:
    # P sets SB1 (stall 1), X (stall 1) separates it from Y, which waits on SB1
    lines = [PAD] * 4 + ["LDS R2, [R3] ; W1 S1", "LDS R8, [R9] ; S1", "LDG.E R10, desc[UR4][R12.64] ; M1 S1"] + TAIL
    rule, reason = _rule(lines, 5)
    assert rule == "distance" and "LDG.E R10" in reason
    lines[4] = "LDS R2, [R3] ; W1 S2"
    assert _rule(lines, 5)[0] == "ok"


# ---- uncovered WAR windows -----------------------------------------------------------------------
def _war(writer: str, gap_stall: int = 4) -> list[str]:
    # LDG reads R4 late and sets only a write barrier; an IMAD.WIDE later overwrites R4
    return (
        [PAD] * 4
        + [
            "LDG.E R7, desc[UR4][R4.64] ; W2 S4",
            "LDS R8, [R9] ; S2",
            f"IADD3 R0, R0, 0x1, RZ ; S{gap_stall}",
            writer,
        ]
        + TAIL
    )


def test_uncovered_war_window_may_not_shrink() -> None:
    rule, reason = _rule(_war("IMAD.WIDE R4, R15, 0x4, R4 ; S4"), 4)
    assert rule == "distance" and "R4" in reason and "was 10" in reason
    # the writer waits on the reader's write barrier: the reader has completed, the read is covered
    assert _rule(_war("IMAD.WIDE R4, R15, 0x4, R4 ; M2 S4"), 4)[0] == "ok"
    # a window that stays >= DEFERRED_READ_HORIZON after the swap is long enough
    lines = _war("IMAD.WIDE R4, R15, 0x4, R4 ; S4", gap_stall=15)
    lines[6:6] = ["IADD3 R1, R1, 0x1, RZ ; S15"] * (DEFERRED_READ_HORIZON // 15)
    assert _rule(lines, 4)[0] == "ok"


def test_writer_moving_up_toward_an_uncovered_reader_is_rejected() -> None:
    lines = (
        [PAD] * 4
        + [
            "LDG.E R7, desc[UR4][R4.64] ; W2 S4",
            "LDS R8, [R9] ; S2",
            "IMAD.WIDE R4, R15, 0x4, R4 ; S4",
        ]
        + TAIL
    )
    rule, reason = _rule(lines, 5)
    assert rule == "distance" and "IMAD.WIDE R4" in reason and "4 cycles" in reason
    lines[4] = "LDG.E R7, desc[UR4][R4.64] ; W2 R3 S4"  # a read barrier the writer waits on
    lines[6] = "IMAD.WIDE R4, R15, 0x4, R4 ; M3 S4"
    assert _rule(lines, 5)[0] == "ok"


def test_predicates_are_read_at_issue() -> None:
    # ptxas overwrites P0 3 cycles after @!P0 LDGSTS (sgemm_tiled): predicates are not late reads
    lines = [PAD] * 4 + [
        "@!P0 LDG.E R2, desc[UR8][R6.64] ; W0 S2",
        "LDS R8, [R9] ; S2",
        "ISETP.GE.AND P0, PT, R19, R16, PT ; S1",
    ]
    assert _rule(lines + TAIL, 4)[0] == "ok"
    # the same window over the address register is a late read
    lines[6] = "IADD3 R6, R19, R16, RZ ; S1"
    assert _rule(lines + TAIL, 4)[0] == "distance"


def test_uncovered_read_near_the_block_end_is_rejected() -> None:
    lines = [PAD] * 4 + [
        "STG.E desc[UR4][R2.64], R5 ; S1",
        "LDS R8, [R9] ; S4",
        "BRA `(.L_x_0) ; S1",
        "IADD3 R5, R5, 0x1, RZ ; S1",
    ]
    rule, reason = _rule(lines, 4, leaders={0, 7})
    assert rule == "distance" and "block ends" in reason


# ---- the second H200 run's output-test failures --------------------------------------------------
def test_h200_gather_failure_is_rejected_and_its_parent_is_not() -> None:
    t = load_target(
        (ROOT / "examples/gather/gather.sm_90.cubin").read_bytes(), "_Z8spmv_ellPKiPKfS2_Pfii", "gather", MOVABLE_ALL
    )
    ins = t.code.instructions
    assert ins[22].text == "LDG.E.CONSTANT R7, desc[UR4][R4.64]" and ins[28].text == "IMAD.WIDE R4, R15, 0x4, R4"
    assert ins[22].control.write_barrier == 2 and ins[22].control.read_barrier is None
    # IMAD.WIDE R6 (26) waits on SB2 before R4 is overwritten (28): LDG 22 has completed by then, so
    # moving LDG 27 below 28 is legal (iteration 0 passed its output test)
    assert 2 in ins[26].control.waits_on
    assert t.model.legal_moves(t.identity) == [Move(27, 1)]
    # iteration 3 moved it once more, below IMAD.WIDE R2: FFMA R13 then waits on SB3 one cycle after
    # LDG R6 sets it -> wrong results on the H200
    once = apply_move(t.identity, Move(27, 1))
    v = t.model.legal(once, Move(27, 1))
    assert v.rule == "distance" and "FFMA R13, R6, R12, R13" in v.reason and "1 cycle" in v.reason


def test_h200_sgemm_tiled_failures_are_rejected() -> None:
    t = load_target((ROOT / "tests/schedule/fixtures/tiled.sm_90.cubin").read_bytes(), "sgemm", "tiled", MOVABLE_ALL)
    assert t.code.instructions[85].text == "LDS R25, [R18+0x180]" and t.code.instructions[85].control.stall == 1
    # the run's schedules at iterations 619 and 2533 ({position: original index} where they differ)
    states = {
        619: {67: 68, 68: 70, 70: 67, 77: 82, 78: 77, 79: 78, 80: 86, 82: 79, 83: 88, 84: 87, 85: 80, 86: 90,
              87: 83, 88: 89, 89: 91, 90: 84, 91: 93, 93: 85, 101: 103, 102: 101, 103: 106, 104: 102, 106: 107,
              107: 104},
        2533: {67: 68, 68: 70, 69: 67, 70: 69, 77: 82, 78: 77, 79: 78, 80: 86, 81: 87, 82: 81, 83: 79, 84: 88,
               85: 80, 86: 90, 87: 83, 88: 91, 89: 84, 90: 93, 91: 89, 93: 85, 101: 103, 102: 101, 103: 106,
               104: 102, 106: 107, 107: 104},
    }  # fmt: skip
    failed = {619: [Move(85, 1), Move(94, -1)], 2533: [Move(94, -1), Move(94, 1)]}
    for it, diff in states.items():
        order = [diff.get(p, i) for p, i in enumerate(t.identity)]
        assert sorted(order) == t.identity
        for mv in failed[it]:
            v = t.model.legal(order, mv)
            assert v.rule == "distance" and "FFMA R26, R26, R5, R21" in v.reason, (it, mv, v)
    # the rules leave the start's 21 legal moves alone
    assert len(t.model.legal_moves(t.identity)) == 21


def test_address_operands_are_32_bit_unless_written_wider() -> None:
    # LDSM's width is unknown to defuse, but its shared address is one register: reading R14..R17
    # made WAR windows to an LDSM writing R16 look like late reads of R16 (matmul_leaky)
    du = model(["LDSM.16.M88.4 R32, [R14+UR8]", "LDG.E R2, desc[UR4][R6.64]"]).du
    assert du[0].uses == {"R14", "UR8"} and du[0].defs == {"R32", "R33", "R34", "R35"}
    assert du[1].uses == {"R6", "R7", "UR4", "UR5"}
