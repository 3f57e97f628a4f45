"""What the advice text says (fresh-user leftovers): why an estimate may pass the bound line, the units of a
formula's inputs, one few-samples note per kernel, and a fast-math hint that names only the slow paths the
SASS has. Text only: the estimates are the model's (asserted unchanged where the text is about them)."""

from __future__ import annotations

import re
from pathlib import Path

from warpwise.analysis.advice.report import hint_text
from warpwise.analysis.pipeline import analyze

ROOT = Path(__file__).resolve().parents[2]


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
