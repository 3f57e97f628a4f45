"""Code written for an older CUDA toolkit parses (issue 12 item 2): texture/surface references (removed in
CUDA 12.0), the cudaDeviceProp fields CUDA 13.0 removed, the pre-3.2 driver API signatures — while modern code
that uses those names for its own things still parses as before."""

from __future__ import annotations

import clang.cindex as ci
import pytest
from warpwise.analysis.rewrite import launch_diagnostics
from warpwise.analysis.rewrite.parse import LEGACY_DEVICE_PROP_FIELDS, find_cuda_headers, parse, parse_failure

pytestmark = pytest.mark.skipif(find_cuda_headers() is None, reason="CUDA headers (nvidia-cuda-runtime...) absent")

# A CUDA 2–11 era program: texture references bound to linear memory and to an array, a normalized-float
# fetch, a surface reference, device properties of the old struct, and a device-side launch after them.
LEGACY = r"""
#include <cstdio>
#include <cuda.h>
texture<float, 1, cudaReadModeElementType> t_lin;
texture<uchar4, 2, cudaReadModeNormalizedFloat> t_img;
texture<float> t_default;
surface<void, 2> s_out;

__global__ void child(float* a) { a[threadIdx.x] += 1.0f; }

__global__ void kernel(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = tex1Dfetch(t_lin, i) + tex1Dfetch(t_default, i);
  float4 p = tex2D(t_img, 0.5f, 0.5f);
  uchar4 g = tex2Dgather(t_img, 0.5f, 0.5f).x > 0 ? make_uchar4(0, 0, 0, 0) : make_uchar4(1, 1, 1, 1);
  float w;
  surf2Dread(&w, s_out, 4 * i, 0);
  surf2Dwrite(v + p.x + g.x + w, s_out, 4 * i, 0);
  if (i < n) out[i] = v;
  if (i == 0) {
    child<<<1, 32>>>(out);
  }
}

int main() {
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  std::printf("%d %d %d %d\n", prop.clockRate, prop.deviceOverlap, prop.memoryClockRate, prop.computeMode);
  float* d;
  cudaArray* arr = nullptr;
  cudaMalloc(&d, 1024);
  cudaBindTexture(0, t_lin, d, 1024);
  cudaBindTexture(0, t_default, d, cudaCreateChannelDesc<float>(), 1024);
  cudaBindTextureToArray(t_img, arr);
  cudaBindSurfaceToArray(s_out, arr);
  kernel<<<1, 256>>>(d, 256);
  cudaUnbindTexture(t_lin);
  unsigned int free_mem, total_mem;
  cuMemGetInfo(&free_mem, &total_mem);
  return 0;
}
"""

# Modern code with its own `texture`/`surface` at namespace scope: the legacy declarations must stay out.
MODERN = r"""
#include <cuda_runtime.h>
cudaTextureObject_t texture;
struct surface { int w, h; };
__global__ void k(float* out) { out[threadIdx.x] = tex1Dfetch<float>(texture, threadIdx.x); }
int main() { surface s{1, 2}; k<<<1, 32>>>(nullptr); return s.w; }
"""


def _warnings(p) -> list[str]:  # type: ignore[no-untyped-def]
    return [d.spelling for d in p.tu.diagnostics
            if d.severity == ci.Diagnostic.Warning and d.location.file is not None and d.location.file.name == p.path]


def test_code_for_an_older_toolkit_parses_clean_with_deprecations_naming_the_removal() -> None:
    p = parse(LEGACY, "legacy.cu")
    assert p.errors == [] and parse_failure(p) is None
    assert p.legacy_api is True
    # no error anywhere in the translation unit: warpwise's own legacy header included
    assert [d.spelling for d in p.tu.diagnostics if d.severity >= ci.Diagnostic.Error] == []
    warns = _warnings(p)
    assert any("texture references were removed in CUDA 12.0" in w for w in warns)
    assert any("surface references were removed in CUDA 12.0" in w for w in warns)
    assert any("'clockRate' is deprecated: removed in CUDA 13.0: use cudaDeviceGetAttribute(&v, cudaDevAttrClockRate"
               in w for w in warns)
    assert any("pre-CUDA 3.2 driver API signature" in w for w in warns)


def test_a_legacy_file_keeps_its_device_launch_analysis() -> None:
    diags = launch_diagnostics(LEGACY, "legacy.cu", whole_program=False)
    # the launch of `child` in `kernel` is unchecked: the analysis ran on the AST, not a token scan
    line = next(n for n, t in enumerate(LEGACY.split("\n"), 1) if "child<<<" in t)
    assert (line, "cdp-unchecked-launch") in [(d.line, d.code) for d in diags if "child" in d.message]
    assert all(d.code != "parse-failed" for d in diags)


def test_each_removed_fetch_returns_what_the_old_api_returned() -> None:
    # a wrong result type is an error here: uchar4 normalized -> float4, element mode -> the texel type
    src = r"""
texture<uchar4, 2, cudaReadModeNormalizedFloat> tn;
texture<int2, 1> te;
__global__ void k(float4* o, int2* q) { o[0] = tex2D(tn, 0.f, 0.f); q[0] = tex1Dfetch(te, 0); int2 b = tex1D(te, 0.f); }
"""
    p = parse(src, "fetch.cu")
    assert p.errors == []
    bad = parse(src.replace("float4* o", "int* o"), "fetch_bad.cu")
    assert len(bad.errors) == 1
    assert bad.errors[0].message.startswith("assigning to 'int' from incompatible type")
    assert bad.errors[0].message.endswith("(aka 'float4')")


def test_modern_code_with_its_own_texture_and_surface_names_is_unaffected() -> None:
    p = parse(MODERN, "modern.cu")
    assert p.errors == [] and p.legacy_api is False
    # nor anywhere else in the TU (the generated driver_types.h copy included)
    assert [d.spelling for d in p.tu.diagnostics if d.severity >= ci.Diagnostic.Error] == []


def test_a_field_the_installed_struct_still_has_is_not_added_twice() -> None:
    # every documented removed field resolves once (a duplicate member would be an error)
    uses = " + ".join(f"p.{f}" for f, _ in LEGACY_DEVICE_PROP_FIELDS)
    p = parse(f"int f() {{ cudaDeviceProp p{{}}; return {uses}; }}\n", "props.cu")
    assert p.errors == []
    assert p.legacy_api is False  # the fields come with every parse; the legacy header is not needed


def test_errors_that_no_old_toolkit_accepted_stay_errors() -> None:
    p = parse(LEGACY.replace("tex1Dfetch(t_lin, i)", "tex1Dfetch(t_lin, i, 3)").replace(
        "prop.clockRate", "prop.clockRateX"), "legacy_bad.cu")
    msgs = [e.message for e in p.errors]
    assert any("no member named 'clockRateX' in 'cudaDeviceProp'" in m for m in msgs)
    assert any("no matching function for call to 'tex1Dfetch'" in m for m in msgs)


def test_a_name_that_only_looks_legacy_keeps_the_first_parse() -> None:
    # `surface` undeclared here (a project header not found, say): the legacy template would not help
    src = "int f() { return surface + 1; }\n"
    p = parse(src, "looks_legacy.cu")
    assert p.legacy_api is False
    assert [e.message for e in p.errors] == ["use of undeclared identifier 'surface'"]
