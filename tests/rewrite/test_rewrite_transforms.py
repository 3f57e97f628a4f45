"""Each transform and the threshold → coarsen → aggregate pipeline on the DP examples: the edits
apply, the result parses with libclang without errors, and the inserted code is what Fig. 3/6/7 say."""

from __future__ import annotations

import itertools
import re
from functools import cache

import pytest
from rewrite_helpers import EXAMPLES, ROOT, example_path, load_bench_module
from warpwise.analysis.rewrite import RewriteError, TextEdit, apply_edits, find_launches, rewrite
from warpwise.analysis.rewrite.parse import parse

apply_pipeline = load_bench_module("generate").apply_pipeline
variants = load_bench_module("sweep").variants

COMBOS: list[tuple[tuple[str, str | None], ...]] = [(("threshold", None),), (("coarsen", None),)]
COMBOS += [(("aggregate", g),) for g in ("warp", "block", "multiblock", "grid")]
COMBOS += [(("threshold", None), ("coarsen", None), ("aggregate", g)) for g in ("warp", "block", "multiblock", "grid")]


def combo_id(steps: tuple[tuple[str, str | None], ...]) -> str:
    return "+".join(t + (f":{g}" if g else "") for t, g in steps)


@cache
def transformed(name: str, steps: tuple[tuple[str, str | None], ...]) -> str:
    path = example_path(name)
    return apply_pipeline(path.read_text(), str(path), EXAMPLES[name], list(steps))


@pytest.mark.parametrize("steps", COMBOS, ids=combo_id)
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_result_parses_without_errors(name: str, steps: tuple[tuple[str, str | None], ...]) -> None:
    out = transformed(name, steps)
    p = parse(out, str(example_path(name)))
    assert p.errors == []
    # every inserted block says which transform made it; no device-side cudaDeviceSynchronize (CDP2)
    for t, _g in steps:
        assert f"/* warpwise {t}" in out
    assert "cudaDeviceSynchronize" not in out.split("int main")[0]
    assert "WARPWISE_COUNT_LAUNCH_ERROR(" in out


def test_threshold_matches_fig3() -> None:
    out = transformed("spmv", (("threshold", None),))
    assert "#define WARPWISE_THRESHOLD 128" in out and "#ifndef WARPWISE_THRESHOLD" in out
    assert ("__device__ void ww_spmv_row_serial(int row, int start, int len, const int *col, const float *val, "
            "const float *x, float *y, dim3 ww_sgDim, dim3 ww_sbDim) {") in out
    assert "for (unsigned int ww_bx = 0; ww_bx < ww_sgDim.x; ++ww_bx) {" in out
    assert "int j = ww_bx * ww_sbDim.x + ww_tx;" in out
    assert "const auto ww_threads = (len);" in out
    assert "const dim3 ww_thr_gDim = (ww_threads + 127) / 128;" in out  # N evaluated once
    assert "if (ww_threads >= WARPWISE_THRESHOLD) {" in out
    assert "ww_spmv_row_serial(row, start, len, col, val, x, y, ww_thr_gDim, ww_thr_bDim);" in out
    # not in a loop: Fig. 3's if/else, no warp synchronisation
    assert re.search(r"\} else \{\s+ww_spmv_row_serial\(", out) and "__syncwarp" not in out


def test_threshold_turns_child_returns_into_jumps() -> None:
    out = transformed("bfs", (("threshold", None),))
    serial = out[out.index("__device__ void ww_bfs_edges_serial"):]
    serial = serial[:serial.index("\n}\n")]
    assert "return" not in serial
    assert "goto ww_next_thread;" in serial and "ww_next_thread:;" in serial


