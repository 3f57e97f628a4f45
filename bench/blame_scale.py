"""Blame scaling benchmark: nvdisasm alone vs load + CFG + loops + blame on large generated kernels.

Generates straight-line CUDA kernels with a branch every 16 statements (global loads, FMAs, and a small
loop with an early exit every 16 statements),
compiles each with ``nvcc -cubin -arch=sm_90 -O3 -lineinfo`` into a temporary folder (no binaries are
kept), then times, as the median of ``--repeat`` runs:

- nvdisasm: the one nvdisasm run the loader makes (same arguments as warpwise.analysis.binary.sass);
- pipeline: ``load_cubin`` (ELF + that nvdisasm run) + ``build_program`` (blocks, CFG, dominators,
  post-dominators, loops) + ``attribute`` with a synthetic profile that puts samples of four stall
  reasons on every instruction.

Prints one Markdown row per size: instructions, blocks, loops, blame edges, wall times per stage, and the
pipeline / nvdisasm ratio in wall time and in CPU time (this process + children, via getrusage: robust
when other work shares the machine). Goal (issue 3): pipeline ≤ 3× nvdisasm, near-linear scaling.

    .venv/bin/python bench/blame_scale.py [--sizes 5000 20000 50000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from warpwise.analysis.binary.load import load_cubin
from warpwise.analysis.binary.sass import NVDISASM_ARGS
from warpwise.analysis.binary.tools import find_tool
from warpwise.analysis.blame.attribute import attribute
from warpwise.analysis.profile.model import KernelProfile, LaunchConfig, PCSample
from warpwise.analysis.program.build import build_program

INSTR_PER_STATEMENT = 5.6  # measured: 1031 statements -> 5776 SASS instructions (nvcc 13.0, sm_90)


def kernel_source(statements: int) -> str:
    """A kernel of ``statements`` FMA-with-load statements; every 16th is a small loop with a runtime trip
    count and an early exit (real branches, blocks and loops)."""
    lines = [
        'extern "C" __global__ void big(const float* __restrict__ in, float* __restrict__ out, int n, int s) {',
        "  int t = blockIdx.x * blockDim.x + threadIdx.x;",
        "  float a0=in[t], a1=in[t+1], a2=in[t+2], a3=in[t+3], a4=0.f, a5=1.f, a6=2.f, a7=3.f;",
    ]
    for i in range(statements):
        a = [f"a{(i + k) % 8}" for k in range(5)]
        if i % 16 == 15:
            lines.append("#pragma unroll 1")
            lines.append(f"  for (int q = 0; q < (s & {3 + i % 5}); ++q) {{"
                         f" {a[4]} = fmaf({a[4]}, in[(t + q + {i}) & (n-1)], {a[2]});"
                         f" if ({a[4]} > {i % 7}.5f) break; }}")
        else:
            lines.append(f"  {a[0]} = fmaf({a[1]}, in[(t + {i}*s) & (n-1)], {a[2]});")
    lines.append("  out[t] = a0+a1+a2+a3+a4+a5+a6+a7;\n}\n")
    return "\n".join(lines)


def synthetic_profile(cubin_path: str) -> KernelProfile:
    """Samples on every instruction of kernel ``big``: long_scoreboard, wait, short_scoreboard, not_selected."""
    c = load_cubin(cubin_path)
    fn = c.functions["big"]
    pcs = {}
    for k, ins in enumerate(fn.instructions):
        st = {"long_scoreboard": 5 + k % 7, "wait": 1 + k % 3, "short_scoreboard": k % 2, "not_selected": 1}
        ni = {r: v // 2 for r, v in st.items()}
        pcs[(fn.name, ins.offset)] = PCSample(fn.name, ins.offset, ins.offset, ins.text, samples=sum(st.values()) + 2,
                                              not_issued=sum(ni.values()), stalls=st, stalls_not_issued=ni,
                                              inst_executed=1000, thread_inst_executed=32000)
    return KernelProfile(name="big", mangled="big", arch=c.arch, launch=LaunchConfig(), pcs=pcs)


def cpu_now() -> float:
    """CPU seconds of this process plus its finished children (nvdisasm runs)."""
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + ch.ru_utime + ch.ru_stime


def median_time(fn: object, repeat: int) -> tuple[float, float]:
    """Median (wall, CPU) seconds of calling ``fn`` ``repeat`` times."""
    ws, cs = [], []
    for _ in range(repeat):
        c0, t0 = cpu_now(), time.perf_counter()
        fn()  # type: ignore[operator]
        ws.append(time.perf_counter() - t0)
        cs.append(cpu_now() - c0)
    return statistics.median(ws), statistics.median(cs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000, 50000], help="target SASS instructions")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "nvcc")
    args = ap.parse_args(argv)
    nvdisasm = find_tool("nvdisasm")
    rows = []
    with tempfile.TemporaryDirectory(prefix="blame_scale_") as tmp:
        for size in args.sizes:
            cu = Path(tmp, f"k{size}.cu")
            cubin = Path(tmp, f"k{size}.cubin")
            cu.write_text(kernel_source(max(16, round(size / INSTR_PER_STATEMENT))))
            t0 = time.perf_counter()
            subprocess.run([args.nvcc, "-cubin", "-arch=sm_90", "-O3", "-lineinfo", "-o", str(cubin), str(cu)],
                           check=True)
            t_nvcc = time.perf_counter() - t0
            prof = synthetic_profile(str(cubin))
            t_dis, c_dis = median_time(lambda c=cubin: subprocess.run([nvdisasm, *NVDISASM_ARGS, str(c)],
                                                                      check=True, capture_output=True),
                                       args.repeat)
            parts: dict[str, list[float]] = {"load": [], "program": [], "blame": [], "cpu": []}
            stats = {}
            for _ in range(args.repeat):
                c0, t0 = cpu_now(), time.perf_counter()
                c = load_cubin(cubin)
                t1 = time.perf_counter()
                prog = build_program(c)
                t2 = time.perf_counter()
                g = attribute(prog, prof)
                t3 = time.perf_counter()
                parts["cpu"].append(cpu_now() - c0)
                parts["load"].append(t1 - t0)
                parts["program"].append(t2 - t1)
                parts["blame"].append(t3 - t2)
                pf = prog.functions["big"]
                stats = {"ins": len(pf.instructions), "blocks": len(pf.blocks), "edges": len(g.edges),
                         "loops": len(pf.loops)}
            med = {k: statistics.median(v) for k, v in parts.items()}
            total = med["load"] + med["program"] + med["blame"]
            rows.append((stats, t_nvcc, (t_dis, c_dis), med, total))
            print(f"# size {size}: nvcc {t_nvcc:.1f}s", file=sys.stderr, flush=True)
    print("| SASS instructions | blocks | loops | blame edges | nvdisasm wall (s) | load (s) | CFG+loops (s) "
          "| blame (s) | pipeline wall (s) | wall ratio | nvdisasm CPU (s) | pipeline CPU (s) | CPU ratio "
          "| µs CPU / instruction |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for st, _t_nvcc, (t_dis, c_dis), med, total in rows:
        print(f"| {st['ins']} | {st['blocks']} | {st['loops']} | {st['edges']} | {t_dis:.2f} | {med['load']:.2f} | "
              f"{med['program']:.2f} | {med['blame']:.2f} | {total:.2f} | {total / t_dis:.2f}× | {c_dis:.2f} | "
              f"{med['cpu']:.2f} | {med['cpu'] / c_dis:.2f}× | {1e6 * med['cpu'] / st['ins']:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
