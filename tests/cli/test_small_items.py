"""Issue 12's small items: the "Terms:" footer only under kernel tables; tune progress never shows 75/50."""

from __future__ import annotations

from pathlib import Path

import pytest
from warpwise.analysis.pipeline import Analysis, analyze
from warpwise.analysis.report import render_text
from warpwise.analysis.schedule.tune import Progress
from warpwise.server.tune_cmd import _Bar, progress_counts

EX = Path(__file__).resolve().parents[2] / "examples"


def test_terms_footer_only_when_a_kernel_is_shown() -> None:
    assert "Terms:" not in render_text([Analysis(report=Path("r.ncu-rep"), kernels=[])])
    a = analyze(EX / "gather" / "gather.ncu-rep", [EX / "gather" / "gather.sm_90.cubin"], [EX / "gather" / "gather.cu"])
    assert render_text([a]).count("Terms:") == 1


def test_tune_progress_never_shows_more_done_than_total(capsys: pytest.CaptureFixture[str]) -> None:
    assert progress_counts(75, 50) == (75, 75) and progress_counts(10, 50) == (10, 50)
    bar = _Bar(True, False)
    bar.has_tqdm = False
    for done in (25, 50, 75):
        bar(Progress("search", done, 50, 0.98, "cached steps"))
    err = capsys.readouterr().err
    assert "75/50" not in err and "[search] 75/75" in err and "[search] 25/50" in err
