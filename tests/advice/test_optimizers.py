"""Single optimizer rules on synthetic SASS, profiles and blame graphs, with hand-computed estimates."""

from __future__ import annotations

import pytest
from synth_sass import cubin, function, profile
from warpwise.analysis.advice import Advice, Skipped, evaluate
from warpwise.analysis.advice.quickfix import fixes_for_advice
from warpwise.analysis.advice.report import hint_text
from warpwise.analysis.blame.model import BlameEdge, BlameGraph
from warpwise.analysis.profile.model import KernelProfile, LaunchConfig
from warpwise.analysis.program.build import build_program
from warpwise.analysis.program.model import Program

LOOP = """
S2R R0, SR_TID.X ; L5
LDG.E R2, desc[UR4][R4.64] ; W0 L6
FADD R3, R2, R2 ; M0 L7
@P0 BRA 0x10 ; T10 L8
EXIT ; L9
"""


def run(opt: str, prof: KernelProfile, prog: Program | None, edges: list[BlameEdge]) -> Advice | Skipped:
    rep = evaluate(prof, prog, BlameGraph(kernel=prof.mangled, edges=edges), "sm_90", only=(opt,))
    return (rep.advice or rep.skipped)[0]


def test_loop_unrolling_eq5_on_a_synthetic_loop() -> None:
    fn = function(LOOP)
    prog = build_program(cubin(fn))
    assert list(prog.functions["k"].loops) == [0x10]
    # 400 long_scoreboard samples at the FADD, 3/4 not issued; issued-only samples elsewhere.
    prof = profile(fn, {0x20: {"long_scoreboard": 400}}, issued={0x0: 20, 0x10: 50, 0x30: 30}, not_issued_share=0.75)
    edge = BlameEdge("k", 0x10, 0x20, "long_scoreboard", "global_memory", 400.0, 300.0, 1)
    a = run("loop_unrolling", prof, prog, [edge])
    assert isinstance(a, Advice)
    # T = 500, L = 300; A in the loop = 50 (LDG) + 100 (FADD issued part) + 30 (BRA) = 180
    assert (a.scope.kind, a.scope.line, a.scope.end_line) == ("loop", 6, 8)
    assert a.regions[0].estimate.inputs == {"T": 500, "A_nested": 180.0, "M_Ll": 300.0, "L": 300}
    assert a.regions[0].estimate.speedup == pytest.approx(500 / (500 - 180))  # GPA eq. 5 for the loop
    # the rolled loop's global-load latency f = 300/500; no roofline ceiling in this profile, so the factor is
    # MAX_UNROLL = 8 (Little's law: S = 1 / (1 - f (1 - 1/8)) beats eq. 5's 1.5625)
    assert a.estimated_speedup == pytest.approx(1 / (1 - 0.6 * 0.875))
    assert list(a.params.values()) == [8]
    assert "Little's law" in a.estimate.equation and a.priority == 1
    assert a.hotspots[0].def_ is not None and (a.hotspots[0].def_.line, a.hotspots[0].use.line) == (6, 7)
    assert a.hotspots[0].loop is not None and a.hotspots[0].loop.line == 6


@pytest.mark.parametrize("load, little", [("LDG.E", False), ("LDG.E.CONSTANT", True)])
def test_loop_unrolling_loads_pinned_behind_a_store_in_the_loop(load: str, little: bool) -> None:
    # The same loop with a global store after the use: a plain LDG may alias it, so unrolled iterations cannot
    # load ahead unless the pointer is declared __restrict__. The advice says so and is estimated as written
    # (Little's law with the restrict); the pragma alone is eq. 5, stated in the hint and the params. The
    # read-only path may move as it is.
    text = LOOP.replace("FADD R3, R2, R2 ; M0 L7", "FADD R3, R2, R2 ; M0 L7\nSTG.E desc[UR4][R6.64], R3 ; L7")
    text = text.replace("LDG.E R2,", f"{load} R2,")
    fn = function(text)
    prog = build_program(cubin(fn))
    prof = profile(fn, {0x20: {"long_scoreboard": 400}}, issued={0x0: 20, 0x10: 50, 0x30: 30}, not_issued_share=0.75)
    a = run("loop_unrolling", prof, prog, [BlameEdge("k", 0x10, 0x20, "long_scoreboard", "global_memory", 400.0,
                                                     300.0, 1)])
    assert isinstance(a, Advice)
    eq5 = 500 / (500 - 180)
    if little:
        assert a.estimated_speedup == pytest.approx(1 / (1 - 0.6 * 0.875)) and "__restrict__" not in a.hint
    else:
        assert a.estimated_speedup == pytest.approx(1 / (1 - 0.6 * 0.875))
        assert "const ... __restrict__" in a.hint and "line 7" in a.hint
        assert a.params["pragma_alone_speedup"] == pytest.approx(eq5)
        assert f"the pragma alone leaves the loads in order: about {eq5:.2f}x" in a.hint


