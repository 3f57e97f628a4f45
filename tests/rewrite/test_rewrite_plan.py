"""Profile-guided DP rewrite plan (issue 14 item 4): facts read from a real CDP report (examples/cdp,
profiled on the H200), the choice rules, the CLI `warpwise rewrite plan` and the code actions."""

from __future__ import annotations

import argparse
from functools import cache
from pathlib import Path

import pytest
from rewrite_helpers import ROOT
from warpwise.analysis.rewrite import RewriteError, apply_edits
from warpwise.analysis.rewrite.parse import parse
from warpwise.analysis.rewrite.plan import Choice, DpFacts, child_waves, choose, dp_facts, plan_edits, plan_launch

CDP = ROOT / "examples" / "cdp"
LAUNCH = 22  # scale_segment<<<(len + 127) / 128, 128>>> in scale_all
ALL = {"threshold", "coarsen", "aggregate"}


@cache
def profiles() -> tuple[object, ...]:
    from warpwise.analysis.profile.ncu import load_profiles

    return tuple(load_profiles(CDP / "cdp.ncu-rep"))


def test_facts_from_the_cdp_report() -> None:
    f = dp_facts(profiles(), "scale_all")  # type: ignore[arg-type]
    assert f is not None
    assert (f.profiled_launches, f.parent_threads, f.parent_blocks) == (1, 2048, 16)
    assert f.child_launches == 2000  # threads through the device-runtime calls (2000 segments)
    assert f.child_threads_launched == 3747328  # entries into scale_segment's code (`scale_all$fn1`)
    assert f.child_threads == 3547580  # past its bounds check: after the first predicated EXIT
    assert (f.samples, f.parent_samples, f.child_samples) == (17930, 6, 13216)
    assert f.runtime_samples == 17930 - 6 - 13216
    assert round(f.mean_child_threads) == 1774
    assert dp_facts(profiles(), "no_such_kernel") is None  # type: ignore[arg-type]


def _facts(**kw: float) -> DpFacts:
    base = {"profiled_launches": 1, "parent_threads": 8192, "parent_blocks": 64, "block_threads": 128,
            "child_launches": 8192, "child_threads": 8192 * 16, "samples": 1000, "parent_samples": 100,
            "child_samples": 500, "runtime_samples": 400, "sm_count": 132, "max_blocks_per_sm": 16}
    base.update(kw)
    return DpFacts("p", **base)  # type: ignore[arg-type]


def test_small_child_grids_run_serially_and_are_not_coarsened() -> None:
    plan = choose(_facts(child_threads_launched=8192 * 128), 128, ALL, grid_ok=True)
    # every child grid is one block of 128 < 256 threads: all of them run in the parent, nothing is aggregated
    assert plan.choice == Choice(256, 1, None)
    assert ("no aggregation: every child grid is one block of 128 threads, under the threshold 256, so all of them "
            "run in the parent thread (serial execution, as without CDP)") in plan.reasons
    # some grids have a second block: those few launches are aggregated per block
    assert choose(_facts(child_threads_launched=8192 * 130), 128, ALL, grid_ok=True).choice == Choice(256, 1, "block")
    # launched threads not measured (0): no claim that all grids are one block
    assert choose(_facts(), 128, ALL, grid_ok=True).choice.granularity == "block"
    assert "8192 child launches of 16 threads on average" in plan.reasons[0]
    assert "threshold 256: child grids of 16 useful threads on average run faster in the parent thread than " \
           "launched" in plan.reasons
    assert "coarsen x1: child grids of 1.00 blocks of 128 threads on average (nothing to merge)" in plan.reasons
    # one more useful thread on average: launched, only the smallest serially
    assert choose(_facts(child_threads=8192 * 17), 128, ALL, grid_ok=True).choice.threshold == 32


def test_large_child_grids_are_coarsened_and_the_granularity_follows_the_parent() -> None:
    big = _facts(child_threads=8192 * 2048)
    assert choose(big, 128, ALL, grid_ok=True).choice == Choice(32, 4, "grid")
    # a long parent: the children should overlap it -> per block, or per group when the grid is large
    long_parent = _facts(child_threads=8192 * 2048, parent_samples=800, child_samples=100, runtime_samples=100)
    assert choose(long_parent, 128, ALL, grid_ok=True).choice.granularity == "block"
    wide = _facts(child_threads=8192 * 2048, parent_samples=800, parent_blocks=4096, parent_threads=4096 * 128,
                  child_launches=4096 * 128)
    assert choose(wide, 128, ALL, grid_ok=True).choice.granularity == "multiblock"
    # no host launch of the parent in the file: no grid granularity
    assert choose(big, 128, ALL, grid_ok=False).choice.granularity != "grid"
    # aggregation refused: none, and the reason says so
    plan = choose(big, 128, {"threshold", "coarsen"}, grid_ok=True)
    assert plan.choice.granularity is None and "no aggregation (refused for this launch)" in plan.reasons


