"""The `warpwise` command line on the committed examples."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import example

CLI = [sys.executable, "-m", "warpwise.server.cli"]


def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


def test_advise_json_contract_fields() -> None:
    res = run("advise", str(example("stencil", ".cu")), "--format", "json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["version"] == 2
    (k,) = doc["kernels"]
    assert len(k["launches"]) == 1 and k["launches"][0]["samples"]["total"] == 28464
    assert k["bound"]["unit"] == "sm" and k["launch"]["throughput_pct"]["sm"] == pytest.approx(92.84, abs=0.01)
    top = k["advice"][0]
    assert top["optimizer"] == "strength_reduction" and top["why"].startswith("#1: estimate 2.19x")
    lo, hi = top["confidence"]["interval"]
    assert lo < top["estimated_speedup"] < hi and top["confidence"]["samples"] == 28464
    assert (k["name"], k["mangled"], k["arch"]) == ("blur_rows", "_Z9blur_rowsPKfPfii", "sm_90")
    assert k["samples"] == {"total": 28464, "latency": 18490, "active": 9974}
    assert k["launch"]["grid"] == [64, 2048, 1] and k["launch"]["block"] == [128, 2, 1]
    assert k["launch"]["registers_per_thread"] == 24 and k["launch"]["sm_count"] == 132
    line18 = next(ln for ln in k["lines"] if ln["line"] == 18)
    assert line18["samples"] == 26850 and line18["latency_samples"] == 17657
    assert line18["stall_reasons"]["mio_throttle"] == 12165
    assert Path(line18["file"]).resolve() == example("stencil", ".cu").resolve()
    assert sum(ln["samples"] for ln in k["lines"]) == 28464  # every sample has a line


def test_paths_map_to_another_checkout(tmp_path: Path) -> None:
    # a checkout elsewhere: the profile's recorded paths end in examples/gather/gather.cu
    dst = tmp_path / "laptop" / "proj" / "examples" / "gather"
    dst.mkdir(parents=True)
    for suffix in (".cu", ".ncu-rep", ".sm_90.cubin"):
        shutil.copy(example("gather", suffix), dst)
    res = run("advise", str(dst / "gather.cu"), "--format", "json")
    assert res.returncode == 0, res.stderr
    (k,) = json.loads(res.stdout)["kernels"]
    assert {Path(ln["file"]) for ln in k["lines"]} == {dst / "gather.cu"}


def test_advise_text_report() -> None:
    res = run("advise", str(example("gather", ".cu")), "--top", "2")
    assert res.returncode == 0, res.stderr
    assert "66,700 total, 64,932 latency (97.3%)" in res.stdout
    assert "99.5%   66,386" in res.stdout and "gather.cu:17" in res.stdout


def test_advise_without_profile_is_a_clear_error(tmp_path: Path) -> None:
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k() {}\n")
    res = run("advise", str(src))
    assert res.returncode == 2
    assert "no .ncu-rep report found" in res.stderr and "warpwise profile" in res.stderr


def test_no_report_says_what_stood_where_one_was_looked_for(tmp_path: Path) -> None:
    # fresh-user: a folder named like the report beside the source, and an empty folder named like a source,
    # both ended in a bare "no .ncu-rep report found"
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k() {}\n")
    (tmp_path / "k.ncu-rep").mkdir()
    res = run("advise", str(src))
    assert res.returncode == 2 and f"{tmp_path / 'k.ncu-rep'}: is a folder, not a report" in res.stderr, res.stderr
    empty = tmp_path / "dir.cu"
    empty.mkdir()
    res = run("advise", str(empty))
    assert res.returncode == 2 and f"{empty}: is a folder with no .cu or .cuh files" in res.stderr, res.stderr
    # a folder without CUDA sources is one error, not that and "no .ncu-rep report found next to" it
    assert res.stderr == (f"warpwise advise: {empty}: is a folder with no .cu or .cuh files: nothing to advise on; "
                          "pass CUDA sources, or the folder holding them and their .ncu-rep report (e.g. "
                          "`warpwise advise examples/stencil`)\n"), res.stderr


def test_binary_without_the_kernel(tmp_path: Path) -> None:
    # (a binary of another build of the same kernel is refused: tests/profile/test_join.py)
    res = run("advise", str(example("stencil", ".cu")), "--profile", str(example("stencil", ".ncu-rep")),
              "--binary", str(example("gather", ".sm_90.cubin")), "--format", "json")
    # the binary the user named holds no profiled kernel: a failure naming it, not an empty report (issue 13)
    assert res.returncode == 2 and res.stdout == ""
    assert "gather.sm_90.cubin holds none of the kernels profiled" in res.stderr and "blur_rows" in res.stderr


def test_profile_without_ncu(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH")}
    env["PATH"] = str(tmp_path)  # nothing on PATH: no ncu
    res = subprocess.run([*CLI, "profile", "-o", str(tmp_path / "r.ncu-rep"), "--", "/bin/true"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 2
    assert "ncu (Nsight Compute) not found" in res.stderr


def test_closed_pipe_is_quiet() -> None:
    # `warpwise advise ... --format json | head -1`: no traceback when the reader goes away
    proc = subprocess.Popen([*CLI, "advise", str(example("cdp", ".cu")), "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err
