"""``warpwise tune BINARY --kernel NAME --harness HARNESS.json``: tune a kernel's SASS schedule on the GPU.

Argparse arguments (added to the ``tune`` sub-parser by :func:`add_arguments`):
``binary`` (a .cubin), ``--kernel`` (mangled name or unique substring; default: the harness's
``kernel``), ``--harness`` (JSON, see :mod:`warpwise.analysis.schedule.harness`), ``--iterations N``
(200), ``--seed S`` (0), ``--verify-samples N`` (10000), ``--test-samples N`` (2), ``--repeats N``
(30), ``--movable {global,all}`` (global), ``--device N`` (0), ``--dry-run`` (no GPU: a stand-in
evaluator rehearses the search; nothing is measured, the manifest says so (``"dry_run": true``), and no
tuned cubin is written), ``-o/--output OUTDIR`` (``warpwise-tuned``), ``--no-progress``, ``--time-limit S``
(the search cools over S seconds, then the best schedule is verified and measured side by side),
``--call-timeout S`` (300: a GPU call running longer counts as a hung worker, which is restarted),
``--exit-with-parent`` (end, GPU worker included, when the starting process exits: the editor passes it).

Before any GPU work (also in a dry run) the harness is checked against the kernel's parameter table in
the cubin (:func:`warpwise.analysis.schedule.params.check_harness`): argument count, each argument's
byte size, and the harness's ``kernel`` field.

GPU work runs in a worker process (:mod:`warpwise.analysis.schedule.worker`): a candidate that
faults the GPU is recorded as rejected and the search continues with a fresh worker.

Also runnable alone: ``python -m warpwise.server.tune_cmd BINARY --harness H.json ...``.

Exit codes: 0 tuned, original kept because no schedule was faster beyond noise, or a dry run finished;
1 verification failed; 2 bad input (unreadable cubin or harness, unknown kernel, a harness that does not
match the kernel's parameters) or no GPU / cuda-python; 130 cancelled before the search started.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from functools import partial
from typing import Any


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``tune`` sub-command's arguments to ``p``."""
    p.add_argument("binary", help=".cubin holding the kernel (extract from executables with cuobjdump -xelf)")
    p.add_argument("--kernel", help="kernel name (mangled, or a unique part of it)")
    p.add_argument("--harness", required=True, help="harness JSON: launch shape, arguments, output buffers")
    p.add_argument("--iterations", type=int, default=200, help="simulated-annealing steps (default 200)")
    p.add_argument("--seed", type=int, default=0, help="random seed of moves and test inputs")
    p.add_argument("--verify-samples", type=int, default=10_000, help="input sets for the final test")
    p.add_argument("--test-samples", type=int, default=2, help="input sets per candidate")
    p.add_argument("--repeats", type=int, default=30, help="timed launches per candidate")
    p.add_argument(
        "--movable",
        choices=["global", "all"],
        default="global",
        help="global: LDG/STG only (SIP); all: also LDS/STS/LDSM/LDGSTS",
    )
    p.add_argument("--device", type=int, default=0, help="CUDA device ordinal")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="no GPU: rehearse the search with fake timings; measures nothing and writes no tuned cubin",
    )
    p.add_argument("-o", "--output", default="warpwise-tuned", help="folder for the tuned cubin + manifest")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--time-limit",
        type=float,
        default=0.0,
        help="search seconds (0: no limit): the annealing temperature cools over this time; "
        "the best schedule is still verified and measured afterwards",
    )
    p.add_argument(
        "--exit-with-parent",
        action="store_true",
        help="end (with any GPU worker) as soon as the process that started this one exits; the editor's "
        "server passes it so that a server that dies without cleaning up leaves no tuner running",
    )
    p.add_argument(
        "--call-timeout",
        type=float,
        default=300.0,
        help="seconds one GPU call (test/time) may take before its worker is treated as hung and restarted",
    )


def progress_counts(done: int, total: int) -> tuple[int, int]:
    """(done, total) for display: ``done`` never above ``total`` (total grows to the steps taken)."""
    return done, max(total, done)


