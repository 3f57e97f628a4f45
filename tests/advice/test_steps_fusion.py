"""kernel_merge for launches that step the same data (rewrite.host_flow's "steps" verdict, advice.launches
.steps_fusion_estimate), on the two committed H200 reports of that shape: holdout11's bitonic_segments (45 stage
launches of a global-memory sorting network; one launch with the keys in shared memory measured 7.21x) and
holdout12's brownian_steps (32 time-step launches; one launch with the state in registers measured 3.38x)."""

from __future__ import annotations

from pathlib import Path

import pytest
from warpwise.analysis.pipeline import analyze

from tests.conftest import pair_report

ADVICE = Path(__file__).resolve().parents[2] / "bench" / "advice"
BITONIC = ADVICE / "holdout11" / "pairs" / "bitonic_segments"
BROWNIAN = ADVICE / "holdout12" / "pairs" / "brownian_steps"


def _ranked(pair: Path):  # type: ignore[no-untyped-def]
    an = analyze(pair_report(pair), [pair / "orig.sm_90.cubin"], [pair / "orig.cu", ADVICE / "pairs" / "bench.cuh"])
    (g,) = an.groups
    return g, g.advice_report.advice


@pytest.mark.parametrize(("pair", "launches", "speedup", "sm_work_us"), [
    (BITONIC, 45, 2.777, 213.1),   # latency-bound on its loads: 99% long_scoreboard on the compare line
    (BROWNIAN, 32, 1.866, 592.6),  # memory bound: DRAM 66%, SM 54% per launch
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
    assert top.estimated_speedup < {BITONIC: 7.213, BROWNIAN: 3.375}[pair]
