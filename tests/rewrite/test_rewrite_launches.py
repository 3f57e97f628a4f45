"""find_launches on the DP examples and on small kernels that some transforms refuse."""

from __future__ import annotations

import pytest
from rewrite_helpers import EXAMPLES, example_path
from warpwise.analysis.rewrite import RewriteError, find_launches, rewrite


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_examples_have_one_device_launch_with_exact_extents(name: str) -> None:
    path = example_path(name)
    src = path.read_text()
    (la,) = find_launches(src, str(path))
    data = src.encode()
    assert la.child == EXAMPLES[name]
    assert data[la.start:la.end].decode().startswith(f"{la.child}<<<")
    assert data[la.start:la.end].endswith(b";")
    lines = src.splitlines()
    assert lines[la.line - 1][la.column - 1:].startswith(la.child)
    for span in (la.grid, la.block, *la.args):
        assert data[span.start:span.end].decode() == span.text
    assert la.transforms == ["threshold", "coarsen", "aggregate"]
    assert not la.in_loop


def test_example_details() -> None:
    path = example_path("bfs")
    (la,) = find_launches(path.read_text(), str(path))
    assert (la.parent, la.grid.text, la.block.text) == ("bfs_frontier", "blocks", "64")
    assert (la.shared, la.stream) == (None, None)
    assert [a.text for a in la.args] == ["first", "deg", "cur_level + 1", "adj", "level", "next", "next_size"]
    assert (la.thread_count, la.thread_count_pattern) == ("deg", "(N-1)/b+1 (split across statements)")


def test_utf8_byte_offsets_and_columns() -> None:
    src = ("// über größe — ünïcödé\n__global__ void k(int *a) { a[threadIdx.x] = 1; }\n"
           "__global__ void p(int *a) { /* é */ k<<<1, 32>>>(a); }\n")
    (la,) = find_launches(src, "u.cu")
    data = src.encode()
    assert data[la.start:la.end] == b"k<<<1, 32>>>(a);"
    assert la.line == 3
    line3 = data.split(b"\n")[2]
    assert line3[la.column - 1:].startswith(b"k<<<")
    assert la.column == len("__global__ void p(int *a) { /* é */ ".encode()) + 1


REFUSED = {
    "sync": ("__global__ void child(float *a) { __shared__ float s[64]; s[threadIdx.x] = a[threadIdx.x]; "
             "__syncthreads(); a[threadIdx.x] = s[63 - threadIdx.x]; }", "threshold", "__syncthreads"),
    "shared": ("__global__ void child(float *a) { __shared__ float s[64]; s[threadIdx.x] = 1; a[0] = s[0]; }",
               "threshold", "shared memory"),
    "warp": ("__global__ void child(float *a) { a[0] = __shfl_down_sync(0xffffffffu, a[threadIdx.x], 1); }",
             "threshold", "__shfl_down_sync"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_threshold_refuses_sync_shared_and_warp_children(case: str) -> None:
    child, transform, why = REFUSED[case]
    src = child + "\n__global__ void parent(float *a) {\n  child<<<1, 64>>>(a);\n}\n"
    (la,) = find_launches(src, "r.cu")
    assert why in la.refusals[transform]
    assert "coarsen" in la.transforms and "aggregate" in la.transforms
    with pytest.raises(RewriteError, match=why):
        rewrite(src, "r.cu", transform, 3)


def test_aggregate_accepts_loops_and_recursion_refuses_streams() -> None:
    child = "__global__ void child(int *a) { a[threadIdx.x] = 1; }\n"
    loop = child + "__global__ void parent(int *a) {\n  for (int i = 0; i < 4; ++i)\n    child<<<1, 32>>>(a + i);\n}\n"
    (la,) = find_launches(loop, "l.cu")
    assert la.in_loop and "aggregate" in la.transforms  # flattened: several records per parent thread
    rec = "__global__ void rec(int *a, int d) {\n  if (d > 0) rec<<<1, 1>>>(a, d - 1);\n}\n"
    (la,) = find_launches(rec, "rec.cu")
    assert "aggregate" in la.transforms  # block granularity: analysis/rewrite/aggregate_rec.py
    # ... but this file has no host launch of `rec`, which resets the record pool
    with pytest.raises(RewriteError, match="the host launch of `rec` is not in this file"):
        rewrite(rec, "rec.cu", "aggregate", 2)
    st = child + ("__global__ void parent(int *a) {\n  cudaStream_t s;\n  cudaStreamCreateWithFlags(&s, "
                  "cudaStreamNonBlocking);\n  child<<<1, 32, 0, s>>>(a);\n}\n")
    (la,) = find_launches(st, "s.cu")
    assert "stream `s`" in la.refusals["aggregate"]
    with pytest.raises(RewriteError, match=r"s\.cu:5: cannot apply aggregate"):
        rewrite(st, "s.cu", "aggregate", 5)


def test_helper_reading_builtins_is_refused() -> None:
    src = ("__device__ int gid() { return blockIdx.x * blockDim.x + threadIdx.x; }\n"
           "__global__ void child(int *a) { a[gid()] = 1; }\n"
           "__global__ void parent(int *a) {\n  child<<<2, 32>>>(a);\n}\n")
    (la,) = find_launches(src, "h.cu")
    assert la.transforms == []
    assert "calls `gid`" in la.refusals["threshold"]


def test_bad_line_names_the_launch_lines() -> None:
    path = example_path("spmv")
    with pytest.raises(RewriteError, match=r"spmv.cu:3: no device-side kernel launch on this line .* lines: 47"):
        rewrite(path.read_text(), str(path), "threshold", 3)


def test_child_defined_after_parent_is_refused() -> None:
    src = ("__global__ void child(int *a);\n__global__ void parent(int *a) {\n  child<<<1, 32>>>(a);\n}\n"
           "__global__ void child(int *a) { a[threadIdx.x] = 1; }\n")
    (la,) = find_launches(src, "after.cu")
    assert la.transforms == [] and "defined after its parent" in la.refusals["coarsen"]


def test_launches_and_kernels_inside_extern_c_and_namespaces_are_found() -> None:
    # kernels in an extern "C" block (how libraries export unmangled kernels), a CDP parent among them
    src = (
        'namespace img { __global__ void blur(float* o, int n) { if (threadIdx.x < n) o[threadIdx.x] = 0; } }\n'
        'extern "C" {\n'
        '__global__ void scale(float* o, int n) { if (threadIdx.x < n) o[threadIdx.x] *= 2; }\n'
        '__global__ void parent(float* o, int n) { scale<<<(n + 255) / 256, 256>>>(o, n); }\n'
        '}\n'
    )
    from warpwise.analysis.rewrite.kernel import global_functions
    from warpwise.analysis.rewrite.parse import parse

    (la,) = find_launches(src, "c_api.cu")
    assert (la.parent, la.child, la.line) == ("parent", "scale", 4)
    assert global_functions(parse(src, "c_api.cu")) == {"blur", "scale", "parent"}
