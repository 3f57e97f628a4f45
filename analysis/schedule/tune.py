"""Tune one kernel's SASS schedule on the GPU and write the tuned cubin + manifest (SIP §3–4).

Pipeline: load the kernel (:mod:`.target`), time the original (baseline), run simulated annealing
(:mod:`.anneal`, SIP Alg. 1) over statically legal moves (:mod:`.model`), testing every new candidate
against the original on fresh random inputs before timing it (SIP §4.2; a mismatch rejects it),
caching evaluated schedules by the SHA-256 of their ``.text`` words; then test the best schedule with
``verify_samples`` input sets (10,000 by default), measure original and tuned side by side, and write
``<kernel>.tuned.cubin`` (only when accepted) and ``<kernel>.tune.json``. A dry run (stand-in evaluator,
no GPU) writes only ``<kernel>.dry-run.tune.json``, whose result is :data:`DRY_RUN`.

Energy = median time of the candidate / median time of the original (both CUDA-event timed after
warm-up). Progress is reported through a callback and the run can be cancelled with a
``threading.Event`` (the best schedule so far is kept and verified).
"""

from __future__ import annotations

import hashlib
import json
import platform
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .anneal import AnnealParams, Step, anneal
from .evaluate import Evaluator, EvaluatorError, TestResult, Timing
from .harness import Harness
from .model import MOVABLE_ALL, MOVABLE_GLOBAL, Move, apply_move
from .target import Target, load_target

MANIFEST_FORMAT = "warpwise-tune/1"

TUNED = "tuned"
KEPT_NO_BETTER = "original kept (no better schedule found)"
KEPT_UNVERIFIED = "original kept (the best schedule failed verification)"
KEPT_UNMEASURED = "original kept (side-by-side measurement failed)"
DRY_RUN = "dry run: nothing measured"
DRY_RUN_NOTE = (
    "dry run: timings and tests came from a stand-in without a GPU; no schedule was run, so nothing "
    "was measured or verified and no tuned cubin was written"
)


def side_by_side_decision(original: Timing | None, tuned: Timing | None) -> str:
    """Accept the tuned schedule only if it is faster by more than the noise of the final measurement.

    Rule: the tuned median must lie below the original's first quartile, both from the side-by-side
    measurement (same inputs, alternating rounds, ``final_rounds`` × ``repeats`` launches each), i.e.
    the tuned kernel's typical launch is faster than three quarters of the original's launches. The
    search's own energies are single, unrepeated measurements of many candidates, so the best of them
    is biased low (winner's curse); only this fresh, interleaved measurement decides. Returns
    :data:`TUNED` or a ``original kept (...)`` reason. (H200 run 1: stencil 70.83 µs vs 71.07 µs,
    0.9966× — kept under this rule; sgemm_tiled 318.7 µs, IQR 1.6, vs 316.5 µs — tuned.)
    """
    if original is None or tuned is None:
        return KEPT_UNMEASURED
    if tuned.median_ms < original.q1_ms:
        return TUNED
    return KEPT_NO_BETTER


@dataclass(frozen=True)
class TuneOptions:
    """Search and measurement settings.

    ``iterations``: annealing steps (sets Alg. 1's cooling factor); ``seed``: seeds moves, acceptance
    and test inputs; ``test_samples``: random input sets per candidate; ``verify_samples``: input sets
    for the final schedule (SIP tested with 10 million; 10,000 by default here); ``warmup``/``repeats``:
    launches before/while timing a candidate; ``final_rounds`` × ``repeats``: launches of each of
    original and tuned in the side-by-side measurement; ``movable``: ``global`` (LDG/STG, SIP §3.1)
    or ``all`` (adds LDS/STS/LDSM/LDGSTS); ``time_limit``: search seconds (0 = none) — the temperature
    follows whichever of iterations and time is further along, so the search uses its whole budget.
    ``dry_run``: the evaluator is a stand-in without a GPU (``--dry-run``): the pipeline is rehearsed,
    but the result is :data:`DRY_RUN` whatever the stand-in reports, and no tuned cubin is written.
    """

    iterations: int = 200
    seed: int = 0
    test_samples: int = 2
    verify_samples: int = 10_000
    warmup: int = 10
    repeats: int = 30
    final_rounds: int = 10
    t_max: float = 0.02
    t_min: float = 0.0005
    movable: str = "global"
    time_limit: float = 0.0
    dry_run: bool = False


