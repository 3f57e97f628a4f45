"""The blamer's rules on synthetic SASS (GPA §4 Figs. 3 and 4, one snippet per pruning rule)."""

from __future__ import annotations

from collections import defaultdict

import pytest
from synth_sass import cubin, function, profile
from warpwise.analysis.blame.apportion import Source, apportion
from warpwise.analysis.blame.attribute import BlameError, attribute
from warpwise.analysis.blame.model import BlameGraph
from warpwise.analysis.blame.slice import FunctionIndex
from warpwise.analysis.program.build import build_function


def blamed(g: BlameGraph, use: int, reason: str) -> dict[int | None, float]:
    out: dict[int | None, float] = defaultdict(float)
    for e in g.edges:
        if e.use_offset == use and e.reason == reason:
            out[e.def_offset] += e.stall_samples
    return dict(out)


def test_fig3_barrier_dependency_through_branch() -> None:
    # LDG writes barrier 0; the BRA does not read R0 but waits on SB0: its stalls are the LDG's.
    f = function("""
        LDG.E R0, desc[UR4][R2.64] ; W0
        IADD3 R5, R6, R7, RZ
        @P0 BRA 0x40 ; M0
        IADD3 R4, R4, 0x1, RZ
        EXIT
    """)
    g = attribute(cubin(f), profile(f, {0x20: {"long_scoreboard": 10}}, {0x0: 3, 0x10: 5}))
    assert blamed(g, 0x20, "long_scoreboard") == {0x0: 10.0}
    (e,) = g.stalls_of("k", 0x20)
    assert e.category == "global_memory" and e.operands == ("SB0",) and e.latency_samples == 5.0


def test_barrier_dependency_across_blocks() -> None:
    f = function("""
        LDG.E R0, desc[UR4][R2.64] ; W0
        @P0 BRA 0x30
        IADD3 R4, R4, 0x1, RZ
        FADD R5, R0, R4 ; M0
        EXIT
    """)
    g = attribute(cubin(f), profile(f, {0x30: {"long_scoreboard": 8}}, {0x0: 1, 0x20: 4}))
    assert blamed(g, 0x30, "long_scoreboard") == {0x0: 8.0}


FIG4 = """
    IMAD R0, R4, R5, RZ
    @!P0 LDC R0, c[0x0][R4] ; W1
    @P0 LDG.E R0, desc[UR4][R2.64] ; W0
    IADD3 R8, R0, R7, RZ ; M01
    EXIT
"""


def test_fig4_predicated_defs_slice_until_covered() -> None:
    f = function(FIG4)
    fx = FunctionIndex(build_function(f))
    deps = fx.slice_use(3)
    # @P0 LDG and @!P0 LDC together cover the unpredicated use: the older IMAD is not a source
    assert sorted(deps) == [1, 2]
    assert deps[2].operands == {"R0", "SB0"} and deps[1].operands == {"R0", "SB1"}
    # a use guarded by P0 is covered by the @P0 def alone (for R0); SB1 still leads to the LDC
    g = function(FIG4.replace("IADD3 R8", "@P0 IADD3 R8").replace("M01", "M0"))
    assert sorted(FunctionIndex(build_function(g)).slice_use(3)) == [2]


def test_fig4_opcode_rule_by_scoreboard() -> None:
    f = function(FIG4)
    p = profile(f, {0x30: {"long_scoreboard": 6, "short_scoreboard": 4}}, {0x10: 2, 0x20: 1})
    g = attribute(cubin(f), p)
    assert blamed(g, 0x30, "long_scoreboard") == {0x20: 6.0}   # L1TEX: the LDG
    assert blamed(g, 0x30, "short_scoreboard") == {0x10: 4.0}  # MIO: the constant load
    assert {e.category for e in g.stalls_of("k", 0x30)} == {"global_memory", "constant_memory"}
    assert g.coverage_before == 0.0 and g.coverage_after == 1.0
    assert g.stats["cut_opcode"] == 2  # the LDC for long_scoreboard, the LDG for short_scoreboard


