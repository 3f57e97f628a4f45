"""What the editor shows, from real analyses of the committed examples (no client): one diagnostic per line
per kernel, filters on every kind, grouped launches and reports, findings that follow edits, the hover's
summary and blame distance, settings keys."""

from __future__ import annotations

import copy
import dataclasses
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from warpwise.analysis.pipeline import Analysis, analyze
from warpwise.server import render
from warpwise.server.config import parse_settings
from warpwise.server.findings import file_findings, group_kernels
from warpwise.server.linemap import LineMap

from tests.conftest import example, pair_report

STENCIL = example("stencil", ".cu").resolve()
ALL = lsp.Range(lsp.Position(0, 0), lsp.Position(10_000, 0))


@pytest.fixture(scope="module")
def stencil() -> Analysis:
    return analyze(example("stencil", ".ncu-rep"), [example("stencil", ".sm_90.cubin")], [STENCIL])


def settings(**raw: object) -> object:
    s, problems = parse_settings({"minShare": 0.01, **raw})
    assert not problems
    return s


def diags(analyses: list[Analysis], text: str | None = None, **raw: object) -> list[lsp.Diagnostic]:
    ff = file_findings(analyses, STENCIL)
    text = STENCIL.read_text() if text is None else text
    return render.diagnostics(ff, LineMap(ff.baseline, text), text, settings(**raw), STENCIL.as_uri())


def three_launches(a: Analysis) -> Analysis:
    """The stencil report as if it held three launches of blur_rows (the launch copied twice)."""
    ka = a.kernels[0]
    more = [copy.copy(ka) for _ in range(2)]
    return Analysis(report=a.report, kernels=[ka, *more], errors=[])


def test_one_diagnostic_per_line_best_finding(stencil: Analysis) -> None:
    ds = diags([stencil])
    per_line = Counter(d.range.start.line for d in ds)
    assert per_line and max(per_line.values()) == 1, per_line
    by_line = {d.range.start.line + 1: d for d in ds}
    d18 = by_line[18]
    assert d18.code == "strength_reduction"
    assert "2.19×" in d18.message and "94.3%" in d18.message and "mio_throttle" in d18.message
    # the related row is the dominant blame edge; the other advice (>= 1.02x) is counted, listed in the hover
    msgs = [(r.location.range.start.line, r.message) for r in d18.related_information or []]
    assert len(msgs) == 1 and "LDG.E.CONSTANT" in msgs[0][1] and "+2 more" in msgs[0][1]
    assert not any("memory_transaction_reduction" in m for _, m in msgs)  # 1.00x: hover only
    # occupancy_decrease (1.01x) is below minGain: line 21 is a hot_line diagnostic, not advice
    assert by_line[21].code == "hot_line"
    assert all(d.code != "occupancy_decrease" for d in ds)


def test_min_gain_setting(stencil: Analysis) -> None:
    codes = {d.range.start.line + 1: d.code for d in diags([stencil], minGain=1.005)}
    assert codes[21] == "occupancy_decrease"
    codes = {d.range.start.line + 1: d.code for d in diags([stencil], minGain=3.0)}
    assert codes[18] == "hot_line"


def test_min_share_applies_to_advice_and_stall_cause(stencil: Analysis) -> None:
    ds = diags([stencil], minShare=0.5)
    assert [(d.range.start.line + 1, d.code) for d in ds] == [(18, "strength_reduction")]
    assert diags([stencil], minShare=0.99) == []


def test_max_diagnostics_and_severity_by_shown_code(stencil: Analysis) -> None:
    ds = diags([stencil], maxDiagnosticsPerFile=1, severity={"hot_line": "warning", "strength_reduction": "error"})
    assert [(d.range.start.line + 1, d.severity) for d in ds] == [(18, lsp.DiagnosticSeverity.Error)]
    ds = diags([stencil], severity={"hot_line": "warning"})
    assert {d.severity for d in ds if d.code == "hot_line"} == {lsp.DiagnosticSeverity.Warning}


def test_deprecated_severity_keys_still_work_with_a_warning() -> None:
    s, problems = parse_settings({"severity": {"hotLine": "warning", "blamedDef": "hint"}})
    assert s.severity == {"hot_line": "warning", "stall_cause": "hint"}
    assert len(problems) == 2 and all("deprecated" in p for p in problems)
    assert "hot_line" in problems[0]