def test_child_blocks_that_fit_in_one_gpu_full_are_not_coarsened() -> None:
    # 100 launches of 2 blocks of 128 threads: 200 blocks, under the 132 x 16 the H200 holds at once
    few = _facts(child_launches=100, child_threads=100 * 200, child_threads_launched=100 * 256)
    assert child_waves(few, 128) == pytest.approx(200 / (132 * 16))
    plan = choose(few, 128, ALL, grid_ok=True)
    assert plan.choice.factor == 1
    assert ("coarsen x1: child grids of 2.00 blocks of 128 threads on average (their 0.1 GPU-fulls of blocks per "
            "parent launch leave no block scheduling to save)") in plan.reasons
    # 64-thread blocks: the 32-blocks-per-SM limit, not the thread limit
    assert child_waves(few, 64) == pytest.approx(400 / (132 * 32))
    # the same grids launched 100x as often: coarsened
    many = _facts(child_launches=10000, child_threads=10000 * 200, child_threads_launched=10000 * 256)
    assert choose(many, 128, ALL, grid_ok=True).choice.factor == 4
    assert child_waves(_facts(sm_count=0), 128) == 0.0


def test_serial_children_of_a_launch_in_a_loop_keep_aggregation_per_block() -> None:
    facts = _facts(child_threads_launched=8192 * 128)  # every child one block of 128 threads, 16 useful
    assert choose(facts, 128, ALL, grid_ok=True).choice == Choice(256, 1, None)
    plan = choose(facts, 128, ALL, grid_ok=True, in_loop=True)
    assert plan.choice == Choice(256, 1, "block") and plan.all_serial
    assert any(r.startswith("aggregate per block: every child grid is one block of 128 threads") and "livelock" in r
               for r in plan.reasons)
    # aggregation refused: nothing else to do, serial execution without it
    assert choose(facts, 128, {"threshold", "coarsen"}, grid_ok=True, in_loop=True).choice == Choice(256, 1, None)


def test_alternatives_cover_the_space_nearest_first() -> None:
    plan = choose(_facts(), 128, ALL, grid_ok=True)
    assert len(plan.alternatives) == 2 * 2 * 4 - 1 and plan.choice not in plan.alternatives
    first = plan.alternatives[0]
    differing = (first.threshold != 256) + (first.factor != 1) + (first.granularity != "block")
    assert differing == 1


def test_plan_launch_with_and_without_profile() -> None:
    src = (CDP / "cdp.cu").read_text()
    plan = plan_launch(src, str(CDP / "cdp.cu"), LAUNCH, profiles())  # type: ignore[arg-type]
    assert plan.facts is not None and plan.choice == Choice(32, 4, "grid")
    assert "coarsen x4: child grids of 14.64 blocks of 128 threads on average" in plan.reasons
    default = plan_launch(src, str(CDP / "cdp.cu"), LAUNCH, None)
    assert default.facts is None and default.choice == Choice(256, 4, "multiblock")
    assert "no profile of the CDP program" in default.reasons[0]
    with pytest.raises(RewriteError, match="no single device-side launch"):
        plan_launch(src, str(CDP / "cdp.cu"), 3, None)


def test_plan_edits_apply_the_choice_as_one_edit() -> None:
    src = (CDP / "cdp.cu").read_text()
    edits = plan_edits(src, str(CDP / "cdp.cu"), LAUNCH, Choice(32, 4, "grid"))
    assert len(edits) == 1
    out = apply_edits(src, edits)
    assert "#define WARPWISE_THRESHOLD 32" in out and "#define WARPWISE_CFACTOR 4" in out
    assert "ww_scale_segment_coarse_agg_host_launch" in out
    assert parse(out, str(CDP / "cdp.cu")).errors == []
    # factor 1: no coarsened copy at all
    out1 = apply_edits(src, plan_edits(src, str(CDP / "cdp.cu"), LAUNCH, Choice(256, 1, None)))
    assert "_coarse" not in out1 and "#define WARPWISE_THRESHOLD 256" in out1 and "warpwise aggregate" not in out1


def _args(*argv: str) -> argparse.Namespace:
    from warpwise.server.rewrite_cmd import add_arguments

    p = argparse.ArgumentParser()
    add_arguments(p)
    return p.parse_args(list(argv))


def test_cli_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from warpwise.server.rewrite_cmd import run_rewrite

    out = tmp_path / "planned.cu"
    rc = run_rewrite(_args("plan", str(CDP / "cdp.cu"), "--launch", str(LAUNCH), "--profile",
                           str(CDP / "cdp.ncu-rep"), "-o", str(out)))
    text = capsys.readouterr().out
    assert rc == 0
    assert "profile-guided: threshold 32, coarsen x4, aggregate per grid" in text
    assert "  - 2000 child launches of 1774 threads on average" in text
    assert "    1. threshold 32, coarsen x1, aggregate per grid" in text
    assert "#define WARPWISE_CFACTOR 4" in out.read_text()
    rc = run_rewrite(_args("plan", str(CDP / "cdp.cu"), "--launch", str(LAUNCH), "--profile",
                           str(tmp_path / "missing.ncu-rep")))
    assert rc == 2 and "cannot read profile" in capsys.readouterr().err


