"""A realistic multi-file program (issue 12): two .cu files whose kernels have similar names and lines, a
.cuh helper in a sibling include/ folder, host launch functions, built Makefile-style (``nvcc ./src/x.cu``
from the build folder, so the cubins record ``./src/../include/`` paths) on a "GPU box" and analysed from
a checkout elsewhere.

Checked: the header maps to the checkout without being named; each kernel's scope is its own .cu (not the
header where most of its instructions come from, nor the other .cu); every line reference of a hint into
another file names it, relative to the workspace, in CLI text, JSON, SARIF and the editor's hover. The
samples are synthetic (no GPU here): 6 per header instruction, 1 per other, stalls on the header's loads.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from warpwise.analysis.binary.load import load_binary
from warpwise.analysis.pipeline import Analysis, KernelAnalysis, analyze_kernel
from warpwise.analysis.profile.model import KernelProfile, LaunchConfig, PCSample
from warpwise.analysis.report import kernel_json, render_kernel_text, to_sarif

HEADER = """#pragma once
// Helpers shared by both filters (inlined into each kernel).
__device__ __forceinline__ float weight(int d) {
  return __expf(-0.5f * d * d);
}

__device__ __forceinline__ float load_clamped(const float* __restrict__ row, int i, int n) {
  return __ldg(&row[min(max(i, 0), n - 1)]);
}
"""
KERNEL = """#include "../include/stencil_math.cuh"

__global__ void blur_{k}(const float* in, float* out, int w, int h, int r) {{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y;
  if (x < w && y < h) {{
    float acc = 0.f, norm = 0.f;
    for (int d = -r; d <= r; ++d) {{
      float v = load_clamped({idx});
      float wt = weight(d);
      acc += wt * v;
      norm += wt;
    }}
    {out} = acc / norm;
  }}
}}