def test_register_reuse_and_increase_on_spills() -> None:
    array = build_program(cubin(function(LOOP.replace("LDG.E R2, desc[UR4][R4.64]", "LDL R2, [R5+0x10]"))))
    fn = function(LOOP.replace("LDG.E R2, desc[UR4][R4.64]", 'LDL R2, [R1+0x10] (*"SpillRefill"*)'))
    prog = build_program(cubin(fn))
    prof = profile(fn, {0x20: {"long_scoreboard": 100}}, issued={0x0: 100}, not_issued_share=0.5)
    edge = BlameEdge("k", 0x10, 0x20, "long_scoreboard", "local_memory", 100.0, 50.0, 1)
    a = run("register_reuse", prof, prog, [edge])
    assert isinstance(a, Advice)
    assert a.estimate.inputs == {"T": 200, "M": 100.0} and a.estimated_speedup == pytest.approx(2.0)
    assert (a.scope.kind, a.scope.line) == ("line", 6)
    miss = run("register_increase", prof, prog, [edge])
    assert isinstance(miss, Skipped) and miss.missing  # no register count in this profile
    prof.launch = LaunchConfig(registers_per_thread=255)
    full = run("register_increase", prof, prog, [edge])
    assert isinstance(full, Skipped) and not full.missing and "limit of 255" in full.reason
    prof.launch = LaunchConfig(registers_per_thread=64)
    inc = run("register_increase", prof, prog, [edge])
    assert isinstance(inc, Advice) and inc.estimated_speedup == pytest.approx(2.0)
    # a run-time indexed local array (no SpillRefill mark from nvdisasm): more registers would not help
    arr = run("register_increase", prof, array, [edge])
    assert isinstance(arr, Skipped) and "indexed arrays" in arr.reason


def test_warp_balance_ignores_selected_samples() -> None:
    fn = function("S2R R0, SR_TID.X ; L3\nBAR.SYNC.DEFER_BLOCKING 0x0 ; L4\nEXIT ; L5")
    prog = build_program(cubin(fn))
    prof = profile(fn, {0x10: {"barrier": 30, "selected": 10}}, issued={0x0: 60}, not_issued_share=0.0)
    edges = [BlameEdge("k", None, 0x10, "barrier", "synchronization", 30.0, 0.0),
             BlameEdge("k", None, 0x10, "selected", "self", 10.0, 0.0)]
    a = run("warp_balance", prof, prog, edges)
    assert isinstance(a, Advice) and a.estimate.inputs == {"T": 100, "M": 30.0}
    assert "barrier at line 4" in hint_text(a.hint, a.scope.file)  # references resolved as renderers do


def _launch_profile(launch: LaunchConfig, selected: int = 100, total: int = 1000) -> KernelProfile:
    fn = function("FADD R0, R0, R0 ; L2\nEXIT ; L3")
    prof = profile(fn, {0x0: {"selected": selected, "long_scoreboard": total - selected}}, not_issued_share=0.0)
    prof.launch = launch
    return prof


def test_block_increase_eqs_6_to_10() -> None:
    prof = _launch_profile(LaunchConfig(grid=(16, 1, 1), block=(512, 1, 1), sm_count=132))
    a = run("block_increase", prof, None, [])
    assert isinstance(a, Advice)
    # 16 busy SMs x 16 warps -> CTAs of the same size until the grid fills one wave (4 CTAs of 512 threads per
    # SM at 64 warps: 528), the work split over them: P = 16*4*I(4), P_new = 132*4*I(16), an upper bound (it
    # assumes the work divides)
    assert (a.estimate.inputs["SMs"], a.estimate.inputs["W_SM"]) == (16, 16)
    assert (a.estimate.inputs["SMs_new"], a.estimate.inputs["W_SM_new"]) == (132, 64)
    r_i = a.estimate.inputs["R_I"]
    assert a.estimated_speedup == pytest.approx(132 * (1 - (1 - r_i) ** 16) / (16 * (1 - (1 - r_i) ** 4)))
    assert a.upper_bound and "528 CTAs of 512 threads" in a.hint
    assert "132 SMs x 4 CTAs each" in a.hint and "cudaOccupancyMaxActiveBlocksPerMultiprocessor" in a.hint
    enough = run("block_increase", _launch_profile(LaunchConfig(grid=(200, 1, 1), block=(512, 1, 1),
                                                                sm_count=132)), None, [])
    assert isinstance(enough, Skipped) and not enough.missing


def test_thread_increase_when_block_count_limits_occupancy() -> None:
    lc = LaunchConfig(grid=(10000, 1, 1), block=(32, 1, 1), sm_count=132, theoretical_warps_per_sm=32,
                      occupancy_limit={"blocks": 32, "registers": 64, "warps": 64, "shared_mem": 32})
    prof = _launch_profile(lc)
    lc.occupancy_limit["shared_mem"] = 64
    a = run("thread_increase", prof, None, [])
    assert isinstance(a, Advice)
    # W = 32/4 = 8 -> W_new = 64/4 = 16 warps per scheduler on the same SMs: eq. 7's C_I
    assert a.estimated_speedup == pytest.approx((1 - 0.9**16) / (1 - 0.9**8))
    assert a.estimate.inputs["SMs"] == a.estimate.inputs["SMs_new"] == 132 and a.estimate.inputs["work"] == 1


