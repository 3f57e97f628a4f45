"""Full unrolling of loops with a small run-time trip count (advice/latency.full_unroll_nests): the trip count
from the profile's per-PC executions, what a compile-time trip count removes, and its estimate on the committed
H200 reports (holdout4's gauss_blur_ksize; the main set's colsum_unroll1 as the long-loop counter-case)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from warpwise.analysis.advice.context import KernelView, build_view
from warpwise.analysis.advice.latency import SMALL_TRIP, full_unroll_nests, trip_count
from warpwise.analysis.advice.quickfix import fixes_for_advice
from warpwise.analysis.arch.facts import arch_facts
from warpwise.analysis.pipeline import analyze

from tests.conftest import pair_report

BENCH = Path(__file__).resolve().parents[2] / "bench" / "advice"


def _analyzed(d: Path) -> tuple[Any, KernelView]:
    meta = json.loads((d / "pair.json").read_text())
    srcs = [p for p in sorted(d.iterdir()) if p.suffix in (".cu", ".cuh")] + [BENCH / "pairs" / "bench.cuh"]
    an = analyze(pair_report(d), sorted(d.glob("orig.*.cubin")), srcs, kernel=meta["kernel"])
    k = an.kernels[0]
    view = build_view(k.profile, k.program, k.blame, arch_facts(k.profile.arch),
                      sources={str(p): p.read_text() for p in srcs})
    return k, view


def test_gauss_blur_run_time_ksize_is_fully_unrolled() -> None:
    # 5 x 5 blur with ksize a kernel argument: the compiler keeps the row loop (lines 14-18, the tap loop inside
    # it unrolled by 4 with a predicated remainder); per-PC inst_executed: header 2,621,440 warp executions for
    # 524,288 entries = 5 rows per thread
    k, view = _analyzed(BENCH / "holdout4" / "pairs" / "gauss_blur_ksize")
    nests = full_unroll_nests(view)
    assert len(nests) == 1
    n = nests[0]
    assert n.loop.first_line == 14 and n.trips == [pytest.approx(5.0)]
    assert trip_count(view, n.fn, n.loop) == pytest.approx(5.0)
    assert n.params == frozenset({("0x0", "0x228")})  # ksize: the 5th parameter word, c[0x0][0x210 + 0x18]
    # no tap the run needed goes: the global loads and FMAs removed are the remainder copies under @P0, a
    # predicate of the trip count that was off in every execution
    for _, off in n.removed:
        ins = n.fn.function.at(off)
        if ins.base_opcode in ("LDG", "FFMA"):
            assert ins.text.startswith("@P0 ") and n.removed[(n.fn.name, off)] == 1.0
    ldc = [off for _, off in n.removed if n.fn.function.at(off).text.startswith(("LDC", "@P0 LDC"))
           and "c[0x3][R" in n.fn.function.at(off).text]
    assert n.constant == len(ldc) == 7  # every one that ran: 3 in the first tap block, 4 in the 4-tap block
    assert n.control > 0 and n.index > 0 and n.idle > 0
    # the remainder taps the run never needed (@P0, never on in this run) go entirely
    assert all(0.0 < s <= 1.0 for s in n.removed.values())
    rep = k.advice_report
    adv = next(a for a in rep.advice if a.optimizer == "loop_unrolling")
    assert rep.advice[0] is adv
    assert adv.estimate.inputs["T"] == 31922 and adv.estimate.inputs["M"] == pytest.approx(10404.0)
    # eq. 2 T/(T-M) = 1.484, below the SM roofline after removing 47% of the executed warp instructions
    assert adv.estimate.inputs["r_sm"] == pytest.approx(1 - 99614720 / 213385216)
    assert adv.estimated_speedup == pytest.approx(31922 / (31922 - 10404), rel=1e-6)
    assert "kernel argument `ksize`" in adv.hint
    assert "make the trip count a compile-time constant (template parameter / constexpr) and #pragma unroll" \
        in adv.hint
    # no pragma edit makes a run-time count a constant: no quick fix (a `#pragma unroll 4` would contradict it)
    assert fixes_for_advice(adv, view.source) == []


def test_a_loop_with_a_long_trip_count_gets_no_full_unroll_estimate() -> None:
    # colsum_unroll1: a column sum whose row loop runs thousands of times per thread (#pragma unroll 1)
    k, view = _analyzed(BENCH / "pairs" / "colsum_unroll1")
    assert full_unroll_nests(view) == []
    loops = [(pf, lp) for pf in k.program.kernels() for lp in pf.loops.values()]
    trips = [t for pf, lp in loops if (t := trip_count(view, pf, lp)) is not None]
    assert trips and max(trips) > SMALL_TRIP
    adv = next(a for a in k.advice_report.advice if a.optimizer == "loop_unrolling")
    assert "full unrolling" not in adv.estimate.formula and "full_unroll_trip" not in adv.params
