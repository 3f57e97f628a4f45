"""Search (SIP Alg. 1), harness parsing, the tuning pipeline without a GPU, manifests and the CLI."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path

import pytest
from warpwise.analysis.schedule.anneal import AnnealParams, anneal
from warpwise.analysis.schedule.evaluate import DryRunEvaluator, TestResult, Timing
from warpwise.analysis.schedule.harness import HarnessError, load_harness, parse_harness
from warpwise.analysis.schedule.model import MOVABLE_ALL, Move
from warpwise.analysis.schedule.target import load_target
from warpwise.analysis.schedule.tune import (
    DRY_RUN,
    MANIFEST_FORMAT,
    TuneError,
    TuneOptions,
    check_manifest,
    manifest,
    tune,
    write_artifacts,
)

ROOT = Path(__file__).resolve().parents[2]
STENCIL = ROOT / "examples/stencil/stencil.sm_90.cubin"
TILED = Path(__file__).parent / "fixtures/tiled.sm_90.cubin"
H = parse_harness(
    {"grid": [1], "block": [32], "args": [{"name": "y", "buffer": {"dtype": "float32", "count": 4, "output": True}}]}
)


# ---- annealing -----------------------------------------------------------------------------------
def _line_search(params: AnnealParams, energy_of: dict[int, float], **kw: object):
    """States 0..9 on a line, moves -1/+1; energies from a table."""
    calls: list[int] = []

    def energy(s: int) -> tuple[float | None, bool]:
        calls.append(s)
        return energy_of.get(s), False

    res = anneal(
        5,
        energy_of[5],
        moves=lambda s: [m for m in (-1, 1) if 0 <= s + m <= 9],
        apply=lambda s, m: s + m,
        energy=energy,
        params=params,
        **kw,
    )  # type: ignore[arg-type]
    return res, calls


def test_anneal_finds_the_minimum_and_the_path_to_it() -> None:
    e = {i: abs(i - 2) / 10 + 1 for i in range(10)}
    res, _ = _line_search(AnnealParams(t_max=0.01, t_min=0.0001, iterations=200, seed=3), e)
    assert res.best == 2 and res.best_energy == pytest.approx(1.0)
    assert 5 + sum(res.best_path) == 2


def test_anneal_stops_when_no_move_improves_the_best() -> None:
    e = {i: 1.0 + abs(i - 5) for i in range(10)}  # 5 is already the minimum
    res, calls = _line_search(AnnealParams(t_max=0.001, t_min=0.0001, iterations=500, seed=0), e)
    assert res.stopped == "no improving move" and res.best == 5 and res.best_path == []
    assert sorted(set(calls)) == [4, 6] and len(res.steps) == 2


def test_anneal_never_accepts_rejected_states_and_honours_cancel() -> None:
    e = {i: 0.5 for i in range(10)}
    e.pop(4), e.pop(6)  # both neighbours of the start fail their tests
    res, _ = _line_search(AnnealParams(seed=1, iterations=50), {**e, 5: 1.0})
    assert res.best == 5 and all(not s.accepted for s in res.steps)
    stop = threading.Event()
    stop.set()
    res, calls = _line_search(AnnealParams(seed=1, iterations=50), {i: 1.0 for i in range(10)}, cancel=stop)
    assert res.stopped == "cancelled" and calls == []


def test_anneal_is_seeded_and_cooling_matches_iterations() -> None:
    e = {i: 1.0 + ((i * 7919) % 13) / 100 for i in range(10)}
    p = AnnealParams(t_max=0.05, t_min=0.001, iterations=40, seed=11)
    a, _ = _line_search(p, e)
    b, _ = _line_search(p, e)
    assert [s.move for s in a.steps] == [s.move for s in b.steps]
    assert p.steps() == 40
    with pytest.raises(ValueError):
        AnnealParams(t_max=0.001, t_min=0.01).factor()


# ---- harness -------------------------------------------------------------------------------------
def test_harness_round_trips_and_rejects_bad_input(tmp_path: Path) -> None:
    h = load_harness(ROOT / "bench/tune/harness/gather.json")
    assert h.grid == (1024, 1, 1) and [a.name for a in h.outputs] == ["y"]
    assert h.args[0].init.dist == "randint" and h.args[0].nbytes == 4 * 8388608
    assert parse_harness(h.to_json()) == h
    for bad, msg in [
        ({"grid": [1], "block": [1], "args": []}, "no buffer"),
        ({"grid": [0], "block": [1], "args": []}, "grid"),
        ({"grid": [1], "block": [1], "args": [{"name": "x", "buffer": {"dtype": "float7", "count": 1}}]}, "dtype"),
        (
            {
                "grid": [1],
                "block": [1],
                "args": [{"name": "x", "buffer": {"dtype": "int32", "count": 1, "init": {"dist": "cauchy"}}}],
            },
            "distribution",
        ),
        (
            {
                "grid": [1],
                "block": [1],
                "args": [
                    {"name": "x", "buffer": {"dtype": "int32", "count": 4, "output": True, "tolerance": {"atol": 1}}}
                ],
            },
            "tolerance",
        ),
    ]:
        with pytest.raises(HarnessError, match=msg):
            parse_harness(bad, "h.json")
    p = tmp_path / "h.json"
    p.write_text("{not json")
    with pytest.raises(HarnessError, match="invalid JSON"):
        load_harness(p)


# ---- pipeline without a GPU ----------------------------------------------------------------------
def test_pipeline_with_a_stand_in_evaluator_writes_a_manifest_that_replays(tmp_path: Path) -> None:
    data = TILED.read_bytes()
    seen: list[str] = []
    r = tune(
        data,
        "sgemm",
        H,
        DryRunEvaluator(),
        TuneOptions(iterations=60, seed=4, verify_samples=50, movable="all"),
        str(TILED),
        progress=lambda p: seen.append(p.stage),
    )
    assert {"baseline", "search", "done"} <= set(seen)
    assert r.evaluated > 0 and r.legal_moves_start > 0
    cub, man = write_artifacts(r, tmp_path)
    m = json.loads(man.read_text())
    assert m["format"] == MANIFEST_FORMAT and m["kernel"] == "_Z11sgemm_tiledPKfS0_Pfi" and m["arch"] == "sm_90"
    assert m["seed"] == 4 and m["search"]["schedules_evaluated"] == r.evaluated
    # the dry run's timings are constant per cubin, so the best candidate beats the original's quartile
    assert r.accepted and m["result"] == "tuned" and m["side_by_side"]["accepted"] and r.moves
    assert cub is not None and check_manifest(m, cub.read_bytes(), data) == []
    assert m["verification"]["samples"] == 50 and m["verification"]["passed"]
    assert cub.read_bytes() != data
    # a tampered tuned cubin or source is detected
    assert check_manifest(m, data + b"x", data)
    assert check_manifest(m, cub.read_bytes(), data[:-1] + b"\x01")


def test_failing_candidates_are_rejected_and_cached() -> None:
    data = TILED.read_bytes()

    class AllFail(DryRunEvaluator):
        def test(self, candidate: bytes, reference: bytes, samples: int, seed: int) -> TestResult:
            return TestResult(samples, 0 if candidate == reference else samples)

    r = tune(data, "axpy4", H, AllFail(), TuneOptions(iterations=40, verify_samples=10, movable="all"), str(TILED))
    assert r.moves == [] and r.tuned == data and r.rejected_tests == r.evaluated > 0
    assert r.stopped == "no improving move"


def test_failed_final_verification_keeps_the_original() -> None:
    data = TILED.read_bytes()

    class FailsLate(DryRunEvaluator):
        def test(self, candidate: bytes, reference: bytes, samples: int, seed: int) -> TestResult:
            return TestResult(samples, 3 if samples == 500 and candidate != reference else 0)

    r = tune(data, "sgemm", H, FailsLate(), TuneOptions(iterations=60, verify_samples=500, movable="all"), str(TILED))
    assert r.verify_samples == 500 and r.verify_failed == 3 and not r.verified
    assert r.moves == [] and r.tuned == data and r.order == list(range(len(r.order)))
    m = manifest(r, "x.cubin")
    assert m["verification"] == {"samples": 500, "failed_samples": 3, "error": "", "passed": False}
    assert m["result"].startswith("original kept") and m["tuned_cubin"] is None and m["candidate_moves"]


def test_nondeterministic_original_is_refused() -> None:
    class Flaky(DryRunEvaluator):
        def test(self, candidate: bytes, reference: bytes, samples: int, seed: int) -> TestResult:
            return TestResult(samples, 1)

    with pytest.raises(TuneError, match="different outputs on identical inputs"):
        tune(TILED.read_bytes(), "axpy4", H, Flaky(), TuneOptions(iterations=5), str(TILED))


def test_cancel_keeps_the_original_when_nothing_was_tried() -> None:
    stop = threading.Event()
    stop.set()
    r = tune(STENCIL.read_bytes(), "blur", H, DryRunEvaluator(), TuneOptions(iterations=50), str(STENCIL), cancel=stop)
    assert r.stopped == "cancelled" and r.evaluated == 0 and r.moves == []
    m = manifest(r, "x.cubin")
    assert m["result"] == "original kept (no better schedule found)" and m["tuned_cubin"] is None
    assert m["side_by_side"]["speedup"] is None  # nothing to measure against


def test_timing_json() -> None:
    assert Timing.of([2.0]).to_json()["median_ms"] == 2.0
    assert Move(3, -1).to_json() == [3, -1]


# ---- CLI -----------------------------------------------------------------------------------------
# axpy4(const float* x, const float* y, float* out, float a, int n) in the tiled fixture
AXPY4 = {
    "kernel": "axpy4",
    "grid": [1],
    "block": [32],
    "args": [
        {"name": "x", "buffer": {"dtype": "float32", "count": 64}},
        {"name": "y", "buffer": {"dtype": "float32", "count": 64}},
        {"name": "out", "buffer": {"dtype": "float32", "count": 64, "output": True}},
        {"name": "a", "scalar": {"dtype": "float32", "value": 2.0}},
        {"name": "n", "scalar": {"dtype": "int32", "value": 64}},
    ],
}


def _run_cli(argv: list[str]) -> int:
    from warpwise.server.tune_cmd import add_arguments, run_tune

    p = argparse.ArgumentParser()
    add_arguments(p)
    return run_tune(p.parse_args(argv))


def test_cli_dry_run_measures_nothing_and_writes_no_tuned_cubin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from warpwise.server.tune_cmd import main

    h = tmp_path / "axpy4.harness.json"
    h.write_text(json.dumps(AXPY4))
    out_dir = tmp_path / "o"
    argv = [
        str(TILED),
        "--harness",
        str(h),
        "--dry-run",
        "-o",
        str(out_dir),
        "--iterations",
        "30",
        "--verify-samples",
        "20",
        "--movable",
        "all",
        "--no-progress",
    ]
    rc = _run_cli(argv)
    out = capsys.readouterr().out
    assert rc == 0 and "manifest:" in out
    # nothing pretends to be a measured, verified result
    assert "dry run: nothing measured" in out and "none written (dry run" in out
    assert "verified" not in out and " ms" not in out and "tuned:" not in out
    assert list(out_dir.glob("*.cubin")) == []
    (man,) = out_dir.glob("*.tune.json")
    assert man.name == "_Z5axpy4PKfS0_Pffi.dry-run.tune.json"
    m = json.loads(man.read_text())
    assert m["dry_run"] is True and m["result"] == DRY_RUN and m["options"]["dry_run"] is True
    assert m["tuned_cubin"] is None and m["moves"] == []
    assert m["baseline"] is None and m["side_by_side"] is None and m["verification"] is None
    assert m["search"]["schedules_evaluated"] > 0 and "best_search_ratio" not in m["search"]
    # the rehearsed candidate is still on record, replayable from the source cubin
    target = load_target(TILED.read_bytes(), "axpy4", str(TILED), MOVABLE_ALL)
    order = target.replay([Move(i, d) for i, d in m["candidate_moves"]])
    assert m["candidate_moves"] and order != target.identity
    assert main([str(TILED), "--harness", str(tmp_path / "missing.json")]) == 2
    assert "cannot read harness" in capsys.readouterr().err
    assert main([str(TILED), "--harness", str(h), "--kernel", "nope", "--dry-run"]) == 2
    assert "matches no" in capsys.readouterr().err


def test_cli_dry_run_leaves_an_earlier_real_result_alone(tmp_path: Path) -> None:
    data = TILED.read_bytes()
    real = tune(
        data,
        "axpy4",
        parse_harness(AXPY4),
        DryRunEvaluator(),
        TuneOptions(iterations=30, verify_samples=5, movable="all"),
        str(TILED),
    )
    assert real.accepted  # a stand-in accepted result, standing for an earlier GPU run's
    cub, man = write_artifacts(real, tmp_path)
    assert cub is not None
    before = (cub.read_bytes(), man.read_text())
    h = tmp_path / "axpy4.harness.json"
    h.write_text(json.dumps(AXPY4))
    assert (
        _run_cli(
            [
                str(TILED),
                "--harness",
                str(h),
                "--dry-run",
                "-o",
                str(tmp_path),
                "--iterations",
                "10",
                "--verify-samples",
                "5",
                "--movable",
                "all",
                "--no-progress",
            ]
        )
        == 0
    )
    assert (cub.read_bytes(), man.read_text()) == before
    assert (tmp_path / "_Z5axpy4PKfS0_Pffi.dry-run.tune.json").is_file()


def test_missing_cuda_python_names_the_tune_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from warpwise.analysis.schedule.evaluate import DriverEvaluator, EvaluatorError

    monkeypatch.setitem(sys.modules, "cuda", None)  # as on a machine without cuda-python
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)
    with pytest.raises(EvaluatorError, match=r"needs cuda-python.*pip install -e '\.\[tune\]'"):
        DriverEvaluator(H, "_Z5axpy4PKfS0_Pffi")


def test_dry_run_progress_and_result_never_read_as_measurements() -> None:
    seen: list[tuple[str, str]] = []
    r = tune(
        TILED.read_bytes(),
        "axpy4",
        parse_harness(AXPY4),
        DryRunEvaluator(),
        TuneOptions(iterations=30, verify_samples=5, movable="all", dry_run=True),
        str(TILED),
        progress=lambda p: seen.append((p.stage, p.message)),
    )
    assert r.decision == DRY_RUN and not r.accepted and r.moves == [] and r.tuned == TILED.read_bytes()
    assert r.candidate_moves  # the stand-in "found" a faster schedule; it is still not a result
    staged = [m for st, m in seen if st in ("baseline", "verify", "measure")]
    assert {"baseline", "verify", "measure"} <= {st for st, _ in seen}
    assert staged and all(m.startswith("dry run, stand-in (nothing measured): ") for m in staged)
    assert seen[-1][0] == "done" and "dry run: nothing measured" in seen[-1][1]


def test_artifacts_are_written_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that fails part-way (here: the disk fills as the manifest is flushed) leaves the earlier
    artifacts exactly as they were and no temporary file; a write that succeeds replaces them whole."""
    import errno
    import os

    data = TILED.read_bytes()
    r = tune(data, "sgemm", H, DryRunEvaluator(), TuneOptions(iterations=5, seed=1, verify_samples=5,
                                                               movable="all"), str(TILED))
    assert r.accepted
    cub, man = write_artifacts(r, tmp_path)
    assert cub is not None
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    calls = {"n": 0}
    real_fsync = os.fsync

    def full_disk(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] == 2:  # the cubin is written, the manifest's flush fails
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full_disk)
    r.tuned = r.tuned[:-4] + b"\0\0\0\1"  # a different cubin, so a half-done write would show
    with pytest.raises(OSError, match="No space left"):
        write_artifacts(r, tmp_path)
    monkeypatch.setattr(os, "fsync", real_fsync)
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert set(after) == set(before)  # no .tmp left behind
    assert after[man.name] == before[man.name]  # the manifest is the old one, whole
    assert check_manifest(json.loads(after[man.name]), after[cub.name], data)  # and refuses the new cubin
    write_artifacts(r, tmp_path)
    m = json.loads(man.read_text())
    assert check_manifest(m, cub.read_bytes()) == [] and cub.read_bytes() == r.tuned
