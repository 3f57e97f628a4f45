"""Fixtures for the binary-reader tests: committed example cubins and cubins compiled here with nvcc."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from binfixtures import EXAMPLES, INLINE_CU, NVCC, TWO_CU
from warpwise.analysis.binary.load import load_cubin
from warpwise.analysis.binary.model import Cubin


@pytest.fixture(scope="session")
def example() -> Callable[[str], Cubin]:
    """Load ``examples/<name>/<name>.sm_90.cubin`` once per session."""
    cache: dict[str, Cubin] = {}

    def get(name: str) -> Cubin:
        if name not in cache:
            cache[name] = load_cubin(EXAMPLES / name / f"{name}.sm_90.cubin")
        return cache[name]

    return get


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folder with cubins and an executable compiled by nvcc; skips without nvcc."""
    if NVCC is None:
        pytest.skip("nvcc not installed")
    d = tmp_path_factory.mktemp("nvcc")
    (d / "inl.cu").write_text(INLINE_CU)
    (d / "two.cu").write_text(TWO_CU)
    jobs: list[list[str]] = [
        ["-cubin", "-lineinfo", "-O3", "-arch=sm_90", "-o", "inl.sm_90.cubin", "inl.cu"],
        ["-cubin", "-lineinfo", "-O3", "-arch=sm_80", "-o", "inl.sm_80.cubin", "inl.cu"],
        ["-cubin", "-G", "-arch=sm_90", "-o", "inl.G.sm_90.cubin", "inl.cu"],
        ["-cubin", "-O3", "-arch=sm_90", "-o", "inl.noline.sm_90.cubin", "inl.cu"],
        ["-cubin", "-rdc=true", "-lineinfo", "-O3", "-arch=sm_90", "-o", "two.rdc.sm_90.cubin", "two.cu"],
        ["-cubin", "-lineinfo", "-O3", "-arch=sm_90", "-o", "two.sm_90.cubin", "two.cu"],
        ["-lineinfo", "-O3", "-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90",
         "-o", "app", "two.cu"],
    ]
    procs = [subprocess.Popen([NVCC, *j], cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for j in jobs]
    for j, p in zip(jobs, procs, strict=True):
        out, _ = p.communicate(timeout=300)
        assert p.returncode == 0, f"nvcc {' '.join(j)} failed: {out.decode(errors='replace')}"
    return d
