"""Ranking rules on hand-built advice and launch facts: caps, intervals, upper bounds, grouping, launches."""

from __future__ import annotations

import pytest
from warpwise.analysis.advice import ranking as rk
from warpwise.analysis.advice.launches import combine
from warpwise.analysis.advice.model import Advice, AdviceReport, Estimate, Scope
from warpwise.analysis.arch.facts import arch_facts
from warpwise.analysis.arch.occupancy import residency
from warpwise.analysis.profile.model import KernelProfile, LaunchConfig


def _advice(opt: str, s: float, matched: dict[tuple[str, int | None, int], float], ub: bool = False) -> Advice:
    return Advice(optimizer=opt, kernel="k", scope=Scope(kind="kernel"), matched_samples=sum(matched.values()),
                  share=0.1, estimate=Estimate(s, "T/(T-M)", {}), matched=matched, upper_bound=ub)


def test_occupancy_ties_and_unused_resources() -> None:
    # a 16-thread CTA using no shared memory: Nsight Compute reports shared memory, barriers and blocks all at 32;
    # only the CTA count limits (shared memory is unused), and lanes are half empty
    h200 = arch_facts("sm_90")
    r = residency(h200, 16, 65536, 132, 32, 0, {"shared_mem": 32, "blocks": 32, "barriers": 32, "warps": 64})
    assert r.limiters == ("blocks",) and r.warps_per_sm == 32 and r.lane_efficiency == 0.5 and r.fills_gpu
    tied = residency(h200, 128, 65536, 132, 64, 0)  # 64 regs x 128 threads: 8 CTAs by registers, 16 by warps
    assert tied.limiters == ("registers",) and tied.ctas_per_sm == 8
    small = residency(h200, 256, 4, 132, 16, 0)
    assert not small.fills_gpu and small.active_sms == 4 and small.resident_warps_per_sm == 8


def test_caps_hard_and_soft() -> None:
    tp = {"dram": 44.65, "l2": 30.0}
    cap = rk.roofline_cap(tp, ("dram", "l2"))
    assert cap is not None and cap.unit == "dram" and cap.cap == pytest.approx(89.3 / 44.65) and not cap.bound
    e, c = rk.apply_cap(Estimate(3.0, "T/(T-M)", {}), cap, soft=True)
    assert e.speedup == pytest.approx(2.0) and c is not None and c.binding and "C_dram" in e.formula
    # at a bound the saved shares combine harmonically: e = 0.5, e_C = 1 - 82/89.3
    bound = rk.roofline_cap({"dram": 82.0}, ("dram",))
    assert bound is not None and bound.bound
    e2, _ = rk.apply_cap(Estimate(2.0, "x", {}), bound, soft=True)
    s_c = 1 - 82 / 89.3
    # a launch whose traffic is half writes reaches less (H200: 80.8% for a 1:1 mix): 82% is already there
    mixed = rk.roofline_cap({"dram": 82.0}, ("dram",), reach_of={"dram": 0.808})
    assert mixed is not None and mixed.cap == 1.0 and mixed.bound
    assert e2.speedup == pytest.approx(1 / (1 - 0.5 * s_c / (0.5 + s_c)))
    # per-SM units scale with the work each SM keeps
    sm = rk.roofline_cap({"sm": 50.0}, ("sm",), sm_work=0.5)
    assert sm is not None and sm.cap == pytest.approx(4.0)


def test_interval_order_and_alternatives() -> None:
    lo, hi = rk.interval(2.0, 100)
    assert lo < 2.0 < hi and rk.interval(2.0, 10_000)[1] - rk.interval(2.0, 10_000)[0] < hi - lo
    shared = {("k", 0x10, 0x20): 100.0}
    a = _advice("loop_unrolling", 1.30, shared)
    b = _advice("code_reordering", 1.30, dict(shared))
    c = _advice("sm_balance", 1.50, {}, ub=True)  # midpoint 1.25: below the 1.30 findings
    a.priority = 1
    out = rk.order([b, c, a], total=1000)
    assert [x.optimizer for x in out] == ["loop_unrolling", "sm_balance"]
    assert [x.optimizer for x in out[0].alternatives] == ["code_reordering"]
    assert out[1].rank_value == pytest.approx(1.25) and out[0].why.startswith("#1: estimate 1.30x")


def _profile(duration: float, samples: int) -> KernelProfile:
    p = KernelProfile(name="k", mangled="_Z1kv", arch="sm_90", launch=LaunchConfig(duration_ns=duration), pcs={})
    p.launch_index = (0, 0)
    return p


def test_launches_combine_time_weighted() -> None:
    # two launches, 300 us and 100 us; the optimizer gives 2x on the first only: S = 400 / (150 + 100) = 1.6
    r1 = AdviceReport(kernel="k", mangled="_Z1kv", arch="sm_90", total=3000, latency=0, active=0)
    r2 = AdviceReport(kernel="k", mangled="_Z1kv", arch="sm_90", total=1000, latency=0, active=0)
    a = _advice("strength_reduction", 2.0, {("k", 1, 2): 1500.0})
    a.interval = (1.9, 2.1)
    r1.candidates = [a]
    out = combine([(_profile(300_000, 3000), r1), (_profile(100_000, 1000), r2)])
    (s,) = out.advice
    assert s.estimated_speedup == pytest.approx(400 / 250) and out.launches == 2 and out.total == 4000
    assert [x.speedup for x in s.launches] == [2.0, 1.0] and s.samples == 4000