def test_occupancy_increase_names_the_limiter() -> None:
    lc = LaunchConfig(grid=(10000, 1, 1), block=(256, 1, 1), registers_per_thread=128, sm_count=132,
                      theoretical_warps_per_sm=16, achieved_warps_per_sm=15,
                      occupancy_limit={"blocks": 32, "registers": 2, "warps": 8, "shared_mem": 32})
    a = run("occupancy_increase", _launch_profile(lc), None, [])
    assert isinstance(a, Advice)
    w = 15 / 4
    assert a.estimated_speedup == pytest.approx((1 - 0.9 ** (w * 4)) / (1 - 0.9**w))
    assert "registers (128 per thread)" in a.hint
    no_occ = run("occupancy_increase", _launch_profile(LaunchConfig()), None, [])
    assert isinstance(no_occ, Skipped) and no_occ.missing


def test_sm_balance_tail_effect() -> None:
    a = run("sm_balance", _launch_profile(LaunchConfig(grid=(330, 1, 1), block=(256, 1, 1), waves_per_sm=2.5)),
            None, [])
    assert isinstance(a, Advice)
    assert a.estimate.formula == "ceil(V)/V" and a.estimated_speedup == pytest.approx(1.2)
    assert "multiple of 132 blocks" in a.hint


def test_structure_optimizers_report_missing_program() -> None:
    prof = _launch_profile(LaunchConfig())
    rep = evaluate(prof, None, BlameGraph(kernel="k"), "sm_90")
    missing = {s.optimizer for s in rep.skipped if s.missing}
    assert {"loop_unrolling", "function_inlining", "loop_no_unroll", "function_split", "fast_math",
            "kernel_merge", "strength_reduction", "indirect_address_elimination", "async_copy"} <= missing


def test_fixes_for_real_advice(reports) -> None:  # type: ignore[no-untyped-def]
    def src(path: str) -> str:
        with open(path, encoding="utf-8") as f:
            return f.read()

    sr = next(a for a in reports["stencil"].candidates if a.optimizer == "strength_reduction")
    (q,) = fixes_for_advice(sr, src)
    assert (q.kind, q.line, q.edits[0].column) == ("float_literal", 18, 15)
    lu = next(a for a in reports["gather"].candidates if a.optimizer == "loop_unrolling")
    (u,) = fixes_for_advice(lu, src)
    assert u.kind == "unroll" and u.edits[0].line == 14
    fi = next(a for a in reports["noinline"].candidates if a.optimizer == "function_inlining")
    (f,) = fixes_for_advice(fi, src)
    assert f.kind == "forceinline" and f.edits[0].new_text == "__forceinline__"
    fm = next(a for a in reports["noinline"].candidates if a.optimizer == "fast_math")
    (n,) = fixes_for_advice(fm, src)
    assert n.kind == "fast_math" and not n.edits and "div_rn" in n.explanation


BARRIER = """
S2R R0, SR_TID.X ; L5
LDG.E R2, desc[UR4][R4.64] ; W0 L6
STS [R7], R2 ; M0 L6
BAR.SYNC.DEFER_BLOCKING 0x0 ; L7
LDS R8, [R7] ; L8
FADD R9, R8, R8 ; L9
FADD R10, R9, R8 ; L9
STG.E desc[UR4][R4.64], R10 ; L10
EXIT ; L11
"""


def test_code_reordering_draws_only_on_work_between_the_barriers_around_the_stall() -> None:
    # The load's value is stored to shared memory before __syncthreads(): the 400 active samples after the
    # barrier cannot be moved above it, and of the 130 before it the LDG (the def) and the STS (its use) cannot
    # fill the wait between them: only the S2R's 10 can hide the 300 latency samples.
    fn = function(BARRIER)
    prog = build_program(cubin(fn))
    prof = profile(fn, {0x20: {"long_scoreboard": 400}},
                   issued={0x0: 10, 0x10: 20, 0x40: 100, 0x50: 100, 0x60: 100, 0x70: 100}, not_issued_share=0.75)
    edge = BlameEdge("k", 0x10, 0x20, "long_scoreboard", "global_memory", 400.0, 300.0, 1)
    a = run("code_reordering", prof, prog, [edge])
    assert isinstance(a, Advice)
    # A before the barrier = 10 (S2R); the LDG's 20 and the STS's 100 are the stalled chain itself
    assert a.regions[0].estimate.inputs["A_nested"] == pytest.approx(10.0)
    assert a.estimated_speedup == pytest.approx(a.regions[0].estimate.inputs["T"]
                                                / (a.regions[0].estimate.inputs["T"] - 10.0))
