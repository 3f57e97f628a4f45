"""A kernel launched 48 times (bench/advice/holdout9 planes_per_launch, committed H200 report): the text report
and the hover give ranges over the launches instead of one entry per launch, and the JSON keeps every launch."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from warpwise.analysis.advice.report import PER_LAUNCH_SHOWN, compact_inputs, per_launch_text
from warpwise.analysis.pipeline import analyze
from warpwise.analysis.report import render_text, to_json

from tests.conftest import pair_report

ROOT = Path(__file__).resolve().parents[2]
PAIR = ROOT / "bench/advice/holdout9/pairs/planes_per_launch"


@pytest.fixture(scope="module")
def analysis():  # type: ignore[no-untyped-def]
    return analyze(pair_report(PAIR), [PAIR / "orig.sm_90.cubin"],
                   [PAIR / "orig.cu", ROOT / "bench/advice/pairs/bench.cuh"], kernel="normalize_plane")


def test_the_text_report_has_one_line_for_48_launches_of_one_shape(analysis) -> None:  # type: ignore[no-untyped-def]
    g = analysis.groups[0]
    assert len(g.launches) == 48
    text = render_text([analysis])
    line = next(ln for ln in text.splitlines() if ln.startswith("   launches 0.0-0.47 (48, one shape): "))
    assert "grid 8x8x1  block 16x16x1  16 regs/thread" in line
    # the H200 report's 48 launches: 2.2-2.7 us and 30-59 warp samples each
    assert line.endswith("  2.2-2.7 us each (112.5 us in all)  30-59 warp samples each")
    assert not re.search(r"^   launch 0\.\d+:", text, re.M)  # no per-launch lines
    assert "only 30-59 warp samples per launch in 48 of 48 launches" in text
    est = next(ln for ln in text.splitlines() if ln.strip().startswith("estimate: ") and "over launches" in ln)
    assert "t_i=" in est and " over 48 launches" in est and "t47=" not in est and "S47=" not in est
    per = [ln for ln in text.splitlines() if ln.strip().startswith("per launch: ")]
    assert per and all(ln.strip().startswith("per launch: 48 launches, ") for ln in per)


def test_the_json_keeps_every_launch(analysis) -> None:  # type: ignore[no-untyped-def]
    k = to_json([analysis])["kernels"][0]
    assert len(k["launches"]) == 48
    # the first time-weighted finding (kernel_merge's own estimate is over the launches as one merged grid)
    first = next(a for a in k["advice"] if "t0" in a["estimate"]["inputs"])
    assert len(first["launches"]) == 48
    assert {f"t{i}" for i in range(48)} <= set(first["estimate"]["inputs"])


def _weighted(analysis):  # type: ignore[no-untyped-def]
    return next(a for a in analysis.groups[0].advice_report.advice if "t0" in a.estimate.inputs)


def test_compact_inputs_and_per_launch_text(analysis) -> None:  # type: ignore[no-untyped-def]
    a = _weighted(analysis)
    got = dict(compact_inputs(a.estimate.inputs))
    assert got["t_i"] == (2176.0, 2688.0, 48)  # launch durations in ns
    assert not any(re.fullmatch(r"[tS]\d+", k) for k in got)
    # a short series stays one entry per launch
    few = {f"t{i}": float(i + 1) for i in range(PER_LAUNCH_SHOWN)} | {"T": 5.0}
    assert compact_inputs(few) == list(few.items())
    assert a.optimizer == "block_increase"  # the first time-weighted finding: 64 CTAs per launch
    assert per_launch_text(a.launches) == (
        "48 launches, 1.000-1.145x; longest 0.43 1.145x (2.7 us); each launch in --format json")
    assert per_launch_text(a.launches[:2]).count(" us)") == 2


def test_the_hover_gives_ranges_over_48_launches(analysis) -> None:  # type: ignore[no-untyped-def]
    from warpwise.server import render
    from warpwise.server.findings import file_findings
    from warpwise.server.linemap import LineMap

    cu = (PAIR / "orig.cu").resolve()
    ff = file_findings([analysis], cu)
    text = cu.read_text()
    a = _weighted(analysis)
    assert "t_i = 2,176–2,688 over 48 launches" in render._inputs_md(dict(a.estimate.inputs))
    # every hot line's hover: no per-launch series and no 48-entry per-launch list
    shown = per_launch_lines = 0
    for line in range(1, len(text.splitlines()) + 1):
        h = render.hover(ff, LineMap(ff.baseline, text), text, line)
        if h is None:
            continue
        md = h.contents.value  # type: ignore[union-attr]
        shown += 1
        assert "t47 =" not in md and "S47 =" not in md and "grid 8×8×1 " not in md
        # the editor's per-launch line is the range and the longest launch, with no CLI flag in it
        assert "--format" not in md
        if "Per launch: " in md:
            assert "Per launch: 48 launches, " in md and "; longest " in md
            per_launch_lines += 1
    assert shown > 0 and per_launch_lines > 0


def test_only_the_per_launch_series_fold_and_other_inputs_keep_their_place() -> None:
    from warpwise.server import render

    n = PER_LAUNCH_SHOWN + 2
    inputs: dict[str, object] = {"T": 900, "rule": "eq. 2"}
    inputs |= {f"w{i}": float(i) for i in range(n)}  # a numbered family that is not a launch series
    inputs |= {f"t{i}": 1000.0 + i for i in range(n)} | {f"S{i}": 1.5 for i in range(n)}
    out = compact_inputs(inputs)  # type: ignore[arg-type]
    keys = [k for k, _ in out]
    assert keys == ["T", "rule", *[f"w{i}" for i in range(n)], "t_i", "S_i"]
    assert dict(out)["t_i"] == (1000.0, 1000.0 + n - 1, n)
    # a series with a gap (not 0..n-1) is not a launch series and stays as it is
    gap = {f"t{i}": 1.0 for i in range(1, n + 1)}
    assert [k for k, _ in compact_inputs(gap)] == list(gap)
    md = render._inputs_md(inputs)
    assert md.startswith("T = 900") and md.index("rule = eq. 2") < md.index("w0 = ")
