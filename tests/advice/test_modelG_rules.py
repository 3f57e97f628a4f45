"""Rules added for the eleventh hold-out set's misses (bench/advice/holdout11/, issue 10, helper modelG), checked on
the committed H200 reports and cubins they were found on:

- thread_increase for a small grid of at least one CTA per SM (a persistent / cooperative kernel sized to the SM
  count) proposes the largest CTA the SMs still hold as many of (parallel._sm_filling_shape), not 256 threads.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from warpwise.analysis.advice import parallel
from warpwise.analysis.advice.context import KernelView, build_view
from warpwise.analysis.advice.model import Advice
from warpwise.analysis.arch.facts import arch_facts
from warpwise.analysis.arch.tables import ARCHS
from warpwise.analysis.pipeline import analyze

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


def test_max_threads_per_block_fact() -> None:
    h = ARCHS[90]
    assert h.max_threads_per_block == 1024 and "1024" in h.source("max_threads_per_block")
    assert h.max_threads_per_block <= h.max_threads_per_sm
    assert pytest.approx(h.max_threads_per_block / h.warp_size) == 32
