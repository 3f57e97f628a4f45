"""kernel_merge for launches that step the same data (rewrite.host_flow's "steps" verdict, advice.launches
.steps_fusion_estimate), on the two committed H200 reports of that shape: holdout11's bitonic_segments (45 stage
launches of a global-memory sorting network; one launch with the keys in shared memory measured 7.21x) and
holdout12's brownian_steps (32 time-step launches; one launch with the state in registers measured 3.38x) and
holdout13's fft_stage_launches (30 radix-2 stage launches ping-ponging two buffers; one launch per transform with
the row in shared memory measured 4.23x); and holdout13's bfs_levels_powerlaw, whose level launches are no steps
(a frontier loop stopped by a flag read back; one launch per level fix measured 3.65x for divergence_reduction)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from warpwise.analysis.advice.launches import steps_fusion_estimate
from warpwise.analysis.pipeline import analyze
from warpwise.analysis.rewrite.host_flow import HostFlow

from tests.conftest import pair_report

ADVICE = Path(__file__).resolve().parents[2] / "bench" / "advice"
BITONIC = ADVICE / "holdout11" / "pairs" / "bitonic_segments"
BROWNIAN = ADVICE / "holdout12" / "pairs" / "brownian_steps"
FFT = ADVICE / "holdout13" / "pairs" / "fft_stage_launches"
BFS = ADVICE / "holdout13" / "pairs" / "bfs_levels_powerlaw"


def _ranked(pair: Path):  # type: ignore[no-untyped-def]
    an = analyze(pair_report(pair), [pair / "orig.sm_90.cubin"], [pair / "orig.cu", ADVICE / "pairs" / "bench.cuh"])
    (g,) = an.groups
    return g, g.advice_report.advice


@pytest.mark.parametrize(("pair", "launches", "speedup", "sm_work_us"), [
    (BITONIC, 45, 2.777, 213.1),   # latency-bound on its loads: 99% long_scoreboard on the compare line
    (BROWNIAN, 32, 1.866, 592.6),  # memory bound: DRAM 66%, SM 54% per launch
    (FFT, 30, 2.045, 921.0),       # memory bound: DRAM 80-83%, SM 41-53% per stage; buffers ping-ponged
])
def test_steps_over_the_same_data_rank_the_fusion_first(pair: Path, launches: int, speedup: float,
                                                        sm_work_us: float) -> None:
    g, advice = _ranked(pair)
    assert len(g.launches) == launches
    top = advice[0]
    assert top.optimizer == "kernel_merge"
    assert top.estimated_speedup == pytest.approx(speedup, abs=0.002)
    inp = top.estimate.inputs
    assert inp["sm_work_ns"] / 1000 == pytest.approx(sm_work_us, abs=0.1)
    # the fused time is every step's SM work: one pass over the data (one launch) is shorter
    assert inp["one_pass_ns"] < inp["sm_work_ns"]
    assert top.estimated_speedup == pytest.approx(inp["sum_t_ns"] / inp["sm_work_ns"])
    assert f"crosses L2/DRAM once instead of {launches} times" in top.hint
    assert "Valid while each step's dependence stays inside a thread or a CTA" in top.hint
    # both fixes paid more than the estimate (7.21x, 3.38x): the SM work kept is an upper bound on the fused time
    assert top.estimated_speedup < {BITONIC: 7.213, BROWNIAN: 3.375, FFT: 4.225}[pair]


def test_level_launches_of_a_frontier_loop_get_no_steps_fusion() -> None:
    # 29 BFS level launches (4.8 us to 1.31 ms) in a loop stopped by a flag read back: host_flow says convergence,
    # so no kernel_merge (it was first at 67.5x); the warp-per-vertex fix (3.65x measured) ranks first
    g, advice = _ranked(BFS)
    assert len(g.launches) == 29
    assert all(a.optimizer != "kernel_merge" for a in advice)
    assert advice[0].optimizer == "divergence_reduction"
    assert advice[0].estimated_speedup == pytest.approx(4.622, abs=0.002)
    # even called a steps loop, launches whose durations differ 271x are no passes over the same data
    profiles = [k.profile for k in g.launches]
    steps = HostFlow("steps", 1, "the launch at line 67 is in a loop over cur", 67, ("value", "value", "value"))
    assert steps_fusion_estimate(profiles, steps) is None
    # the same launches with the spread of steps (every one as long as the longest) pass the gate: the gate is
    # what refused them
    longest = max(p.launch.duration_ns for p in profiles)
    even = [replace(p, launch=replace(p.launch, duration_ns=longest)) for p in profiles]
    est = steps_fusion_estimate(even, steps)
    assert est is not None and est.inputs["one_pass_ns"] == longest
