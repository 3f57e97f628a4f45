"""GPA §5 estimators on hand-computed values (eqs. 2, 4, 5, 6–10) and the Theorem 5.1 bound."""

from __future__ import annotations

import itertools

import pytest
from warpwise.analysis.advice import estimate as est


def test_eq2_stall_elimination() -> None:
    e = est.stall_elimination(1000, 200)
    assert e.speedup == pytest.approx(1000 / 800)
    assert e.formula == "T/(T-M)"
    assert e.inputs == {"T": 1000, "M": 200}
    assert e.equation == "GPA eq. 2"


def test_eq2_rejects_matched_not_below_total() -> None:
    with pytest.raises(est.EstimateError, match="below the total"):
        est.stall_elimination(100, 100)
    with pytest.raises(est.EstimateError, match="negative"):
        est.stall_elimination(100, -1)


def test_eq4_latency_hiding_uses_min_of_active_and_matched_latency() -> None:
    # A limits: only 300 active samples can fill 500 latency slots.
    assert est.latency_hiding(1000, 300, 500).speedup == pytest.approx(1000 / 700)
    # M_L limits.
    e = est.latency_hiding(1000, 600, 400, latency=400)
    assert e.speedup == pytest.approx(1000 / 600)
    assert e.inputs == {"T": 1000, "A": 600, "M_L": 400, "L": 400}


def test_eq4_rejects_matched_latency_above_l() -> None:
    with pytest.raises(est.EstimateError, match="exceed L"):
        est.latency_hiding(1000, 600, 500, latency=400)


def test_theorem_5_1_bound_is_two_and_tight() -> None:
    # A = L = M_L = T/2 reaches exactly 2x (the proof's equality case).
    assert est.latency_hiding(1000, 500, 500, latency=500).speedup == pytest.approx(2.0)
    for t, a_frac, ml_frac in itertools.product((10, 997, 10_000), (0.0, 0.1, 0.5, 0.9, 1.0), (0.0, 0.3, 1.0)):
        a = t * a_frac
        lat = t - a
        if a >= t:
            continue
        s = est.latency_hiding(t, a, lat * ml_frac, latency=lat).speedup
        assert 1.0 <= s <= est.LATENCY_HIDING_BOUND + 1e-12


def test_eq5_scope_sums_nested_active_samples() -> None:
    # loop2 holds loop1: its hideable latency is bounded by A_loop2 + A_loop1 = 150.
    e = est.scoped_latency_hiding(1000, [100, 50], 400, latency=700)
    assert e.speedup == pytest.approx(1000 / 850)
    assert e.inputs["A_nested"] == 150
    assert e.equation == "GPA eq. 5"


def test_combined_regions_bounded_by_kernel_active() -> None:
    e = est.combine_latency_regions(1000, 300, [200, 250], latency=700)
    assert e.speedup == pytest.approx(1000 / 700)  # min(A=300, H=450)


def test_eq8_issue_rate() -> None:
    assert est.issue_rate(0.1, 4) == pytest.approx(1 - 0.9**4)
    assert est.issue_rate(0.1, 4) == pytest.approx(0.3439)
    with pytest.raises(est.EstimateError):
        est.issue_rate(1.5, 4)
    with pytest.raises(est.EstimateError):
        est.issue_rate(0.1, 0)


def test_eqs6_to_10_as_a_throughput_ratio() -> None:
    # same 132 SMs, 4 -> 8 warps per scheduler: eq. 7's C_I = (1 - 0.9^8) / (1 - 0.9^4)
    occ = est.launch_shape_speedup(0.1, (132, 16), (132, 32), 4)
    assert occ.speedup == pytest.approx(0.56953279 / 0.3439)
    # 16 warps on one SM (4 per scheduler) spread over 4 SMs (1 per scheduler): GPA C_work x C_I = 4 * 0.1 / 0.3439
    blk = est.launch_shape_speedup(0.1, (1, 16), (4, 4), 4)
    assert blk.speedup == pytest.approx(4 * 0.1 / 0.3439)
    # CTAs of 16 threads made whole warps: half the warp instructions for the same work
    lanes = est.launch_shape_speedup(0.1, (132, 16), (132, 16), 4, work_ratio=0.5)
    assert lanes.speedup == pytest.approx(2.0) and "work=lanes/lanes_new" in lanes.formula
    with pytest.raises(est.EstimateError):
        est.launch_shape_speedup(0.1, (0, 16), (1, 16), 4)


def test_work_removal_scales_barrier_waits_with_the_work_removed() -> None:
    # T = 1000 samples, 200 of them at a barrier; the fix deletes 400 samples of work (half of the other 800),
    # so each phase and its barrier wait halve: (T - B) / (T - B - M) = 800 / 400.
    e = est.work_removal(1000, 400, 200)
    assert e.speedup == pytest.approx(2.0)
    assert e.formula == "(T-B)/(T-B-M)" and e.inputs == {"T": 1000, "M": 400, "B": 200}
    # Without barrier waits it is eq. 2.
    assert est.work_removal(1000, 400).speedup == pytest.approx(1000 / 600)
    assert est.work_removal(1000, 400).equation == "GPA eq. 2"
    with pytest.raises(est.EstimateError, match="below T"):
        est.work_removal(1000, 800, 200)
