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


# What nvcc declares without an #include and clang's wrapper does not (bench/parse corpus failures):
# time() via crt/common_functions.h, surface objects, host min/max of crt/math_functions.h.
NVCC_IMPLICIT = r"""
#include <sys/time.h>
#include <cstdlib>
__global__ void k(cudaSurfaceObject_t s, uchar4* out) {
  uchar4 v;
  surf2Dread(&v, s, threadIdx.x * 4, 0);
  out[threadIdx.x] = v;
}
int main() {
  srand(time(NULL));
  int dx = rand() - 5, dy = rand();
  unsigned u = 3;
  long long w = max(2LL, (long long)dy);
  return max(abs(dx), abs(dy)) + min(u, 4u) + (int)max(1.0f, 2.0) + (int)w;
}
"""


def test_what_nvcc_declares_implicitly_parses() -> None:
    p = parse(NVCC_IMPLICIT, "implicit.cu")
    assert p.errors == [], [e.message for e in p.errors]


def test_host_min_max_declarations_stay_compatible_with_a_projects_own_definition() -> None:
    src = "int max(int a, int b) { return a > b ? a : b; }\nint main() { return max(1, 2); }\n"
    assert parse(src, "own_max.cu").errors == []


def test_library_headers_are_found_where_installed() -> None:
    from warpwise.analysis.rewrite.parse import _library_includes

    h = find_cuda_headers()
    assert h is not None
    dirs = [h.cuda_include, *_library_includes(str(h.cuda_include))]
    have = [name for name in ("curand_kernel.h", "cufft.h", "cublas_v2.h", "cuda_profiler_api.h")
            if any((d / name).is_file() for d in dirs)]
    if not have:
        pytest.skip("no CUDA library headers installed (toolkit or nvidia-curand/cufft/cublas wheels)")
    src = "".join(f"#include <{n}>\n" for n in have) + "int main() { return 0; }\n"
    p = parse(src, "libs.cu")
    assert p.errors == [] and not p.blanked_includes


def test_the_same_text_is_parsed_once_until_a_header_changes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import os

    (tmp_path / "h.cuh").write_text("#pragma once\n__device__ inline int one() { return 1; }\n")
    src = '#include "h.cuh"\n__global__ void k(int* a) { a[0] = one(); }\n'
    f = str(tmp_path / "k.cu")
    first = parse(src, f)
    assert parse(src, f) is first
    assert parse(src + "\n", f) is not first  # another text
    (tmp_path / "h.cuh").write_text("#pragma once\n__device__ inline int one() { return 2; }\n// longer\n")
    st = os.stat(tmp_path / "h.cuh")
    os.utime(tmp_path / "h.cuh", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    again = parse(src, f)
    assert again is not first and again.errors == []
