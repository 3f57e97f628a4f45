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
    existing_guard,
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


def test_rewriting_a_rewritten_launch_replaces_its_guard_instead_of_adding_one() -> None:
    src = (ROOT / "examples/stencil/stencil.cu").read_text()
    once = apply_edits(src, use_tuned_edits(src, "_Z9blur_rowsPKfPfii", "/a/blur.tuned.cubin"))
    (launch,) = find_launches(once, "blur_rows")
    guard = existing_guard(once, launch)
    assert guard is not None and guard.cubin == "/a/blur.tuned.cubin" and guard.mangled == "_Z9blur_rowsPKfPfii"
    assert once.encode()[guard.start : guard.end].decode().startswith("#ifdef WARPWISE_TUNED\n")
    # same cubin again: refused with the reason, nothing changes
    with pytest.raises(UseTunedError, match=r"line \d+: the launch of blur_rows already loads /a/blur.tuned.cubin"):
        use_tuned_edits(once, "_Z9blur_rowsPKfPfii", "/a/blur.tuned.cubin", line=launch.line)
    # another cubin: the guard is replaced, still one guard and one helper
    twice = apply_edits(once, use_tuned_edits(once, "_Z9blur_rowsPKfPfii", '/b/q"uote\\d.cubin', line=launch.line))
    assert twice.count("#ifdef WARPWISE_TUNED") == 2 and twice.count("if (warpwise_tuned::launch(") == 1
    assert twice.count("namespace warpwise_tuned {") == 1
    assert "/a/blur.tuned.cubin" not in twice and '"/b/q\\"uote\\\\d.cubin"' in twice
    (launch2,) = find_launches(twice, "blur_rows")
    g2 = existing_guard(twice, launch2)
    assert g2 is not None and g2.cubin == '/b/q"uote\\d.cubin'
    assert strip_tuned(twice) == src
    # a launch without a guard has none; a plain #ifdef block above a launch is not mistaken for one
    assert existing_guard(src, find_launches(src, "blur_rows")[0]) is None
    other = "#ifdef WARPWISE_TUNED\n  if (ready() != 0)\n#endif\n  k<<<1, 1>>>(p);\n"
    assert existing_guard(other, find_launches(other, "k")[0]) is None


def test_a_stale_guard_is_regenerated_from_the_current_launch() -> None:
    src = "#include <x>\nvoid f(float* p) {\n  k<<<1, 32>>>(p);\n}\n"
    once = apply_edits(src, use_tuned_edits(src, "_Z1kPf", "/t/k.cubin"))
    edited = once.replace("k<<<1, 32>>>(p);", "k<<<2, 64>>>(p);")  # the user changed the launch
    fixed = apply_edits(edited, use_tuned_edits(edited, "_Z1kPf", "/t/k.cubin"))
    assert fixed.count("if (warpwise_tuned::launch(") == 1
    assert "2, 64, static_cast<unsigned>(0), (cudaStream_t)(0), p) != CUDA_SUCCESS)" in fixed
    assert strip_tuned(fixed) == src.replace("k<<<1, 32>>>", "k<<<2, 64>>>")


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