def test_code_actions_put_the_profile_guided_choice_first() -> None:
    from warpwise.server.actions import resolve_rewrite, rewrite_actions

    src = (CDP / "cdp.cu").read_text()
    uri = (CDP / "cdp.cu").as_uri()
    acts = rewrite_actions(uri, 1, src, str(CDP / "cdp.cu"), LAUNCH, LAUNCH, None, True, True,
                           list(profiles()))
    titles = [a.title for a in acts]
    assert titles[0] == "Profile-guided DP rewrite: threshold 32, coarsen x4, aggregate per grid — scale_segment"
    assert acts[0].is_preferred is True
    assert all(t.startswith("Alternative DP rewrite: ") for t in titles[1:4])
    assert titles[4].startswith("Threshold the child launch")
    edit = resolve_rewrite(acts[0].data, src)  # type: ignore[arg-type]
    assert edit.document_changes
    without = rewrite_actions(uri, 1, src, str(CDP / "cdp.cu"), LAUNCH, LAUNCH, None, True, True, None)
    assert without[0].title.startswith("DP rewrite (default, no profile): threshold 256, coarsen x4, aggregate "
                                       "per multiblock")


H200 = ROOT / "bench" / "dp" / "results_h200" / "profiles"
H200_XL = ROOT / "bench" / "dp" / "results_h200_xl" / "profiles"


def h200_report(folder: Path, name: str, into: Path) -> Path:
    """A committed DP benchmark report (xz-compressed, ``name.ncu-rep.xz``) unpacked into ``into``."""
    import lzma
    import shutil

    out = into / f"{name}.ncu-rep"
    with lzma.open(folder / f"{name}.ncu-rep.xz") as src, out.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


@pytest.mark.parametrize(("inp", "mean", "choice"), [("small", 6.9, Choice(256, 1, None)),
                                                      ("large", 119.9, Choice(32, 4, "grid"))])
def test_plan_from_the_benchmark_profile(inp: str, mean: float, choice: Choice, tmp_path: Path) -> None:
    """btree's CDP original profiled on the H200 (bench/dp/gpu.sh): 32768 queries, one launch each."""
    from warpwise.analysis.profile.ncu import load_profiles

    src_path = ROOT / "examples" / "dp" / "btree" / "btree.cu"
    src = src_path.read_text()
    line = next(i for i, t in enumerate(src.splitlines(), 1) if "scan_range<<<" in t)
    profiles = load_profiles(h200_report(H200, f"btree@{inp}", tmp_path))
    plan = plan_launch(src, "examples/dp/btree/btree.cu", line, profiles)
    assert plan.facts is not None and plan.facts.child_launches == 32768
    assert round(plan.facts.mean_child_threads, 1) == mean
    assert plan.choice == choice


def test_recursive_launch_is_aggregated_per_block(tmp_path: Path) -> None:
    """The quadtree's recursive node kernel, profiled on the H200: every level aggregated per block (no
    threshold: a serial child would run its whole subtree in one thread)."""
    from warpwise.analysis.profile.ncu import load_profiles

    path = ROOT / "examples" / "dp" / "quadtree" / "quadtree.cu"
    src = path.read_text()
    line = next(i for i, t in enumerate(src.splitlines(), 1) if "qt_node<<<(hi - lo" in t)
    plan = plan_launch(src, "examples/dp/quadtree/quadtree.cu", line,
                       load_profiles(h200_report(H200, "quadtree@large", tmp_path)))
    assert plan.facts is not None and plan.facts.recursive and plan.facts.child_launches == 11752
    assert plan.choice == Choice(0, 1, "block") and plan.choice.steps() == [("aggregate", "block")]
    assert plan.choice.label == "no threshold, no coarsening, aggregate per block"
    # the alternatives are the ones that build: threshold+coarsen without aggregation
    assert len(plan.alternatives) == 4 and all(a.granularity is None for a in plan.alternatives)
    assert any(r.startswith("recursive launch, 89% of the samples in the device runtime: aggregate every level per "
                            "block") for r in plan.reasons)
    out = apply_edits(src, plan_edits(src, "examples/dp/quadtree/quadtree.cu", line, plan.choice))
    assert "ww_qt_node_ragg<<<" in out and "ww_qt_node_serial" not in out


def test_too_few_child_launches_fall_back_to_the_default(tmp_path: Path) -> None:
    """sssp's first rounds profiled on the H200 (xl input): 12 child launches, fewer than the 132 SMs."""
    from warpwise.analysis.profile.ncu import load_profiles

    path = ROOT / "examples" / "dp" / "sssp" / "sssp.cu"
    src = path.read_text()
    line = next(i for i, t in enumerate(src.splitlines(), 1) if "relax_edges<<<" in t)
    rep = h200_report(H200_XL, "sssp@xl", tmp_path)
    plan = plan_launch(src, "examples/dp/sssp/sssp.cu", line, load_profiles(rep))
    assert plan.facts is None and plan.choice == Choice(256, 4, "multiblock")
    assert plan.reasons[0].startswith("the profile of `relax_frontier` holds 12 child launches, fewer than the GPU's "
                                      "132 SMs: too few to tell the program's child grids (a window of the first "
                                      "launches of a multi-round program holds only its first rounds: profile single "
                                      "launches spread over the run")