@dataclass(frozen=True)
class Progress:
    """A progress report: ``stage`` (baseline/search/verify/measure/done), ``done`` of ``total`` units,
    best energy so far (tuned/original time ratio) and a one-line ``message``."""

    stage: str
    done: int
    total: int
    best_ratio: float
    message: str


@dataclass
class TuneResult:
    """Everything the manifest records; ``tuned`` holds the tuned cubin's bytes."""

    kernel: str
    section: str
    arch: str
    source: str
    source_sha256: str
    moves: list[Move]
    order: list[int]
    tuned: bytes
    baseline: Timing
    baseline_side: Timing | None
    tuned_side: Timing | None
    evaluated: int
    cache_hits: int
    rejected_tests: int
    rejected_errors: int
    legal_moves_start: int
    verify_samples: int
    verify_failed: int
    verify_error: str
    stopped: str
    seconds: float
    options: TuneOptions
    device: dict[str, str] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)
    decision: str = KEPT_NO_BETTER
    candidate_moves: list[Move] = field(default_factory=list)
    best_ratio: float = 1.0

    @property
    def dry_run(self) -> bool:
        """The run used a stand-in evaluator (no GPU): nothing it reports was measured."""
        return self.options.dry_run

    @property
    def accepted(self) -> bool:
        """The tuned schedule was verified and beat the original side by side (see
        :func:`side_by_side_decision`); otherwise ``tuned`` is the original."""
        return self.decision == TUNED

    @property
    def verified(self) -> bool:
        """The final schedule passed all verification samples."""
        return self.verify_failed == 0 and not self.verify_error and self.verify_samples > 0

    @property
    def speedup(self) -> float | None:
        """Original / tuned median time in the side-by-side measurement (×)."""
        if self.baseline_side is None or self.tuned_side is None or self.tuned_side.median_ms <= 0:
            return None
        return self.baseline_side.median_ms / self.tuned_side.median_ms


