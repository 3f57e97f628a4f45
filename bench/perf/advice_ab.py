"""Advice stage of two warpwise trees side by side on one prepared state (issue 15, docs/benchmarks.md "Fifth pass").

The blame-scaling worker (bench/blame_scale.py) rebuilds the program and the blame graphs in every process
(~30 s at 200k instructions on this machine) before the ~6 s advice stage it times. Here they are built once
and pickled (``--prepare``); each measurement then loads that state once and forks one child per tree and
repetition, alternating the order: the child points the ``warpwise.analysis`` package at its tree's
``analysis`` folder before importing the advice package (the modules already loaded — binary, program,
blame, profile model — must be the same code in both trees), times ``evaluate`` of every kernel in CPU
seconds and hashes the reports as the blame-scaling bench does (run with PYTHONHASHSEED=0).

    .venv/bin/python bench/perf/advice_ab.py --prepare CUBIN STATE.pkl
    PYTHONHASHSEED=0 taskset -c 1 .venv/bin/python bench/perf/advice_ab.py STATE.pkl \
        --base /tmp/advbase/warpwise/analysis [--this OTHER/analysis] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import pickle
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def prepare(cubin: str, out: str) -> None:
    """Load ``cubin``, build its program and the blame graphs of every kernel on the blame-scaling bench's
    synthetic profile, and pickle (arch, program, profiles, graphs) to ``out``."""
    sys.path.insert(0, str(ROOT / "bench"))
    import blame_scale
    from warpwise.analysis.binary.load import load_cubin
    from warpwise.analysis.blame.attribute import attribute
    from warpwise.analysis.program.build import build_program

    c = load_cubin(cubin)
    prog = build_program(c)
    profiles = [blame_scale.synthetic_profile(f, c.arch) for f in c.functions.values() if f.is_kernel]
    graphs = [attribute(prog, p) for p in profiles]  # type: ignore[arg-type]
    with open(out, "wb") as fh:
        pickle.dump((c.arch, prog, profiles, graphs), fh, protocol=pickle.HIGHEST_PROTOCOL)


def _child(state: tuple[Any, ...], analysis_dir: str, w: int) -> None:
    import warpwise.analysis

    warpwise.analysis.__path__[:] = [analysis_dir]
    from warpwise.analysis.advice import context, evaluate

    if not str(context.__file__).startswith(analysis_dir):
        raise SystemExit(f"advice imported from {context.__file__}, not {analysis_dir}")
    arch, prog, profiles, graphs = state
    c0 = time.process_time()
    reports = [evaluate(p, prog, g, arch) for p, g in zip(profiles, graphs, strict=True)]
    t = time.process_time() - c0
    d = hashlib.sha256()
    for r in reports:
        d.update(repr(r).encode())
        d.update(repr(r.candidates).encode())
    os.write(w, f"{t} {d.hexdigest()[:16]}".encode())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("state", help="pickled state (--prepare writes it)")
    ap.add_argument("--prepare", metavar="CUBIN", help="build the state of CUBIN into STATE and exit")
    ap.add_argument("--base", help="the other tree's analysis folder (e.g. git archive REV analysis server)")
    ap.add_argument("--this", default=str(ROOT / "analysis"), help="the tree measured against --base (default: "
                    "this checkout's analysis folder)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    sys.setrecursionlimit(100000)
    if args.prepare:
        prepare(args.prepare, args.state)
        return 0
    if not args.base:
        ap.error("--base is required")
    gc.disable()
    with open(args.state, "rb") as fh:
        state = pickle.load(fh)
    gc.collect()
    gc.freeze()  # the loaded state is long-lived, as in a real run where it has aged into the oldest generation
    gc.enable()
    trees = {"base": str(Path(args.base).resolve()), "this": str(Path(args.this).resolve())}
    times: dict[str, list[float]] = {k: [] for k in trees}
    hashes: dict[str, set[str]] = {k: set() for k in trees}
    for i in range(args.repeat):
        order = list(trees.items()) if i % 2 == 0 else list(reversed(trees.items()))
        for name, path in order:
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                try:
                    _child(state, path, w)
                finally:
                    os._exit(0)
            os.close(w)
            got = os.read(r, 200).decode().split()
            os.close(r)
            os.waitpid(pid, 0)
            if len(got) != 2:
                raise SystemExit(f"{name}: the child gave no result")
            times[name].append(float(got[0]))
            hashes[name].add(got[1])
            print(f"{name} {float(got[0]):.2f}s {got[1]}", flush=True)
    for k in trees:
        print(f"{k}: min {min(times[k]):.2f} median {statistics.median(times[k]):.2f} "
              f"advice {' '.join(sorted(hashes[k]))}")
    print(f"this / base: min {min(times['this']) / min(times['base']):.3f}, "
          f"median {statistics.median(times['this']) / statistics.median(times['base']):.3f}; advice "
          f"{'identical' if len(hashes['this'] | hashes['base']) == 1 else 'DIFFERS'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
