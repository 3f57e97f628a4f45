"""atomic_privatization's aggregation factor (issue 10, helper modelD): the estimate is for the fix the hint names
first, k times fewer same-address atomics (Amdahl with f = 1 for serialized atomics, then the roofline after the
fix), with k from the SASS and launch facts; checked on the committed H200 reports and cubins."""

from __future__ import annotations

from pathlib import Path

import pytest
from synth_sass import cubin, function
from warpwise.analysis.advice import atomics
from warpwise.analysis.binary.load import load_cubin
from warpwise.analysis.program.build import build_program

from tests.conftest import pair_advice_report

ADVICE = Path(__file__).resolve().parents[2] / "bench" / "advice"
IMAGE = ADVICE / "holdout9" / "pairs" / "image_means_atomic"
KMEANS = ADVICE / "holdout8" / "pairs" / "kmeans_atomics"
HIST = ADVICE / "holdout" / "pairs" / "hist_global_atomics"
LOSS = ADVICE / "holdout2" / "pairs" / "loss_atomic_sum"
CONFUSION = ADVICE / "holdout3" / "pairs" / "confusion_atomics"
SEGMENT = ADVICE / "holdout5" / "pairs" / "segment_sum_sorted"


def _reds(pair: Path) -> list[tuple[object, object]]:
    prog = build_program(load_cubin(pair / "orig.sm_90.cubin"))
    return [(pf, i) for pf in prog.functions.values() for i in pf.instructions if i.base_opcode == "REDG"]


@pytest.mark.parametrize("pair, values", [
    (KMEANS, [16] * 5),  # nearest centroid: a chain of SEL over the immediates 0..15 (k = 16)
    (HIST, [256]),  # hist[img[i]]: an 8-bit load (LDG.E.U8)
    (IMAGE, [1]),  # sums[blockIdx.z]: one per block
    (LOSS, [1]),  # one address for the grid
    (CONFUSION, [None]),  # cm[labels[i] * 10 + preds[i]]: two 32-bit loads, not bounded by the SASS
    (SEGMENT, [None]),  # out[id[i]]: a 32-bit load
])
def test_address_values_from_the_sass(pair: Path, values: list[int | None]) -> None:
    assert [atomics.address_values(pf, i) for pf, i in _reds(pair)] == values  # type: ignore[arg-type]


LOOP = """
MOV R2, RZ ; L5
LDC.64 R6, c[0x0][0x220] ; L6
IADD3 R2, R2, 0x1, RZ ; L6
ISETP.GE.AND P0, PT, R2, 0x10, PT ; L6
@!P0 BRA 0x20 ; L6
IMAD.WIDE R6, R2, 0x4, R6 ; L7
REDG.E.ADD.STRONG.GPU desc[UR4][R6.64], R2 ; L7
EXIT ; L8
"""  # an index carried around a loop: its values grow with the trip count


def test_loop_carried_index_is_unbounded() -> None:
    pf = build_program(cubin(function(LOOP))).functions["k"]
    red = next(i for i in pf.instructions if i.base_opcode == "REDG")
    assert atomics.address_values(pf, red) is None


def test_per_block_address_gets_the_warp_reduction() -> None:
    # image_means_atomic: one REDG per pixel into its frame's accumulator (blockIdx.z), 32 active lanes per warp.
    # Named first: a warp shuffle reduction, one atomic per warp: k = 32. Measured on the H200: 31.987x
    # (before: the roofline after infinite privatization, 441.8x).
    a = next(x for x in pair_advice_report(IMAGE).advice if x.optimizer == "atomic_privatization")
    assert a.estimate.inputs["k"] == pytest.approx(32.0)
    assert a.estimated_speedup == pytest.approx(32.0, rel=1e-6) and not a.upper_bound
    assert abs(a.estimated_speedup - 31.987) / 31.987 < 0.01
    assert "reduce the warp with __shfl_down_sync and issue one atomic per warp" in a.hint
    assert "32x fewer atomics on each address" in a.hint


def test_data_bins_bounded_by_the_sass_get_the_per_block_copy() -> None:
    # kmeans_atomics: 256 threads per block, five REDGs each on 16 bins: the per-block shared copy flushes one
    # atomic per bin, 16x fewer (measured 22.02x; before: 295x)
    a = next(x for x in pair_advice_report(KMEANS).advice if x.optimizer == "atomic_privatization")
    assert a.estimate.inputs["k"] == pytest.approx(16.0)
    assert a.estimated_speedup == pytest.approx(16.0, rel=1e-6)
    assert "keep a per-block copy of the bins in shared memory" in a.hint
    assert "256 atomics per block on at most 16 bins" in a.hint


def test_as_many_bins_as_threads_needs_the_grid_stride_loop() -> None:
    # hist_global_atomics: 256 threads per block on 256 bins (8-bit pixels): a per-block copy alone would leave
    # about one global atomic per bin and thread, so the fix named walks one wave of blocks (124.1 waves):
    # k = 124.1 (measured 157x with 8 blocks per SM; before: the roofline bound 250.8x)
    a = next(x for x in pair_advice_report(HIST).advice if x.optimizer == "atomic_privatization")
    assert a.estimate.inputs["k"] == pytest.approx(124.12, rel=1e-3)
    # then the launch floor (the fixed cost per launch, f_ns, stays): T/(f + (T - f)/k) = 120.2x
    t, f = a.estimate.inputs["T_ns"], a.estimate.inputs["f_ns"]
    assert a.estimated_speedup == pytest.approx(t / (f + (t - f) / a.estimate.inputs["k"]), rel=1e-6)
    assert a.estimated_speedup == pytest.approx(120.23, rel=1e-3)
    assert a.hint.count("grid-stride loop over one wave of blocks") == 1


def test_one_address_for_the_grid_keeps_the_roofline() -> None:
    # loss_atomic_sum: k = 32 lanes x 31.03 waves = 993 (its fix: 8448 atomics for 8 M), far above the SM ceiling:
    # the roofline after the fix binds (an upper bound), as before (measured 447.9x)
    a = next(x for x in pair_advice_report(LOSS).advice if x.optimizer == "atomic_privatization")
    assert a.estimate.inputs["k"] == pytest.approx(992.97, rel=1e-3)
    assert a.upper_bound and a.cap is not None and a.cap.unit == "sm"
    t, f = a.estimate.inputs["T_ns"], a.estimate.inputs["f_ns"]
    assert a.estimated_speedup == pytest.approx(t / (f + (t - f) / a.cap.cap), rel=1e-6)  # then the launch floor
    assert a.estimated_speedup == pytest.approx(428.41, rel=1e-3)
    assert "accumulate in a register over a grid-stride loop with one wave of blocks" in a.hint


def test_unbounded_bins_keep_the_bound() -> None:
    # confusion_atomics: the bins come from two 32-bit loads: k unknown, the estimate stays the bound of removing
    # all the atomics (the roofline after the fix)
    a = next(x for x in pair_advice_report(CONFUSION).advice if x.optimizer == "atomic_privatization")
    assert "k" not in a.estimate.inputs and a.upper_bound
    assert "not bounded by the SASS" in a.hint
    # the bound is the roofline after removing the atomics, not a finite aggregation factor's eq. 2
    assert a.cap is not None and a.estimated_speedup <= a.cap.cap + 1e-9