def test_coarsen_matches_fig6() -> None:
    out = transformed("tree", (("coarsen", None),))
    assert "#define WARPWISE_CFACTOR 4" in out
    assert "for (unsigned int ww_bx = blockIdx.x; ww_bx < ww_gDim.x; ww_bx += gridDim.x) {" in out
    assert "int k = ww_bx * blockDim.x + threadIdx.x;" in out
    assert "ww_cf_cgDim.x = (ww_cf_gDim.x + WARPWISE_CFACTOR - 1) / WARPWISE_CFACTOR;" in out
    assert re.search(r"ww_descend_children_coarse<<<ww_cf_cgDim, 128>>>\(first_child\[node\], count, "
                     r"value\[node\], weight, value, ww_cf_gDim\);", out)


def test_aggregate_multiblock_matches_fig7() -> None:
    out = transformed("mandelbrot", (("aggregate", "multiblock"),))
    assert "#define WARPWISE_AGG_GRANULARITY 8" in out
    for piece in ("atomicAdd(&ww_tile_pixels_agg_gcnt[ww_tile_pixels_agg_g], (1ull << 32) | ww_agg_nb)",
                  "__threadfence();", "atomicAdd(&ww_tile_pixels_agg_gdone[ww_tile_pixels_agg_g], 1u) + 1u == "
                  "ww_agg_members", "if (ww_scan[ww_mid] <= blockIdx.x) ww_lo = ww_mid + 1;",
                  "cudaStreamFireAndForget", "atomicMax(&ww_tile_pixels_agg_gmax[ww_tile_pixels_agg_g][0]"):
        assert piece in out
    # the parent's `return`s jump to the aggregation point at its end
    parent = out[out.index("__global__ void mariani_silver"):out.index("static int cmp_float")]
    assert "return" not in parent and parent.count("goto ww_tile_pixels_agg_end;") == 2


def test_aggregate_grid_launches_from_host_after_parent() -> None:
    out = transformed("bfs", (("aggregate", "grid"),))
    main = out[out.index("int main"):]
    launch = main.index("bfs_frontier<<<")
    assert main.index("ww_bfs_edges_agg_host_launch(0);", launch) > launch
    assert "cudaStreamSynchronize(ww_s);" in out


def test_aggregate_threshold_for_warp_and_block_only() -> None:
    for g in ("warp", "block"):
        assert "ww_agg_n >= WARPWISE_AGG_THRESHOLD" in transformed("spmv", (("aggregate", g),))
    for g in ("multiblock", "grid"):
        assert "WARPWISE_AGG_THRESHOLD" not in transformed("spmv", (("aggregate", g),))


def test_pipeline_keeps_disaggregation_outside_the_coarsening_loop() -> None:
    out = transformed("spmv", COMBOS[-3])  # threshold + coarsen + aggregate:block
    agg = out[out.index("__global__ void ww_spmv_row_coarse_agg("):]
    assert agg.index("ww_lo = ww_mid + 1") < agg.index("for (unsigned int ww_bx = ww_agg_blockIdx.x;")


def test_edits_do_not_overlap_and_carry_positions() -> None:
    path = example_path("tree")
    src = path.read_text()
    (la,) = find_launches(src, str(path))
    edits = rewrite(src, str(path), "aggregate", la.line, granularity="warp")
    ordered = sorted(edits, key=lambda e: e.start)
    for a, b in itertools.pairwise(ordered):
        assert a.end <= b.start
    data = src.encode()
    for e in edits:
        line_start = data.rfind(b"\n", 0, e.start) + 1
        assert e.line == data.count(b"\n", 0, e.start) + 1 and e.column == e.start - line_start + 1
    with pytest.raises(RewriteError, match="overlaps"):
        apply_edits(src, [TextEdit(0, 5, "x", 1, 1, 1, 6), TextEdit(3, 8, "y", 1, 4, 1, 9)])


def test_rewrite_is_idempotent_in_its_header() -> None:
    once = transformed("spmv", (("threshold", None),))
    (la,) = [x for x in find_launches(once, "s.cu") if x.child == "spmv_row"]
    twice = apply_edits(once, rewrite(once, "s.cu", "threshold", la.line))
    assert twice.count("#define WARPWISE_PRELUDE") == 1 and twice.count("#define WARPWISE_THRESHOLD") == 1
    assert "ww_spmv_row_serial_2" in twice


