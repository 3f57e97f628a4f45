"""Legality rules of schedule moves, one by one on synthetic SASS, then on real sm_90 cubins."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from synth import model
from warpwise.analysis.schedule.model import MOVABLE_ALL, Move, apply_move
from warpwise.analysis.schedule.target import load_target

ROOT = Path(__file__).resolve().parents[2]
PAD = "NOP ; S1"  # padding never moves, and keeps windows inside the block


def swap_rule(lines: list[str], pos: int, leaders: set[int] | None = None) -> str:
    m = model(lines, leaders)
    v = m.check_swap(list(range(len(lines))), pos)
    return "ok" if v.ok else v.rule


# ---- def/use -------------------------------------------------------------------------------------
def test_defuse_widths_and_predicates() -> None:
    m = model(
        [
            "LDG.E.64 R2, desc[UR4][R4.64]",
            "IMAD.WIDE R8, R7, 0x4, R10",
            "ISETP.GE.AND P0, PT, R7, R15, PT",
            "@!P1 STG.E.128 desc[UR4][R8.64], R12",
            "IADD3 R0, P2, R1, R2, RZ",
            "F2F.F64.F32 R12, R9",
            "HMMA.16816.F32 R4, R8, R12, R4",
        ]
    )
    du = m.du
    assert du[0].defs == {"R2", "R3"} and du[0].uses == {"UR4", "UR5", "R4", "R5"}
    assert du[1].defs == {"R8", "R9"} and du[1].uses == {"R7", "R10", "R11"}
    assert du[2].defs == {"P0"} and du[2].uses == {"R7", "R15"}
    assert du[3].defs == set() and du[3].uses == {"P1", "UR4", "UR5", "R8", "R9", "R12", "R13", "R14", "R15"}
    assert du[4].defs == {"R0", "P2"} and {"R1", "R2", "P2"} <= du[4].uses
    assert du[5].defs == {"R12", "R13"}
    assert {"R4", "R5", "R6", "R7"} <= du[6].defs  # unknown widths: 4 registers per operand


def test_defuse_register_after_a_leading_predicate_destination() -> None:
    # the schedule's former own def/use read the first operand as the only destination and missed the
    # register written after a predicate destination (SHFL's lane predicate, LOP3's P0, VOTEU's UR4)
    du = model(["SHFL.DOWN PT, R3, R13, 0x10, 0x1f", "LOP3.LUT P0, R0, R6, 0x7f, RZ, 0xc0, !PT",
                "VOTEU.ANY UR4, UPT, PT", "PLOP3.LUT P0, PT, P0, P1, PT, 0xa8, 0x0"]).du
    assert du[0].defs == {"R3"} and "R13" in du[0].uses
    assert du[1].defs == {"P0", "R0"} and "R6" in du[1].uses
    assert du[2].defs == {"UR4"}
    assert "P0" in du[3].defs and {"P0", "P1"} <= du[3].uses


def test_conservative_defuse_contains_the_precise_sets() -> None:
    from warpwise.analysis.blame.operands import def_use

    m = model(["LDG.E.64 R2, desc[UR4][R4.64]", "HMMA.16816.F32 R4, R8, R12, R4", "@P0 IADD3 R0, P2, R1, R2, RZ",
               "DFMA R2, R4, R6, R8", "SHFL.IDX PT, R5, R3, RZ, 0x1f"])
    for ins, du in zip(m.instructions, m.du, strict=True):
        p = def_use(ins)
        assert {r for r in p.defs if not r.startswith("SB")} <= du.defs and p.reg_reads <= du.uses, ins.text


# ---- rules ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "a, b, rule",
    [
        ("IADD3 R4, R1, 0x1, RZ", "LDG.E R2, desc[UR4][R4.64]", "register"),  # RAW
        ("LDG.E R2, desc[UR4][R4.64]", "IADD3 R4, R1, 0x1, RZ", "register"),  # WAR
        ("LDG.E R2, desc[UR4][R6.64]", "MOV R2, R9", "register"),  # WAW
        ("ISETP.GE.AND P0, PT, R7, R9, PT", "@P0 LDG.E R2, desc[UR4][R6.64]", "register"),  # guard
        ("IADD3 R10, R1, 0x1, RZ", "LDG.E R2, desc[UR4][R6.64]", "ok"),
    ],
)
def test_register_rule(a: str, b: str, rule: str) -> None:
    assert swap_rule([PAD] * 8 + [a, b] + [PAD] * 8, 8) == rule


@pytest.mark.parametrize(
    "a, b, rule",
    [
        ("LDG.E R2, desc[UR4][R6.64]", "LDG.E R3, desc[UR4][R8.64]", "ok"),
        ("LDG.E R2, desc[UR4][R6.64]", "STG.E desc[UR4][R8.64], R3", "memory"),
        ("STS [R6], R2", "LDS R3, [R8]", "memory"),
        ("LDS R3, [R8]", "LDG.E R2, desc[UR4][R6.64]", "ok"),
        ("STG.E desc[UR4][R8.64], R3", "STS [R6], R2", "ok"),
        ("LDGSTS.E [R3], desc[UR4][R6.64]", "LDS R9, [R8]", "memory"),
        ("ATOMG.E.ADD.STRONG.GPU PT, R5, desc[UR4][R2.64], R0", "LDS R9, [R8]", "memory"),
    ],
)
def test_memory_rule(a: str, b: str, rule: str) -> None:
    assert swap_rule([PAD] * 8 + [a, b] + [PAD] * 8, 8) == rule


@pytest.mark.parametrize(
    "other",
    [
        "BAR.SYNC.DEFER_BLOCKING 0x0",
        "DEPBAR.LE SB0, 0x1",
        "LDGDEPBAR",
        "MEMBAR.SC.GPU",
        "WARPSYNC 0xffffffff",
        "@P0 BRA `(.L_x_1)",
        "EXIT",
        "CS2R R4, SR_CLOCKLO",
        "LEPC R20",
        "HGMMA.64x64x16.F32 R24, gdesc[UR4], R24",
    ],
)
def test_pinned_rule(other: str) -> None:
    lines = [PAD] * 8 + ["LDG.E R2, desc[UR4][R6.64]", other] + [PAD] * 8
    assert swap_rule(lines, 8) == "pinned"


def test_block_rule_and_patch_pins() -> None:
    lines = [PAD] * 8 + ["IADD3 R10, R1, 0x1, RZ", "LDG.E R2, desc[UR4][R6.64]"] + [PAD] * 8
    assert swap_rule(lines, 8, leaders={0, 9}) == "block"
    m = model(lines)
    m.pinned.add(8)  # e.g. referenced by an .nv.info attribute the patcher cannot update
    assert m.check_swap(list(range(len(lines))), 8).rule == "pinned"


def test_barrier_rules() -> None:
    ldg = "LDG.E R2, desc[UR4][R6.64]"
    # Y waits on a barrier X sets: Y would stop waiting for X
    assert (
        swap_rule([PAD] * 8 + ["S2R R9, SR_TID.X ; W1", "LDG.E R2, desc[UR4][R6.64] ; M1"] + [PAD] * 8, 8) == "barrier"
    )
    # X waits on a barrier Y sets: X would newly wait for Y
    assert swap_rule([PAD] * 8 + ["IADD3 R10, R1, 0x1, RZ ; M2", ldg + " ; W2"] + [PAD] * 8, 8) == "barrier"
    # X waits on SB0 guarding R12 (a load's result); Y reads R12 and would pass that wait
    lines = (
        ["LDG.E R12, desc[UR4][R14.64] ; W0"]
        + [PAD] * 8
        + ["IADD3 R10, R1, 0x1, RZ ; M0", "STG.E desc[UR4][R6.64], R12"]
        + [PAD] * 8
    )
    assert swap_rule(lines, 9) == "barrier"
    # ... unless Y waits on SB0 itself
    lines[10] = "LDS R11, [R12] ; M0"
    assert swap_rule(lines, 9) == "ok"
    # a memory write never passes a wait (same-address order with the awaited load)
    lines[10] = "STG.E desc[UR4][R6.64], R12 ; M0"
    assert swap_rule(lines, 9) == "barrier"
    # a read barrier guards the sources of its setter
    lines = (
        ["STG.E desc[UR4][R14.64], R20 ; R3"]
        + [PAD] * 8
        + ["IADD3 R10, R1, 0x1, RZ ; M3", "LDG.E R20, desc[UR4][R6.64]"]
        + [PAD] * 8
    )
    assert swap_rule(lines, 9) == "barrier"
    # two setters of one barrier that a DEPBAR counts must keep their order
    lines = (
        [PAD] * 8
        + ["LDGSTS.E [R3], desc[UR4][R6.64] ; W0", "LDGSTS.E [R5], desc[UR4][R8.64] ; W0", "DEPBAR.LE SB0, 0x1"]
        + [PAD] * 8
    )
    assert swap_rule(lines, 8) == "barrier"
    lines[10] = PAD
    assert swap_rule(lines, 8) == "ok"


def test_fixed_latency_windows_move_with_the_control_codes() -> None:
    # IMAD (latency 6) feeds the LDG's address: 6 cycles apart via the stalls of IMAD (2) and MOV (4).
    # Swapping MOV (the neighbour) with the LDG makes the LDG issue 2 cycles after the IMAD: rejected.
    lines = (
        [PAD] * 8
        + ["IMAD.WIDE R6, R1, 0x4, R8 ; S2", "MOV R20, R21 ; S4", "LDG.E R2, desc[UR4][R6.64] ; S1"]
        + [PAD] * 8
    )
    assert swap_rule(lines, 9) == "latency"
    # with 6 cycles already on the IMAD, dropping the MOV's 4 still leaves the latency covered
    lines[8] = "IMAD.WIDE R6, R1, 0x4, R8 ; S6"
    assert swap_rule(lines, 9) == "ok"
    # windows starting at X lose Y's stall: IADD3 (X) feeds the instruction after the LDG (Y)
    lines = (
        [PAD] * 8
        + ["IADD3 R10, R1, 0x1, RZ ; S2", "LDG.E R2, desc[UR4][R6.64] ; S4", "FADD R11, R10, R10 ; S1"]
        + [PAD] * 8
    )
    assert swap_rule(lines, 8) == "latency"
    lines[9] = "LDG.E R2, desc[UR4][R6.64] ; S0"  # a 0-stall neighbour shortens nothing
    assert swap_rule(lines, 8) == "ok"
    # producer results guarded by a write barrier are not fixed-latency
    lines = (
        [PAD] * 8 + ["S2R R6, SR_TID.X ; S2 W3", "MOV R20, R21 ; S4", "LDG.E R2, desc[UR4][R6.64] ; S1 M3"] + [PAD] * 8
    )
    assert swap_rule(lines, 9) == "ok"
    # ... but the wait must stay 2 cycles after the barrier's setter (rule ``distance``)
    lines[8] = "S2R R6, SR_TID.X ; S1 W3"
    assert swap_rule(lines, 9) == "distance"
    # a window that reaches the block start before the largest fixed latency of the operands is unknown
    lines = ["IADD3 R6, R1, 0x1, RZ ; S6", "MOV R20, R21 ; S2", "LDG.E R2, desc[UR4][R6.64] ; S1"] + [PAD] * 8
    assert swap_rule(lines, 1, leaders={0, 1}) == "latency"


def test_reuse_rule() -> None:
    lines = [PAD] * 8 + ["IADD3 R10, R1, 0x1, RZ ; U1", "LDG.E R2, desc[UR4][R6.64]"] + [PAD] * 8
    assert swap_rule(lines, 8) == "reuse"


def test_apply_move_and_legal_agree_with_check_swap() -> None:
    lines = (
        [PAD] * 4 + ["IADD3 R10, R1, 0x1, RZ ; S0", "LDG.E R2, desc[UR4][R6.64] ; S0", "MOV R3, R4 ; S0"] + [PAD] * 4
    )
    m = model(lines)
    order = list(range(len(lines)))
    assert m.legal(order, Move(5, -1)).ok and m.legal(order, Move(5, +1)).ok
    assert apply_move(order, Move(5, -1))[4:7] == [5, 4, 6]
    assert set(m.legal_moves(order)) == {Move(5, -1), Move(5, +1)}
    with pytest.raises(ValueError):
        apply_move(order, Move(0, -1))


# ---- real SASS -----------------------------------------------------------------------------------
def test_real_gather_verdicts() -> None:
    p = ROOT / "examples/gather/gather.sm_90.cubin"
    t = load_target(p.read_bytes(), "spmv_ell", str(p), MOVABLE_ALL)
    order = t.identity
    texts = [i.text for i in t.code.instructions]
    dep = texts.index("LDG.E.CONSTANT R6, desc[UR4][R6.64]")
    assert texts[dep - 1] == "IMAD.WIDE R6, R7, 0x4, R10"
    v = t.model.legal(order, Move(dep, -1))
    assert v.rule == "register" and "RAW" in v.reason
    stg = next(i for i, s in enumerate(texts) if s.startswith("STG"))
    assert t.model.legal(order, Move(stg, +1)).rule == "pinned"  # EXIT follows
    first = texts.index("LDG.E.CONSTANT R7, desc[UR4][R4.64]")
    assert first in t.code.leaders and t.model.legal(order, Move(first, -1)).rule == "block"


def test_real_kernels_legal_moves_equal_filtered_candidates() -> None:
    fixtures = Path(__file__).parent / "fixtures"
    for p, k in (
        (ROOT / "examples/stencil/stencil.sm_90.cubin", "blur"),
        (ROOT / "examples/intdiv/intdiv.sm_90.cubin", "bucket"),
        (ROOT / "examples/noinline/noinline.sm_90.cubin", "advance"),
        (fixtures / "matmul_leaky.sm_90.cubin", "matmul_leaky"),  # Triton 3.6, HGMMA + LDG/STS pipeline
    ):
        t = load_target(p.read_bytes(), k, str(p), MOVABLE_ALL)
        order = t.identity
        rng = random.Random(0)
        for _ in range(40):
            legal = t.model.legal_moves(order)
            assert legal == [m for m in t.model.candidates(order) if t.model.legal(order, m).ok]
            if not legal:
                break
            order = apply_move(order, rng.choice(legal))
        # control flow never moves
        fixed = ("BRA", "EXIT", "CALL", "BSSY", "BSYNC", "RET", "BAR", "HGMMA", "WARPGROUP", "DEPBAR", "SHFL")
        for pos, idx in enumerate(order):
            if t.code.instructions[idx].base_opcode in fixed:
                assert pos == idx, t.code.instructions[idx].text