def test_log_level_is_warning_unless_asked() -> None:
    import logging

    assert parse_settings({})[0].python_log_level() == logging.WARNING
    assert parse_settings({"trace": {"server": "verbose"}})[0].python_log_level() == logging.DEBUG
    assert parse_settings({"logLevel": "info"})[0].python_log_level() == logging.INFO
    assert parse_settings({"logLevel": "loud"})[1]


def test_several_launches_are_one_kernel(stencil: Analysis) -> None:
    multi = three_launches(stencil)
    (g,) = group_kernels([multi])
    assert len(g.launches) == 3 and g.total_samples == 3 * 28_464
    ds = diags([multi])
    assert max(Counter(d.range.start.line for d in ds).values()) == 1
    ff = file_findings([multi], STENCIL)
    text = STENCIL.read_text()
    lmap = LineMap(ff.baseline, text)
    hints = {h.position.line + 1: str(h.label) for h in render.inlay_hints(ff, lmap, text, settings(), ALL)}
    assert hints[18] == "94.3% of warp samples · est. 2.19× if fixed"  # never 282.9%
    # VS Code cuts an inlay label after editor.inlayHints.maximumLength (43) characters with "…"
    assert all(len(h) <= 43 for h in hints.values()), hints
    (tip,) = [h.tooltip for h in render.inlay_hints(ff, lmap, text, settings(), ALL) if h.position.line == 17]
    assert tip == ("warpwise: this line has 94.3% of blur_rows's warp samples; its best advice (strength_reduction) "
                   "is estimated to make blur_rows 2.19× faster if fixed")
    lens = render.code_lenses(ff, lmap, text, STENCIL.as_uri(), settings())
    assert "3 launches" in lens[0].command.title and "85,392 warp samples" in lens[0].command.title
    hover = render.hover(ff, lmap, text, 18)
    assert hover is not None
    value = hover.contents.value  # type: ignore[union-attr]
    assert value.count("**warpwise**") == 1 and "Over 3 launches" in value
    assert "26,850 of 28,464" not in value and "80,550 of 85,392" in value


def test_two_reports_of_one_kernel_newest_active(stencil: Analysis, tmp_path: Path) -> None:
    old, new = tmp_path / "a_old.ncu-rep", tmp_path / "b_new.ncu-rep"
    for p in (old, new):
        shutil.copyfile(example("stencil", ".ncu-rep"), p)
    os.utime(old, (1_000_000, 1_000_000))
    a_old = Analysis(report=old, kernels=stencil.kernels, errors=[])
    a_new = Analysis(report=new, kernels=[copy.copy(k) for k in stencil.kernels], errors=[])
    (g,) = group_kernels([a_old, a_new])
    assert g.report == new and g.reports == [new, old]
    ds = diags([a_old, a_new])
    assert max(Counter(d.range.start.line for d in ds).values()) == 1
    assert all(d.data["report"] == str(new) for d in ds)  # type: ignore[index]
    ff = file_findings([a_old, a_new], STENCIL)
    text = STENCIL.read_text()
    titles = [c.command.title for c in render.code_lenses(ff, LineMap(ff.baseline, text), text, STENCIL.as_uri())]
    assert "report b_new.ncu-rep (newest of 2)" in titles[0] and "choose report (2)" in titles
    (g,) = group_kernels([a_old, a_new], active={g.mangled: old})
    assert g.report == old


def test_quick_fix_retires_its_advice_everywhere(stencil: Analysis) -> None:
    text = STENCIL.read_text()
    fixed = text.replace("acc += 0.1 * row", "acc += 0.1f * row")
    ds = diags([stencil], fixed)
    assert all(d.code != "strength_reduction" for d in ds)
    assert all("0.1f" not in d.message for d in ds)
    assert all("strength_reduction" not in r.message for d in ds for r in d.related_information or [])
    # the edited hot line keeps one finding, marked stale (a hint: no squiggle, not in the Problems panel)
    (d18,) = [d for d in ds if d.range.start.line == 17]
    assert d18.code == "stale" and d18.severity == lsp.DiagnosticSeverity.Hint
    assert d18.message.startswith("stale: edited since profiling — re-profile") and "94.3%" in d18.message
    assert d18.related_information is None and "optimizer" not in d18.data  # type: ignore[operator]
    assert {d.code for d in ds if d.range.start.line != 17} >= {"hot_line"}  # unedited lines keep theirs
    ff = file_findings([stencil], STENCIL)
    lmap = LineMap(ff.baseline, fixed)
    titles = [c.command for c in render.code_lenses(ff, lmap, fixed, STENCIL.as_uri(), settings())]
    assert "strength_reduction" not in titles[0].title
    stale = [c for c in titles if "profile is stale" in c.title]
    assert stale and stale[0].command == "warpwise.profile"
    h = render.hover(ff, lmap, fixed, 18)
    assert h is not None
    value = h.contents.value  # type: ignore[union-attr]
    assert "**stale**: this line was edited since profiling" in value and "Re-profile" in value
    assert "strength_reduction" not in value and "write 0.1f" not in value
    hints = {h.position.line + 1: str(h.label) for h in render.inlay_hints(ff, lmap, fixed, settings(), ALL)}
    assert hints[18] == "stale (was 94.3% of warp samples)" and "%" in hints[20] and "stale" not in hints[20]


