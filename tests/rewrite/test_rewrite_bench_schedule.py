"""bench/dp/schedule.py: which launches gpu.sh profiles, and which groups it runs first."""

from __future__ import annotations

from pathlib import Path

from rewrite_helpers import load_bench_module

_schedule = load_bench_module("schedule")


def test_spread_is_a_systematic_sample_of_the_launches() -> None:
    assert _schedule.spread(26, 3) == [0, 8, 17]
    assert _schedule.spread(7, 3) == [0, 2, 4]
    assert _schedule.spread(2, 3) == [0, 1]  # fewer launches than samples: every launch
    assert _schedule.spread(1, 3) == [0]


def _raw(tmp_path: Path) -> Path:
    r = "RESULT {e} PASS time_ms=1 launch_errors=0 mismatches=0 hash=h edges=9 {k}={n}"
    lines = [f"sssp__original\txl\t0\t{r.format(e='sssp@xl', k='rounds', n=26)}\t5785",
             f"sssp__nocdp\txl\t0\t{r.format(e='sssp@xl', k='rounds', n=26)}\t1215",
             f"bfs__original\tsmall\t0\t{r.format(e='bfs@small', k='levels', n=9)}\t900",
             "mst__original\txl\t1\tNO_RESULT\t8",  # a failed run: neither a round count nor a cost
             f"mst__original\tlarge\t0\t{r.format(e='mst@large', k='rounds', n=6)}\t3000",
             f"mst__nocdp\tlarge\t0\t{r.format(e='mst@large', k='rounds', n=6)}\t1000"]
    (tmp_path / "raw.tsv").write_text("\n".join(lines) + "\n")
    return tmp_path / "raw.tsv"


def test_profile_jobs_use_the_previous_round_counts(tmp_path: Path) -> None:
    jobs = _schedule.profile_jobs(_raw(tmp_path), 3, r"^(sssp@xl|mst@xl|bfs@small)$")
    assert jobs == ["sssp\trelax_frontier\txl\t0,8,17", "mst\tlightest_edges\txl\t?", "bfs\tbfs_frontier\tsmall\t0,3,6"]


def test_groups_in_order_with_costs(tmp_path: Path) -> None:
    builds = tmp_path / "builds.tsv"
    builds.write_text("".join(f"{ex}__{v}\tsrc\t{v}\txl,large\t\n" for ex in ("mst", "sssp")
                              for v in ("original", "nocdp", "tc")))
    got = [ln.split("\t") for ln in _schedule.groups(builds, _raw(tmp_path), 1, "^mst@xl,^sssp@")]
    assert [g[:2] for g in got] == [["mst", "xl"], ["sssp", "xl"], ["sssp", "large"], ["mst", "large"]]
    # mst@large: 3 + 1 s and tc as the mean of the two (2 s); mst@xl never ran: twice mst@large
    assert got[3][3] == "6.0" and got[0][3] == "12.0"
    # sssp@xl: 5.785 + 1.215 + their mean 3.5 = 10.5 s; sssp@large unknown and no large to copy: 1 s a build
    assert got[1][3] == "10.5" and got[2][3] == "3.0"


def test_plan_eval_reads_the_planned_spread_sample_only(tmp_path: Path) -> None:
    plan_eval = load_bench_module("plan_eval")
    run, old = tmp_path / "run", tmp_path / "old"
    (run / "profiles").mkdir(parents=True)
    old.mkdir()
    (run / "profile_jobs.txt").write_text("sssp\trelax_frontier\txl\t0,8,17\nbfs\tbfs_frontier\txl\t0,2,4\n")
    for name in ("sssp@xl.l17", "sssp@xl.l0", "sssp@xl.l8", "bfs@xl.l0", "bfs@xl.l2"):
        (run / "profiles" / f"{name}.ncu-rep").write_bytes(b"")
    (old / "bfs@xl.ncu-rep").write_bytes(b"")
    # the whole sample, in launch order; a sample cut short (bfs: 2 of 3) gives way to the older report
    assert [p.name for p in plan_eval.reports_for(run, [old], "sssp@xl")] == [
        "sssp@xl.l0.ncu-rep", "sssp@xl.l8.ncu-rep", "sssp@xl.l17.ncu-rep"]
    assert plan_eval.reports_for(run, [old], "bfs@xl") == [old / "bfs@xl.ncu-rep"]
    assert plan_eval.reports_for(run, [old], "mst@xl") == []
