"""Coarsening a child with an early return and block barriers (CGO'22 §IV): the return becomes a jump
to the end-of-block barrier, so it is only allowed when no barrier can follow the return."""

from __future__ import annotations

import pytest
from warpwise.analysis.rewrite import RewriteError, apply_edits, find_launches, rewrite

PARENT = """
__global__ void parent(float *a, int *n) {
  int m = n[threadIdx.x];
  child<<<(m + 63) / 64, 64>>>(a, m);
}
"""
LAUNCH_LINE = 12  # every child below is 9 lines

RETURN_BETWEEN_BARRIERS = """__global__ void child(float *a, int n) {
  __shared__ float s[64];
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = a[t];
  __syncthreads();
  if (t >= n) return;
  a[t] = s[63 - threadIdx.x];
  __syncthreads();
}""" + PARENT

RETURN_IN_LOOP_WITH_BARRIER = """__global__ void child(float *a, int n) {
  __shared__ float s[64];
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 4; ++k) {
    s[threadIdx.x] = a[t + k];
    __syncthreads();
    if (s[0] > n) return;
  }
}""" + PARENT

RETURN_AFTER_LAST_BARRIER = """__global__ void child(float *a, int n) {
  __shared__ float s[64];
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = a[t];
  __syncthreads();
  if (t >= n) return;
  a[t] = s[63 - threadIdx.x];
  a[t] += 1.0f;
}""" + PARENT


@pytest.mark.parametrize(("src", "ret_line", "bar_line"), [(RETURN_BETWEEN_BARRIERS, 6, 8),
                                                           (RETURN_IN_LOOP_WITH_BARRIER, 7, 6)])
def test_coarsen_refuses_return_that_a_barrier_can_follow(src: str, ret_line: int, bar_line: int) -> None:
    (la,) = find_launches(src, "b.cu")
    assert la.line == LAUNCH_LINE
    reason = la.refusals["coarsen"]
    assert f"returns early (line {ret_line})" in reason and f"(line {bar_line})" in reason
    assert la.transforms == ["aggregate"]  # threshold is refused for __syncthreads already
    with pytest.raises(RewriteError, match=rf"b\.cu:{LAUNCH_LINE}: cannot apply coarsen: .*returns early"):
        rewrite(src, "b.cu", "coarsen", LAUNCH_LINE)


def test_coarsen_keeps_a_return_after_the_last_barrier() -> None:
    (la,) = find_launches(RETURN_AFTER_LAST_BARRIER, "b.cu")
    assert "coarsen" in la.transforms
    out = apply_edits(RETURN_AFTER_LAST_BARRIER, rewrite(RETURN_AFTER_LAST_BARRIER, "b.cu", "coarsen", LAUNCH_LINE))
    coarse = out[out.index("__global__ void ww_child_coarse("):]
    # the early thread jumps to the one barrier that all threads reach next
    assert "if (t >= n) goto ww_next_block;" in coarse
    tail = coarse[coarse.index("ww_next_block:;"):]
    assert tail.index("__syncthreads();") < tail.index("}")
    assert coarse.count("__syncthreads()") == 2