def test_stale_severity_is_a_hint_unless_configured(stencil: Analysis) -> None:
    fixed = STENCIL.read_text().replace("acc += 0.1 * row", "acc += 0.1f * row")
    (d,) = [d for d in diags([stencil], fixed, severity={"default": "warning"}) if d.code == "stale"]
    assert d.severity == lsp.DiagnosticSeverity.Hint  # "default" does not make stale findings loud
    (d,) = [d for d in diags([stencil], fixed, severity={"stale": "information"}) if d.code == "stale"]
    assert d.severity == lsp.DiagnosticSeverity.Information
    # a deleted hot line has nothing to mark
    gone = STENCIL.read_text().replace("    acc += 0.1 * row[x + k];  // double literal: F2F.F64.F32 + DFMA + "
                                       "F2F.F32.F64 per tap\n", "")
    assert not [d for d in diags([stencil], gone) if d.code == "stale"]


def test_messages_use_current_line_numbers(stencil: Analysis) -> None:
    text = "// one\n// two\n// three\n" + STENCIL.read_text()
    ds = diags([stencil], text)
    by_line = {d.range.start.line + 1: d for d in ds}
    assert by_line[21].code == "strength_reduction"
    rows = [r.message for r in by_line[21].related_information or []]
    assert rows and "at line 21," in rows[0] and not any("line 18" in r for r in rows)
    assert "waits on F2F.F32.F64 at line 21" in by_line[23].message
    assert {r.location.range.start.line + 1 for r in by_line[21].related_information or []} <= {21, 23}


def test_inlay_of_a_line_two_kernels_run_names_each_kernel(stencil: Analysis) -> None:
    """Two kernels on one line: each label is led by its kernel's name (which share is whose), one tooltip row
    each."""
    ka = stencil.kernels[0]
    other = copy.copy(ka)
    other.profile = dataclasses.replace(ka.profile, name="blur_cols", mangled="_Z9blur_colsv")
    two = Analysis(report=stencil.report, kernels=[ka, other], errors=[])
    ff = file_findings([two], STENCIL)
    text = STENCIL.read_text()
    (h,) = [h for h in render.inlay_hints(ff, LineMap(ff.baseline, text), text, settings(), ALL)
            if h.position.line == 17]
    assert h.label == ("blur_rows: 94.3% of warp samples · est. 2.19× if fixed | "
                       "blur_cols: 94.3% of warp samples · est. 2.19× if fixed")
    assert isinstance(h.tooltip, str) and h.tooltip.count("\n") == 1 and "blur_cols's warp samples" in h.tooltip


def test_hover_summary_first_and_dominant_blame_distance(stencil: Analysis) -> None:
    ff = file_findings([stencil], STENCIL)
    text = STENCIL.read_text()
    h = render.hover(ff, LineMap(ff.baseline, text), text, 18)
    assert h is not None
    value = h.contents.value  # type: ignore[union-attr]
    summary, details = value.split("\n---\n", 1)
    assert "mio_throttle" in summary and "█" in summary
    # each number says what it is: the line's share of the samples, the estimate of the kernel if fixed
    assert "this line: **94.3%** of blur_rows's warp samples (26,850 of 28,464)" in summary
    assert "**strength_reduction** — estimated **2.19×** for the kernel if fixed" in summary
    assert "| stall reason |" in details and "F2F.F64.F32" in details
    # 6,840 of the 6,845 long_scoreboard samples are on edges 11 instructions long (not the longest, 13)
    assert "`LDG.E.CONSTANT` at line 18, 11 instructions earlier" in details


