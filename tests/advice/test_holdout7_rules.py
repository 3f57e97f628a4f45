"""Rules added for the seventh hold-out set (bench/advice/holdout7/, issue 10, helper model5), checked on the
committed H200 reports and cubins they were found on:

- the architecture facts record the hardware asynchronous global-to-shared copy (cp.async, compute capability
  8.0 and higher), so async_copy is judged at all;
- with one CTA per SM (a persistent kernel), async_copy counts the barrier stalls after the tile copy too and
  leads the unrolling of the copy loop (same samples); with several CTAs per SM it stays the copies alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from warpwise.analysis.arch.facts import arch_facts

from tests.conftest import pair_advice_report

ADVICE = Path(__file__).resolve().parents[2] / "bench" / "advice"
FIR = ADVICE / "holdout7" / "pairs" / "fir_persistent_sync"
FFT = ADVICE / "holdout7" / "pairs" / "fft1024_sincos"




def test_async_copy_fact_from_compute_capability_8() -> None:
    assert not arch_facts("sm_70").async_copy and not arch_facts("sm_75").async_copy
    assert arch_facts("sm_80").async_copy and arch_facts("sm_90").async_copy
    assert "8.0" in arch_facts("sm_90").source("async_copy")


def test_persistent_tile_loop_gets_async_copy_first() -> None:
    rep = pair_advice_report(FIR)
    top = rep.advice[0]
    assert top.optimizer == "async_copy"
    # one 512-thread CTA per SM: the copies' stalls plus the 2,846 barrier samples after the copy exceed A, so
    # eq. 4 hides A: T/(T-A) = 36399/26818 (H200: 1.417x achieved)
    assert top.estimate.inputs["M_barrier"] == 2846.0
    assert top.estimate.inputs["H"] == top.estimate.inputs["A"] == 9581
    assert top.estimated_speedup == pytest.approx(36399 / 26818, rel=1e-4)
    assert "one block per SM" in top.hint
    assert "loop_unrolling" in {a.optimizer for a in top.alternatives}


def test_several_ctas_per_sm_keep_async_copy_to_the_copies() -> None:
    # fft1024_rows: 4 CTAs of 512 threads per SM; no barrier samples join, and the advice stays as before
    rep = pair_advice_report(FFT)
    ac = [a for a in rep.candidates if a.optimizer == "async_copy"]
    assert all("M_barrier" not in a.estimate.inputs for a in ac)
    assert rep.advice[0].optimizer == "warp_balance"
