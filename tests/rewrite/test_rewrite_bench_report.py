"""bench/dp/report.py: joining gpu.sh output with the manifest, checks and geometric means."""

from __future__ import annotations

import json
import math
from pathlib import Path

from rewrite_helpers import load_bench_module

_report = load_bench_module("report")
collect, table = _report.collect, _report.table


def test_collect_checks_hashes_and_takes_geomeans(tmp_path: Path) -> None:
    manifest: list[dict[str, object]] = [
        {"example": ex, "variant": v, "kind": k, "granularity": None, "threshold": None, "factor": None,
         "source": "x", "defines": []}
        for ex in ("a", "b")
        for v, k in (("original", "original"), ("nocdp", "nocdp"), ("agg_block", "agg"), ("tca_block", "tca"),
                     ("tca_warp", "tca"))
    ]
    (tmp_path / "m.json").write_text(json.dumps(manifest))
    times = {("a", "original"): 80.0, ("a", "nocdp"): 16.0, ("a", "agg_block"): 8.0, ("a", "tca_block"): 2.0,
             ("a", "tca_warp"): 1.0, ("b", "original"): 50.0, ("b", "nocdp"): 10.0, ("b", "agg_block"): 5.0,
             ("b", "tca_block"): 4.0, ("b", "tca_warp"): 0.5}
    lines = []
    for (ex, v), t in times.items():
        h = "bad" if (ex, v) == ("b", "tca_warp") else "h"  # wrong result: must not count as the best
        lines.append(f"{ex}__{v}\tlarge\t0\tRESULT {ex}@large PASS time_ms={t} launch_errors=0 mismatches=0 hash={h}")
    (tmp_path / "raw.tsv").write_text("\n".join(lines) + "\n")
    rows = collect(tmp_path / "m.json", tmp_path / "raw.tsv", tmp_path)
    assert [r["variant"] for r in rows if not r["ok"]] == ["tca_warp"]
    s = json.loads((tmp_path / "results.json").read_text())["summary"]
    a, b = s["examples"]["a@large"], s["examples"]["b@large"]
    assert (a["best_variant"], b["best_variant"]) == ("tca_warp", "tca_block")
    assert a["x_over_cdp"] == 80.0 and b["x_over_cdp"] == 12.5
    assert math.isclose(s["geomean"]["cdp"], math.sqrt(80.0 * 12.5))
    assert math.isclose(s["geomean"]["agg"], math.sqrt(8.0 * 1.25))
    assert "| CGO'22 paper (geomean) | | | | | 43.0× | 8.7× | 3.6× | |" in table(s)
    assert (tmp_path / "results.csv").read_text().splitlines()[0].startswith("example,input,variant,kind")


def test_merge_takes_missing_rows_and_replaced_examples_from_the_second_run(tmp_path: Path) -> None:
    merge = _report.merge
    r = "RESULT {e}@large PASS time_ms={t} launch_errors=0 mismatches=0 hash=h"
    (tmp_path / "r1").write_text("\n".join([
        f"a__original\tlarge\t0\t{r.format(e='a', t=5)}", "a__tc\tlarge\tSKIPPED_DEADLINE\t",
        f"a__nocdp\tlarge\t0\t{r.format(e='a', t=2)}", "b__original\tlarge\t124\tTIMEOUT",
        f"b__nocdp\tlarge\t0\t{r.format(e='b', t=9)}"]) + "\n")
    (tmp_path / "r2").write_text("\n".join([
        f"a__tc\tlarge\t0\t{r.format(e='a', t=1)}", f"a__nocdp\tlarge\t0\t{r.format(e='a', t=2.2)}",
        f"b__original\tlarge\t0\t{r.format(e='b', t=30)}", f"b__nocdp\tlarge\t0\t{r.format(e='b', t=3)}"]) + "\n")
    drift = merge(tmp_path / "r1", tmp_path / "r2", {"b"}, tmp_path / "m")
    got = {tuple(ln.split("\t")[:2]): ln for ln in (tmp_path / "m").read_text().splitlines()}
    assert "time_ms=1 " in got[("a__tc", "large")] and "time_ms=2 " in got[("a__nocdp", "large")]
    assert "time_ms=30 " in got[("b__original", "large")] and "time_ms=3 " in got[("b__nocdp", "large")]
    assert drift == ["a__nocdp@large: run 1 2 ms, run 2 2.2 ms"]