def test_fig4_apportioning_equation_1() -> None:
    # GPA Fig. 4d: LDC issued 2 with path 10, LDG issued 1 with path 5 -> the 4 stalls split 2 / 2
    shares = apportion([Source(issued=1, path=5), Source(issued=2, path=10)])
    assert [4 * s for s in shares] == pytest.approx([2.0, 2.0])
    # issue ratio and inverse path ratio multiply; efficiency weights multiply too
    assert apportion([Source(3, 1), Source(1, 1)]) == pytest.approx([0.75, 0.25])
    assert apportion([Source(1, 2), Source(1, 1)]) == pytest.approx([1 / 3, 2 / 3])
    assert apportion([Source(1, 1, efficiency=4.0), Source(1, 1)]) == pytest.approx([0.8, 0.2])
    assert apportion([Source(0, 1), Source(0, 3)]) == pytest.approx([0.75, 0.25])


def test_barrier_rule_cuts_use_that_does_not_wait() -> None:
    src = """
        LDG.E R0, desc[UR4][R2.64] ; W0
        NOP {nop_wait}
        FADD R5, R0, R1 {wait}
        EXIT
    """
    cut = function(src.format(nop_wait="; M0", wait=""))  # the NOP waited; the FADD cannot stall on it
    g = attribute(cubin(cut), profile(cut, {0x20: {"long_scoreboard": 5}}, {0x0: 1}))
    assert blamed(g, 0x20, "long_scoreboard") == {None: 5.0}  # kept by itself
    assert g.stats["cut_barrier"] == 1
    kept = function(src.format(nop_wait="", wait="; M0"))
    g = attribute(cubin(kept), profile(kept, {0x20: {"long_scoreboard": 5}}, {0x0: 1}))
    assert blamed(g, 0x20, "long_scoreboard") == {0x0: 5.0}


def test_dominator_rule() -> None:
    src = """
        IADD3 R1, R2, R3, RZ
        {guard}IMAD R4, R1, R1, RZ
        FADD R5, R1, R6
        EXIT
    """
    cut = function(src.format(guard=""))
    g = attribute(cubin(cut), profile(cut, {0x20: {"wait": 7}}, {0x0: 2}))
    assert blamed(g, 0x20, "wait") == {None: 7.0} and g.stats["cut_dominator"] == 1
    kept = function(src.format(guard="@P0 "))  # a predicated k may not run: the edge stays
    g = attribute(cubin(kept), profile(kept, {0x20: {"wait": 7}}, {0x0: 2}))
    assert blamed(g, 0x20, "wait") == {0x0: 7.0}


def test_dominator_rule_across_blocks() -> None:
    # k in the join block (dominates the use's block, post-dominates the def's) cuts; k in one arm does not
    src = """
        IADD3 R1, R2, R3, RZ
        @P0 BRA 0x30
        {arm}
        {join}
        @P1 BRA 0x60
        NOP
        FADD R5, R1, R6
        EXIT
    """
    k = "IMAD R4, R1, R1, RZ"
    cut = function(src.format(arm="NOP", join=k))
    g = attribute(cubin(cut), profile(cut, {0x60: {"wait": 3}}, {0x0: 2}))
    assert blamed(g, 0x60, "wait") == {None: 3.0} and g.stats["cut_dominator"] == 1
    kept = function(src.format(arm=k, join="NOP"))
    g = attribute(cubin(kept), profile(kept, {0x60: {"wait": 3}}, {0x0: 2}))
    assert blamed(g, 0x60, "wait") == {0x0: 3.0}


def test_latency_rule() -> None:
    def snippet(gap: int) -> str:
        return "IADD3 R1, R2, R3, RZ ; S1\n" + "NOP ; S1\n" * gap + "FADD R5, R1, R6\nEXIT\n"

    near = function(snippet(3))  # 4 cycles <= 6 (ALU upper bound)
    g = attribute(cubin(near), profile(near, {0x40: {"wait": 2}}, {0x0: 1}))
    assert blamed(g, 0x40, "wait") == {0x0: 2.0}
    far = function(snippet(8))  # 9 cycles > 6
    g = attribute(cubin(far), profile(far, {0x90: {"wait": 2}}, {0x0: 1}))
    assert blamed(g, 0x90, "wait") == {None: 2.0} and g.stats["cut_latency"] == 1


