"""Fixes from the first H200 run: a faulting candidate no longer ends the search (worker process),
the final decision uses the side-by-side measurement, and the search cools over its time budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_evaluators import CrashingEvaluator, SlowerEvaluator, StickyEvaluator
from warpwise.analysis.schedule.anneal import AnnealParams, anneal
from warpwise.analysis.schedule.evaluate import DryRunEvaluator, EvaluatorError, Timing
from warpwise.analysis.schedule.harness import parse_harness
from warpwise.analysis.schedule.tune import (
    KEPT_NO_BETTER,
    TUNED,
    TuneOptions,
    side_by_side_decision,
    tune,
    write_artifacts,
)
from warpwise.analysis.schedule.worker import WorkerEvaluator

TILED = Path(__file__).parent / "fixtures/tiled.sm_90.cubin"
H = parse_harness(
    {"grid": [1], "block": [32], "args": [{"name": "y", "buffer": {"dtype": "float32", "count": 4, "output": True}}]}
)


def T(median: float, q1: float, q3: float) -> Timing:
    return Timing(median, q1, q3, q1, q3, 300)


# ---- acceptance: measured numbers of the first H200 run (manifests' side_by_side, ms) ------------
def test_side_by_side_rule_on_the_h200_measurements() -> None:
    stencil = (T(0.07083200290799141, 0.06998399645090103, 0.07211999781429768),
               T(0.07107199728488922, 0.07002399675548077, 0.07218399830162525))  # fmt: skip
    attn = (T(0.031647998839616776, 0.03094400092959404, 0.03299200162291527),
            T(0.03155200183391571, 0.0309200007468462, 0.03272799961268902))  # fmt: skip
    sgemm = (T(0.3186880052089691, 0.31804800033569336, 0.31964799761772156),
             T(0.31651198863983154, 0.3158079981803894, 0.3173599913716316))  # fmt: skip
    assert side_by_side_decision(*stencil) == KEPT_NO_BETTER  # slower: 0.9966x
    assert side_by_side_decision(*attn) == KEPT_NO_BETTER  # 1.003x, inside the original's IQR
    assert side_by_side_decision(*sgemm) == TUNED  # 1.007x, below the original's first quartile
    assert side_by_side_decision(None, sgemm[1]).startswith("original kept")


def test_slower_tuned_schedule_keeps_the_original_and_writes_no_cubin(tmp_path: Path) -> None:
    data = TILED.read_bytes()
    stale = tmp_path / "_Z11sgemm_tiledPKfS0_Pfi.tuned.cubin"
    stale.write_bytes(b"from an earlier run")
    pair = (T(0.07083, 0.06998, 0.07212), T(0.07107, 0.07002, 0.07218))  # stencil's numbers
    r = tune(data, "sgemm", H, SlowerEvaluator(pair), TuneOptions(iterations=40, verify_samples=20, movable="all"))
    assert r.candidate_moves and r.moves == [] and r.tuned == data and not r.accepted
    assert r.speedup == pytest.approx(0.07083 / 0.07107)
    cub, man = write_artifacts(r, tmp_path)
    m = json.loads(man.read_text())
    assert cub is None and not stale.exists()
    assert m["result"] == "original kept (no better schedule found)" and m["tuned_cubin"] is None
    assert m["side_by_side"]["accepted"] is False and m["candidate_moves"] == [mv.to_json() for mv in r.candidate_moves]


# ---- worker process ------------------------------------------------------------------------------
def test_worker_restarts_after_the_child_dies_and_the_search_goes_on() -> None:
    ev = WorkerEvaluator(CrashingEvaluator, call_timeout=60)
    try:
        first = ev.pid
        r = tune(TILED.read_bytes(), "sgemm", H, ev, TuneOptions(iterations=25, verify_samples=20, movable="all"))
        assert r.rejected_errors >= 1 and ev.restarts >= 1 and ev.pid != first
        assert r.stopped != "context lost" and r.evaluated > r.rejected_errors
        assert any("died" in h.get("error", "") for h in r.history)
        assert r.device["worker_restarts"] == str(ev.restarts)
    finally:
        ev.close()
    assert ev.pid is None


def test_worker_restarts_after_a_sticky_error() -> None:
    ev = WorkerEvaluator(StickyEvaluator, call_timeout=60)
    try:
        r = tune(TILED.read_bytes(), "sgemm", H, ev, TuneOptions(iterations=25, verify_samples=20, movable="all"))
        sticky = [h for h in r.history if h.get("sticky")]
        assert sticky and all("ILLEGAL_INSTRUCTION" in h["error"] for h in sticky)
        # each poisoned child was replaced: no candidate after a fault failed because of the old context
        assert not any("PrimaryCtxRetain" in h.get("error", "") for h in r.history)
        assert r.rejected_errors == len(sticky) == ev.restarts and r.stopped != "context lost"
    finally:
        ev.close()


def test_worker_reports_start_failures_and_bad_calls() -> None:
    with pytest.raises(EvaluatorError, match="worker start failed"):
        WorkerEvaluator(_no_such_factory_result, start_timeout=60)
    ev = WorkerEvaluator(DryRunEvaluator)
    try:
        assert ev.describe()["device"] == "dry-run (no GPU)"
        t = ev.time(b"abc", 1, 3)
        assert t == DryRunEvaluator().time(b"abc", 1, 3)
    finally:
        ev.close()


def _no_such_factory_result() -> DryRunEvaluator:
    raise RuntimeError("no device here")


# ---- search budget -------------------------------------------------------------------------------
def test_anneal_cools_over_its_time_limit() -> None:
    now = [0.0]

    def clock() -> float:
        return now[0]

    def energy(s: int) -> tuple[float | None, bool]:
        now[0] += 1.0  # one second per evaluation
        return 1.0 + abs(s - 500) / 1000, False

    p = AnnealParams(0.02, 0.0005, iterations=10_000, seed=0, time_limit=60.0)
    res = anneal(0, 1.5, moves=lambda s: [-1, 1], apply=lambda s, m: s + m, energy=energy, params=p, clock=clock)
    # 60 s at 1 s per step: the time budget, not the 10,000 iterations, ends the search
    assert res.stopped == "time limit" and 59 <= len(res.steps) <= 61
    temps = [st.temperature for st in res.steps]
    assert temps[0] == pytest.approx(0.02) and temps[30] == pytest.approx(0.02 * (0.0005 / 0.02) ** 0.5, rel=0.05)
    # without a time limit the same search runs all its iterations
    p2 = AnnealParams(0.02, 0.0005, iterations=200, seed=0)
    assert len(anneal(0, 1.5, moves=lambda s: [-1, 1], apply=lambda s, m: s + m, energy=energy, params=p2).steps) == 200


def _gpu() -> bool:
    try:
        from cuda.bindings import driver as cu

        return int(cu.cuInit(0)[0]) == 0 and int(cu.cuDeviceGetCount()[1]) > 0
    except Exception:
        return False


@pytest.mark.gpu
@pytest.mark.skipif(not _gpu(), reason="needs an NVIDIA GPU")
def test_real_gpu_fault_costs_only_the_worker() -> None:
    from functools import partial

    from warpwise.analysis.schedule.evaluate import DriverEvaluator

    stencil = Path(__file__).resolve().parents[2] / "examples/stencil/stencil.sm_90.cubin"
    args = [
        {"name": "out", "buffer": {"dtype": "float32", "count": 1024 * 128, "output": True}},
        {"name": "nx", "scalar": {"dtype": "int32", "value": 1024}},
        {"name": "ny", "scalar": {"dtype": "int32", "value": 128}},
    ]
    launch = {"grid": [8, 64], "block": [128, 2]}
    good = parse_harness({**launch, "args": [{"name": "in", "buffer": {"dtype": "float32", "count": 1 << 17}}, *args]})
    bad = parse_harness({**launch, "args": [{"name": "in", "null_pointer": True}, *args]})
    data = stencil.read_bytes()
    ev = WorkerEvaluator(partial(DriverEvaluator, bad, "_Z9blur_rowsPKfPfii"), call_timeout=60)
    try:
        with pytest.raises(EvaluatorError) as e:
            ev.time(data, 1, 2)  # reads through a null pointer: a sticky CUDA error in the child
        assert e.value.sticky
        assert ev.describe()["device"]  # a fresh child has a working context
        assert ev.restarts == 1
    finally:
        ev.close()
    ev = WorkerEvaluator(partial(DriverEvaluator, good, "_Z9blur_rowsPKfPfii"))
    try:
        assert ev.test(data, data, 4, 0).passed and ev.time(data, 2, 5).median_ms > 0
    finally:
        ev.close()
