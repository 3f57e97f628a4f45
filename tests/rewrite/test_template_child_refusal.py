"""A device-side launch of a templated child kernel is refused with its true reason (issue 12)."""

from __future__ import annotations

import pytest
from warpwise.analysis.rewrite import RewriteError, find_launches, rewrite
from warpwise.analysis.rewrite.parse import find_cuda_headers

pytestmark = pytest.mark.skipif(find_cuda_headers() is None, reason="CUDA headers (nvidia-cuda-runtime...) absent")

SRC = """template <typename T> __global__ void child(T* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= 2;
}

__global__ void plain(float* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1;
}

__global__ void parent(float* a, int n) {
  if (threadIdx.x == 0) {
    child<float><<<(n + 127) / 128, 128>>>(a, n);
    cudaGetLastError();
    plain<<<(n + 127) / 128, 128>>>(a, n);
    cudaGetLastError();
  }
}
"""


def test_templated_child_is_refused_as_a_template_not_as_missing() -> None:
    tmpl, plain = find_launches(SRC, "t.cu")
    assert (tmpl.child, tmpl.line, plain.child) == ("child", 13, "plain")
    assert set(tmpl.refusals) == {"threshold", "coarsen", "aggregate"}
    reason = tmpl.refusals["threshold"]
    assert reason.startswith("child kernel `child` is a function template (launched as `child<float>`)")
    assert "not in this file" not in reason
    assert "threshold" in plain.transforms  # the non-template launch beside it is still rewritable


def test_rewrite_of_the_templated_launch_says_why() -> None:
    with pytest.raises(RewriteError, match=r"t\.cu:13: cannot apply coarsen: child kernel `child` is a function "
                                           r"template"):
        rewrite(SRC, "t.cu", "coarsen", 13)


def test_a_child_defined_elsewhere_still_says_so() -> None:
    src = SRC.replace("template <typename T> __global__ void child(T* a, int n) {",
                      "template <typename T> __global__ void child(T* a, int n);\nvoid unused() {")
    tmpl = find_launches(src, "t.cu")[0]
    assert "is not in this file" in tmpl.refusals["threshold"]