def test_write_after_read_classification() -> None:
    # the LDG reads R4 and releases read barrier 1; the MOV overwrites R4 and waits on it
    f = function("""
        LDG.E R2, desc[UR4][R4.64] ; W0 R1
        IMAD.MOV.U32 R4, RZ, RZ, R9 ; M1
        EXIT
    """)
    g = attribute(cubin(f), profile(f, {0x10: {"short_scoreboard": 9}}, {0x0: 1}))
    (e,) = g.stalls_of("k", 0x10)
    assert (e.def_offset, e.category) == (0x0, "write_after_read")


def test_self_attribution_and_non_dependency_reasons() -> None:
    f = function("""
        MOV R1, 0x1 ; S1
        NOP ; S1
        EXIT
    """)
    g = attribute(cubin(f), profile(f, {0x10: {"wait": 2, "not_selected": 3, "lg_throttle": 4, "no_instructions": 1}}))
    cats = {e.reason: (e.def_offset, e.category) for e in g.edges}
    assert cats == {"wait": (None, "self"), "not_selected": (None, "other"),
                    "lg_throttle": (None, "memory_throttle"), "no_instructions": (None, "instruction_fetch")}


def test_call_clobbers_and_stops_slice() -> None:
    f = function("""
        LDG.E R10, desc[UR4][R2.64] ; W0
        CALL.REL.NOINC 0x40
        FADD R5, R10, R6 ; M0
        EXIT
        RET.REL.NODEC R8 0x0
    """)
    fx = FunctionIndex(build_function(f))
    assert sorted(fx.slice_use(2)) == [1]  # the callee may have written R10 and SB0


def test_conservation_synthetic_mixed() -> None:
    f = function(FIG4)
    st = {0x0: {"wait": 3, "not_selected": 2}, 0x30: {"long_scoreboard": 7, "short_scoreboard": 5, "wait": 1},
          0x40: {"no_instructions": 2}}
    g = attribute(cubin(f), profile(f, st, {0x10: 3, 0x20: 1}))
    per: dict[str, float] = defaultdict(float)
    lat: dict[str, float] = defaultdict(float)
    for e in g.edges:
        per[e.reason] += e.stall_samples
        lat[e.reason] += e.latency_samples
    want: dict[str, int] = defaultdict(int)
    for d in st.values():
        for r, v in d.items():
            want[r] += v
    assert dict(per) == pytest.approx(dict(want))
    assert lat["long_scoreboard"] == pytest.approx(3) and lat["short_scoreboard"] == pytest.approx(2)


def test_mismatched_profile_is_rejected() -> None:
    f = function(FIG4)
    with pytest.raises(BlameError, match="sm_80"):
        attribute(cubin(f), profile(f, {}, arch="sm_80"))
    other = function(FIG4, name="other")
    with pytest.raises(BlameError, match="not in"):
        attribute(cubin(f), profile(other, {}))


def test_longest_and_shortest_paths_through_a_diamond() -> None:
    f = function("""
        IADD3 R1, R2, R3, RZ ; S2
        @P0 BRA 0x50 ; S1
        NOP ; S1
        NOP ; S1
        BRA 0x60 ; S1
        NOP ; S1
        FADD R5, R1, R6
        EXIT
    """)
    fx = FunctionIndex(build_function(f))
    dep = fx.slice_use(6)[0]
    # shortest (cycles): def, BRA, NOP at 0x50 -> 2 + 1 + 1 = 4 cycles, 3 instructions
    assert (dep.cycles, dep.instructions) == (4, 3)
    # longest (instructions): def, BRA, NOP, NOP, BRA -> 5 instructions to the use
    assert fx.longest(0, 6, dep.instructions) == 5