def test_text_bar() -> None:
    assert render.bar(0.0) == "░" * 10
    assert render.bar(1.0) == "█" * 10
    assert render.bar(0.45) == "████▌░░░░░"


def test_device_launch_line_shows_the_childs_cost() -> None:
    cu = example("cdp", ".cu").resolve()
    a = analyze(example("cdp", ".ncu-rep"), [example("cdp", ".sm_90.cubin")], [cu])
    ff = file_findings([a], cu)
    text = cu.read_text()
    lmap = LineMap(ff.baseline, text)
    launch = next(i for i, t in enumerate(text.split("\n"), 1) if "scale_segment<<<" in t)
    ds = [d for d in render.diagnostics(ff, lmap, text, settings(), cu.as_uri()) if d.range.start.line + 1 == launch]
    assert [d.code for d in ds] == ["dp_launch"]
    msg = ds[0].message
    assert msg == ("device-side launch: children 73.7% (scale_segment), device runtime 26.3% of scale_all's "
                   "warp samples · 2,000 launches, pending limit 4,096 (line 49) — try the DP rewrites (code actions)")
    h = render.hover(ff, lmap, text, launch)
    assert h is not None and "scale_segment 73.7%" in h.contents.value  # type: ignore[union-attr]
    assert "2,000 child launches against a pending-launch limit of 4,096, set at line 49" in h.contents.value  # type: ignore[union-attr]
    hints = {x.position.line + 1: str(x.label) for x in render.inlay_hints(ff, lmap, text, settings(), ALL)}
    assert hints[launch] == "children 73.7% · runtime 26.3%"
    # the default limit is named when the program does not set one
    plain = text.replace("cudaLimitDevRuntimePendingLaunchCount, 4096", "cudaLimitStackSize, 4096")
    assert "limit of 2,048, the default" in render.launch_cost_text(ff.launch_costs[0], plain)


def test_a_real_report_with_three_launches_of_one_kernel() -> None:
    """bench/advice/pairs/bs_batches: price_calls launched on 8192, 16384 and 4096 blocks (H200 report)."""
    d = example("stencil", ".cu").parents[2] / "bench" / "advice" / "pairs" / "bs_batches"
    cu = (d / "orig.cu").resolve()
    a = analyze(pair_report(d), [d / "orig.sm_90.cubin"], [cu])
    assert len(a.kernels) == 3
    ff = file_findings([a], cu)
    (g,) = ff.groups
    assert len(g.launches) == 3 and g.total_samples == 28_040 + 55_771 + 14_166
    text = cu.read_text()
    lmap = LineMap(ff.baseline, text)
    ds = render.diagnostics(ff, lmap, text, settings(), cu.as_uri())
    assert max(Counter(d.range.start.line for d in ds).values()) == 1
    hints = [str(h.label) for h in render.inlay_hints(ff, lmap, text, settings(), ALL)]
    assert hints and all(float(h.split("%")[0]) <= 100.0 for h in hints)
    assert sum(float(h.split("%")[0]) for h in hints) <= 100.0 + 0.1 * len(hints)
    lens = render.code_lenses(ff, lmap, text, cu.as_uri(), settings())
    assert "price_calls · 3 launches · report orig.ncu-rep · 97,977 warp samples" in lens[0].command.title
    hot = max((f for f in ff.findings if f.stats), key=lambda f: f.stats.samples)  # type: ignore[union-attr]
    h = render.hover(ff, lmap, text, hot.line)
    assert h is not None and "Over 3 launches" in h.contents.value  # type: ignore[union-attr]


def test_line_lists_in_messages_are_relabelled(stencil: Analysis) -> None:
    ff = file_findings([stencil], STENCIL)
    text = "// a\n// b\n" + STENCIL.read_text()
    view = render.View.of(ff, LineMap(ff.baseline, text))
    assert view.relabel("at lines 9, 11, 18 and 20: x; line 21") == "at lines 11, 13, 20 and 22: x; line 23"


