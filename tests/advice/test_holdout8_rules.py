"""Rules added for the eighth hold-out set (bench/advice/holdout8/, issue 10, helper modelB), checked on the
committed H200 reports and cubins they were found on:

- fast_math reads a 2/pi multiply as the sin/cos argument reduction only where the function holds the
  Cody-Waite pi/2 split of that reduction: the exact ``fmodf(x, 2 pi)`` multiplies by the same 2/pi (the
  reciprocal of 2 pi's mantissa) in its exponent loop, and -use_fast_math does not replace that routine;
- strength_reduction names an exact ``fmodf`` wrap and its fix (``p -= floorf(p)``, the phase in turns),
  estimated by the issue/SFU roofline after the fix, with the fix's FRND.FLOOR on the SFU/XU pipe."""

from __future__ import annotations

from pathlib import Path

import pytest
from warpwise.analysis.advice import code

from tests.conftest import pair_advice_report

ADVICE = Path(__file__).resolve().parents[2] / "bench" / "advice"
SYNTH = ADVICE / "holdout8" / "pairs" / "synth_fmodf"
HAVERSINE = ADVICE / "holdout5" / "pairs" / "haversine_fastmath"


def test_fmodf_is_not_a_sin_cos_reduction() -> None:
    rep = pair_advice_report(SYNTH)
    assert "fast_math" not in {a.optimizer for a in rep.candidates}


def test_precise_sinf_still_reads_as_trig() -> None:
    # haversine's precise sinf/cosf (Cody-Waite split present) keeps its fast_math finding with the trig kind
    rep = pair_advice_report(HAVERSINE)
    fm = [a for a in rep.candidates if a.optimizer == "fast_math"]
    assert fm and "sin/cos argument reduction" in fm[0].hint


def test_fmodf_wrap_strength_reduction_first() -> None:
    rep = pair_advice_report(SYNTH)
    top = rep.advice[0]
    assert top.optimizer == "strength_reduction"
    assert "fmodf" in top.hint and "floorf" in top.hint
    inp = top.estimate.inputs
    # 8 inlined fmodf sites x 4096 warps x 256 frames = 8,388,608 warp calls
    assert inp["calls"] == 8 * 4096 * 256
    # the SFU pipe after the fix: 8 MUFU.SIN + 8 FRND.FLOOR per frame (the FRND is what the 4.15x first try
    # missed): C_sfu = 32 x 16,777,216 / (132 x 16)
    assert inp["N_sfu"] == 2 * 8 * 4096 * 256
    assert inp["C_sfu"] == pytest.approx(32 * 16777216 / (132 * 16))
    assert top.estimated_speedup == pytest.approx(inp["C"] / inp["C_sfu"], rel=1e-6)
    assert 2.0 < top.estimated_speedup < 2.2  # H200: 1.840x achieved


def test_exact_fmod_sites_counts_inlined_calls() -> None:
    from warpwise.analysis.binary.load import load_cubin
    from warpwise.analysis.program.build import build_program

    prog = build_program(load_cubin(SYNTH / "orig.sm_90.cubin"))
    sites = code.exact_fmod_sites(prog)
    assert [(Path(f).name, ln, n) for (f, ln), n in sites.items()] == [("orig.cu", 31, 8)]


KMEANS = ADVICE / "holdout8" / "pairs" / "kmeans_atomics"


def test_atomic_bin_picked_by_comparison_is_data() -> None:
    # k-means' nearest centroid: FSETP of loaded coordinates, then SEL of the bin number; the address of the five
    # REDGs follows the predicates to the loaded point, so the bins are data, not one address for the grid
    from warpwise.analysis.advice import atomics
    from warpwise.analysis.binary.load import load_cubin
    from warpwise.analysis.program.build import build_program

    prog = build_program(load_cubin(KMEANS / "orig.sm_90.cubin"))
    pf = next(f for f in prog.functions.values() if "kmeans_step" in f.name)
    reds = [i for i in pf.instructions if i.base_opcode == "REDG"]
    assert len(reds) == 5
    assert [atomics.address_kind(pf, i) for i in reds] == ["data"] * 5
    rep = pair_advice_report(KMEANS)
    top = rep.advice[0]
    assert top.optimizer == "atomic_privatization"
    assert "taken from the data" in top.hint and "one address for the whole grid" not in top.hint


BIQUAD = ADVICE / "holdout8" / "pairs" / "biquad_bank"


def test_recurrence_loop_gets_no_more_ctas() -> None:
    # 128 CTAs of 64 threads, one per channel; the time loop carries y1/y2 through the a1/a2 multiplies
    rep = pair_advice_report(BIQUAD)
    skipped = {s.optimizer: s.reason for s in rep.skipped}
    assert "block_increase" not in {a.optimizer for a in rep.candidates}
    assert "thread_increase" not in {a.optimizer for a in rep.candidates}
    assert "recurrence" in skipped["block_increase"] and "recurrence" in skipped["thread_increase"]


def test_loaded_value_in_arithmetic_is_not_an_address() -> None:
    # line 20's FMUL multiplies the loaded sample; its register is reused later for an address, which is no
    # indirect address: indirect_address_elimination is not advised, code_reordering is offered at rank 1
    rep = pair_advice_report(BIQUAD)
    assert "indirect_address_elimination" not in {a.optimizer for a in rep.candidates}
    top = rep.advice[0]
    assert "code_reordering" in {top.optimizer} | {a.optimizer for a in top.alternatives}


def test_pinned_loads_pipelined_by_hand() -> None:
    # the 16x-unrolled time loop loads x after each previous store (x may alias y): one load in flight; loading
    # the next 16 inputs ahead gives Little's law 1/(1 - f (1 - 1/16)) (H200: 8.167x achieved)
    rep = pair_advice_report(BIQUAD)
    top = rep.advice[0]
    assert top.optimizer == "code_reordering"
    inp = top.estimate.inputs
    assert inp["k"] == 16.0
    f = inp["f"]
    assert 0.8 < f < 0.9
    assert top.estimated_speedup == pytest.approx(1 / (1 - f * (1 - 1 / 16)), rel=1e-6)
    assert "software pipelining" in top.hint


BOXFILTER = ADVICE / "holdout11" / "pairs" / "boxfilter_columns"


def test_running_sum_scaled_for_output_is_not_a_recurrence() -> None:
    # holdout11's box filter: one thread walks a column, sum += in[y+R+1] - in[y-R]; out[y] = sum * (1/17). The
    # FMUL reads the carried sum but its product only goes to the store: a sum, splittable into strips (the fix,
    # 20.7x on the H200), so a grid of 15-30 CTAs gets block_increase first
    rep = pair_advice_report(BOXFILTER)
    skipped = {s.optimizer: s.reason for s in rep.skipped}
    assert "recurrence" not in skipped.get("block_increase", "")
    assert rep.advice[0].optimizer == "block_increase"
    assert rep.advice[0].upper_bound and rep.advice[0].estimated_speedup > 10