void launch_{k}(const float* in, float* out, int w, int h, int r) {{
  blur_{k}<<<dim3((w + 255) / 256, h), 256>>>(in, out, w, h, r);
}}
"""
FILES = {
    "include/stencil_math.cuh": HEADER,
    "src/rows.cu": KERNEL.format(k="rows", idx="in + y * w, x + d, w", out="out[y * w + x]"),
    "src/cols.cu": KERNEL.format(k="cols", idx="in + x * h, y + d, h", out="out[x * h + y]"),
    "Makefile": "blur: src/rows.cu src/cols.cu\n\tnvcc -O3 -lineinfo -arch=sm_90 -o $@ ./src/rows.cu ./src/cols.cu\n",
}

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("multi")
    build, checkout = root / "gpu-box" / "build", root / "laptop" / "blur"
    for d in (build, checkout):
        for rel, text in FILES.items():
            (d / rel).parent.mkdir(parents=True, exist_ok=True)
            (d / rel).write_text(text)
    for k in ("rows", "cols"):
        subprocess.run(["nvcc", "-arch=sm_90", "-lineinfo", "-O3", "-cubin", "-o", f"{k}.cubin", f"./src/{k}.cu"],
                       cwd=build, check=True, capture_output=True, timeout=300)
    return build, checkout


def _analyse(build: Path, checkout: Path, k: str) -> KernelAnalysis:
    (cubin,) = load_binary(str(build / f"{k}.cubin"))
    (fn,) = [f for f in cubin.functions.values() if f.is_kernel]
    pcs = {}
    for ins in fn.instructions:
        if ins.loc is None:
            continue
        n = 6 if ins.loc.file.endswith(".cuh") else 1
        reason = "long_scoreboard" if n > 1 and ("LDG" in ins.text or "FFMA" in ins.text or "MUFU" in ins.text) \
            else "wait"
        pcs[(fn.name, ins.offset)] = PCSample(
            function=fn.name, offset=ins.offset, pc=0x1000 + ins.offset, sass=ins.text, samples=n,
            not_issued=n - 1, stalls={reason: n}, stalls_not_issued={reason: n - 1} if n > 1 else {},
            file=ins.loc.file, line=ins.loc.line)
    prof = KernelProfile(name=f"blur_{k}", mangled=fn.name, arch=cubin.arch,
                         launch=LaunchConfig(grid=(64, 512, 1), block=(256, 1, 1), sm_count=132), pcs=pcs,
                         report=str(build / f"{k}.ncu-rep"))
    # both sources named, as `warpwise advise src/*.cu` would; the header is not
    return analyze_kernel(prof, [cubin], [checkout / "src" / "cols.cu", checkout / "src" / "rows.cu"])


@pytest.fixture(scope="module")
def analysed(program: tuple[Path, Path]) -> dict[str, KernelAnalysis]:
    build, checkout = program
    return {k: _analyse(build, checkout, k) for k in ("rows", "cols")}


def test_the_header_maps_to_the_checkout_and_each_kernel_to_its_own_file(
        program: tuple[Path, Path], analysed: dict[str, KernelAnalysis]) -> None:
    _, checkout = program
    for k, ka in analysed.items():
        header = next(r for r in ka.local if r.endswith("stencil_math.cuh"))
        assert "/./src/../include/" in header  # recorded as the Makefile build wrote it
        assert ka.local[header] == checkout / "include" / "stencil_math.cuh"
        rep = ka.advice_report
        assert rep is not None and rep.kernel_scope is not None
        # most instructions are the header's, yet the kernel is defined in its .cu, at its own lines
        assert Path(ka.local_path(rep.kernel_scope.file) or "") == checkout / "src" / f"{k}.cu"
        assert (rep.kernel_scope.line, rep.kernel_scope.end_line) == (3, 16)


def _cwd(path: Path) -> object:
    class Cd:
        def __enter__(self) -> None:
            self.old = os.getcwd()
            os.chdir(path)

        def __exit__(self, *exc: object) -> None:
            os.chdir(self.old)

    return Cd()


BARE = re.compile(r"line (\d+)(?! of)")


def _header_lines(ka: KernelAnalysis) -> set[int]:
    return {s.line for s in ka.profile.pcs.values() if s.file and s.file.endswith(".cuh") and s.line}


def test_hints_name_the_header_in_text_json_and_sarif(program: tuple[Path, Path],
                                                     analysed: dict[str, KernelAnalysis]) -> None:
    _, checkout = program
    ka = analysed["rows"]
    rep = ka.advice_report
    assert rep is not None and rep.advice
    top = rep.advice[0]
    assert top.scope.file is not None and top.scope.file.endswith("src/rows.cu")  # the loop in the kernel
    with _cwd(checkout):  # the workspace
        text = render_kernel_text(ka, root=checkout)
        js = kernel_json(ka)
        sarif = to_sarif([Analysis(report=Path(ka.profile.report), kernels=[ka])])
    suggestion = next(ln for ln in text.splitlines() if "suggestion:" in ln)
    assert "of include/stencil_math.cuh" in suggestion
    assert "\u27e6" not in text and "\u27e6" not in str(js) and "\u27e6" not in str(sarif)  # no marker leaks
    hint = js["advice"][0]["hint"]
    assert "of include/stencil_math.cuh" in hint
    # every bare "line N" left in the hint is a line of rows.cu (the scope's file), never a header line
    rows = (checkout / "src" / "rows.cu").read_text().splitlines()
    for m in BARE.finditer(hint.replace(" of include/stencil_math.cuh", " of\u00a0header")):
        assert 1 <= int(m.group(1)) <= len(rows)
    # SARIF results sit at the hotspot (a header line): there the header's lines are the own file's
    res = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == top.optimizer]
    assert res
    for r in res:
        uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        msg = r["message"]["text"]
        if uri.endswith("stencil_math.cuh"):
            assert "of include/stencil_math.cuh" not in msg
        else:
            assert "of include/stencil_math.cuh" in msg


def test_hover_names_the_other_files_lines(program: tuple[Path, Path], analysed: dict[str, KernelAnalysis]) -> None:
    from warpwise.analysis.confine import set_roots
    from warpwise.server import render
    from warpwise.server.findings import advice_primary, file_findings
    from warpwise.server.linemap import LineMap

    _, checkout = program
    ka = analysed["rows"]
    top = ka.advice_report.advice[0]  # type: ignore[union-attr]
    an = Analysis(report=Path(ka.profile.report), kernels=[ka])
    set_roots([checkout])
    try:
        g = file_findings([an], checkout / "src" / "rows.cu").groups[0]
        path, line = advice_primary(top, g)  # the hottest hotspot: a header line
        assert path == checkout / "include" / "stencil_math.cuh" and line is not None
        text = path.read_text()
        ff = file_findings([an], path)
        h = render.hover(ff, LineMap(ff.baseline, text), text, line)
    finally:
        set_roots([])
    assert h is not None
    value = h.contents.value  # type: ignore[union-attr]
    assert "\u27e6" not in value
    # in the header, the loop of the kernel is named with its file; the header's own lines are bare
    assert f"the loop at line {top.scope.line} of src/rows.cu" in value
    assert "of include/stencil_math.cuh" not in value
    header = _header_lines(ka)
    hint = value[value.index(f"the loop at line {top.scope.line} of src/rows.cu"):]
    hint = hint[:hint.index("\n")]
    bare = [int(m.group(1)) for m in BARE.finditer(hint.replace(" of src/rows.cu", " of\u00a0kernel"))]
    assert bare and all(n in header for n in bare)


def test_editor_findings_stay_in_their_files(program: tuple[Path, Path], analysed: dict[str, KernelAnalysis]) -> None:
    """Both kernels' lines and advice, in one workspace: each .cu shows only its own kernel (their kernels sit
    at the same lines), the shared header shows both."""
    from warpwise.server.findings import file_findings

    _, checkout = program
    ans = [Analysis(report=Path(ka.profile.report), kernels=[ka]) for ka in analysed.values()]
    for k in ("rows", "cols"):
        ff = file_findings(ans, checkout / "src" / f"{k}.cu")
        assert {g.name for g in ff.groups} == {f"blur_{k}"}
        assert ff.findings and {f.kernel.name for f in ff.findings} == {f"blur_{k}"}
    ff = file_findings(ans, checkout / "include" / "stencil_math.cuh")
    assert {g.name for g in ff.groups} == {"blur_rows", "blur_cols"}
    assert {f.kernel.name for f in ff.findings} == {"blur_rows", "blur_cols"}
