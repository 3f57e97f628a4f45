"""The use-tuned source rewrite on the examples' real launch sites."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from warpwise.analysis.schedule.use_tuned import (
    UseTunedError,
    apply_edits,
    find_launches,
    source_name,
    use_tuned_edits,
)

ROOT = Path(__file__).resolve().parents[2]


def strip_tuned(text: str) -> str:
    """The text a build without WARPWISE_TUNED sees: every #ifdef WARPWISE_TUNED ... #endif removed."""
    return re.sub(r"#ifdef WARPWISE_TUNED\n.*?#endif[^\n]*\n", "", text, flags=re.S)


def test_source_names() -> None:
    assert source_name("_Z9blur_rowsPKfPfii") == "blur_rows"
    assert source_name("_ZN2ns6kernelEPf") == "kernel"
    assert source_name("attn_fwd") == "attn_fwd"


def test_stencil_launch_is_guarded_and_default_build_text_is_unchanged() -> None:
    src = (ROOT / "examples/stencil/stencil.cu").read_text()
    edits = use_tuned_edits(src, "_Z9blur_rowsPKfPfii", "out/_Z9blur_rowsPKfPfii.tuned.cubin")
    assert len(edits) == 2  # helper block + one launch
    out = apply_edits(src, edits)
    assert strip_tuned(out) == src
    assert (
        'warpwise_tuned::launch(blur_rows, "out/_Z9blur_rowsPKfPfii.tuned.cubin", "_Z9blur_rowsPKfPfii", '
        "grid, block, static_cast<unsigned>(0), (cudaStream_t)(0), din, dout, nx, ny) != CUDA_SUCCESS)"
    ) in out
    # idempotent helper: a second rewrite of the result does not insert the helper again
    again = use_tuned_edits(out, "_Z9blur_rowsPKfPfii", "x.cubin")
    assert len(again) == 1


def test_offsets_are_utf8_bytes_and_comments_are_skipped() -> None:
    src = (
        '// é k<<<1, 2>>>(x);\n#include "a.h"\n/* k<<<9,9>>>(y); */\nvoid f() {\n  const char* s = "k<<<1,1>>>()";\n'
        "  k<float><<<g, b, 64, st>>>(p, n);  // ünïcode\n}\n"
    )
    launches = find_launches(src, "k")
    assert [(x.line, x.name, x.config, x.args) for x in launches] == [
        (6, "k<float>", ["g", "b", "64", "st"], ["p", "n"])
    ]
    assert src.encode()[launches[0].start : launches[0].end].decode() == "k<float><<<g, b, 64, st>>>(p, n)"
    out = apply_edits(src, use_tuned_edits(src, "k", "k.cubin"))
    assert strip_tuned(out) == src
    assert "(cudaStream_t)(st), p, n)" in out


def test_refusals() -> None:
    with pytest.raises(UseTunedError, match="no <<<>>> launch of other"):
        use_tuned_edits("k<<<1,1>>>();\n", "other", "x.cubin")
    with pytest.raises(UseTunedError, match="on line 3"):
        use_tuned_edits("k<<<1,1>>>();\n", "k", "x.cubin", line=3)
    with pytest.raises(UseTunedError, match="larger statement"):
        use_tuned_edits("void f() { if (c) k<<<1,1>>>(); }\n", "k", "x.cubin")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_rewritten_example_compiles_with_the_macro(tmp_path: Path) -> None:
    (tmp_path / "ex").mkdir()
    shutil.copy(ROOT / "examples/common.cuh", tmp_path / "common.cuh")
    src = (ROOT / "examples/gather/gather.cu").read_text()
    out = apply_edits(src, use_tuned_edits(src, "_Z8spmv_ellPKiPKfS2_Pfii", "gather.tuned.cubin"))
    (tmp_path / "ex/gather.cu").write_text(out)
    r = subprocess.run(
        ["nvcc", "-c", "-arch=sm_90", "-DWARPWISE_TUNED", "-o", str(tmp_path / "g.o"), str(tmp_path / "ex/gather.cu")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
