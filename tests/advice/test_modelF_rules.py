"""Rules for older hold-out misses (issue 10, helper modelF), checked on the committed H200 reports and cubins:

- loop_unrolling does not ask for more copies of a loop the binary unrolls with each copy's global loads behind a
  join of the previous copy's branches (holdout8 nbody_direct_precise: the precise sqrt/division slow paths; its
  ``#pragma unroll 8`` probe measured 1.012x): ``common.loads_behind_joins``;
- global_memory_coalesce on a thread-per-item walk (uncoalesced loads in a loop whose back edge diverges) is the
  warp-per-item rewrite, which also ends the idle lanes (holdout2 spmv_csr_powerlaw, vector CSR 8.443x)."""

from __future__ import annotations

from pathlib import Path

import pytest
from warpwise.analysis.advice import common as cm

from tests.conftest import pair_advice_report

ADVICE = Path(__file__).resolve().parents[2] / "bench" / "advice"
NBODY = ADVICE / "holdout8" / "pairs" / "nbody_direct_precise"
SIP = ADVICE / "holdout6" / "pairs" / "sip_runtime_order"
HIST_UNROLL = ADVICE / "holdout5" / "pairs" / "hist15_tailwave_unroll"
SPMV = ADVICE / "holdout2" / "pairs" / "spmv_csr_powerlaw"
GEMV = ADVICE / "holdout" / "pairs" / "gemv_rowthread"


def _program(pair: Path):  # type: ignore[no-untyped-def]
    from warpwise.analysis.binary.load import load_cubin
    from warpwise.analysis.program.build import build_program

    return build_program(load_cubin(pair / "orig.sm_90.cubin"))


def test_nbody_copies_load_behind_the_slow_path_joins() -> None:
    prog = _program(NBODY)
    pf = next(f for f in prog.functions.values() if "gravity_direct" in f.name)
    main = pf.loops[0x210]
    assert cm.unroll_factor(pf, main) == 4
    got = cm.loads_behind_joins(pf, main)
    assert got is not None
    # 4 copies, each with its x/y/z loads after the previous copy's division BSYNC (the header for copy 0) and its
    # mass load after its own square root's BSYNC: 8 join blocks, every one with two predecessors
    assert got.blocks == (0x210, 0x370, 0x450, 0x5F0, 0x6D0, 0x870, 0x950, 0xAF0)
    assert all(pf.cfg.in_degree(b) >= 2 for b in got.blocks)
    assert sorted({ln for _, ln in got.branches}) == [20, 21]  # sqrtf and the division: their slow-path calls
    remainder = pf.loops[0xD00]  # the rolled remainder: no copies to read the schedule of
    assert cm.unroll_factor(pf, remainder) == 1 and cm.loads_behind_joins(pf, remainder) is None


def test_nbody_loop_unrolling_not_advised_fast_math_ranked() -> None:
    rep = pair_advice_report(NBODY)
    assert "loop_unrolling" not in {a.optimizer for a in rep.candidates}
    skip = next(s for s in rep.skipped if s.optimizer == "loop_unrolling")
    assert "unrolled about 4x" in skip.reason and "join" in skip.reason
    # code_reordering (first: 1.75x) says how the loads can move: by hand, ahead of the slow-path branches
    cr = next(a for a in rep.advice if a.optimizer == "code_reordering")
    assert "load the next iteration's values into registers by hand before those branches" in cr.hint
    fm = next(a for a in rep.advice if a.optimizer == "fast_math")
    assert fm.estimated_speedup == pytest.approx(1.563, abs=0.01)  # H200: 1.634x


@pytest.mark.parametrize("pair", [SIP, HIST_UNROLL])
def test_straight_line_unrolled_loops_are_not_joined(pair: Path) -> None:
    # loop_unrolling pairs whose fix paid (more copies, loads together in one block): the rule leaves them alone
    prog = _program(pair)
    unrolled = [(pf, lp) for pf in prog.functions.values() for lp in pf.loops.values()
                if cm.unroll_factor(pf, lp) >= cm.UNROLLED_MEDIAN_COPIES]
    assert unrolled
    assert all(cm.loads_behind_joins(pf, lp) is None for pf, lp in unrolled)
    assert "loop_unrolling" in {a.optimizer for a in pair_advice_report(pair).candidates}


def test_spmv_thread_per_row_is_a_warp_per_row_coalesce() -> None:
    rep = pair_advice_report(SPMV)
    top = rep.advice[0]
    assert top.optimizer == "global_memory_coalesce"
    inp = top.estimate.inputs
    # the idle lanes of the per-row loop (divergence_reduction's M) and the roofline after the coalesced traffic
    div = next(a for a in rep.candidates if a.optimizer == "divergence_reduction")
    assert inp["M_lanes"] == pytest.approx(div.matched_samples)
    assert inp["r_l1"] == pytest.approx(0.4008, abs=1e-3)
    assert inp["C_after"] > top.estimated_speedup
    assert 8.0 < top.estimated_speedup < 10.0  # H200: vector CSR 8.443x
    assert "whole warp" in top.hint and "__shfl_down_sync" in top.hint


def test_uniform_rows_keep_the_plain_coalesce_estimate() -> None:
    # gemv's thread-per-row loop runs the same 1024 columns in every lane: no divergent back edge, no warp-per-item
    rep = pair_advice_report(GEMV)
    gmc = next(a for a in rep.candidates if a.optimizer == "global_memory_coalesce")
    assert "M_lanes" not in gmc.estimate.inputs
    assert "whole warp" not in gmc.hint
