"""What the advice text says (fresh-user leftovers): why an estimate may pass the bound line, the units of a
formula's inputs, one few-samples note per kernel, and a fast-math hint that names only the slow paths the
SASS has. Text only: the estimates are the model's (asserted unchanged where the text is about them)."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from warpwise.analysis.advice import AdviceReport, evaluate
from warpwise.analysis.advice.advise import few_samples_note, launch_few_samples_note, merge_launch_notes
from warpwise.analysis.advice.launches import combine
from warpwise.analysis.advice.report import hint_text, input_value_text, render_text
from warpwise.analysis.blame.attribute import attribute
from warpwise.analysis.pipeline import analyze

from tests.advice.conftest import example_inputs
from tests.conftest import pair_report

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


def _thinned(factor: int, index: tuple[int, int]):  # type: ignore[no-untyped-def]
    """The stencil launch with every count divided by ``factor`` (a launch with few samples), as launch
    ``index`` of its report."""
    prof, prog = example_inputs("stencil")
    p = copy.deepcopy(prof)
    for s in p.pcs.values():
        s.samples //= factor
        s.not_issued //= factor
        s.stalls = {k: v // factor for k, v in s.stalls.items()}
        s.stalls_not_issued = {k: v // factor for k, v in s.stalls_not_issued.items()}
    p.launch_index = index
    return p, evaluate(p, prog, attribute(prog, p), p.arch)


def test_few_samples_are_said_once_per_kernel_with_the_launches_named() -> None:
    launches = [_thinned(f, (0, i)) for i, f in enumerate((200, 250, 1))]
    n0, n1, n2 = (r.total for _, r in launches)
    assert n0 < 300 and n1 < 300 <= n2  # ranking.FEW_SAMPLES
    assert [r.few_samples for _, r in launches] == [n0, n1, None]  # the count, as data on each report
    few = [n for _, r in launches for n in r.notes if n.startswith("only ")]
    assert few == [few_samples_note(f"only {n} warp samples for this kernel") for n in (n0, n1)]
    assert few == [launch_few_samples_note(n) for n in (n0, n1)]
    out = combine(launches)
    assert out.few_samples is None  # its one note names the launches
    notes = [n for n in out.notes if n.startswith("only ")]
    assert notes == [few_samples_note(f"only {n0} warp samples in launch 0.0, {n1} in 0.1 (2 of 3 launches)")]
    assert notes[0].endswith("re-profile with a finer PC sampling interval (`warpwise profile --short-kernels -o "
                             "R.ncu-rep -- ./app`, i.e. ncu --warp-sampling-interval 0)")
    # one launch keeps its own wording; other notes stay, each once, in order
    one = few_samples_note("only 50 warp samples for this kernel")
    assert merge_launch_notes([((0, 0), ["a", one, "b"], 50)]) == ["a", one, "b"]
    assert merge_launch_notes([((0, 0), ["a", one], 50), ((0, 1), ["a", "c"], None)]) == [
        "a", few_samples_note("only 50 warp samples in launch 0.0 (1 of 2 launches)"), "c"]
    # the count is the report's, not read back from the text: a note that only reads like one is a plain note
    assert merge_launch_notes([((0, 0), [one], None), ((0, 1), [one], None)]) == [one]
    assert merge_launch_notes([((0, 0), [one], 50), ((0, 1), [launch_few_samples_note(7)], 8)]) == [
        few_samples_note("only 50 warp samples in launch 0.0 (1 of 2 launches)"), launch_few_samples_note(7)]


def _fast_math_hint(pair: str) -> str:
    d = ROOT / "bench" / "advice" / pair
    a = analyze(pair_report(d), [d / "orig.sm_90.cubin"], [d / "orig.cu"])
    rep = a.groups[0].advice_report
    assert rep is not None
    fm = next(x for x in rep.candidates if x.optimizer == "fast_math")
    return hint_text(fm.hint, fm.scope.file)  # line references resolved as every renderer shows them


def test_the_fast_math_hint_names_only_the_slow_paths_the_sass_has() -> None:
    # divisions, expf and logf, no sin/cos: the hint names the division and its fast form only
    hint = _fast_math_hint("holdout3/pairs/gmm_loglik")
    assert "precise single-precision math is inlined at line 16 (IEEE division with its FCHK check and slow path, " \
           "__cuda_sm3x_div_rn_noftz_f32_slowpath called out of line): --use_fast_math, or __fdividef(x, y) at that " \
           "line" in hint
    # the out-of-line slow path is named inside that one sentence, not in a second one before it
    assert "time goes into" not in hint
    assert not re.search(r"sin/cos|__sinf|__cosf|__expf|__powf|__frcp_rn", hint), hint
    # sinf and a division: both named, each with its fast form
    hint = _fast_math_hint("pairs/wave_precise")
    assert "(IEEE division with its FCHK check and slow path, the sin/cos argument reduction, " \
           "__cuda_sm3x_div_rn_noftz_f32_slowpath called out of line): --use_fast_math, " \
           "or __fdividef(x, y) / __sinf / __cosf at that line" in hint


def test_atomics_advice_names_the_users_line_and_the_header_only_as_via() -> None:
    # confusion_atomics: atomicAdd(&cm[...], 1u) at orig.cu:13, its REDG inlined from CUDA's
    # device_atomic_functions.hpp:112; the advice's site is the user's line
    d = ROOT / "bench" / "advice" / "holdout3" / "pairs" / "confusion_atomics"
    a = analyze(pair_report(d), [d / "orig.sm_90.cubin"], [d / "orig.cu"])
    rep = a.groups[0].advice_report
    assert rep is not None
    adv = next(x for x in rep.candidates if x.optimizer == "atomic_privatization")
    assert adv.scope.kind == "line" and adv.scope.line == 13 and adv.scope.name == "line 13"
    assert adv.scope.file is not None and adv.scope.file.endswith("confusion_atomics/orig.cu")
    hint = hint_text(adv.hint, adv.scope.file)
    assert hint.startswith("the global atomics at line 13 (via device_atomic_functions.hpp:112, the CUDA header's "
                           "atomic function inlined there) go to addresses taken from the data"), hint
    # the stalled instructions are shown at the user's line too (header code at its inlined-at call site;
    # before: device_atomic_functions.hpp:112), their opcodes as the SASS has them
    assert adv.hotspots and all(h.use.file is not None and h.use.file.endswith("confusion_atomics/orig.cu")
                                and h.use.line == 13 for h in adv.hotspots if h.use.opcode.startswith("RED"))
    assert not any(h.use.file and h.use.file.endswith("device_atomic_functions.hpp") for h in adv.hotspots)
