"""Hot lines in an inlined helper (issue 12 item 3): the header maps to the local copy without being named,
Makefile-style ``./`` paths map, and CLI text, JSON and SARIF show "inlined into KERNEL at FILE:LINE" and the
call line's inclusive samples.

The fixture is a CUDA program written here, compiled with nvcc the way a Makefile does (``nvcc ./main.cu``
from the build folder, so the cubin records ``./`` paths); the samples are synthetic (no GPU here): 5 per
instruction of the helper, 1 per other instruction, with ncu's source correlation (the line table's line).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from warpwise.analysis.binary.load import load_binary
from warpwise.analysis.pipeline import analyze_kernel
from warpwise.analysis.profile.model import KernelProfile, LaunchConfig, PCSample
from warpwise.analysis.report import kernel_json, render_kernel_text, to_sarif

HELPER = """#pragma once
__device__ __forceinline__ float heavy(float x) {
  float acc = 0.f;
  for (int i = 0; i < 64; ++i) acc += sinf(x + i) * 0.5;
  return acc;
}
"""
MAIN = """#include "helper.cuh"
__global__ void filter(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = in[i];
    out[i] = heavy(v);
  }
}
"""

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("inl")
    build, checkout = root / "gpu-box" / "build", root / "laptop" / "proj"
    for d in (build, checkout):
        d.mkdir(parents=True)
        (d / "helper.cuh").write_text(HELPER)
        (d / "main.cu").write_text(MAIN)
    subprocess.run(["nvcc", "-arch=sm_90", "-lineinfo", "-O3", "-cubin", "-o", "main.cubin", "./main.cu"], cwd=build,
                   check=True, capture_output=True, timeout=300)
    return build / "main.cubin", checkout


def _profile(cubin_path: Path) -> tuple[KernelProfile, object]:
    (cubin,) = load_binary(str(cubin_path))
    (fn,) = [f for f in cubin.functions.values() if f.is_kernel]
    pcs = {}
    for ins in fn.instructions:
        if ins.loc is None:
            continue
        n = 5 if ins.loc.file.endswith("helper.cuh") else 1
        pcs[(fn.name, ins.offset)] = PCSample(function=fn.name, offset=ins.offset, pc=0x1000 + ins.offset,
                                              sass=ins.text, samples=n, not_issued=n - 1,
                                              stalls={"wait": n}, stalls_not_issued={"wait": n - 1} if n > 1 else {},
                                              file=ins.loc.file, line=ins.loc.line)
    prof = KernelProfile(name="filter", mangled=fn.name, arch=cubin.arch, launch=LaunchConfig(grid=(64, 1, 1),
                         block=(256, 1, 1), sm_count=132), pcs=pcs, report=str(cubin_path.with_suffix(".ncu-rep")))
    return prof, cubin


def test_header_and_dot_paths_map_and_the_call_site_is_shown(built: tuple[Path, Path]) -> None:
    cubin_path, checkout = built
    prof, cubin = _profile(cubin_path)
    recorded = {s.file for s in prof.pcs.values()}
    assert any(r.startswith("./") or "/./" in r for r in recorded), recorded  # a Makefile-style path
    ka = analyze_kernel(prof, [cubin], [checkout / "main.cu"])  # the header is not named
    helper = next(r for r in recorded if r.endswith("helper.cuh"))
    main = next(r for r in recorded if r.endswith("main.cu"))
    assert ka.local[helper] == checkout / "helper.cuh" and ka.local[main] == checkout / "main.cu"

    hot = ka.lines[0]
    assert hot.file == helper and hot.line == 4
    (site,) = ka.inlined[(helper, 4)]
    assert (site.function, site.file, site.line) == (prof.mangled, main, 6)
    helper_samples = sum(s.samples for s in prof.pcs.values() if s.file == helper)
    own_call = sum(s.samples for s in prof.pcs.values() if (s.file, s.line) == (main, 6))
    assert ka.inclusive[(main, 6)] == helper_samples + own_call

    text = render_kernel_text(ka, top=5, root=checkout)
    hot_row = next(ln for ln in text.splitlines() if "helper.cuh:4" in ln)
    assert "[inlined into filter at main.cu:6]" in hot_row
    call_row = next(ln for ln in text.splitlines() if "  main.cu:6  " in ln and "helper.cuh" not in ln)
    assert f"(inclusive {helper_samples + own_call:,} =" in call_row

    lines = {(x["file"], x["line"]): x for x in kernel_json(ka)["lines"]}
    entry = lines[(str(checkout / "helper.cuh"), 4)]
    assert entry["inlined_into"][0] == {"function": prof.mangled, "file": str(checkout / "main.cu"), "line": 6,
                                        "samples": entry["inlined_into"][0]["samples"]}
    assert lines[(str(checkout / "main.cu"), 6)]["inclusive_samples"] == helper_samples + own_call


def test_sarif_results_land_in_the_checkout_with_the_call_site(built: tuple[Path, Path]) -> None:
    cubin_path, checkout = built
    prof, cubin = _profile(cubin_path)
    ka = analyze_kernel(prof, [cubin], [checkout / "main.cu"])
    from warpwise.analysis.pipeline import Analysis

    log = to_sarif([Analysis(report=Path(prof.report), kernels=[ka])])
    results = log["runs"][0]["results"]
    assert results
    uris = [loc["physicalLocation"]["artifactLocation"]["uri"] for r in results for loc in r.get("locations", [])]
    assert uris and all(u.startswith((checkout / "x").as_uri()[:-1]) for u in uris), uris
    on_helper = [r for r in results if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(
        "helper.cuh")]
    assert on_helper and all("(inlined into filter at main.cu:6)" in r["message"]["text"] for r in on_helper)
    rel = on_helper[0]["relatedLocations"][-1]["physicalLocation"]
    assert rel == {"artifactLocation": {"uri": (checkout / "main.cu").as_uri()}, "region": {"startLine": 6}}


def test_hover_names_the_call_site_and_the_other_file(built: tuple[Path, Path]) -> None:
    from warpwise.analysis.pipeline import Analysis
    from warpwise.server.findings import file_findings
    from warpwise.server.linemap import LineMap
    from warpwise.server.render import hover

    cubin_path, checkout = built
    prof, cubin = _profile(cubin_path)
    ka = analyze_kernel(prof, [cubin], [checkout / "main.cu"])
    a = Analysis(report=Path(prof.report), kernels=[ka])
    helper = checkout / "helper.cuh"
    ff = file_findings([a], helper)
    h = hover(ff, LineMap(ff.baseline, HELPER), HELPER, 4)
    assert h is not None
    assert "Inlined into `filter` at main.cu:6" in h.contents.value  # type: ignore[union-attr]
    main = checkout / "main.cu"
    ffm = file_findings([a], main)
    hm = hover(ffm, LineMap(ffm.baseline, MAIN), MAIN, 6)
    assert hm is not None and "Inclusive: **" in hm.contents.value  # type: ignore[union-attr]