def test_the_plan_space_is_the_sweep() -> None:
    from warpwise.analysis.rewrite import plan

    sweep = load_bench_module("sweep")
    assert plan.THRESHOLDS == sweep.THRESHOLDS and plan.FACTORS == sweep.FACTORS
    assert set(sweep.GRANULARITIES) == {"block", "multiblock", "grid"}


def test_merge_takes_a_group_whole_and_finds_the_complete_groups(tmp_path: Path) -> None:
    r = "RESULT {e}@{i} PASS time_ms={t} launch_errors=0 mismatches=0 hash=h"
    (tmp_path / "r1").write_text("\n".join([
        f"a__original\tsmall\t0\t{r.format(e='a', i='small', t=5)}", "a__tc\tsmall\tSKIPPED_DEADLINE\t",
        f"a__original\tlarge\t0\t{r.format(e='a', i='large', t=7)}",
        f"a__tc\tlarge\t0\t{r.format(e='a', i='large', t=4)}"]) + "\n")
    (tmp_path / "r2").write_text("\n".join([
        f"a__original\tsmall\t0\t{r.format(e='a', i='small', t=6)}",
        f"a__tc\tsmall\t0\t{r.format(e='a', i='small', t=1)}",
        f"a__original\tlarge\t0\t{r.format(e='a', i='large', t=9)}", "a__tc\tlarge\tSKIPPED_DEADLINE\t"]) + "\n")
    groups = _report.complete_groups(tmp_path / "r2")
    assert groups == {"a@small"}
    drift = _report.merge(tmp_path / "r1", tmp_path / "r2", groups, tmp_path / "m")
    got = {tuple(ln.split("\t")[:2]): ln for ln in (tmp_path / "m").read_text().splitlines()}
    # a@small whole from run 2 (its CDP time too: side by side with its tc time); a@large from run 1
    assert "time_ms=6 " in got[("a__original", "small")] and "time_ms=1 " in got[("a__tc", "small")]
    assert "time_ms=7 " in got[("a__original", "large")] and "time_ms=4 " in got[("a__tc", "large")]
    assert drift == ["a__original@large: run 1 7 ms, run 2 9 ms"]


def test_noise_is_the_run_to_run_spread_of_the_same_builds_on_the_same_inputs(tmp_path: Path) -> None:
    r = "RESULT a@large PASS time_ms={t} launch_errors=0 mismatches=0 hash={h}"
    (tmp_path / "r1").write_text("".join(f"a__{v}\tlarge\t0\t{r.format(t=t, h=h)}\t9\n" for v, t, h in
                                         (("x", 10, "h"), ("y", 10, "h"), ("z", 10, "h"), ("w", 10, "old"))))
    (tmp_path / "r2").write_text("".join(f"a__{v}\tlarge\t0\t{r.format(t=t, h=h)}\t9\n" for v, t, h in
                                         (("x", 10.2, "h"), ("y", 9.5, "h"), ("z", 11, "h"), ("w", 30, "new"))))
    # w's input changed (another hash): not a measure of noise; x, y, z moved 2%, 5%, 10%
    tie, pairs = _report.noise(tmp_path / "r1", tmp_path / "r2")
    assert pairs == 3 and math.isclose(tie, 0.05)
    per = {f"{e}@large": {"best_ms": 1.0, "cdp_ms": 50.0, "nocdp_ms": n} for e, n in (("p", 1.03), ("q", 2.0),
                                                                                        ("s", 0.9))}
    plans = {k: {"plan": {"time_ms": 1.0}} for k in per}
    text = _report.goals(per, plans, tie)  # type: ignore[arg-type]
    assert "faster than no-CDP on 2 of 3" in text
    assert "within the run-to-run noise (±5.0%) of no-CDP on 1 (p@large), beyond it faster on 1, slower on 1" in text
