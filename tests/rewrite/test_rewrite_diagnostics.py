"""launch_diagnostics: unchecked device-side launches and the pending-launch limit."""

from __future__ import annotations

import pytest
from rewrite_helpers import EXAMPLES, example_path
from warpwise.analysis.rewrite import launch_diagnostics
from warpwise.analysis.rewrite.diagnostics import CODE_PENDING, CODE_UNCHECKED

CHILD = "__global__ void child(int *a, int n) { if (threadIdx.x < n) a[threadIdx.x] = n; }\n"


def test_unchecked_per_thread_launch_gets_both_findings() -> None:
    src = CHILD + ("__global__ void parent(int *a, const int *len) {\n"
                   "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                   "  /* größe */ child<<<1, 32>>>(a + 32 * i, len[i]);\n"
                   "}\n")
    ds = launch_diagnostics(src, "d.cu")
    assert [d.code for d in ds] == [CODE_UNCHECKED, CODE_PENDING]
    line = src.splitlines()[3].encode()
    for d in ds:
        assert d.line == 4
        assert line[d.column - 1:d.end_column - 1] == b"child<<<1, 32>>>(a + 32 * i, len[i])"
    assert "cudaGetLastError" in ds[0].message
    assert "2048" in ds[1].message and "cudaLimitDevRuntimePendingLaunchCount" in ds[1].message


def test_checked_launch_by_one_thread_is_clean() -> None:
    src = CHILD + ("__global__ void parent(int *a, int n) {\n"
                   "  if (threadIdx.x == 0) {\n"
                   "    child<<<1, 32>>>(a, n);\n"
                   "    cudaError_t e = cudaGetLastError();\n"
                   "    if (e != cudaSuccess) a[0] = -1;\n"
                   "  }\n"
                   "}\n")
    assert launch_diagnostics(src, "c.cu") == []


def test_check_before_the_launch_does_not_count_and_loops_are_named() -> None:
    src = CHILD + ("__global__ void parent(int *a, int n) {\n"
                   "  cudaGetLastError();\n"
                   "  for (int k = 0; k < n; ++k) child<<<1, 32>>>(a, k);\n"
                   "}\n")
    ds = launch_diagnostics(src, "l.cu")
    assert [d.code for d in ds] == [CODE_UNCHECKED, CODE_PENDING]
    assert "inside a loop" in ds[1].message


def test_raised_limit_silences_the_pending_finding() -> None:
    src = CHILD + ("__global__ void parent(int *a, int n) {\n  child<<<1, 32>>>(a, n);\n"
                   "  if (cudaPeekAtLastError() != cudaSuccess) a[0] = -1;\n}\n"
                   "int main() { cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 16); "
                   "parent<<<64, 64>>>(0, 1); return 0; }\n")
    assert launch_diagnostics(src, "ok.cu") == []


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_examples_are_clean(name: str) -> None:
    path = example_path(name)
    assert launch_diagnostics(path.read_text(), str(path)) == []
