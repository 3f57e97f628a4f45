"""`warpwise rewrite plan` and its reports (fresh-user test): the report beside the source is found as `advise`
finds it, a report that holds no launch of the parent is said to be unused, and the default's reason names what
applies to the launch at hand (recursive or not)."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pytest
from rewrite_helpers import ROOT
from warpwise.analysis.rewrite.plan import plan_launch

CDP = ROOT / "examples" / "cdp"
LAUNCH = 22  # scale_segment<<<...>>> in scale_all, not recursive
QUADTREE = ROOT / "examples" / "dp" / "quadtree" / "quadtree.cu"
QT_LAUNCH = 53  # qt_node<<<...>>> in qt_node: recursive


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from warpwise.server.rewrite_cmd import add_arguments, run_rewrite

    p = argparse.ArgumentParser()
    add_arguments(p)
    rc = run_rewrite(p.parse_args(list(argv)))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_the_report_beside_the_source_is_used_and_named(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, "plan", str(CDP / "cdp.cu"), "--launch", str(LAUNCH))
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == f"{CDP / 'cdp.cu'}:{LAUNCH}: profile-guided: threshold 32, coarsen x4, aggregate per grid"
    assert lines[1] == (f"  - using the report found beside the source: {CDP / 'cdp.ncu-rep'} "
                        "(--profile names another)")


def test_a_report_without_the_parent_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    # given with --profile, a report of another program is refused as advise refuses one (docs/cli.md)
    rep = ROOT / "examples" / "gather" / "gather.ncu-rep"
    rc, out, err = _run(capsys, "plan", str(CDP / "cdp.cu"), "--launch", str(LAUNCH), "--profile", str(rep))
    assert rc == 2 and out == ""
    assert err == (f"warpwise rewrite: {rep} has no launch of `scale_all`, the parent of {CDP / 'cdp.cu'}:{LAUNCH}; "
                   "it covers spmv_ell\n")


def test_without_any_report_the_default_names_what_applies(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "cdp.cu"  # no report beside this copy
    shutil.copyfile(CDP / "cdp.cu", src)
    rc, out, _ = _run(capsys, "plan", str(src), "--launch", str(LAUNCH))
    assert rc == 0
    reason = out.splitlines()[1]
    assert reason == ("  - no profile of the CDP program: the measured default (bench/dp, docs/benchmarks.md): "
                      "threshold 256, coarsen x4, aggregate per multiblock")
    assert "recursive" not in out  # the launch is not recursive: nothing about recursion applies


def test_a_recursive_launch_default_says_why_aggregation_stands_alone() -> None:
    plan = plan_launch(QUADTREE.read_text(), str(QUADTREE), QT_LAUNCH, None)
    assert plan.choice.label == "no threshold, no coarsening, aggregate per block"
    assert plan.reasons == ["no profile of the CDP program: the measured default (bench/dp, docs/benchmarks.md): "
                            "no threshold, no coarsening, aggregate per block (a recursive launch: aggregation per "
                            "block alone; threshold and coarsening do not combine with it)"]
