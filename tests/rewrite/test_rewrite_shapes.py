"""Shapes of real CDP code (issue 14 item 2): launches inside loops of the parent, recursive launches,
early returns whose condition is uniform over the block (coarsening), warp intrinsics in children."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from rewrite_helpers import ROOT
from warpwise.analysis.rewrite import apply_edits, find_launches, rewrite
from warpwise.analysis.rewrite.api import pipeline
from warpwise.analysis.rewrite.model import RewriteError
from warpwise.analysis.rewrite.parse import parse

BARRIER_CHILD = """__global__ void child(int *a, int n, const int *m) {
  __shared__ int s[128];
EXTRA  RETURN
  s[threadIdx.x] = a[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  a[blockIdx.x * blockDim.x + threadIdx.x] = s[127 - threadIdx.x];
}
__global__ void parent(int *a, int n, const int *m) {
  child<<<(n + 127) / 128, 128>>>(a, n, m);
  if (cudaGetLastError() != cudaSuccess) a[0] = -1;
}
"""

UNIFORM = {"block offset and argument": ("if (blockIdx.x * blockDim.x >= n) return;", ""),
           "const local of uniform values": ("if (first >= n) return;", "  const int first = blockIdx.x * 128;\n"),
           "min of uniform values": ("if (min(n, 4) <= (int)blockIdx.x) return;", ""),
           "grid size": ("if (gridDim.x > 64u) return;", "")}
NOT_UNIFORM = {"thread index": ("if (threadIdx.x >= n) return;", ""),
               "memory read": ("if (m[blockIdx.x] == 0) return;", ""),
               "local written with the thread index": ("if (first >= n) return;",
                                                       "  int first = blockIdx.x * 128;\n  first += threadIdx.x;\n"),
               "argument overwritten": ("if ((int)blockIdx.x >= n) return;", "  n = n - (int)threadIdx.x;\n")}


def _child(ret: str, extra: str) -> str:
    return BARRIER_CHILD.replace("EXTRA", extra).replace("RETURN", ret)


@pytest.mark.parametrize("shape", sorted(UNIFORM))
def test_block_uniform_early_return_allows_coarsening(shape: str) -> None:
    (la,) = find_launches(_child(*UNIFORM[shape]), "u.cu")
    assert "coarsen" in la.transforms, la.refusals


@pytest.mark.parametrize("shape", sorted(NOT_UNIFORM))
def test_thread_dependent_early_return_still_refuses_coarsening(shape: str) -> None:
    (la,) = find_launches(_child(*NOT_UNIFORM[shape]), "u.cu")
    assert "returns early" in la.refusals["coarsen"] and "accepted: the whole block returns together" \
        in la.refusals["coarsen"]


WARP_CHILD = """__global__ void child(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned m = __ballot_sync(0xffffffffu, i < n);
  int any = __any_sync(0xffffffffu, i < n), all = __all_sync(0xffffffffu, i < n);
  int v = __shfl_sync(0xffffffffu, i, 0) + __shfl_up_sync(0xffffffffu, i, 1) +
          __shfl_down_sync(0xffffffffu, i, 1) + __shfl_xor_sync(0xffffffffu, i, 1);
  v += (int)__activemask() + __popc(m);
  __syncwarp();
  if (i < n) a[i] = v + any + all;
}
__global__ void parent(int *a, const int *len) {
  int n = len[threadIdx.x];
  child<<<(n + 127) / 128, 128>>>(a + threadIdx.x * 4096, n);
  if (cudaGetLastError() != cudaSuccess) a[0] = -1;
}
"""


def test_warp_intrinsics_in_the_child() -> None:
    (la,) = find_launches(WARP_CHILD, "w.cu")
    assert "warp-level primitive `__ballot_sync`" in la.refusals["threshold"]  # a serial copy has no warps
    assert la.transforms == ["coarsen", "aggregate"]


def test_deprecated_warp_intrinsics_parse() -> None:
    src = WARP_CHILD.replace("__syncwarp();", "v += __shfl(i, 0) + __shfl_up(i, 1) + __any(i < n) + "
                                              "(int)__ballot(i < n);")
    (la,) = find_launches(src, "w.cu")
    assert "warp-level primitive" in la.refusals["threshold"]


LOOP = """__global__ void child(int d, int first, int len, const unsigned *tok, unsigned *hist) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < len) atomicAdd(&hist[d * 16 + tok[first + k] % 16], 1u);
}
__global__ void parent(const int *off, int n, const unsigned *tok, unsigned *hist) {
  for (int d = blockIdx.x * blockDim.x + threadIdx.x; d < n; d += gridDim.x * blockDim.x) {
    int first = off[d], len = off[d + 1] - first;
    if (len > 0) {
      child<<<(len + 127) / 128, 128>>>(d, first, len, tok, hist);
      if (cudaGetLastError() != cudaSuccess) hist[0] = ~0u;
    }
  }
}
int main() {
  parent<<<64, 128>>>(nullptr, 0, nullptr, nullptr);
  return cudaDeviceSynchronize() != cudaSuccess;
}
"""


@pytest.mark.parametrize("g", ["warp", "block", "multiblock", "grid"])
def test_launch_in_a_loop_is_aggregated_flattened(g: str) -> None:
    (la,) = find_launches(LOOP, "l.cu")
    assert la.in_loop and "aggregate" in la.transforms
    out = apply_edits(LOOP, rewrite(LOOP, "l.cu", "aggregate", la.line, granularity=g))
    assert parse(out, "l.cu").errors == []
    if g != "grid":  # several records per parent thread; more launches of a unit go out directly
        assert "#define WARPWISE_AGG_PER_THREAD 8" in out
    assert "if ((ww_agg_old >> 32) < " in out and "/* no record: launch as the original did */" in out


QUADTREE = ROOT / "examples" / "dp" / "quadtree" / "quadtree.cu"


def test_recursive_launch_threshold_and_coarsen_follow_the_recursion() -> None:
    src = QUADTREE.read_text()
    (la,) = find_launches(src, str(QUADTREE))
    assert la.child == la.parent == "qt_node"
    assert la.transforms == ["threshold", "coarsen", "aggregate"]
    thr = pipeline(src, str(QUADTREE), la.line, [("threshold", None)])
    # the serial copy recurses serially below WARPWISE_THRESHOLD and launches above it; the stack is raised first
    serial = thr.split("__device__ void ww_qt_node_serial(", 2)[2]
    assert "ww_qt_node_serial(codes, lo, hi, depth + 1, leaf, pdepth, depth_sum, ww_thr_gDim, ww_thr_bDim);" \
        in serial
    assert "qt_node<<<ww_thr_gDim, ww_thr_bDim>>>(codes, lo, hi, depth + 1, leaf, pdepth, depth_sum);" in serial
    assert "unsigned int prefix = (codes[begin] >> (shift + 2)) * 4 + ww_tx;" in serial  # builtins mapped
    assert "ww_qt_node_serial_stack(); /* warpwise threshold: stack for the recursive serial copy */" in thr
    coarse = pipeline(src, str(QUADTREE), la.line, [("coarsen", None)])
    body = coarse.split("__global__ void ww_qt_node_coarse(", 2)[2]
    assert "ww_qt_node_coarse<<<ww_cf_cgDim, 128>>>(codes, lo, hi, depth + 1, leaf, pdepth, depth_sum, " \
           "ww_cf_gDim);" in body
    assert "if (ww_bx == 0 && threadIdx.x < 4" in body


def test_recursive_launch_is_aggregated_per_block_with_fresh_records() -> None:
    src = QUADTREE.read_text()
    (la,) = find_launches(src, str(QUADTREE))
    out = pipeline(src, str(QUADTREE), la.line, [("aggregate", "block")])
    assert parse(out, "q.cu").errors == []
    # records come from a bump counter (never reused within a host launch), reset before each host launch
    assert "const unsigned int ww_agg_ri = atomicAdd(&ww_qt_node_ragg_top[0], 1u);" in out
    assert "ww_qt_node_ragg_reset(0); /* warpwise aggregate: empty the record pool */ qt_node<<<(N + 127) / 128" \
        in out
    # the aggregated copy records and launches its own children the same way: every level aggregates
    copy = out.split("__global__ void ww_qt_node_ragg(const unsigned int *ww_idx", 2)[2]
    assert copy.count("ww_qt_node_ragg<<<ww_agg_blocks,") == 1
    assert "const ww_qt_node_ragg_rec &ww_r = ww_qt_node_ragg_recs[ww_idx[ww_lo]];" in copy
    assert "if (ww_agg_blockIdx.x == 0 && threadIdx.x < 4" in copy  # builtins mapped to the original launch's
    for g in ("warp", "multiblock", "grid"):
        with pytest.raises(RewriteError, match=f"recursive launch .*: {g} granularity is not implemented"):
            pipeline(src, str(QUADTREE), la.line, [("aggregate", g)])


RECURSIVE = """__global__ void walk(int *a, int n, int d) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  a[i] += d;
  if (i == 0 && d < 4) walk<<<(n + 63) / 64, BLOCK>>>(a, n / 2, d + 1);
}
int main() {
  int *a = 0;
  cudaMalloc((void **)&a, 1024 * sizeof(int));
  HOST
  cudaDeviceSynchronize();
  return 0;
}
"""


@pytest.mark.parametrize(("block", "host", "why"), [
    ("blockDim.x", "walk<<<16, 64>>>(a, 1024, 0);", "the child block `blockDim.x` is not a constant"),
    ("64", "cudaStream_t s; cudaStreamCreate(&s); walk<<<16, 64, 0, s>>>(a, 1024, 0);",
     "uses stream `s`: concurrent host launches would share the record pool")])
def test_recursive_aggregation_refusals(block: str, host: str, why: str) -> None:
    src = RECURSIVE.replace("BLOCK", block).replace("HOST", host)
    with pytest.raises(RewriteError, match=why):
        pipeline(src, "w.cu", 5, [("aggregate", "block")])


def test_threshold_of_a_launch_in_a_loop_reconverges_the_warp_between_launch_and_serial_copy() -> None:
    """A launch inside a loop of the parent: the launch and the serial copy are two ifs with
    __syncwarp(__activemask()) between them, not if/else (the if/else form livelocked a warp in the
    H200's device runtime: bench/dp/hang_diag.sh, docs/benchmarks.md "The histo hang")."""
    out = apply_edits(LOOP, rewrite(LOOP, "l.cu", "threshold", 9, threshold=256, launch_in_loop_ok=True))
    body = out[out.index("__global__ void parent"):out.index("int main")]
    launch = body.index("child<<<ww_thr_gDim, ww_thr_bDim>>>(d, first, len, tok, hist);")
    sync = body.index("__syncwarp(__activemask());")
    serial = body.index("if (!(ww_threads >= WARPWISE_THRESHOLD)) {")
    assert launch < sync < serial
    assert body.index("ww_child_serial(d, first, len, tok, hist, ww_thr_gDim, ww_thr_bDim);") > serial
    assert "else" not in body[launch:serial]
    assert parse(out, "l.cu").errors == []


def test_threshold_alone_of_a_launch_in_a_loop_is_refused() -> None:
    """Even the two-if form hung on 2 of 90 points of the H200 sweep (docs/benchmarks.md, DP Run 6): a threshold
    without aggregation is refused for a launch in a loop, with the reason; with aggregation after it (the
    launches then leave the loop) it applies, and the editor's single threshold action is disabled."""
    with pytest.raises(RewriteError, match=r"inside a loop of the parent.*livelocked.*aggregate together"):
        rewrite(LOOP, "l.cu", "threshold", 9)
    with pytest.raises(RewriteError, match="cannot apply threshold alone"):
        pipeline(LOOP, "l.cu", 9, [("threshold", None), ("coarsen", None)])
    out = pipeline(LOOP, "l.cu", 9, [("threshold", None), ("aggregate", "block")])
    assert "ww_child_serial(" in out and parse(out, "l.cu").errors == []
    from warpwise.analysis.rewrite.plan import plan_launch

    plan = plan_launch(LOOP, "l.cu", 9, None)
    assert plan.choice.granularity is not None
    assert all(c.granularity is not None for c in plan.alternatives)


def test_shapes_compile(nvcc: str, tmp_path: Path) -> None:
    """One nvcc call: coarsened uniform-return child, aggregated warp-intrinsic child, aggregated loop."""
    src = _child(*UNIFORM["block offset and argument"])
    (la,) = find_launches(src, "u.cu")
    files = {"uniform.cu": apply_edits(src, rewrite(src, "u.cu", "coarsen", la.line)),
             "warp.cu": pipeline(WARP_CHILD, "w.cu", 13, [("coarsen", None), ("aggregate", "block")]),
             "loop.cu": apply_edits(LOOP, rewrite(LOOP, "l.cu", "aggregate", 9, granularity="multiblock")),
             "loop_threshold.cu": apply_edits(LOOP, rewrite(LOOP, "l.cu", "threshold", 9, launch_in_loop_ok=True)),
             # a recursive launch with an early return in the child, aggregated per block
             "recursive.cu": pipeline(RECURSIVE.replace("BLOCK", "64").replace("HOST", "walk<<<16, 64>>>(a, 1024, 0);"),
                                      "w.cu", 5, [("aggregate", "block")]),
             "quadtree.cu": pipeline(QUADTREE.read_text(), str(QUADTREE), 53, [("aggregate", "block")])}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    r = subprocess.run([nvcc, "-rdc=true", "-arch=sm_90", "-c", *[str(tmp_path / n) for n in files],
                        "--output-directory", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "warning" not in r.stderr, r.stderr[-2000:]
