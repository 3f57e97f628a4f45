"""Whole-program host facts (issue 14 item 3) and CDP1 code under CDP2 (issue 12 item 5): the
pending-launch limit and the parent's grid are read from the program's other files and
compile_commands.json; device-side waits and the sync-depth limit are diagnosed; every rewrite refuses a
launch whose parent waits for the child and then uses its results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from warpwise.analysis.rewrite import RewriteError, find_launches, launch_diagnostics, rewrite
from warpwise.analysis.rewrite.program import eval_int, program_facts

KERNELS = """__global__ void child(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1;
}
__global__ void parent(int *a, const int *len) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int n = len[t];
  child<<<(n + 127) / 128, 128>>>(a + t * 4096, n);
  if (cudaGetLastError() != cudaSuccess) a[0] = -1;
}
void run(int *a, const int *len, int parents);
"""
HOST = """#include <cuda_runtime.h>
__global__ void parent(int *a, const int *len);
static const int PARENTS = 4096;
void run(int *a, const int *len) {
  parent<<<PARENTS / 128, 128>>>(a, len);
}
"""


def _codes(folder: Path, name: str = "kernels.cu", root: Path | None = None) -> dict[str, str]:
    f = folder / name
    return {d.code: d.message for d in launch_diagnostics(f.read_text(), str(f), str(root) if root else None)}


def test_parent_grid_from_another_file_sets_the_estimate(tmp_path: Path) -> None:
    (tmp_path / "kernels.cu").write_text(KERNELS)
    (tmp_path / "main.cpp").write_text(HOST)
    msg = _codes(tmp_path)["cdp-pending-launch-limit"]
    assert "up to 4096 launches" in msg and "parent `parent` runs PARENTS / 128 x 128 threads, main.cpp:5" in msg
    assert "default cudaLimitDevRuntimePendingLaunchCount, 2048" in msg
    # a parent grid under the default limit: no finding
    (tmp_path / "main.cpp").write_text(HOST.replace("PARENTS = 4096", "PARENTS = 1024"))
    assert "cdp-pending-launch-limit" not in _codes(tmp_path)


def test_limit_raised_in_another_file_counts(tmp_path: Path) -> None:
    (tmp_path / "kernels.cu").write_text(KERNELS)
    host = HOST.replace("void run(int *a, const int *len) {\n",
                        "void run(int *a, const int *len) {\n"
                        "  cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 13);\n")
    (tmp_path / "main.cpp").write_text(host)
    assert "cdp-pending-launch-limit" not in _codes(tmp_path)  # 4096 parents <= 8192
    (tmp_path / "main.cpp").write_text(host.replace("1 << 13", "1 << 11").replace("4096", "65536"))
    msg = _codes(tmp_path)["cdp-pending-launch-limit"]
    assert "up to 65536 launches" in msg and "raised to 2048 at main.cpp:5" in msg
    # a commented-out call does not count
    (tmp_path / "main.cpp").write_text(host.replace("  cudaDeviceSetLimit", "  // cudaDeviceSetLimit"))
    assert "cdp-pending-launch-limit" in _codes(tmp_path)


def test_compile_commands_names_files_elsewhere(tmp_path: Path) -> None:
    src, host_dir = tmp_path / "src", tmp_path / "host"
    src.mkdir()
    host_dir.mkdir()
    (src / "kernels.cu").write_text(KERNELS)
    (host_dir / "main.cpp").write_text(HOST.replace("void run(int *a, const int *len) {\n",
                                                     "void run(int *a, const int *len) {\n  cudaDeviceSetLimit("
                                                     "cudaLimitDevRuntimePendingLaunchCount, 65536);\n"))
    assert "cdp-pending-launch-limit" in _codes(src)  # not found without compile_commands.json
    (src / "compile_commands.json").write_text(json.dumps(
        [{"directory": str(host_dir), "file": "main.cpp", "command": "c++ -c main.cpp"},
         {"directory": str(src), "file": "kernels.cu", "command": "nvcc -c kernels.cu"}]))
    assert "cdp-pending-launch-limit" not in _codes(src)
    facts = program_facts(src / "kernels.cu", KERNELS)
    assert facts.pending_limit is not None and facts.pending_limit.value == 65536
    assert facts.pending_limit.file == str((host_dir / "main.cpp").resolve()) and facts.pending_limit.line == 5


def test_eval_int_handles_constants_and_refuses_the_rest() -> None:
    assert eval_int("(N + 127) / 128", {"N": "1 << 10"}) == 8
    assert eval_int("4096u * 2", {}) == 8192
    assert eval_int("n * 2", {}) is None
    assert eval_int("f(3)", {}) is None


CDP1 = """__global__ void child(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1;
}
__device__ void finish(int *a) { cudaDeviceSynchronize(); }
__global__ void parent(int *a, int n) {
  int t = threadIdx.x;
  child<<<(n + 31) / 32, 32>>>(a + t * n, n);
  if (cudaGetLastError() != cudaSuccess) return;
  WAIT
  a[t * n] *= 2;
}
int main() {
  SETLIMIT
  parent<<<1, 32>>>(nullptr, 8);
  return 0;
}
"""

WAIT_SHAPES = {
    "sync after the launch": "cudaDeviceSynchronize();",
    "sync in a branch after the launch": "if (n > 0) { cudaDeviceSynchronize(); }",
    "sync in a helper called after the launch": "finish(a);",
}


@pytest.mark.parametrize("shape", sorted(WAIT_SHAPES))
def test_every_rewrite_refuses_a_parent_that_waits_for_its_child(shape: str) -> None:
    src = CDP1.replace("WAIT", WAIT_SHAPES[shape]).replace("SETLIMIT", "")
    (la,) = find_launches(src, "w.cu")
    assert la.transforms == []
    for t in ("threshold", "coarsen", "aggregate"):
        assert "the parent waits for the child" in la.refusals[t]
        assert "on line 10" in la.refusals[t] and "cudaStreamTailLaunch" in la.refusals[t]
        with pytest.raises(RewriteError, match=r"w\.cu:8: cannot apply .*: the parent waits for the child"):
            rewrite(src, "w.cu", t, 8)  # type: ignore[arg-type]
    if "helper" in shape:
        assert "`cudaDeviceSynchronize()` in `finish`" in la.refusals["aggregate"]


def test_a_wait_before_the_launch_in_a_loop_waits_for_the_previous_iteration() -> None:
    src = CDP1.replace("  child<<<(n + 31) / 32, 32>>>(a + t * n, n);",
                       "  for (int k = 0; k < 4; ++k) {\n    cudaDeviceSynchronize();\n"
                       "    child<<<(n + 31) / 32, 32>>>(a + t * n, n);\n  }")
    src = src.replace("WAIT", "").replace("SETLIMIT", "")
    (la,) = find_launches(src, "l.cu")
    assert "cudaDeviceSynchronize()` on line 9" in la.refusals["aggregate"]
    # a wait before the launch, outside any loop, does not see this child
    src2 = CDP1.replace("  int t = threadIdx.x;", "  int t = threadIdx.x;\n  cudaDeviceSynchronize();") \
        .replace("WAIT", "").replace("SETLIMIT", "")
    (lb,) = find_launches(src2, "b.cu")
    assert "aggregate" in lb.transforms


def test_device_side_wait_and_sync_depth_are_diagnosed(tmp_path: Path) -> None:
    src = CDP1.replace("WAIT", "cudaDeviceSynchronize();").replace(
        "SETLIMIT", "cudaDeviceSetLimit(cudaLimitDevRuntimeSyncDepth, 4);")
    f = tmp_path / "cdp1.cu"
    f.write_text(src)
    ds = launch_diagnostics(src, str(f))
    waits = [d for d in ds if d.code == "cdp1-device-sync"]
    assert [(d.line, d.column) for d in waits] == [(5, 34), (10, 3)]
    assert "CUDA 12 removed it (CDP2)" in waits[1].message and "cudaStreamTailLaunch" in waits[1].message
    (depth,) = [d for d in ds if d.code == "cdp1-sync-depth"]
    assert (depth.line, depth.column) == (14, 3) and "cudaErrorUnsupportedLimit" in depth.message


def test_sync_depth_set_in_another_file_is_reported_on_the_launch(tmp_path: Path) -> None:
    (tmp_path / "kernels.cu").write_text(KERNELS)
    (tmp_path / "main.cpp").write_text(HOST.replace("void run(int *a, const int *len) {\n",
                                                     "void run(int *a, const int *len) {\n  cudaDeviceSetLimit("
                                                     "cudaLimitDevRuntimeSyncDepth, 2);\n"))
    f = tmp_path / "kernels.cu"
    (depth,) = [d for d in launch_diagnostics(f.read_text(), str(f)) if d.code == "cdp1-sync-depth"]
    assert depth.line == 8 and depth.message.startswith("main.cpp:5 sets `cudaLimitDevRuntimeSyncDepth`")
