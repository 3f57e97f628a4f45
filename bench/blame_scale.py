"""Blame scaling benchmark: nvdisasm alone vs warpwise's analysis and advice, by kernel shape and size.

Shapes (bench/perf/shapes.py, all written here and built with the local nvcc/ptxas, ``-arch=sm_90 -O3
-lineinfo``): the straight-line ``generator``, PTX-built ``ptx_loops`` (one register redefined in many
skippable loops: reaching definitions' worst case), a CUTLASS-style templated tiled ``gemm`` (unrolled FFMA
main loops, several kernels per cubin) and CUB-style block ``scan``/reduce templates (hundreds of small
kernels). Each (shape, size) is measured in ``--repeat`` fresh processes (``--worker``); each process times,
in CPU seconds (its own ``process_time`` plus finished children, so other load on the machine does not
count):

- nvdisasm: one run with the loader's arguments (warpwise.analysis.binary.sass.NVDISASM_ARGS);
- analysis: ``load_cubin`` minus its own nvdisasm run (ELF + SASS parsing + line table) + ``build_program``
  (blocks, CFG, dominators, loops) + ``attribute`` (GPA blame) of every kernel, with a synthetic profile that
  puts samples of four stall reasons on every instruction;
- advice: ``evaluate`` (all optimizers) of every kernel on that blame (``advice_gc`` in the worker's JSON: the
  part of it spent in Python's cyclic collector, which also walks objects the earlier stages left). Each process
  hashes the advice reports (PYTHONHASHSEED=0); the run says on stderr whether every process (this tree and
  ``--baseline``) gave the same advice.

Prints one Markdown row per (shape, size) with min and median over the processes: analysis / nvdisasm and
advice / nvdisasm side by side, and analysis µs CPU per instruction. Goals (issue 15): analysis ≤ 2×,
advice ≤ 1× nvdisasm at every size and shape; µs per instruction flat within ±25% from 20k to 200k.

    .venv/bin/python bench/blame_scale.py [--shapes generator ptx_loops gemm scan] \
        [--sizes 5000 20000 50000 200000] [--repeat 3] [--repeat-large 1] [--baseline DIR]
    PYTHONHASHSEED=0 .venv/bin/python bench/blame_scale.py --digest --shapes gemm --sizes 20000   # identity
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "perf"))

import shapes


def cpu_self() -> float:
    """CPU seconds of this process."""
    return time.process_time()


def cpu_children() -> float:
    """CPU seconds of this process's finished children (nvdisasm runs)."""
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ch.ru_utime + ch.ru_stime