class TuneError(RuntimeError):
    """Tuning could not start or the original kernel fails its own test (non-deterministic outputs)."""


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for pkg in ("warpwise", "cuda-python", "cuda-bindings", "numpy", "pyelftools"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    try:
        from warpwise.analysis.binary.tools import find_tool, run_tool

        out["nvdisasm"] = run_tool([find_tool("nvdisasm"), "--version"], "nvdisasm --version").strip().splitlines()[-1]
    except Exception:
        pass
    return out


def tune(
    data: bytes,
    kernel: str,
    harness: Harness,
    evaluator: Evaluator,
    options: TuneOptions = TuneOptions(),
    path: str = "<memory>",
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    rebuild: Callable[[], Evaluator] | None = None,
) -> TuneResult:
    """Tune ``kernel`` of cubin bytes ``data`` with ``evaluator`` (see module docstring).

    ``rebuild`` makes a fresh evaluator after a sticky CUDA error (context lost); without it such an
    error ends the search with the best schedule so far.

    Raises:
        TuneError: the original kernel fails its own determinism test.
        ScheduleError/ToolError: the cubin or kernel cannot be read.
        EvaluatorError: the original cannot be loaded or launched.
    """
    t0 = time.monotonic()
    movable = MOVABLE_GLOBAL if options.movable == "global" else MOVABLE_ALL
    target: Target = load_target(data, kernel, path, movable)
    reporter = progress or (lambda p: None)
    stand_in = "dry run, stand-in (nothing measured): " if options.dry_run else ""

    def report(p: Progress) -> None:
        reporter(
            p
            if p.stage in ("search", "done")
            else Progress(p.stage, p.done, p.total, p.best_ratio, stand_in + p.message)
        )

    ev = evaluator

    report(Progress("baseline", 0, 1, 1.0, "testing and timing the original"))
    det = ev.test(data, data, max(1, options.test_samples), options.seed)
    if not det.passed:
        raise TuneError(
            f"{path}: {target.code.kernel} gives different outputs on identical inputs "
            f"({det.error or 'mismatch'}): mark only deterministic buffers as outputs or set a tolerance"
        )
    baseline = ev.time(data, options.warmup, options.repeats)
    base_ms = baseline.median_ms
    report(Progress("baseline", 1, 1, 1.0, f"original: {base_ms:.4f} ms median"))

    cache: dict[str, float | None] = {}
    counters = {"evaluated": 0, "hits": 0, "tests": 0, "errors": 0, "sample": 0}
    history: list[dict[str, Any]] = []
    lost = {"flag": False}

    def recover(err: EvaluatorError) -> None:
        """After a sticky error: a new worker process (WorkerEvaluator.restart), else ``rebuild``;
        the search ends ("context lost") only when neither works."""
        nonlocal ev
        restart = getattr(ev, "restart", None)
        try:
            if restart is not None:
                restart()
                return
            reset = getattr(ev, "reset_after_sticky_error", None)
            if reset is not None:
                reset()
            if rebuild is None:
                lost["flag"] = True
                return
            ev = rebuild()
        except EvaluatorError as again:
            history.append({"error": f"restart failed after {err}: {again}"})
            lost["flag"] = True

    def energy(order: list[int]) -> tuple[float | None, bool]:
        cubin = target.build(order)
        key = hashlib.sha256(
            cubin[target.layout.text_pos : target.layout.text_pos + target.layout.text_size]
        ).hexdigest()
        if key in cache:
            counters["hits"] += 1
            return cache[key], True
        counters["evaluated"] += 1
        counters["sample"] += 1
        e: float | None
        try:
            res = ev.test(cubin, data, options.test_samples, options.seed * 7919 + counters["sample"])
            if not res.passed:
                counters["tests" if not res.error else "errors"] += 1
                e = None
            else:
                e = ev.time(cubin, options.warmup, options.repeats).median_ms / base_ms
        except EvaluatorError as err:
            counters["errors"] += 1
            e = None
            history.append({"error": str(err), "sticky": err.sticky})
            if err.sticky:
                recover(err)
        cache[key] = e
        return e, False

    params = AnnealParams(
        options.t_max,
        options.t_min,
        iterations=options.iterations,
        seed=options.seed,
        time_limit=options.time_limit or None,
    )
    cancel_ev = cancel or threading.Event()
    best_seen = {"e": 1.0}

    def on_step(step: Step, total: int) -> None:
        if step.energy is not None and step.energy < best_seen["e"]:
            best_seen["e"] = step.energy
        history.append(
            {
                "iteration": step.iteration,
                "move": list(step.move.to_json()) if isinstance(step.move, Move) else None,
                "ratio": step.energy,
                "accepted": step.accepted,
                "cached": step.cached,
            }
        )
        if lost["flag"]:
            cancel_ev.set()
        report(
            Progress(
                "search",
                step.iteration + 1,
                total,
                best_seen["e"],
                f"{counters['evaluated']} evaluated, {counters['tests']} failed tests",
            )
        )

    start = target.identity
    legal_memo: dict[tuple[int, ...], list[Move]] = {}

    def legal(order: list[int]) -> list[Move]:
        k = tuple(order)
        if k not in legal_memo:
            legal_memo[k] = target.model.legal_moves(order)
        return legal_memo[k]

    legal_start = len(legal(start))
    result = anneal(
        start,
        1.0,
        moves=legal,
        apply=apply_move,
        energy=energy,
        params=params,
        key=lambda o: tuple(o),
        on_step=on_step,
        cancel=cancel_ev,
    )
    stopped = "context lost" if lost["flag"] else result.stopped
    best_order = result.best
    tuned = target.build(best_order)

    v_samples, v_failed, v_error = 0, 0, ""
    side_a: Timing | None = None
    side_b: Timing | None = None
    if best_order != start and not lost["flag"]:
        report(
            Progress(
                "verify",
                0,
                options.verify_samples,
                result.best_energy,
                f"testing the best schedule on {options.verify_samples} input sets",
            )
        )
        try:
            vr = ev.test(tuned, data, options.verify_samples, options.seed + 1_000_003)
        except EvaluatorError as err:  # the final schedule faulted (or the device is gone)
            vr = TestResult(0, 0, str(err))
            if err.sticky:
                recover(err)
        v_samples, v_failed, v_error = vr.samples, vr.failed, vr.error
        report(
            Progress(
                "verify",
                vr.samples,
                options.verify_samples,
                result.best_energy,
                "passed" if vr.passed else f"FAILED ({vr.error or f'{vr.failed} samples differ'})",
            )
        )
    verified = best_order != start and v_samples > 0 and v_failed == 0 and not v_error
    if verified and not lost["flag"]:
        report(Progress("measure", 0, 1, result.best_energy, "original vs tuned, side by side"))
        try:
            side_a, side_b = ev.time_pair(data, tuned, options.final_rounds, options.repeats, options.warmup)
        except EvaluatorError as err:
            history.append({"error": f"side-by-side measurement failed: {err}"})
            if err.sticky:
                recover(err)
    if best_order == start:
        decision = KEPT_NO_BETTER
    elif not verified:
        decision = KEPT_UNVERIFIED
    else:
        decision = side_by_side_decision(side_a, side_b)
    candidate = list(result.best_path) if best_order != start else []
    if options.dry_run:  # the stand-in's timings and tests mean nothing: never a tuned result
        decision = DRY_RUN
    if decision != TUNED:
        best_order, tuned = start, data
    try:
        device = ev.describe()
    except EvaluatorError as err:
        device = {"error": str(err)}
    res = TuneResult(
        kernel=target.code.kernel,
        section=target.code.section,
        arch=target.code.arch,
        source=path,
        source_sha256=hashlib.sha256(data).hexdigest(),
        moves=candidate if decision == TUNED else [],
        order=list(best_order),
        tuned=tuned,
        baseline=baseline,
        baseline_side=side_a,
        tuned_side=side_b,
        evaluated=counters["evaluated"],
        cache_hits=counters["hits"],
        rejected_tests=counters["tests"],
        rejected_errors=counters["errors"],
        legal_moves_start=legal_start,
        verify_samples=v_samples,
        verify_failed=v_failed,
        verify_error=v_error,
        stopped=stopped,
        seconds=time.monotonic() - t0,
        options=options,
        device=device,
        history=history,
        decision=decision,
        candidate_moves=candidate,
        best_ratio=result.best_energy,
    )
    report(Progress("done", 1, 1, result.best_energy, summary_line(res)))
    return res


def summary_line(r: TuneResult) -> str:
    """One line: the decision, side-by-side times and speedup of the best candidate, search counts."""
    sp = r.speedup
    times = (
        f"{r.baseline_side.median_ms:.4f} ms -> {r.tuned_side.median_ms:.4f} ms ({sp:.3f}x)"
        if r.baseline_side is not None and r.tuned_side is not None and sp
        else ""
    )
    search = f"{r.evaluated} schedules evaluated, {r.rejected_tests + r.rejected_errors} rejected, stopped: {r.stopped}"
    if r.dry_run:
        return (
            f"{r.kernel}: {DRY_RUN} (no GPU: timings and tests were stand-ins, no tuned cubin written); "
            f"search rehearsed: {r.evaluated} schedules, best candidate {len(r.candidate_moves)} moves, "
            f"stopped: {r.stopped}"
        )
    if r.accepted:
        return f"{r.kernel}: tuned: {times}, {len(r.moves)} moves, verified on {r.verify_samples} samples; {search}"
    if r.decision == KEPT_UNVERIFIED:
        why = r.verify_error or f"{r.verify_failed} samples differ"
        return f"{r.kernel}: {r.decision}: {why}; {search}"
    cand = f"best candidate {times}, {len(r.candidate_moves)} moves, not faster beyond noise; " if times else ""
    return f"{r.kernel}: {r.decision}; {cand}{search}"


def manifest(r: TuneResult, tuned_name: str | None) -> dict[str, Any]:
    """The manifest JSON object (format :data:`MANIFEST_FORMAT`).

    ``result``: :data:`TUNED` or why the original was kept; ``tuned_cubin`` is null when it was kept
    (no tuned cubin is written then). ``side_by_side`` always describes the best candidate that was
    measured (``accepted`` says whether it passed :func:`side_by_side_decision`); ``candidate_moves``
    are its moves even when it was rejected.

    A dry run (``"dry_run": true``, ``result`` :data:`DRY_RUN`) records the rehearsed search and its
    candidate's moves, but no baseline, side-by-side measurement or verification: none took place.
    """
    out: dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "kernel": r.kernel,
        "dry_run": r.dry_run,
        "section": r.section,
        "arch": r.arch,
        "result": r.decision,
        "source_cubin": {"path": r.source, "sha256": r.source_sha256},
        "tuned_cubin": (
            {"file": tuned_name, "sha256": hashlib.sha256(r.tuned).hexdigest()} if r.accepted and tuned_name else None
        ),
        "moves": [m.to_json() for m in r.moves],
        "candidate_moves": [m.to_json() for m in r.candidate_moves],
        "displaced": [[pos, idx] for pos, idx in enumerate(r.order) if pos != idx],
        "baseline": r.baseline.to_json(),
        "side_by_side": {
            "original": r.baseline_side.to_json() if r.baseline_side else None,
            "tuned": r.tuned_side.to_json() if r.tuned_side else None,
            "speedup": r.speedup,
            "rule": "accept only if the tuned median < the original's first quartile",
            "accepted": r.accepted,
        },
        "search": {
            "schedules_evaluated": r.evaluated,
            "cache_hits": r.cache_hits,
            "rejected_by_tests": r.rejected_tests,
            "rejected_by_errors": r.rejected_errors,
            "legal_moves_at_start": r.legal_moves_start,
            "stopped": r.stopped,
            "seconds": round(r.seconds, 3),
            "best_search_ratio": r.best_ratio,
        },
        "verification": {
            "samples": r.verify_samples,
            "failed_samples": r.verify_failed,
            "error": r.verify_error,
            "passed": r.verified,
        },
        "seed": r.options.seed,
        "options": {k: getattr(r.options, k) for k in r.options.__dataclass_fields__},
        "device": r.device,
        "tool_versions": _versions(),
        "history": r.history,
    }
    if r.dry_run:
        out.update(note=DRY_RUN_NOTE, baseline=None, side_by_side=None, verification=None, tuned_cubin=None)
        out["search"].pop("best_search_ratio")
    return out


