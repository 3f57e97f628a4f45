"""rewrite.host_flow: how the host-side launches of one kernel relate, on the committed benchmark sources and on
small programs written here (issue 10, helper modelC)."""

from __future__ import annotations

from pathlib import Path

import pytest
from warpwise.analysis.rewrite import host_flow as hf
from warpwise.analysis.rewrite.host_flow import host_flow

ADVICE = Path(__file__).resolve().parents[2] / "bench" / "advice"


def _flow(rel: str, kernel: str):  # type: ignore[no-untyped-def]
    path = ADVICE / rel
    return host_flow(path.read_text(), str(path), kernel)


def test_per_plane_launches_built_in_the_loop_are_independent() -> None:
    f = _flow("holdout9/pairs/planes_per_launch/orig.cu", "normalize_plane")
    assert f is not None and f.kind == "independent" and f.launches == 1 and f.params == ("value", "value", "value")


def test_swapped_buffers_are_a_rotation() -> None:
    f = _flow("holdout8/pairs/coarse_jacobi/orig.cu", "coarse_jacobi")
    assert f is not None and f.kind == "rotation" and "swap(d_u, d_v)" in f.reason and f.line == 58
    assert f.params == ("read", "write", "read", "value")


def test_output_of_one_launch_read_by_the_next_is_a_chain() -> None:
    f = _flow("holdout5/pairs/pointwise_chain/orig.cu", "apply_ops")
    assert f is not None and f.kind == "chain" and f.launches == 3 and "d_t" in f.reason and f.line == 38


def test_subscripted_per_tensor_arguments_link_nothing() -> None:
    f = _flow("holdout7/pairs/sgd_per_tensor/orig.cu", "sgd_momentum")
    assert f is not None and f.kind == "independent"


SRC = """
__global__ void step(const float* __restrict__ a, float* __restrict__ b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i] * 2.0f;
}
int main() {
  float *a = nullptr, *b = nullptr;
  for (int s = 0; s < 10; ++s) {
    step<<<4, 256>>>(a, b, 1024);%s
  }
  return 0;
}
"""


def test_same_output_buffer_every_iteration_is_a_repeat_and_an_advanced_one_is_not() -> None:
    f = host_flow(SRC % "", "/tmp/t.cu", "step")
    assert f is not None and f.kind == "repeat" and "b" in f.reason
    g = host_flow(SRC % "\n    b += 1024;", "/tmp/t.cu", "step")
    assert g is not None and g.kind == "independent"
    assert host_flow(SRC % "", "/tmp/t.cu", "other") is None


def test_a_failed_parse_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # libclang is the external boundary: a parse that raises once (a broken libclang install being repaired)
    # gives no verdict, and the next ask of the same text parses again and gets one
    src = SRC % "\n    b += 4096;"
    real = hf.parse
    calls: list[str] = []

    def broken(text: str, path: str):  # type: ignore[no-untyped-def]
        calls.append(path)
        raise OSError("libclang.so: cannot open shared object file")

    monkeypatch.setattr(hf, "parse", broken)
    assert host_flow(src, "/tmp/retry.cu", "step") is None
    monkeypatch.setattr(hf, "parse", real)
    again = host_flow(src, "/tmp/retry.cu", "step")
    assert calls == ["/tmp/retry.cu"] and again is not None and again.kind == "independent"
    # the same text again is the cached verdict, another text a new one
    assert host_flow(src, "/tmp/retry.cu", "step") is again
    other = host_flow(SRC % "", "/tmp/retry.cu", "step")
    assert other is not None and other.kind == "repeat"


def test_a_buffer_reallocated_or_repointed_in_the_loop_is_no_repeat() -> None:
    # cudaMalloc(&b, ...) each iteration: a new buffer per launch (address taken)
    f = host_flow(SRC % "\n    cudaMalloc(&b, 4096);", "/tmp/t2.cu", "step")
    assert f is not None and f.kind == "independent"
    # writing through a pointer (b[0] = ..., what it points to) leaves the same buffer: still a repeat
    h = host_flow(SRC % "\n    b[0] = 0.0f;", "/tmp/t4.cu", "step")
    assert h is not None and h.kind == "repeat"


def test_a_loop_passing_its_counter_over_the_same_data_is_steps() -> None:
    f = _flow("holdout11/pairs/bitonic_segments/orig.cu", "bitonic_segments")  # stage (k, j) of a network
    assert f is not None and f.kind == "steps" and "loop over j" in f.reason and f.line == 47
    g = _flow("holdout12/pairs/brownian_steps/orig.cu", "brownian_step")  # structs copied by value, the step
    assert g is not None and g.kind == "steps" and "loop over step" in g.reason
    # three seeded runs whose output is copied back between launches: each result consumed, not steps
    h = _flow("holdout6/pairs/asian_unroll_all/orig.cu", "asian_paths")
    assert h is not None and h.kind != "steps"
    # a per-tensor loop passing subscripted arguments is not steps either
    t = _flow("holdout7/pairs/sgd_per_tensor/orig.cu", "sgd_momentum")
    assert t is not None and t.kind == "independent"


