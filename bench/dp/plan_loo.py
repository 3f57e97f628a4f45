"""How much the plan's rule would gain from fitting its constants to the DP sweep: in sample and
leave-one-program-out.

  python bench/dp/plan_loo.py RESULTS_DIR     # needs RESULTS_DIR/plans.json (plan_eval.py) and results.json

The plan's rule (analysis/rewrite/plan.py) has four constants (``Rule``), stated from the hardware and the
CGO'22 arguments. This script re-runs the rule on the profile facts that plan_eval.py stored, for every
combination of the candidate values below, and looks each choice up in the sweep (ratio = the choice's
time / the sweep's best time, the sweep's best including the no-CDP point; a choice the sweep did not
time, or whose output was wrong, counts as 10x). Three figures per benchmark input:

- stated: the rule as committed (no fit);
- in sample: the constants that minimise the geometric mean of the ratio over all inputs;
- out of sample: leave one program out (both of its inputs), fit on the other programs, apply to it.

Ties between constants are broken towards the stated values. Writes RESULTS_DIR/plan_loo.json and
prints a markdown table. Needs warpwise (the rule) but no ncu reports.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from plan_eval import lookup
from warpwise.analysis.rewrite.plan import RULE, DpFacts, LaunchContext, Rule, plan_for

CANDIDATES = {"serial_below": (4.0, 8.0, 16.0, 32.0, 64.0, 128.0),
              "coarsen_blocks": (1.05, 1.5, 2.0, 4.0),
              "agg_min_launch_share": (0.01, 0.05, 0.25),
              "parent_share_grid": (0.05, 0.2, 0.5, 0.9),
              "coarsen_waves": (1.0, 4.0, 16.0, 32.0)}
MISSING = 10.0  # ratio of a choice with no valid time in the sweep


def sweep_best(rows: list[dict[str, object]]) -> dict[str, float]:
    """Best valid time per example@input over the sweep (no-CDP, threshold+coarsen, aggregation, all three)."""
    best: dict[str, float] = {}
    for r in rows:
        if r["ok"] and r["time_ms"] is not None and r["kind"] in ("nocdp", "tc", "agg", "tca"):
            k = f"{r['example']}@{r['input']}"
            best[k] = min(best.get(k, math.inf), float(r["time_ms"]))  # type: ignore[arg-type]
    return best


def ratio(entry: dict[str, object], rule: Rule, times: dict[tuple[str, str], float], best: float) -> tuple[float, str]:
    """(choice's time / best, build) of the rule on one input's stored facts."""
    c: dict[str, object] = entry["context"]  # type: ignore[assignment]
    ctx = LaunchContext(str(c["parent"]), bool(c["recursive"]), frozenset(c["allowed"]),  # type: ignore[arg-type]
                        bool(c["grid_ok"]), c["child_block"],  # type: ignore[arg-type]
                        bool(c.get("in_loop", False)))  # absent (False) in plans.json written before run 6
    plan = plan_for(ctx, DpFacts(**entry["dp_facts"]), rule)  # type: ignore[arg-type]
    b, t, _note = lookup(plan, times, str(entry["_key"]))
    return (t / best if t else MISSING), b


def _geo(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else math.nan


def _distance(rule: Rule) -> float:
    return sum(abs(math.log(getattr(rule, f) / getattr(RULE, f))) for f in CANDIDATES)


def fit(entries: list[dict[str, object]], times: dict[tuple[str, str], float], best: dict[str, float]) -> Rule:
    """The candidate Rule with the lowest geometric-mean ratio over ``entries`` (ties: nearest the stated rule)."""
    rules = [Rule(**dict(zip(CANDIDATES, vals, strict=True))) for vals in itertools.product(*CANDIDATES.values())]
    scored = [(round(_geo([ratio(e, r, times, best[str(e["_key"])])[0] for e in entries]), 4), _distance(r), i, r)
              for i, r in enumerate(rules)]
    return min(scored)[3]


def evaluate(results_dir: Path) -> dict[str, object]:
    plans = json.loads((results_dir / "plans.json").read_text())
    rows = json.loads((results_dir / "results.json").read_text())["rows"]
    best = sweep_best(rows)
    times = {(f"{r['example']}@{r['input']}", str(r["variant"])): float(r["time_ms"])
             for r in rows if r["ok"] and r["time_ms"] is not None}
    entries = []
    for k, e in plans.items():
        if "dp_facts" in e and k in best:
            e["_key"] = k
            entries.append(e)
    programs = sorted({str(e["_key"]).split("@")[0] for e in entries})
    in_sample = fit(entries, times, best)
    per: dict[str, dict[str, object]] = {}
    folds: dict[str, dict[str, float]] = {}
    for prog in programs:
        train = [e for e in entries if not str(e["_key"]).startswith(prog + "@")]
        rule = fit(train, times, best)
        folds[prog] = {f: getattr(rule, f) for f in CANDIDATES}
        for e in entries:
            k = str(e["_key"])
            if not k.startswith(prog + "@"):
                continue
            s, sb = ratio(e, RULE, times, best[k])
            i, ib = ratio(e, in_sample, times, best[k])
            o, ob = ratio(e, rule, times, best[k])
            per[k] = {"stated": s, "stated_build": sb, "in_sample": i, "in_sample_build": ib,
                      "out_of_sample": o, "out_of_sample_build": ob, "best_ms": best[k]}
    summary = {}
    for col in ("stated", "in_sample", "out_of_sample"):
        xs = [float(v[col]) for v in per.values()]  # type: ignore[arg-type]
        summary[col] = {"geomean": _geo(xs), "worst": max(xs), "within_10pct": sum(x <= 1.10 for x in xs),
                        "inputs": len(xs)}
    return {"per_input": per, "summary": summary, "in_sample_rule": {f: getattr(in_sample, f) for f in CANDIDATES},
            "stated_rule": {f: getattr(RULE, f) for f in CANDIDATES}, "folds": folds,
            "candidates": {k: list(v) for k, v in CANDIDATES.items()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    a = ap.parse_args(argv)
    out = evaluate(a.results)
    (a.results / "plan_loo.json").write_text(json.dumps(out, indent=1) + "\n")
    print("| benchmark | stated rule: choice / best (build) | fit in sample | fit leave-one-program-out |")
    print("|---|---|---|---|")
    for k, v in out["per_input"].items():  # type: ignore[union-attr]
        print(f"| {k} | {v['stated']:.2f} ({v['stated_build']}) | {v['in_sample']:.2f} ({v['in_sample_build']}) | "
              f"{v['out_of_sample']:.2f} ({v['out_of_sample_build']}) |")
    for col, s in out["summary"].items():  # type: ignore[union-attr]
        print(f"{col}: geomean {s['geomean']:.3f}, worst {s['worst']:.2f}, within 10% on {s['within_10pct']} of "
              f"{s['inputs']}")
    print(f"stated rule {out['stated_rule']}; fitted in sample {out['in_sample_rule']}")
    for prog, r in out["folds"].items():  # type: ignore[union-attr]
        print(f"  fold without {prog}: {r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
