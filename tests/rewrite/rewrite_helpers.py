"""Helpers of the rewrite tests: the DP examples and an nvcc finder."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = {"bfs": "bfs_edges", "spmv": "spmv_row", "tree": "descend_children", "mandelbrot": "tile_pixels"}


def load_bench_module(name: str) -> ModuleType:
    """Import bench/dp/<name>.py under a unique module name (bench/dp is not a package)."""
    path = ROOT / "bench" / "dp" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"warpwise_bench_dp_{name}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def example_path(name: str) -> Path:
    return ROOT / "examples" / "dp" / name / f"{name}.cu"


def find_nvcc() -> str | None:
    """nvcc on PATH, else the one cuda-pathfinder finds (PyPI nvidia-cuda-nvcc or a CUDA install)."""
    found = shutil.which("nvcc")
    if found:
        return found
    try:
        from cuda.pathfinder import find_nvidia_binary_utility
    except ImportError:
        return None
    try:
        return find_nvidia_binary_utility("nvcc")
    except Exception:
        return None

