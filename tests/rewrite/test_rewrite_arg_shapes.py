"""Aggregation stores child arguments of every trivially copyable shape bytewise, and every accepted
rewrite compiles (issue 14 item 1). One source holds one child per argument shape; each launch is
aggregated (and, for some, thresholded and coarsened first); the result is compiled once with
nvcc -rdc=true -arch=sm_90."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from warpwise.analysis.rewrite import RewriteError, apply_edits, find_launches, rewrite

SHAPES = r"""
struct Graph { // user-provided constructor, no default constructor
  __host__ __device__ Graph(const int *o, int n_) : offs(o), n(n_) {}
  const int *offs;
  int n;
};
struct View { // deleted default constructor
  View() = delete;
  __host__ __device__ explicit View(int *q_) : q(q_) {}
  int *q;
};
struct Ref { int &r; }; // holds a reference
template <typename T> struct Pair { T a, b; };
struct Arr { int v[4]; };

__global__ void k_graph(Graph g, int *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < g.n) out[i] = g.offs[i];
}
__global__ void k_view(View v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v.q[i] += 1;
}
__global__ void k_ref(Ref r, int *out) { out[threadIdx.x] = (int)(&r.r != nullptr); }
__global__ void k_pair(Pair<float> p, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = p.a * i + p.b;
}
__global__ void k_arr(Arr a, int c[4], int *out) {
  out[threadIdx.x] = a.v[threadIdx.x % 4] + c[threadIdx.x % 4];
}
__global__ void k_const(const float *__restrict__ x, const int *const y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i];
}

__global__ void parent(Graph g, View v, Ref r, Pair<float> p, Arr a, int *c, const float *x, const int *y,
                       int *out, float *fout) {
  int t = threadIdx.x;
  int n = 32 + t;
  k_graph<<<(n + 31) / 32, 32>>>(g, out + t * 64);
  k_view<<<(n + 31) / 32, 32>>>(v, n);
  k_ref<<<1, 32>>>(r, out);
  k_pair<<<(n + 31) / 32, 32>>>(p, fout + t * 64, n);
  k_arr<<<1, 32>>>(a, c, out);
  k_const<<<(n + 31) / 32, 32>>>(x, y, fout, n);
}

int main() {
  Graph g(nullptr, 0);
  View v(nullptr);
  int z = 0;
  Ref r{z};
  Pair<float> p{1.0f, 2.0f};
  Arr a{{1, 2, 3, 4}};
  parent<<<1, 32>>>(g, v, r, p, a, nullptr, nullptr, nullptr, nullptr, nullptr);
  return cudaDeviceSynchronize() != cudaSuccess;
}
"""

# child -> pipeline applied to its launch (granularities spread over the shapes)
PLAN = {"k_graph": [("aggregate", "block")],
        "k_view": [("aggregate", "warp")],
        "k_ref": [("aggregate", "multiblock")],
        "k_pair": [("threshold", None), ("coarsen", None), ("aggregate", "grid")],
        "k_arr": [("aggregate", "block")],
        "k_const": [("threshold", None), ("aggregate", "multiblock")]}


def _apply(source: str, path: str, child: str, steps: list[tuple[str, str | None]]) -> str:
    current = child
    for transform, g in steps:
        (la,) = [x for x in find_launches(source, path) if x.child == current and x.parent == "parent"]
        source = apply_edits(source, rewrite(source, path, transform, la.line, granularity=g or "block"))
        if transform == "coarsen":
            current = f"ww_{current}_coarse"
    return source


def rewritten() -> str:
    out = SHAPES
    for child, steps in PLAN.items():
        out = _apply(out, "shapes.cu", child, steps)
    return out


def test_every_shape_is_accepted_and_stored_bytewise() -> None:
    launches = {la.child: la for la in find_launches(SHAPES, "shapes.cu")}
    assert set(launches) == set(PLAN)
    for la in launches.values():
        assert "aggregate" in la.transforms, la.refusals
    out = rewritten()
    # records hold bytes, values go in and out with memcpy / a bitwise read: no default construction
    assert "alignas(Graph) unsigned char g[sizeof(Graph)];" in out
    assert "alignas(View) unsigned char v[sizeof(View)];" in out
    assert "alignas(Pair<float>) unsigned char p[sizeof(Pair<float>)];" in out
    assert "alignas(int *) unsigned char c[sizeof(int *)];" in out  # the array parameter decays
    assert "memcpy(ww_agg_r.g, &ww_agg_a0, sizeof ww_agg_a0);" in out
    assert "[[maybe_unused]] Graph g = *reinterpret_cast<Graph const *>(ww_r.g);" in out
    assert "int * c = *reinterpret_cast<int * const *>(ww_r.c);" in out
    assert "const float *__restrict__ x = *reinterpret_cast<const float * const *>(ww_r.x);" in out
    assert "const int *const y = *reinterpret_cast<const int * const *>(ww_r.y);" in out
    assert "Graph g;" not in out and "View v;" not in out


def test_non_trivially_copyable_argument_is_refused_with_the_reason() -> None:
    src = ("struct Owner {\n  __host__ __device__ Owner(int *p_) : p(p_) {}\n"
           "  __host__ __device__ Owner(const Owner &o) : p(o.p) {}\n  int *p;\n};\n"
           "struct Holder { Owner o; };\n"
           "__global__ void child(Owner o) { o.p[threadIdx.x] = 1; }\n"
           "__global__ void child2(Holder h) { h.o.p[threadIdx.x] = 1; }\n"
           "__global__ void parent(Owner o, Holder h) {\n  child<<<1, 32>>>(o);\n  child2<<<1, 32>>>(h);\n}\n")
    la, lb = find_launches(src, "o.cu")
    assert "parameter `o` of child kernel `child`: `Owner` has a user-provided copy constructor" \
        in la.refusals["aggregate"]
    assert "`Owner` has a user-provided copy constructor" in lb.refusals["aggregate"]
    assert "threshold" in la.transforms  # only aggregation stores the value in a record
    with pytest.raises(RewriteError, match=r"o\.cu:10: cannot apply aggregate: parameter `o`"):
        rewrite(src, "o.cu", "aggregate", 10)


def test_shapes_compile(nvcc: str, tmp_path: Path) -> None:
    f = tmp_path / "shapes.cu"
    f.write_text(rewritten())
    r = subprocess.run([nvcc, "-rdc=true", "-arch=sm_90", "-c", str(f), "-o", str(tmp_path / "shapes.o")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "warning" not in r.stderr, r.stderr[-2000:]
