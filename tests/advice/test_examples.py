"""Optimizers on the real H200 examples (profile + cubin + blame): the advice GPA's patterns predict."""

from __future__ import annotations

import pytest
from warpwise.analysis.advice import OPTIMIZER_IDS, REGISTRY, Advice, AdviceReport
from warpwise.analysis.advice.estimate import LATENCY_HIDING_BOUND
from warpwise.analysis.advice.ranking import from_samples
from warpwise.analysis.advice.report import hint_text
from warpwise.analysis.arch.roofline import LAUNCH_FLOOR_NS


def top(rep: AdviceReport, n: int = 3) -> list[str]:
    return [a.optimizer for a in rep.advice[:n]]


def get(rep: AdviceReport, opt: str) -> Advice:
    """The optimizer's advice, also when it is listed as an alternative of a finding (rep.candidates)."""
    return next(a for a in rep.candidates if a.optimizer == opt)


def test_stencil_strength_reduction_on_the_literal_line(reports: dict[str, AdviceReport]) -> None:
    rep = reports["stencil"]
    assert "strength_reduction" in top(rep)
    a = get(rep, "strength_reduction")
    assert (a.scope.kind, a.scope.line) == ("line", 18)
    assert a.hotspots and all(h.use.line in (18, 20) for h in a.hotspots)
    assert a.hotspots[0].use.line == 18 and a.hotspots[0].use.opcode.startswith("F2F.F64.F32")
    shown = hint_text(a.hint, a.scope.file)  # line references resolved as every renderer shows them
    assert "0.1 at line 18" in shown and "write 0.1f" in shown
    # eq. 2 from its recorded inputs, with the launch floor of the grid's first wave kept (Amdahl)
    t, m = a.estimate.inputs["T"], a.estimate.inputs["M"]
    t_ns, f = a.estimate.inputs["T_ns"], a.estimate.inputs["f_ns"]
    assert f > LAUNCH_FLOOR_NS  # blur_rows puts several CTAs on each SM: their dispatch is part of the floor
    assert t == rep.total and a.estimated_speedup == pytest.approx(t_ns / (f + (t_ns - f) / (t / (t - m))))


def test_intdiv_strength_reduction_points_at_division_lines(reports: dict[str, AdviceReport]) -> None:
    a = get(reports["intdiv"], "strength_reduction")
    lines = {h.use.line for h in a.hotspots} | {h.def_.line for h in a.hotspots if h.def_}
    assert lines <= {16, 17} and lines
    assert "division/modulo" in a.hint and "lines 16 and 17" in a.hint


def test_gather_is_l2_bound_and_latency_hiding_is_capped(reports: dict[str, AdviceReport]) -> None:
    rep = reports["gather"]
    # SpeedOfLight: L2 at 95.8% of peak, 96% reachable -> bound; nothing that keeps the L2 traffic can gain more
    # than 96/95.8 (measured: unrolling gained 1.016x on the H200)
    assert rep.bound is not None and rep.bound.unit == "l2" and rep.bound.cap == pytest.approx(96 / 95.84, rel=1e-3)
    keep = [a for a in rep.candidates if a.optimizer != "indirect_address_elimination"]
    assert keep and all(a.estimated_speedup <= rep.bound.cap + 1e-9 for a in keep)
    # eliminating the column-index loads removes their L2 sectors too (29% of the traffic): the one fix that can
    # pass the L2 ceiling, an upper bound since it needs the index to be computable; the latency fixes for the
    # same loads (unroll, reorder) are its alternatives, not separate rankings
    first = rep.advice[0]
    assert first.optimizer == "indirect_address_elimination" and first.upper_bound
    assert first.cap is not None and first.cap.unit == "l2" and "r_l2" in first.estimate.inputs
    assert first.estimated_speedup > rep.bound.cap
    assert {"code_reordering", "loop_unrolling"} <= {x.optimizer for x in first.alternatives}
    assert first.hint.endswith("the estimate is an upper bound, as it assumes the index loads go away")
    lu = get(rep, "loop_unrolling")
    assert lu.cap is not None and lu.cap.binding and "C_l2" in lu.estimate.formula
    assert (lu.scope.kind, lu.scope.line, lu.scope.end_line) == ("loop", 15, 17)
    assert lu.hotspots[0].def_ is not None and lu.hotspots[0].reason == "long_scoreboard"
    # Little's law: two loads in flight per wait already reach the L2 ceiling, so the fix asks for 2
    assert "#pragma unroll 2" in lu.hint
    ind = get(rep, "indirect_address_elimination")
    assert ind.hotspots[0].def_ is not None
    assert (ind.hotspots[0].def_.line, ind.hotspots[0].use.line) == (16, 17)


