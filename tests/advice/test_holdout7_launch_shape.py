"""Launch-shape rules added for the seventh hold-out set (bench/advice/holdout7/, issue 10, helper model4),
checked on the committed H200 reports they were found on:

- kernel_merge from the launches themselves: a launch under one wave costs about a fixed floor, so merging turns
  sum t_i into (total work x the full launches' time per thread past the floor) + one floor (launches.merge_estimate);
- sm_balance for a grid under one wave with more CTAs than SMs: max / mean CTAs per SM when warps compete for
  issue (parallel._per_sm_load);
- a loaded value that picks an atomic's bin (a histogram) is not an indirection to eliminate."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from warpwise.analysis.advice.launches import merge_estimate
from warpwise.analysis.pipeline import analyze
from warpwise.analysis.profile.model import KernelProfile, LaunchConfig

from tests.conftest import pair_report

ADVICE = Path(__file__).resolve().parents[2] / "bench" / "advice"
H7 = ADVICE / "holdout7" / "pairs"


@cache
def _analysis(d: Path) -> Any:
    meta = json.loads((d / "pair.json").read_text())
    srcs = [p for p in sorted(d.iterdir()) if p.suffix in (".cu", ".cuh")] + [ADVICE / "pairs" / "bench.cuh"]
    return analyze(pair_report(d), sorted(d.glob("orig.*.cubin")), srcs, kernel=meta["kernel"])


def _kernel_report(d: Path) -> Any:
    (group,) = _analysis(d).groups
    return group.advice_report


def _launch(blocks: int, waves: float, ns: float) -> KernelProfile:
    lc = LaunchConfig(grid=(blocks, 1, 1), block=(256, 1, 1), sm_count=132, waves_per_sm=waves, duration_ns=ns)
    return KernelProfile(name="k", mangled="_Z1kv", arch="sm_90", launch=lc, pcs={})


def test_merge_estimate_is_total_work_at_the_full_rate_plus_one_floor() -> None:
    # two 2-CTA launches of 2000 ns (the floor) and one of 4096 CTAs (3.88 waves) taking 7000 ns:
    # r = (7000 - 2000) / (4096 * 256) ns per thread, W = (2 + 2 + 4096) * 256 threads
    e = merge_estimate([_launch(2, 0.0019, 2000.0), _launch(4096, 3.88, 7000.0), _launch(2, 0.0019, 2000.0)])
    assert e is not None
    r = 5000.0 / (4096 * 256)
    assert e.inputs["r_ns"] == pytest.approx(r)
    assert e.inputs["W"] == 4100 * 256 and e.inputs["t_floor_ns"] == 2000.0
    assert e.speedup == pytest.approx(11000.0 / (4100 * 256 * r + 2000.0))


def test_merge_estimate_needs_a_full_launch_and_a_small_one() -> None:
    assert merge_estimate([_launch(4096, 3.88, 7000.0), _launch(3072, 2.9, 5800.0)]) is None  # all full
    assert merge_estimate([_launch(2, 0.0019, 2000.0), _launch(8, 0.0076, 2300.0)]) is None  # no rate
    assert merge_estimate([_launch(2, 0.0019, 2000.0)]) is None  # one launch
    assert merge_estimate([_launch(2, 0.0019, 0.0), _launch(4096, 3.88, 7000.0)]) is None  # no duration


def test_sgd_per_tensor_kernel_merge_comes_first_from_its_launches() -> None:
    # 92 profiled launches (67 under one wave), 398.4 us; the 25 full ones run at their rate past the 2.0 us floor:
    # 41.6 M threads, 33.8 M warp instructions (the unit of work since modelG: the same S for an element-wise
    # kernel) -> 199.7 + 2.0 us, S = 1.975 (achieved 1.982x on the H200)
    rep = _kernel_report(H7 / "sgd_per_tensor")
    top = rep.advice[0]
    assert top.optimizer == "kernel_merge"
    assert top.estimated_speedup == pytest.approx(1.975, abs=0.002)
    inp = top.estimate.inputs
    assert (inp["launches"], inp["full_launches"], inp["t_floor_ns"], inp["W"]) == (92, 25, 2016.0, 33800416.0)
    assert inp["work_in_instructions"] == 1.0
    assert top.interval is None and not top.upper_bound and "floor" in top.basis
    assert all(s.optimizer != "kernel_merge" for s in rep.skipped)


def test_mc_options_140_gets_sm_balance_from_ctas_per_sm() -> None:
    # 140 CTAs of 1024 threads on 132 SMs (0.53 waves): 8 SMs hold 2, S = 2 / (140/132) = 1.886 (achieved 1.731x);
    # issue is contended (7002 not_selected against 1727 selected samples in launch 0)
    rep = _kernel_report(H7 / "mc_options_140")
    (a,) = [x for x in rep.advice if x.optimizer == "sm_balance"]
    assert a.estimated_speedup == pytest.approx(2 / (140 / 132))
    assert not a.upper_bound and a.interval is None
    assert "8 SMs run 2 CTAs" in a.hint


def test_hist256_bin_from_the_pixel_is_no_indirection() -> None:
    # the pixel loaded from img[i] picks the shared bin of ATOMS.ADD: a histogram, not an index to compute
    rep = _kernel_report(H7 / "hist256_smallgrid")
    assert all(a.optimizer != "indirect_address_elimination" for a in rep.advice)
    (s,) = [x for x in rep.skipped if x.optimizer == "indirect_address_elimination"]
    assert s.reason == "no stalls on loaded addresses"
