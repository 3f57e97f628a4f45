"""What the advice text says (fresh-user leftovers): why an estimate may pass the bound line, the units of a
formula's inputs, one few-samples note per kernel, and a fast-math hint that names only the slow paths the
SASS has. Text only: the estimates are the model's (asserted unchanged where the text is about them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from warpwise.analysis.advice import AdviceReport
from warpwise.analysis.advice.report import hint_text, input_value_text, render_text
from warpwise.analysis.pipeline import analyze

ROOT = Path(__file__).resolve().parents[2]


def test_an_estimate_above_the_bound_line_says_why(reports: dict[str, AdviceReport]) -> None:
    rep = reports["stencil"]
    assert rep.bound is not None and rep.bound.unit == "sm" and "at most 1.08x" in rep.bound.text
    first = rep.advice[0]
    assert first.optimizer == "strength_reduction" and first.estimated_speedup > rep.bound.cap
    assert ("; above the sm bound's 1.08x: the fix removes instructions (SM work) rather than hiding their "
            "latency, so that cap, for fixes that leave the work unchanged, does not apply; next: ") in first.why
    # advice under the bound, or capped by it, says nothing of the kind
    assert all("above the" not in a.why for a in rep.advice[1:])
    # L2-bound gather: the fix that removes index loads passes the bound through the roofline after the fix
    g = reports["gather"].advice[0]
    assert g.optimizer == "indirect_address_elimination"
    assert "above the l2 bound's 1.00x: the fix cuts the L2 traffic itself, so the cap is the l2 roofline after " \
           "the fix" in g.why


def test_formula_inputs_carry_their_units(reports: dict[str, AdviceReport]) -> None:
    a = reports["stencil"].advice[0]
    # the formula names the times as T_ns/f_ns, the sample counts as T/M; the numbers are the inputs'
    assert a.estimate.formula == "T_ns/(f_ns+(T_ns-f_ns)/S), S=T/(T-M)"
    t, m, t_ns, f_ns = (a.estimate.inputs[k] for k in ("T", "M", "T_ns", "f_ns"))
    assert a.estimated_speedup == pytest.approx(t_ns / (f_ns + (t_ns - f_ns) / (t / (t - m))))
    text = render_text(reports["stencil"])
    assert (f"estimate: T_ns/(f_ns+(T_ns-f_ns)/S), S=T/(T-M) with T={int(t)} samples, M={int(m)} samples, "
            f"T_ns={int(t_ns)} ns, f_ns={int(f_ns)} ns (GPA eq. 2") in text
    assert input_value_text("C_sm", 1.077) == "C_sm=1.077x"
    assert input_value_text("sm_pct", 92.84) == "sm_pct=92.84% of peak"
    assert input_value_text("V", 124.1) == "V=124.1 waves"


def _fast_math_hint(pair: str) -> str:
    d = ROOT / "bench" / "advice" / pair
    a = analyze(d / "orig.ncu-rep", [d / "orig.sm_90.cubin"], [d / "orig.cu"])
    rep = a.groups[0].advice_report
    assert rep is not None
    fm = next(x for x in rep.candidates if x.optimizer == "fast_math")
    return hint_text(fm.hint, fm.scope.file)  # line references resolved as every renderer shows them


def test_the_fast_math_hint_names_only_the_slow_paths_the_sass_has() -> None:
    # divisions, expf and logf, no sin/cos: the hint names the division and its fast form only
    hint = _fast_math_hint("holdout3/pairs/gmm_loglik")
    assert "precise single-precision math is inlined at line 16 (IEEE division with its FCHK check and slow path): " \
           "--use_fast_math, or __fdividef(x, y) at those lines" in hint
    assert not re.search(r"sin/cos|__sinf|__cosf|__expf|__powf|__frcp_rn", hint), hint
    # sinf and a division: both named, each with its fast form
    hint = _fast_math_hint("pairs/wave_precise")
    assert "(IEEE division with its FCHK check and slow path, the sin/cos argument reduction): --use_fast_math, " \
           "or __fdividef(x, y) / __sinf / __cosf at those lines" in hint
