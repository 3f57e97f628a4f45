"""Fresh-user leftovers (brief "editor") in the advice model's words: what a launch-shape estimate is built from,
the kernel's signature line as its entry, loop-control branches not advised for elimination, and a 64-bit
modulo's strength-reduction hint naming the 64-bit multiply-high. All on committed H200 bench profiles."""

from __future__ import annotations

from pathlib import Path

import pytest
from warpwise.analysis.advice import code
from warpwise.analysis.advice.report import advice_json, to_sarif
from warpwise.analysis.pipeline import Analysis, analyze, entry_line

from tests.conftest import pair_report

BENCH = Path(__file__).resolve().parents[2] / "bench" / "advice"


def _pair(rel: str) -> Analysis:
    d = BENCH / rel
    return analyze(pair_report(d), [d / "orig.sm_90.cubin"], [d / "orig.cu"])


@pytest.fixture(scope="module")
def fourblock() -> Analysis:
    return _pair("pairs/fourblock_poly")


@pytest.fixture(scope="module")
def minhash() -> Analysis:
    return _pair("holdout4/pairs/minhash_mod")


def test_launch_shape_estimate_says_it_is_built_from_launch_facts(fourblock: Analysis) -> None:
    g = fourblock.groups[0]
    top, unroll = g.advice[0], next(a for a in g.advice if a.optimizer == "loop_unrolling")
    assert top.optimizer == "block_increase"
    # the longest of the three launches' facts, its R_I = selected / T, and eqs. 6-10: no matched share
    assert top.basis == ("GPA eqs. 6-10 over the launch facts (4 CTAs of 32 threads on 132 SMs: warps per busy SM 1 "
                         "now, 32 after the fix) and the issue ratio R_I = 145 selected / 5,992 warp samples "
                         "(launch 0.0)")
    assert top.why.startswith("#1: upper bound 267.36x (sampling 95% 177.44-403.12x), ranked at its midpoint "
                              f"134.18x from {top.basis}; time-weighted over 3 launches")
    assert "of 17,975 warp samples" not in top.why
    # an estimate from matched samples keeps saying so
    assert unroll.basis == "" and "from 17,156 of 17,975 warp samples" in unroll.why
    j = advice_json(top)
    assert j["basis"] == top.basis and j["why"] == top.why and advice_json(unroll)["basis"] is None
    props = [r["properties"] for r in to_sarif([g.advice_report])["runs"][0]["results"]]
    assert {p["basis"] for p in props if p["why"].startswith("#1:")} == {top.basis}


def test_tail_effect_estimate_says_it_is_built_from_the_waves(minhash: Analysis) -> None:
    sm = next(a for a in minhash.groups[0].advice if a.optimizer == "sm_balance")
    assert sm.basis == ("the launch's waves per SM V = 7.76 (8,192 CTAs; LaunchStats) with the last wave taken to "
                        "last as long as a full one, not warp samples (launch 0.2)")
    assert f"ranked at its midpoint 1.02x from {sm.basis}" in sm.why and "from 0 of" not in sm.why


def test_signature_line_is_the_kernel_entry(fourblock: Analysis) -> None:
    g = fourblock.groups[0]
    ka = g.first
    file, line = entry_line(ka.profile, ka.cubin) or ("", 0)
    assert Path(file).name == "orig.cu" and line == 7  # `__global__ void calibrate(...)`
    entry = [(ls.line, ls.samples, ls.stalls) for ls in g.lines if ls.entry]
    assert entry == [(7, 2, {"no_instructions": 2})]
    assert [ls.line for ls in g.lines if not ls.entry] == [12, 13, 9, 8]


def test_loop_control_branches_are_not_branch_elimination() -> None:
    a = _pair("pairs/ell_rowmajor")
    ka = a.kernels[0]
    (pf,) = [f for f in ka.program.functions.values() if f.is_kernel]
    bra = {i.offset: i for i in pf.instructions if i.base_opcode == "BRA"}
    # the back edge of the unrolled `for (k < k_per_row)` loop at line 14 (latch 0x1f0 -> header 0x1f0) ...
    lp = code.loop_control(pf, bra[0x7D0])
    assert lp is not None and lp.header == 0x1F0 and (0x1F0, 0x1F0) in lp.back_edges
    # ... and, outside the loop, its guard (k_per_row > 0) and unrolled/remainder dispatch on the same line
    assert all(code.loop_control(pf, bra[o]) is lp for o in (0xC0, 0x120, 0x1A0, 0x1D0, 0x7F0, 0xB70, 0xDC0))
    assert code.loop_control(pf, bra[0xFB0]) is None  # line 19's trailing BRA: no loop's test
    # before: "the branch at line 14 always goes the same way: hoist the test" ranked 5th at 1.0017x
    assert "branch_elimination" not in [x.optimizer for x in a.groups[0].advice]
    skipped = {s.optimizer: s.reason for s in a.groups[0].advice_report.skipped}
    assert skipped["branch_elimination"] == "no stalls at decided branches"


def test_a_64bit_division_dispatch_is_not_branch_elimination(minhash: Analysis) -> None:
    ka = minhash.kernels[0]
    (pf,) = [f for f in ka.program.functions.values() if f.is_kernel]
    disp = next(i for i in pf.instructions if i.offset == 0x1030)
    assert disp.opcode == "BRA" and disp.loc is not None and disp.loc.line == 18
    assert code.loop_control(pf, disp) is None and code.routine_dispatch(pf, disp)
    assert "branch_elimination" not in [x.optimizer for x in minhash.groups[0].advice]


def test_64bit_modulo_hint_names_the_64bit_multiply_high(minhash: Analysis) -> None:
    sr = minhash.groups[0].advice[0]
    assert sr.optimizer == "strength_reduction"
    assert sr.hint.startswith("the 64-bit integer division/modulo by a run-time value at ")
    assert "compiles to a call of nvcc's __cuda_sm20_rem_u64" in sr.hint
    assert "use __umul64hi (the 32-bit __umulhi cannot divide a 64-bit value)" in sr.hint
    assert "line 22" not in sr.hint  # the routine's body, placed at the kernel's closing brace
    # a 32-bit division keeps the 32-bit advice
    div32 = _pair("pairs/periodic_divmod").groups[0].advice[0]
    assert div32.optimizer == "strength_reduction" and "64-bit" not in div32.hint
    assert "fixed-point reciprocal once and use __umulhi" in div32.hint
