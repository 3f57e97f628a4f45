"""A report with the program's executable beside it (no .cubin) still gets blame and advice."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, example


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc to build the executable")
def test_executable_beside_the_report(tmp_path: Path) -> None:
    work = tmp_path / "examples" / "stencil"
    work.mkdir(parents=True)
    shutil.copy(EXAMPLES / "common.cuh", tmp_path / "examples")
    shutil.copy(example("stencil", ".cu"), work)
    shutil.copy(example("stencil", ".ncu-rep"), work)
    # the build examples/collect.sh made on the H200 (same nvcc 13.0): the SASS must match the profile
    subprocess.run(["nvcc", "-lineinfo", "-O3", "-arch=sm_90", "-o", str(work / "stencil"), str(work / "stencil.cu")],
                   check=True, capture_output=True, timeout=300)
    res = subprocess.run([sys.executable, "-m", "warpwise.server.cli", "advise", str(work / "stencil.cu"),
                          "--format", "json"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    (k,) = json.loads(res.stdout)["kernels"]
    assert k["binary"] == str(work / "stencil")  # the executable, its cubin extracted with cuobjdump
    assert k["blame"] and k["advice"][0]["optimizer"] == "strength_reduction"
