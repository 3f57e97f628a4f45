"""Rules added for the eleventh hold-out set's misses (bench/advice/holdout11/, issue 10, helper modelG), checked on
the committed H200 reports and cubins they were found on:

- thread_increase for a small grid of at least one CTA per SM (a persistent / cooperative kernel sized to the SM
  count) proposes the largest CTA the SMs still hold as many of (parallel._sm_filling_shape), not 256 threads;
- narrow loads that walk each thread's own bytes with the lanes apart (code.contiguous_walks, code.widenable_walks)
  belong to memory_transaction_reduction (wider per-thread loads, the L1 work of their requests cut k-fold), not
  to global_memory_coalesce;
- kernel_merge's mixed model (some launches fill the GPU, some do not) counts work in executed warp instructions and
  takes its floor as at most an empty launch's (launches.merge_estimate), so a small launch of long CTAs is not
  read as a floor.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from warpwise.analysis.advice import code, parallel
from warpwise.analysis.advice.context import KernelView, build_view
from warpwise.analysis.advice.launches import merge_estimate
from warpwise.analysis.advice.model import Advice, Skipped
from warpwise.analysis.arch.facts import arch_facts
from warpwise.analysis.arch.roofline import launch_floor_ns
from warpwise.analysis.arch.tables import ARCHS
from warpwise.analysis.pipeline import analyze
from warpwise.analysis.profile.ncu import load_profiles

from tests.conftest import pair_advice_report, pair_report

H11 = Path(__file__).resolve().parents[2] / "bench" / "advice" / "holdout11" / "pairs"
MAIN = H11.parents[1] / "pairs"


@cache
def pair_view(d: Path) -> KernelView:
    """The KernelView of the first kernel of a pair's committed report, cubin and orig.cu."""
    ka = analyze(pair_report(d), [d / "orig.sm_90.cubin"], [d / "orig.cu"]).kernels[0]
    return build_view(ka.profile, ka.program, ka.blame, arch_facts(ka.profile.arch))


def test_coop_heat_sync_fills_the_sm_with_one_cta() -> None:
    # 132 CTAs of 128 threads on 132 SMs (cudaLaunchCooperativeKernel, one CTA per SM): 4 warps per SM. Every SM
    # has its CTA, so the fix is the largest CTA an SM still holds one of: 1024 threads (31 registers: the
    # register file holds two), 32 warps per SM, not the 8 warps of a 256-thread CTA
    rep = pair_advice_report(H11 / "coop_heat_sync")
    top = rep.advice[0]
    assert top.optimizer == "thread_increase" and top.upper_bound
    inp = top.estimate.inputs
    assert inp["SMs"] == inp["SMs_new"] == 132 and inp["W_SM"] == 4 and inp["W_SM_new"] == 32
    assert "1024 threads instead of 128" in top.hint and "co-resident" in top.hint
    assert 5.0 < top.estimated_speedup < 7.5  # H200: 5.491x achieved with 1024-thread CTAs (1.93x estimated at 256)


def test_fewer_ctas_than_sms_keeps_the_conventional_size() -> None:
    # main's fourblock_poly: four 32-thread CTAs for 132 SMs; block_increase is the fix that gives the idle SMs
    # work, and thread_increase keeps PROPOSED_THREADS (the pair's fix: 256 threads, same four CTAs)
    ti = parallel.thread_increase(pair_view(MAIN / "fourblock_poly"))
    assert isinstance(ti, Advice) and ti.estimate.inputs["W_SM_new"] == parallel.PROPOSED_THREADS // 32
    assert "256 threads instead of 32" in ti.hint and "co-resident" not in ti.hint


def test_data_sized_grid_is_not_sized_to_the_sms() -> None:
    # holdout3's lj_powf: (24576 + 127) / 128 = 192 CTAs of 128 threads on 132 SMs, one thread per atom: a grid
    # sized from the data, whose CTAs have no more work to split over 1024 threads; coop_heat_sync's 132 is
    view = pair_view(H11.parents[1] / "holdout3" / "pairs" / "lj_powf")
    r = parallel._residency(view)
    assert r is not None and r.grid_ctas == 192 and not parallel.sized_to_sms(view, r)
    ti = parallel.thread_increase(view)
    assert isinstance(ti, Advice) and "256 threads instead of 128" in ti.hint
    coop = pair_view(H11 / "coop_heat_sync")
    rc = parallel._residency(coop)
    assert rc is not None and parallel.sized_to_sms(coop, rc)


def test_max_threads_per_block_fact() -> None:
    h = ARCHS[90]
    assert h.max_threads_per_block == 1024 and "1024" in h.source("max_threads_per_block")
    assert h.max_threads_per_block <= h.max_threads_per_sm
    assert pytest.approx(h.max_threads_per_block / h.warp_size) == 32


def _kernel(pair: Path, name: str):  # type: ignore[no-untyped-def]
    from warpwise.analysis.binary.load import load_cubin
    from warpwise.analysis.program.build import build_program

    prog = build_program(load_cubin(pair / "orig.sm_90.cubin"))
    return next(f for f in prog.functions.values() if f.is_kernel and name in f.name)