def synthetic_profile(fn: object, arch: str) -> object:
    """Samples on every instruction of ``fn``: long_scoreboard, wait, short_scoreboard, not_selected."""
    from warpwise.analysis.profile.model import KernelProfile, LaunchConfig, PCSample

    pcs = {}
    for k, ins in enumerate(fn.instructions):  # type: ignore[attr-defined]
        st = {"long_scoreboard": 5 + k % 7, "wait": 1 + k % 3, "short_scoreboard": k % 2, "not_selected": 1}
        ni = {r: v // 2 for r, v in st.items()}
        name = fn.name  # type: ignore[attr-defined]
        pcs[(name, ins.offset)] = PCSample(name, ins.offset, ins.offset, ins.text, samples=sum(st.values()) + 2,
                                           not_issued=sum(ni.values()), stalls=st, stalls_not_issued=ni,
                                           inst_executed=1000, thread_inst_executed=32000)
    return KernelProfile(name=fn.name, mangled=fn.name, arch=arch,  # type: ignore[attr-defined]
                         launch=LaunchConfig(grid=(1024, 1, 1), block=(256, 1, 1)), pcs=pcs)


def worker(cubin: str, profile_advice: str | None = None) -> dict[str, float | str]:
    """See :func:`_worker`; the advice stage runs inside ``gcpause.heap_frozen`` as the pipeline runs it, when this
    tree has it (a ``--baseline`` tree may not), and ``total`` is the whole process's CPU after a final full
    collection (``final_gc``: so cost the freeze only defers is counted)."""
    try:
        from warpwise.analysis.gcpause import heap_frozen  # noqa: F401
        frozen = True
    except ImportError:
        frozen = False
    return _worker(cubin, profile_advice, frozen)


def _worker(cubin: str, profile_advice: str | None, frozen: bool) -> dict[str, float | str]:
    """Time one fresh process's nvdisasm run, analysis and advice on ``cubin`` (CPU seconds).

    ``advice_sha256``: hash of every kernel's advice report (``repr`` of the AdviceReport and its candidates;
    run with PYTHONHASHSEED=0 to compare two trees' outputs). ``profile_advice``: write cProfile stats of the
    advice stage there (the timings then include the profiler's overhead)."""
    from warpwise.analysis.advice import evaluate
    from warpwise.analysis.binary.load import load_cubin
    from warpwise.analysis.binary.sass import NVDISASM_ARGS
    from warpwise.analysis.binary.tools import find_tool
    from warpwise.analysis.blame.attribute import attribute
    from warpwise.analysis.program.build import build_program

    nvdisasm = find_tool("nvdisasm")
    k0 = cpu_children()
    subprocess.run([nvdisasm, *NVDISASM_ARGS, cubin], check=True, capture_output=True, timeout=600)
    t_dis = cpu_children() - k0
    c0, k0 = cpu_self(), cpu_children()
    c = load_cubin(cubin)
    t_load = cpu_self() - c0
    t_load_dis = cpu_children() - k0
    kernels = [f for f in c.functions.values() if f.is_kernel]
    profiles = [synthetic_profile(f, c.arch) for f in kernels]
    c0 = cpu_self()
    prog = build_program(c)
    t_prog = cpu_self() - c0
    c0 = cpu_self()
    graphs = [attribute(prog, p) for p in profiles]  # type: ignore[arg-type]
    t_blame = cpu_self() - c0
    prof = cProfile.Profile() if profile_advice else None
    gc_times: list[float] = []
    gc.callbacks.append(functools.partial(_gc_timer, gc_times))
    c0 = cpu_self()
    if prof is not None:
        prof.enable()
    if frozen:  # as the pipeline's analysis does (analysis/pipeline.py _analyze: heap_frozen, freeze_built)
        from warpwise.analysis.gcpause import heap_frozen
        with heap_frozen():
            reports = [evaluate(p, prog, g, c.arch)  # type: ignore[arg-type]
                       for p, g in zip(profiles, graphs, strict=True)]
    else:
        reports = [evaluate(p, prog, g, c.arch) for p, g in zip(profiles, graphs, strict=True)]  # type: ignore[arg-type]
    if prof is not None:
        prof.disable()
    t_adv = cpu_self() - c0
    gc.callbacks.clear()
    c1 = cpu_self()
    gc.collect()
    t_final_gc = cpu_self() - c1
    if prof is not None and profile_advice:
        prof.dump_stats(profile_advice)
    digest = hashlib.sha256()
    for r in reports:
        digest.update(repr(r).encode())
        digest.update(repr(r.candidates).encode())
    n = sum(len(f.instructions) for f in c.functions.values())
    return {"nvdisasm": t_dis, "load": t_load, "load_nvdisasm": t_load_dis, "program": t_prog, "blame": t_blame,
            "advice": t_adv, "advice_gc": sum(gc_times[1::2]) - sum(gc_times[0::2]), "final_gc": t_final_gc,
            "total": cpu_self() + cpu_children(), "frozen": frozen, "instructions": n,
            "kernels": len(kernels),
            "blocks": sum(len(f.blocks) for f in prog.functions.values()),
            "edges": sum(len(g.edges) for g in graphs), "advice_sha256": digest.hexdigest()}


def digest(cubin: str) -> tuple[str, str]:
    """(sha256 prefix of every kernel's blame graph — edges in order, coverage, stats —, of its ``evaluate``
    report) on the synthetic profile: a speed-only change must leave both unchanged (run with
    PYTHONHASHSEED=0 so set orders inside reports repeat)."""
    import hashlib

    from warpwise.analysis.advice import evaluate
    from warpwise.analysis.binary.load import load_cubin
    from warpwise.analysis.blame.attribute import attribute
    from warpwise.analysis.program.build import build_program

    c = load_cubin(cubin)
    prog = build_program(c)
    hb, ha = hashlib.sha256(), hashlib.sha256()
    for f in c.functions.values():
        if not f.is_kernel:
            continue
        p = synthetic_profile(f, c.arch)
        g = attribute(prog, p)  # type: ignore[arg-type]
        hb.update(repr((g.kernel, g.coverage_before, g.coverage_after, sorted(g.stats.items()))).encode())
        for e in g.edges:
            hb.update(repr(e).encode())
        ha.update(repr(evaluate(p, prog, g, c.arch)).encode())  # type: ignore[arg-type]
    return hb.hexdigest()[:16], ha.hexdigest()[:16]



def _gc_timer(out: list[float], phase: str, info: dict[str, int]) -> None:
    """gc callback: CPU time stamps at each collection's start and stop (pairs in ``out``)."""
    out.append(cpu_self())


Runs = list[dict[str, Any]]


def measure(cubin: Path, repeat: int, baseline: str | None = None) -> tuple[Runs, Runs]:
    """``repeat`` fresh worker processes on ``cubin``: (this tree's runs, baseline's runs). With ``baseline``
    (a folder holding ``warpwise/analysis``, e.g. ``git archive`` of an older commit), each round runs one
    baseline worker (PYTHONPATH=baseline) and one of this tree back to back, so load hits both alike."""
    runs: Runs = []
    base: Runs = []
    for _ in range(repeat):
        for target, pp in ((base, baseline), (runs, None)):
            if target is base and baseline is None:
                continue
            env = dict(os.environ, PYTHONHASHSEED="0")  # advice_sha256 comparable between trees
            if pp is not None:
                env["PYTHONPATH"] = pp + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
            out = subprocess.run([sys.executable, __file__, "--worker", str(cubin)], check=True,
                                 capture_output=True, text=True, timeout=1800, env=env)
            target.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return runs, base


def row(shape: str, runs: Runs) -> str:
    """One Markdown row: min / median of the per-process ratios."""
    def stat(f: object) -> str:
        v = [f(r) for r in runs]  # type: ignore[operator]
        return f"{min(v):.2f} / {statistics.median(v):.2f}"

    def analysis(r: dict[str, float]) -> float:
        return r["load"] + r["program"] + r["blame"]

    r0 = runs[0]
    us = [1e6 * analysis(r) / r["instructions"] for r in runs]
    return (f"| {shape} | {int(r0['instructions'])} | {int(r0['kernels'])} | {int(r0['blocks'])} | {len(runs)} "
            f"| {stat(lambda r: r['nvdisasm'])} | {stat(analysis)} | {stat(lambda r: r['advice'])} "
            f"| {stat(lambda r: analysis(r) / r['nvdisasm'])}× | {stat(lambda r: r['advice'] / r['nvdisasm'])}× "
            f"| {min(us):.0f} / {statistics.median(us):.0f} |")


HEADER = ("| shape | SASS instructions | kernels | blocks | processes | nvdisasm CPU (s) | analysis CPU (s) "
          "| advice CPU (s) | analysis / nvdisasm | advice / nvdisasm | analysis µs CPU / instruction |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", nargs="+", default=list(shapes.SHAPES), choices=shapes.SHAPES)
    ap.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000, 50000, 200000],
                    help="target SASS instructions")
    ap.add_argument("--repeat", type=int, default=3, help="fresh processes per size below 100k instructions")
    ap.add_argument("--repeat-large", type=int, default=1, help="fresh processes per size from 100k instructions")
    ap.add_argument("--nvcc", default=None)
    ap.add_argument("--baseline", metavar="DIR", default=None,
                    help="also time the warpwise under DIR (DIR/warpwise/analysis, e.g. `git archive REV analysis "
                         "server` unpacked into DIR/warpwise), alternating with this tree: rows 'shape (before)'")
    ap.add_argument("--digest", action="store_true",
                    help="print hashes of the blame graphs and advice reports instead of timing (identity check)")
    ap.add_argument("--worker", metavar="CUBIN", help=argparse.SUPPRESS)
    ap.add_argument("--profile-advice", metavar="FILE", default=None,
                    help="with --worker: write cProfile stats of the advice stage to FILE")
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.profile_advice)))
        return 0
    if args.digest:
        for shape in args.shapes:
            for size in args.sizes:
                cubin, n = shapes.build(shape, size, args.nvcc)
                print(shape, size, n, *digest(str(cubin)), flush=True)
        return 0
    print(HEADER, flush=True)
    for shape in args.shapes:
        for size in args.sizes:
            t0 = time.perf_counter()
            cubin, n = shapes.build(shape, size, args.nvcc)
            print(f"# {shape} {size}: {n} instructions, build {time.perf_counter() - t0:.1f}s", file=sys.stderr,
                  flush=True)
            runs, base = measure(cubin, args.repeat if size < 100_000 else args.repeat_large, args.baseline)
            if base:
                print(row(f"{shape} (before)", base), flush=True)
            print(row(shape, runs), flush=True)
            hashes = sorted({r["advice_sha256"] for r in runs + base})
            same = "identical" if len(hashes) == 1 else "DIFFER"
            print(f"# {shape} {size}: advice outputs {same} over {len(runs + base)} processes: {' '.join(hashes)}",
                  file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