def test_noinline_inlining_and_fast_math(reports: dict[str, AdviceReport]) -> None:
    rep = reports["noinline"]
    inl = get(rep, "function_inlining")
    assert inl.scope.kind == "function" and inl.scope.line is not None and 9 <= inl.scope.line <= 13
    assert "damp is called at line 21" in inl.hint and "__forceinline__" in inl.hint
    fm = get(rep, "fast_math")
    assert "div_rn" in fm.hint and "line 12" in fm.hint


def test_cdp_runtime_code_is_left_out(reports: dict[str, AdviceReport]) -> None:
    rep = reports["cdp"]
    assert any("outside the binary" in n for n in rep.notes)
    for a in rep.advice:
        assert all(h.use.line is not None for h in a.hotspots)


@pytest.mark.parametrize("name", ["stencil", "gather", "intdiv", "noinline", "cdp"])
def test_every_optimizer_accounted_for(reports: dict[str, AdviceReport], name: str) -> None:
    rep = reports[name]
    seen = [a.optimizer for a in rep.candidates] + [s.optimizer for s in rep.skipped]
    assert sorted(seen) == sorted(OPTIMIZER_IDS)
    assert all(s.reason for s in rep.skipped)


@pytest.mark.parametrize("name", ["stencil", "gather", "intdiv", "noinline", "cdp"])
def test_estimates_consistent_and_bounded(reports: dict[str, AdviceReport], name: str) -> None:
    rep = reports[name]
    values = [a.rank_value for a in rep.advice]
    assert values == sorted(values, reverse=True)
    for a in rep.advice:
        if from_samples(a):
            assert a.interval is not None and a.interval[0] <= a.estimated_speedup <= a.interval[1]
        else:  # built from the launch shape alone (sm_balance): no sampled share, so no sampling interval
            assert a.interval is None
        assert a.rank_value == (1 + (a.estimated_speedup - 1) / 2 if a.upper_bound else a.estimated_speedup)
        assert a.why.startswith("#")
    for a in rep.candidates:
        assert a.estimated_speedup >= 1.0
        assert 0 <= a.matched_samples <= rep.total
        assert len(a.hotspots) <= 5
        if REGISTRY[a.optimizer].family == "latency_hiding":
            # GPA's eqs. 4-5 keep Theorem 5.1 (<= 2x) in every region; the optimizer-level estimate may come from
            # the memory-level-parallelism (unrolling) or call-removal (inlining) models instead, which say so
            if "H" in a.estimate.inputs:
                assert a.estimated_speedup <= LATENCY_HIDING_BOUND and a.estimate.inputs["H"] <= rep.latency
            else:
                assert "Little's law" in a.estimate.equation or "GPA eq. 2" in a.estimate.equation or \
                    "roofline" in a.estimate.equation
            for r in a.regions:
                assert r.estimate.speedup <= LATENCY_HIDING_BOUND
        if a.estimate.formula == "T/(T-M)":
            t, m = a.estimate.inputs["T"], a.estimate.inputs["M"]
            assert a.estimated_speedup == pytest.approx(t / (t - m))