def artifact_paths(kernel: str, outdir: str | Path, dry_run: bool = False) -> tuple[Path, Path]:
    """(``<kernel>.tuned.cubin``, ``<kernel>.tune.json``) in ``outdir``; long names are shortened.
    A dry run's manifest is ``<kernel>.dry-run.tune.json``, so it never replaces a real result's."""
    out = Path(outdir)
    short = kernel if len(kernel) <= 80 else kernel[:60] + "_" + hashlib.sha1(kernel.encode()).hexdigest()[:8]
    return out / f"{short}.tuned.cubin", out / f"{short}{'.dry-run' if dry_run else ''}.tune.json"


def write_artifacts(r: TuneResult, outdir: str | Path) -> tuple[Path | None, Path]:
    """Write the manifest into ``outdir`` and, only when the tuned schedule was accepted, the tuned
    cubin; return (cubin path or None, manifest path). When the original is kept, a tuned cubin left
    there by an earlier run is removed, so that a launch rewrite cannot pick it up. A dry run writes
    only its own manifest (``<kernel>.dry-run.tune.json``) and leaves any earlier real result alone.

    Each file is written atomically (analysis/output.py: a temporary file in the same folder renamed over it),
    so a crash or a full disk never leaves a half-written cubin or manifest; the cubin goes first, so a crash
    between the two leaves the old manifest, whose sha256 then no longer matches and :func:`check_manifest`
    refuses the pair.

    Raises:
        OSError: the folder cannot be created or written (OutputPathError: an artifact path exists and is
            not a regular file).
    """
    from warpwise.analysis.output import write_atomically

    cub, man = artifact_paths(r.kernel, outdir, r.dry_run)
    cub.parent.mkdir(parents=True, exist_ok=True)
    if r.dry_run:
        write_atomically(man, (json.dumps(manifest(r, None), indent=1) + "\n").encode())
        return None, man
    if r.accepted:
        write_atomically(cub, r.tuned)
    else:
        cub.unlink(missing_ok=True)
    write_atomically(man, (json.dumps(manifest(r, cub.name if r.accepted else None), indent=1) + "\n").encode())
    return (cub if r.accepted else None), man


def check_manifest(man: dict[str, Any], tuned: bytes, source: bytes | None = None) -> list[str]:
    """Problems found when checking a manifest against its tuned cubin (and the source cubin, if given):
    wrong format, hash mismatch, or moves that do not replay legally to the tuned words."""
    problems = []
    if man.get("format") != MANIFEST_FORMAT:
        problems.append(f"format is {man.get('format')!r}, expected {MANIFEST_FORMAT}")
    if man.get("tuned_cubin") is None:
        problems.append(f"no tuned cubin: {man.get('result', 'original kept')}")
    elif hashlib.sha256(tuned).hexdigest() != man["tuned_cubin"].get("sha256"):
        problems.append("tuned cubin's sha256 differs from the manifest")
    if source is not None:
        if hashlib.sha256(source).hexdigest() != man.get("source_cubin", {}).get("sha256"):
            problems.append("source cubin's sha256 differs from the manifest")
        else:
            t = load_target(source, man["kernel"], "source", MOVABLE_ALL)
            try:
                order = t.replay([Move(i, d) for i, d in man.get("moves", [])])
            except ValueError as e:
                problems.append(str(e))
            else:
                if t.build(order) != tuned:
                    problems.append("replaying the moves does not give the tuned cubin")
    return problems
