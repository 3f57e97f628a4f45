"""Shared constants and helpers of the binary-reader tests (sources compiled by the ``built`` fixture)."""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
NVCC = shutil.which("nvcc") or ("/usr/local/bin/nvcc" if Path("/usr/local/bin/nvcc").exists() else None)

# A kernel with a two-level forced-inline chain (inner inlined into outer inlined into k); the
# INNER/OUTER/CALL markers let tests find the lines without hard-coding them.
INLINE_CU = """\
__device__ __forceinline__ float inner(float x) {
  return x * x + 1.0f;  // INNER
}
__device__ __forceinline__ float outer(float x) {
  return inner(x) * 2.0f;  // OUTER
}
__global__ void k(float* a, const float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = outer(b[i]);  // CALL
}
"""

# Two kernels sharing a __noinline__ device function (and fdiv's slow path), plus a host main.
TWO_CU = """\
__device__ __noinline__ float f(float a, float b) { return a / b; }
__global__ void k1(float* a, float b) { a[threadIdx.x] = f(a[threadIdx.x], b); }
__global__ void k2(float* a, float b) { a[threadIdx.x] = f(b, a[threadIdx.x]) + a[threadIdx.x] / b; }
int main() { return 0; }
"""


def line_of(source: str, marker: str) -> int:
    """1-based line of the first line of ``source`` containing ``marker``."""
    for n, text in enumerate(source.splitlines(), 1):
        if marker in text:
            return n
    raise AssertionError(f"marker {marker!r} not in source")