def test_every_advice_of_a_line_offers_its_quick_fix_best_first(stencil: Analysis) -> None:
    """Line 18 of the stencil with a second fixable advice on it (the noinline example's fast_math advice,
    moved onto stencil.cu:18): both quick fixes are offered, titled with advice and estimate, the best
    (strength_reduction 2.19×) first and the only preferred one."""

    from warpwise.server import actions

    noinline = analyze(example("noinline", ".ncu-rep"), [example("noinline", ".sm_90.cubin")],
                       [example("noinline", ".cu").resolve()])
    fast = next(a for a in noinline.kernels[0].advice if a.optimizer == "fast_math")
    ka = stencil.kernels[0]
    recorded = next(r for r, p in ka.local.items() if p is not None and p.resolve() == STENCIL)
    moved = dataclasses.replace(fast, scope=dataclasses.replace(fast.scope, file=recorded, line=18), hotspots=[])
    ka2 = copy.copy(ka)
    ka2.advice_report = dataclasses.replace(ka.advice_report, advice=[*ka.advice_report.advice, moved])
    ka2.advice = list(ka2.advice_report.advice)
    both = Analysis(report=stencil.report, kernels=[ka2], errors=[])
    (d18,) = [d for d in diags([both]) if d.range.start.line == 17]
    assert d18.code == "strength_reduction"
    assert [a["optimizer"] for a in d18.data["advice"]] == ["strength_reduction", "fast_math", "code_reordering"]  # type: ignore[index]
    text = STENCIL.read_text()
    got = actions.quickfix_actions(STENCIL.as_uri(), 1, text, str(STENCIL), [d18], None, {both.report: both})
    assert [a.title for a in got] == ["strength_reduction 2.19×: Write 0.1f (float literal)",
                                      f"fast_math {fast.estimated_speedup:.2f}×: Explain --use_fast_math"]
    assert [a.is_preferred for a in got] == [True, None]
    assert got[0].edit is not None and got[1].command is not None


def test_diagnostics_are_one_short_line_with_few_related_rows(stencil: Analysis) -> None:
    """VS Code draws the diagnostic and its related rows above warpwise's hover: both stay short."""
    for d in diags([stencil]):
        # at most two of the hover's ~80-character lines with VS Code's " warpwise(code)" suffix
        assert "\n" not in d.message and len(d.message) + len(f" warpwise({d.code})") <= 160, d.message
        rows = d.related_information or []
        assert len(rows) <= render.MAX_RELATED
    gather = example("gather", ".cu").resolve()
    g = analyze(example("gather", ".ncu-rep"), [example("gather", ".sm_90.cubin")], [gather])
    ff = file_findings([g], gather)
    text = gather.read_text()
    by_line = {d.range.start.line + 1: d for d in render.diagnostics(ff, LineMap(ff.baseline, text), text, settings(),
                                                                     gather.as_uri())}
    # the index-load line's best finding is eliminating that load (an upper bound: its traffic goes too), said
    # with the stalls the line causes rather than its own 0.1% of the samples
    assert by_line[16].code == "indirect_address_elimination"
    assert by_line[16].message == ("indirect_address_elimination est. 1.11× if fixed · line causes 28.7% of "
                                   "spmv_ell's warp samples (its users' stalls)")
    assert [r.message for r in by_line[16].related_information or []] == [
        "line 17 waits on this line: IMAD.WIDE 19,154 samples (long_scoreboard)"]
    (d18,) = [d for d in diags([stencil]) if d.range.start.line == 17]
    assert d18.message == ("strength_reduction est. 2.19× if fixed — write 0.1f · line has 94.3% of blur_rows's warp "
                           "samples (mio_throttle 45%)")
    rows = [r.message for r in d18.related_information or []]
    assert rows == ["long_scoreboard 6,845 samples blamed on LDG.E.CONSTANT at line 18, 11 instructions earlier "
                    "(+2 more in the hover)"]


def test_findings_from_superseded_analyses_are_not_cached(stencil: Analysis, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker computing a file's findings from a partial load (the first report in) while the load
    completes must not leave them cached for the full set (the CDP launch line once stayed without its inlay)."""
    from types import SimpleNamespace

    from warpwise.server import lsp as server_lsp

    state = server_lsp.State()
    ls = SimpleNamespace(state=state)
    real = server_lsp.file_findings

    def racing(*args: object, **kw: object) -> object:
        got = real(*args, **kw)  # type: ignore[arg-type]
        with state.lock:  # the reload finishes meanwhile: full analyses in, cache cleared
            state.analyses = {stencil.report: stencil}
            state.findings.clear()
            state.epoch += 1
        return got

    monkeypatch.setattr(server_lsp, "file_findings", racing)
    first = server_lsp.cached_findings(ls, STENCIL)  # type: ignore[arg-type]
    assert first.findings == []  # computed from the empty (partial) state
    monkeypatch.setattr(server_lsp, "file_findings", real)
    assert server_lsp.cached_findings(ls, STENCIL).findings  # type: ignore[arg-type]
