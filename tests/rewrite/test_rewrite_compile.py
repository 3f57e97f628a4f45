"""Every transform and combination compiles with nvcc -rdc=true -arch=sm_90 (object only, 2 jobs)."""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from rewrite_helpers import EXAMPLES
from test_rewrite_transforms import COMBOS, ORDERS, combo_id, reordered, transformed


def test_all_variants_compile(nvcc: str, tmp_path: Path) -> None:
    files = []
    for name in sorted(EXAMPLES):
        for steps in COMBOS:
            f = tmp_path / f"{name}__{combo_id(steps).replace(':', '_').replace('+', '__')}.cu"
            f.write_text(transformed(name, steps))
            files.append(f)
    for order in ORDERS:
        f = tmp_path / f"spmv__order__{order.replace(':', '_').replace('+', '__')}.cu"
        f.write_text(reordered(order))
        files.append(f)

    def compile_one(f: Path) -> tuple[Path, int, str]:
        r = subprocess.run([nvcc, "-rdc=true", "-arch=sm_90", "-c", str(f), "-o", str(f.with_suffix(".o"))],
                           capture_output=True, text=True, timeout=300)
        return f, r.returncode, r.stderr

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(compile_one, files))
    failed = [(f.name, err[-2000:]) for f, rc, err in results if rc != 0]
    assert failed == [], failed
    warned = [(f.name, err[-1000:]) for f, rc, err in results if "warning" in err]
    assert warned == [], warned


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_originals_compile(nvcc: str, tmp_path: Path, name: str) -> None:
    from rewrite_helpers import example_path

    r = subprocess.run([nvcc, "-rdc=true", "-arch=sm_90", "-c", str(example_path(name)), "-o",
                        str(tmp_path / f"{name}.o")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


def test_unused_prelude_helper_does_not_warn(nvcc: str, tmp_path: Path) -> None:
    """A program that never calls ww_launch_error_count() compiles without nvcc warning #177."""
    from warpwise.analysis.rewrite import apply_edits, rewrite

    src = ("__global__ void child(int *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x;"
           " if (i < n) a[i] = 1; }\n"
           "__global__ void parent(int *a, const int *n) { int m = n[threadIdx.x];\n"
           "  child<<<(m + 31) / 32, 32>>>(a + threadIdx.x * 64, m);\n}\n"
           "int main() { parent<<<1, 32>>>(nullptr, nullptr); return cudaDeviceSynchronize() != cudaSuccess; }\n")
    f = tmp_path / "unused.cu"
    f.write_text(apply_edits(src, rewrite(src, str(f), "coarsen", 3)))
    assert "ww_launch_error_count(void)" in f.read_text()
    r = subprocess.run([nvcc, "-rdc=true", "-arch=sm_90", "-c", str(f), "-o", str(tmp_path / "unused.o")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr, r.stderr