def test_committed_generated_variants_are_current() -> None:
    import json

    sweep = load_bench_module("sweep")
    gen = ROOT / "bench" / "dp" / "generated"
    refused = {(r["example"], r["variant"]) for r in json.loads((gen / "refused.json").read_text())}
    for name, child in sweep.EXAMPLES.items():
        path = example_path(name)
        rel = f"examples/dp/{name}/{name}.cu"
        for v in variants():
            if not v.steps:
                continue
            if (name, v.source) in refused:
                with pytest.raises(RewriteError):
                    apply_pipeline(path.read_text(), rel, child, list(v.steps), never_launches=v.kind == "nocdp")
                continue
            committed = (gen / name / f"{v.source}.cu").read_text()
            body = committed.split("\n", 1)[1]
            assert body == apply_pipeline(path.read_text(), rel, child, list(v.steps),
                                          never_launches=v.kind == "nocdp"), \
                f"rerun bench/dp/generate.py ({name}/{v.source})"


def test_unknown_granularity_and_transform() -> None:
    path = example_path("spmv")
    src = path.read_text()
    with pytest.raises(RewriteError, match="unknown granularity `cluster`"):
        rewrite(src, str(path), "aggregate", 47, granularity="cluster")
    with pytest.raises(RewriteError, match="unknown transform"):
        rewrite(src, str(path), "fuse", 47)
    with pytest.raises(RewriteError, match="factor must be a positive integer"):
        rewrite(src, str(path), "coarsen", 47, factor=0)



# other orders (CGO'22 §VI: the passes are independent and compose in any order)
ORDERS = {
    "coarsen+threshold": (("coarsen", None, "spmv_row"), ("threshold", None, "ww_spmv_row_coarse")),
    "coarsen+coarsen": (("coarsen", None, "spmv_row"), ("coarsen", None, "ww_spmv_row_coarse")),
    # thresholding warpwise's own thresholded launch again (fresh-user: `const auto ww_threads = (ww_threads);`)
    "threshold+threshold": (("threshold", None, "spmv_row"), ("threshold", None, "spmv_row")),
    "aggregate:multiblock+coarsen": (("aggregate", "multiblock", "spmv_row"), ("coarsen", None, "ww_spmv_row_agg")),
    "threshold+aggregate:warp+coarsen": (("threshold", None, "spmv_row"), ("aggregate", "warp", "spmv_row"),
                                         ("coarsen", None, "ww_spmv_row_agg")),
}


@cache
def reordered(order: str) -> str:
    path = str(example_path("spmv"))
    src = example_path("spmv").read_text()
    for transform, granularity, child in ORDERS[order]:
        (la,) = [x for x in find_launches(src, path) if x.child == child]
        src = apply_edits(src, rewrite(src, path, transform, la.line, granularity=granularity or "block"))
    return src


@pytest.mark.parametrize("order", sorted(ORDERS))
def test_other_orders_compose(order: str) -> None:
    out = reordered(order)
    assert parse(out, str(example_path("spmv"))).errors == []
    if order == "threshold+threshold":  # the inner block's names differ from the outer block's
        assert "const auto ww_threads_2 = (ww_threads);" in out and "if (ww_threads_2 >= WARPWISE_THRESHOLD)" in out
    if order == "coarsen+coarsen":  # the second copy renames its loop index and grid parameter
        assert "for (unsigned int ww_bx_2 = blockIdx.x; ww_bx_2 < ww_gDim_2.x; ww_bx_2 += gridDim.x) {" in out
        assert "for (unsigned int ww_bx = ww_bx_2; ww_bx < ww_gDim.x; ww_bx += ww_gDim_2.x) {" in out


def test_threshold_after_aggregation_is_refused() -> None:
    path = str(example_path("spmv"))
    src = transformed("spmv", (("aggregate", "block"),))
    (la,) = [x for x in find_launches(src, path) if x.child == "ww_spmv_row_agg"]
    assert "shared memory" in la.refusals["threshold"]
