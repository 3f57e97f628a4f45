"""libclang parse with the real CUDA headers from PyPI (issue 12 item 2): what ordinary CUDA uses parses."""

from __future__ import annotations

import pytest
from warpwise.analysis.rewrite import find_launches
from warpwise.analysis.rewrite.parse import find_cuda_headers, parse, parse_failure

pytestmark = pytest.mark.skipif(find_cuda_headers() is None, reason="CUDA headers (nvidia-cuda-runtime...) absent")

# Every name issue 12 lists, in device code, plus cooperative groups, fp16 and host C++.
ORDINARY = r"""
#include <cooperative_groups.h>
#include <cuda_fp16.h>
#include <cstdio>
#include <vector>
namespace cg = cooperative_groups;

template <typename T> __global__ void child(T* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= 2;
}

__global__ void parent(float* a, const float* __restrict__ b, unsigned* u, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = __ldg(&b[i]) + __fdividef(1.f, 3.f) + __expf(1.f) + __sinf(2.f) + rsqrtf(4.f) + fmaf(1.f, 2.f, 3.f);
  unsigned h = __umulhi(u[0], u[1]) + __brev(u[2]) + __mul24(3, 4);
  int r = __float2int_rn(x);
  float s = __saturatef(x) + __ldcg(&b[0]);
  atomicAdd_system(&a[0], 1.0f);
  __half hh = __float2half(x);
  unsigned m = __ballot_sync(0xffffffffu, i < n);
  bool any = __any_sync(0xffffffffu, i > 3);
  float y = __shfl_down_sync(0xffffffffu, x, 1) + __shfl_xor_sync(0xffffffffu, x, 2) + __shfl_sync(0xffffffffu, x, 0);
  cg::thread_block tb = cg::this_thread_block();
  tb.sync();
  if (i == 0) {
    child<float><<<(n + 127) / 128, 128>>>(a, n);
    cudaGetLastError();
  }
  a[i] = x + h + r + s + __half2float(hh) + m + any + y;
}

int main() {
  std::vector<float> v(10);
  float* d;
  cudaMalloc(&d, 40);
  parent<<<1, 32>>>(d, d, nullptr, 10);
  cudaDeviceSynchronize();
  std::printf("%f\n", v[0]);
}
"""


def test_intrinsics_cooperative_groups_and_host_cpp_parse_clean() -> None:
    p = parse(ORDINARY, "ordinary.cu")
    assert p.headers == "cuda"
    assert p.errors == [] and parse_failure(p) is None


def test_device_side_launch_of_a_templated_child_is_found() -> None:
    (launch,) = find_launches(ORDINARY, "ordinary.cu")
    assert launch.child == "child"
    assert launch.line == ORDINARY[:ORDINARY.index("child<float><<<")].count("\n") + 1
    assert launch.grid.text == "(n + 127) / 128" and launch.block.text == "128"


def test_offsets_are_those_of_the_original_text() -> None:
    p = parse(ORDINARY, "ordinary.cu")
    assert p.data == ORDINARY.encode()  # the re-marked parse never changes what edits are computed on


def test_a_missing_project_header_is_searched_near_the_file_then_blanked(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "helper.h").write_text("#pragma once\ninline int helper_value() { return 3; }\n")
    (tmp_path / "src").mkdir()
    src = ('#include "helper.h"\n#include "not_anywhere.h"\n'
           "__global__ void k(int* a) { a[threadIdx.x] = 1; }\nint main() { return helper_value(); }\n")
    f = tmp_path / "src" / "k.cu"
    f.write_text(src)
    p = parse(src, str(f))
    assert p.errors == []  # helper.h found in ../common; the unknown include blanked, nothing used from it


def test_real_errors_are_still_errors() -> None:
    src = "__global__ void k(int* a) { a[threadIdx.x] = __not_an_intrinsic(1); }\n"
    reason = parse_failure(parse(src, "bad.cu"))
    assert reason is not None and reason.startswith("parse failed at bad.cu:1:")
    assert "__not_an_intrinsic" in reason