def test_record_hash_walk_is_found_in_the_sass() -> None:
    # `for (i = 0; i < 64; ++i) f.add(k[i])` unrolled 16x: LDG.E.U8 [R4.64-0x8] .. [R4.64+0x7], R4 += 0x10
    pf = _kernel(H11 / "record_hash_bytes", "hash_keys")
    walks = code.contiguous_walks(pf)
    assert sorted(walks) == list(range(0x120, 0x220, 0x10)) and set(walks.values()) == {(1, 16)}
    view = pair_view(H11 / "record_hash_bytes")
    wide = code.widenable_walks(view)
    assert len(wide) == 16 and set(wide.values()) == {16}  # 16 one-byte loads per 16-byte access


def test_record_hash_widening_is_memory_transaction_reduction() -> None:
    view = pair_view(H11 / "record_hash_bytes")
    gc = code.global_memory_coalesce(view)
    assert isinstance(gc, Skipped) and "walk each thread's own bytes" in gc.reason
    rep = pair_advice_report(H11 / "record_hash_bytes")
    top = rep.advice[0]
    assert top.optimizer == "memory_transaction_reduction" and top.params.get("walk_widening") == 1
    inp = top.estimate.inputs
    assert inp["k_widen"] == 16
    # 64 one-byte loads per thread each touch a sector per lane: removing 15 of 16 requests removes 15/16 of their
    # sectors, 62.9 M of the kernel's 67.3 M; L2 and DRAM move the same lines
    assert inp["walk_sectors_removed"] == pytest.approx(inp["sectors"] * 0.9348, rel=1e-3)
    assert 0.05 < inp["r_l1"] < 0.08 and inp["r_l2"] == inp["r_dram"] == 1.0
    assert "16x fewer requests" in top.hint and "no layout change" in top.hint
    assert 5.5 < top.estimated_speedup < 7.2  # H200: 6.605x achieved (global_memory_coalesce 7.289x was first)
    assert "global_memory_coalesce" not in {a.optimizer for a in rep.advice}


def test_four_byte_row_walks_stay_coalescing() -> None:
    # holdout's gemv_rowthread: each thread walks its own row of floats (a contiguous walk too), but a 4-byte
    # access coalesced across lanes fills a whole line per request: the layout fix stays global_memory_coalesce's
    d = H11.parents[1] / "holdout" / "pairs" / "gemv_rowthread"
    pf = _kernel(d, "gemv")
    assert {v for v in code.contiguous_walks(pf).values()} == {(4, 64)}
    view = pair_view(d)
    assert code.widenable_walks(view) == {}
    assert isinstance(code.global_memory_coalesce(view), Advice)


def _launches(d: Path, kernel: str):  # type: ignore[no-untyped-def]
    rep = pair_report(d)
    assert rep is not None
    return [p for p in load_profiles(rep) if kernel in p.name]


@pytest.mark.parametrize(("rel", "kernel", "lo", "hi"), [
    # three GEMVs (12288 x 4096, 11008 x 4096, 4096 x 11008), a warp per row: the 512-CTA launch (0.48 waves) runs
    # rows of 11008 and takes longest; 3.284x before (its 46.9 us read as the floor: 36.3 us, the shortest launch)
    ("holdout11/pairs/gemv_int4_bytes", "gemv_w4", 1.10, 1.26),
    # the probe that merged holdout4's fp16 GEMVs into one launch measured 1.061x; 2.699x before
    ("holdout4/pairs/gemv_fp16_decode_ww", "gemv_f16", 1.03, 1.10),
])
def test_merge_of_full_gemv_launches_pays_little(rel: str, kernel: str, lo: float, hi: float) -> None:
    profs = _launches(H11.parents[1] / rel, kernel)
    assert [p.launch.waves_per_sm >= 1 for p in profs] == [True, True, False]
    e = merge_estimate(profs)
    assert e is not None and e.inputs["work_in_instructions"] == 1.0
    small = profs[2].launch.duration_ns
    assert e.inputs["t_floor_ns"] < small and e.inputs["t_floor_ns"] <= launch_floor_ns(8.0)
    executed = [sum(s.inst_executed for s in p.pcs.values()) for p in profs]
    assert e.inputs["W"] == sum(executed)
    full_t = sum(p.launch.duration_ns - e.inputs["t_floor_ns"] for p in profs[:2])
    assert e.inputs["r_ns"] == pytest.approx(full_t / (executed[0] + executed[1]))
    assert lo < e.speedup < hi


def test_gemv_int4_kernel_merge_is_not_first() -> None:
    # the kernel's one ranking over its three launches (pipeline groups): kernel_merge is there, below the first
    d = H11 / "gemv_int4_bytes"
    srcs = [d / "orig.cu", H11.parents[1] / "pairs" / "bench.cuh"]
    (group,) = analyze(pair_report(d), [d / "orig.sm_90.cubin"], srcs, kernel="gemv_w4").groups
    rep = group.advice_report
    ranked = [a.optimizer for a in rep.advice]
    assert "kernel_merge" in ranked[1:]
    km = rep.advice[ranked.index("kernel_merge")]
    assert km.estimated_speedup < rep.advice[0].estimated_speedup and "floor of about 2.3 us" in km.hint
