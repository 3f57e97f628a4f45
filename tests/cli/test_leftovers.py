"""Fresh-user leftovers (second pass): what the user sees on stdout/stderr and the exit code when the input
lacks what the advice needs, or is not a CUDA source at all."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cli.test_input_errors import run
from tests.conftest import example

SOURCE_PAGE = "`ncu --import R.ncu-rep --page source --print-source sass --csv > "


def test_a_details_page_alone_is_refused_with_what_it_lacks(tmp_path: Path) -> None:
    for ext in (".cu", ".details.csv"):
        shutil.copy(example("stencil", ext), tmp_path / f"stencil{ext}")
    # given with --profile: exit 2 (input lacks what is needed), stdout empty, stderr says why and what to export
    res = run("advise", "stencil.cu", "--profile", "stencil.details.csv", cwd=tmp_path)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr == (
        "warpwise advise: stencil.details.csv: an ncu Details/Raw page export holds launch facts only, no source "
        "counters (per-PC warp samples and stall reasons), so there is nothing to place on source lines and no "
        f"advice; export the Source page too ({SOURCE_PAGE}R.source.csv`) and pass both with --profile, or pass "
        "the report itself (--profile R.ncu-rep)\n")
    # SARIF: the failure is in the log too
    res = run("advise", "stencil.cu", "--profile", "stencil.details.csv", "--format", "sarif", cwd=tmp_path)
    inv = json.loads(res.stdout)["runs"][0]["invocations"][0]
    assert res.returncode == 2 and inv["executionSuccessful"] is False
    assert "launch facts only" in inv["toolExecutionNotifications"][0]["message"]["text"]
    # found beside the source (no --profile): the page is named, not just "no report found"
    for arg in ("stencil.cu", "."):
        res = run("advise", arg, cwd=tmp_path)
        assert res.returncode == 2 and res.stdout == ""
        first = res.stderr.splitlines()[0]
        assert first == ("warpwise advise: stencil.details.csv: an ncu Details/Raw page export holds launch facts "
                         "only, no source counters (per-PC warp samples and stall reasons); export the Source page "
                         f"beside it ({SOURCE_PAGE}stencil.source.csv`)"), first


def test_a_source_and_a_details_page_still_give_advice(tmp_path: Path) -> None:
    for ext in (".cu", ".source.csv", ".details.csv", ".sm_90.cubin"):
        shutil.copy(example("stencil", ext), tmp_path / f"stencil{ext}")
    res = run("advise", "stencil.cu", "--profile", "stencil.source.csv", "--profile", "stencil.details.csv",
              cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "Advice" in res.stdout and "launch facts only" not in res.stdout + res.stderr


def test_a_file_that_is_not_a_cuda_source_is_named_as_such(tmp_path: Path) -> None:
    shutil.copy(example("stencil", ".cu"), tmp_path / "stencil.cu")
    (tmp_path / "README.md").write_text("# notes\n")
    (tmp_path / "Makefile").write_text("all:\n")
    kinds = ".cu, .cuh, .cpp, .cc, .cxx, .c, .h, .hpp, .hh, .inl (or a Triton kernel's .py)"
    res = run("advise", "README.md", "Makefile", cwd=tmp_path)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.splitlines() == [
        f"warpwise advise: README.md: is not a CUDA source (a .md file): SOURCE is a file the kernels were "
        f"compiled from, {kinds}",
        f"warpwise advise: Makefile: is not a CUDA source (a file without an extension): SOURCE is a file the "
        f"kernels were compiled from, {kinds}"]
    assert "no .ncu-rep" not in res.stderr
    # a cubin renamed without extension is still named as a binary
    shutil.copy(example("stencil", ".sm_90.cubin"), tmp_path / "app")
    res = run("advise", "app", cwd=tmp_path)
    assert res.returncode == 2
    assert "app: is an ELF binary (cubin, executable or library), not a CUDA source: pass it as --binary app" \
        in res.stderr


def test_one_term_for_what_is_counted(tmp_path: Path) -> None:
    """Nsight Compute's All Samples include `selected` (the warp that issued): the report, like the editor, calls
    them warp samples, never stall samples."""
    for ext in (".cu", ".ncu-rep", ".sm_90.cubin"):
        shutil.copy(example("stencil", ext), tmp_path / f"stencil{ext}")
    res = run("advise", "stencil.cu", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert "   warp samples: 28,464 total, 18,490 latency (65.0%), 9,974 active" in lines
    assert any(ln.startswith("   1. Strength reduction [strength_reduction]: 54.9% of warp samples, estimated "
                             "speedup 2.192x") for ln in lines)
    assert lines[-1].startswith("Terms: warp samples = Nsight Compute's PC samples of the kernel's warps, one per "
                                "sampled warp and its state ('All Samples': the warp that issued, 'selected', "
                                "counts too); T = all of the kernel's.")
    out = res.stdout + run("advise", "stencil.cu", "--format", "json", cwd=tmp_path).stdout
    assert "stall samples" not in out