class _Bar:
    """tqdm bar if tqdm is installed, else one line per stage on stderr."""

    def __init__(self, enabled: bool, dry_run: bool = False) -> None:
        self.enabled = enabled
        self.unit = "x stand-in time (dry run)" if dry_run else "x time"
        self.bar: Any = None
        self.stage = ""
        try:
            import tqdm  # noqa: F401

            self.has_tqdm = True
        except ImportError:
            self.has_tqdm = False

    def __call__(self, pr: Any) -> None:
        if not self.enabled:
            return
        if pr.stage != self.stage:
            if self.bar is not None:
                self.bar.close()
                self.bar = None
            self.stage = pr.stage
            if self.has_tqdm and pr.stage in ("search", "verify"):
                from tqdm import tqdm

                self.bar = tqdm(total=pr.total, desc=pr.stage, file=sys.stderr, leave=False)
            elif pr.stage != "done":
                print(f"[{pr.stage}] {pr.message}", file=sys.stderr)
        # cached schedules cost no GPU time and advance the cooling by a fraction of a step (schedule/anneal),
        # so a search can take more steps than --iterations: show the steps, never "75/50"
        done, total = progress_counts(pr.done, pr.total)
        if self.bar is not None:
            self.bar.total = total
            self.bar.n = done
            self.bar.set_postfix_str(f"best {pr.best_ratio:.4f}{self.unit}", refresh=True)
        elif self.enabled and pr.stage == "search" and pr.done % 25 == 0:
            print(f"[search] {done}/{total} best {pr.best_ratio:.4f}{self.unit}; {pr.message}", file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def watch_parent(interval: float = 0.5) -> threading.Thread:
    """Start a daemon thread that ends this process when its parent exits (the parent id changes: the
    orphan is re-parented). A group leader (started with ``start_new_session``, as the server starts the
    tuner) kills its whole group, so the GPU worker it spawned ends too; otherwise the process exits."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        print("warpwise tune: the process that started it has exited; stopping", file=sys.stderr, flush=True)
        if os.getpgrp() == os.getpid():
            os.killpg(os.getpid(), signal.SIGKILL)
        os._exit(1)

    th = threading.Thread(target=watch, name="warpwise-tune-parent", daemon=True)
    th.start()
    return th


def run_tune(args: argparse.Namespace) -> int:
    """Run the ``tune`` sub-command; returns the exit code (see module docstring)."""
    from warpwise.analysis.binary.errors import BinaryError
    from warpwise.analysis.bounded import InputFileError, read_bytes
    from warpwise.analysis.schedule.evaluate import DriverEvaluator, DryRunEvaluator, Evaluator, EvaluatorError
    from warpwise.analysis.schedule.harness import HarnessError, load_harness
    from warpwise.analysis.schedule.params import check_harness
    from warpwise.analysis.schedule.tune import (
        TuneError,
        TuneOptions,
        artifact_paths,
        summary_line,
        tune,
        write_artifacts,
    )
    from warpwise.analysis.schedule.worker import WorkerEvaluator

    if getattr(args, "exit_with_parent", False):
        watch_parent()
    try:
        harness = load_harness(args.harness)
        data = read_bytes(args.binary, "binary")  # a regular file within the binary limit, never a FIFO/device
    except (HarnessError, InputFileError) as e:
        print(f"warpwise tune: {e}", file=sys.stderr)
        return 2
    kernel = args.kernel or harness.kernel
    if not kernel:
        print('warpwise tune: name the kernel with --kernel (or "kernel" in the harness)', file=sys.stderr)
        return 2
    try:  # before any GPU work: a harness that does not fit the kernel would launch it with garbage
        kernel = check_harness(harness, data, kernel, str(args.binary), str(args.harness))
    except (HarnessError, BinaryError) as e:
        print(f"warpwise tune: {e}", file=sys.stderr)
        return 2
    from warpwise.analysis.output import folder_problem

    # before the search: the manifest and cubin are written into -o, never into a FIFO/device/link there
    if (problem := folder_problem(args.output, list(artifact_paths(kernel, args.output, bool(args.dry_run))))):
        print(f"warpwise tune: -o {problem}", file=sys.stderr)
        return 2
    opts = TuneOptions(
        iterations=args.iterations,
        seed=args.seed,
        verify_samples=args.verify_samples,
        test_samples=args.test_samples,
        repeats=args.repeats,
        movable=args.movable,
        time_limit=max(0.0, args.time_limit),
        dry_run=bool(args.dry_run),
    )
    cancel = threading.Event()
    bar = _Bar(not args.no_progress, bool(args.dry_run))
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            from warpwise.analysis.schedule.sass import load_kernel

            code = load_kernel(data, kernel, args.binary)
            # GPU work runs in a worker process: a candidate that faults (sticky CUDA error) costs
            # only that worker, which is restarted; the dry run goes through the same path.
            factory: Any = (
                DryRunEvaluator if args.dry_run else partial(DriverEvaluator, harness, code.kernel, args.device)
            )
            ev: Evaluator = WorkerEvaluator(factory, call_timeout=args.call_timeout)
            try:
                box["result"] = tune(data, code.kernel, harness, ev, opts, args.binary, bar, cancel)
            finally:
                ev.close()
        except (BinaryError, EvaluatorError, TuneError, ValueError) as e:
            box["error"] = e

    th = threading.Thread(target=work, name="warpwise-tune", daemon=True)
    th.start()
    if args.time_limit > 0:
        # the search cools over its time limit by itself; this only stops one that overruns it
        timer = threading.Timer(args.time_limit + 30.0, cancel.set)
        timer.daemon = True
        timer.start()
    try:
        while th.is_alive():
            th.join(0.2)
    except KeyboardInterrupt:
        print(
            "\nwarpwise tune: cancelling; verifying the best schedule so far (Ctrl-C again to abort)", file=sys.stderr
        )
        cancel.set()
        th.join()
    bar.close()
    if "error" in box:
        print(f"warpwise tune: {box['error']}", file=sys.stderr)
        return 2
    if "result" not in box:
        return 130
    r = box["result"]
    cub, man = write_artifacts(r, args.output)
    print(summary_line(r))
    if cub is not None:
        print(f"tuned cubin: {cub}")
    else:
        print(f"tuned cubin: none written ({'dry run: nothing was measured' if r.dry_run else 'original kept'})")
    print(f"manifest:    {man}")
    failed = not r.dry_run and (r.verify_samples > 0 or bool(r.verify_error)) and not r.verified
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry point (same arguments as ``warpwise tune``)."""
    p = argparse.ArgumentParser(prog="warpwise tune", description="tune a kernel's SASS schedule on the GPU")
    add_arguments(p)
    return run_tune(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