def test_steps_needs_the_counter_and_unchanged_arguments() -> None:
    src = """
__global__ void step(float* x, int n, int t) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.5f + t;
}
int main() {
  float* x = nullptr;
  int n = 1024;
  for (int t = 0; t < 32; ++t) {
    step<<<4, 256>>>(x, n, %s);%s
  }
  return 0;
}
"""
    assert host_flow(src % ("t", ""), "/tmp/s1.cu", "step").kind == "steps"  # type: ignore[union-attr]
    # the counter not passed: the same launch repeated (the pointer written every time)
    assert host_flow(src % ("0", ""), "/tmp/s2.cu", "step").kind == "repeat"  # type: ignore[union-attr]
    # the buffer advanced in the loop: each launch works on other data
    assert host_flow(src % ("t", "\n    x += n;"), "/tmp/s3.cu", "step").kind != "steps"  # type: ignore[union-attr]
    # the result copied back between launches: consumed each step
    copy = "\n    cudaMemcpy(nullptr, x, n * sizeof(float), cudaMemcpyDeviceToHost);"
    assert host_flow(src % ("t", copy), "/tmp/s4.cu", "step").kind != "steps"  # type: ignore[union-attr]


def test_a_level_loop_that_stops_on_a_flag_read_back_is_convergence_not_steps() -> None:
    # holdout13's bfs_levels_powerlaw: for (cur = 0;; ++cur) { memset; launch(g, lv, cur); memcpy D2H; break }
    f = _flow("holdout13/pairs/bfs_levels_powerlaw/orig.cu", "bfs_expand")
    assert f is not None and f.kind == "convergence" and f.line == 67 and "break at line 71" in f.reason


def test_stage_launches_ping_ponging_two_buffers_are_steps() -> None:
    # holdout13's fft_stage_launches: for (s...) { dst = dbuf[s & 1]; launch(src, dst, rows, 1 << s); src = dst; }
    f = _flow("holdout13/pairs/fft_stage_launches/orig.cu", "fft_radix2")
    assert f is not None and f.kind == "steps" and "loop over s" in f.reason and "src = dst" in f.reason
    assert f.line == 51 and f.params == ("read", "write", "value", "value")
    # ping-pong solvers that do not pass their counter stay rotations (holdout8/holdout11 Jacobi sweeps)
    j = _flow("holdout11/pairs/jacobi5_stream/orig.cu", "jacobi5")
    assert j is not None and j.kind == "rotation"


PING = """
__global__ void stage(const float* __restrict__ a, float* __restrict__ b, int n, int s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i ^ (1 << s)] + a[i];
}
int main() {
  float *a = nullptr, *b = nullptr;
  int changed = 0, *d_changed = nullptr;
  for (int s = 0; %s; ++s) {
    stage<<<4, 256>>>(a, b, 1024, %s);%s
    float* t = a; a = b; b = t;
  }
  return changed;
}
"""


@pytest.mark.parametrize(("cond", "arg", "extra", "kind"), [
    ("s < 10", "1 << s", "", "steps"),          # a counted stage loop passing the stage
    ("s < 10", "1 << 3", "", "rotation"),       # the counter not passed: a plain ping-pong
    ("s < 10", "s + changed", "", "rotation"),  # another variable in the stage argument
    # the result copied back between stages: each one consumed
    ("s < 10", "s", "\n    cudaMemcpy(nullptr, b, 4096, cudaMemcpyDeviceToHost);", "rotation"),
    # a flag read back and tested: a convergence loop, whatever the arguments
    ("s < 10", "s", "\n    cudaMemcpy(&changed, d_changed, 4, cudaMemcpyDeviceToHost);\n    if (!changed) break;",
     "convergence"),
    ("changed", "s", "\n    cudaMemcpy(&changed, d_changed, 4, cudaMemcpyDeviceToHost);", "convergence"),
    # a device-to-host copy of a flag the loop does not test: no convergence
    ("s < 10", "s", "\n    cudaMemcpy(&changed, d_changed, 4, cudaMemcpyDeviceToHost);", "steps"),
])
def test_ping_pong_steps_need_a_counted_loop_passing_only_the_counter(cond: str, arg: str, extra: str,
                                                                      kind: str) -> None:
    src = "#include <cuda_runtime.h>\n" + PING % (cond, arg, extra)
    f = host_flow(src, f"/tmp/ping_{abs(hash((cond, arg, extra)))}.cu", "stage")
    assert f is not None and f.kind == kind, f
