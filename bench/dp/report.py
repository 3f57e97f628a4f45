"""Turn bench/dp/gpu.sh output into results.csv/results.json and a markdown table for docs/benchmarks.md.

Standard library only (it also runs on the GPU box).

  python3 bench/dp/report.py collect --manifest M --raw RAW --out DIR   # gpu.sh calls this
  python3 bench/dp/report.py markdown DIR/results.json                  # table for docs/benchmarks.md

Speedups follow CGO'22 §VIII (Fig. 9): the framework's time is the best over the sweep of threshold,
coarsening factor and aggregation granularity per benchmark; baselines are plain CDP (the original),
no-CDP (the parent runs every child's work in a loop) and aggregation only (KLAP, best granularity).
Geometric means are compared with the paper's 43.0× over CDP, 8.7× over no-CDP and 3.6× over
aggregation only (measured there on other benchmarks and GPUs; a comparison of orders, not a
reproduction).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import sys
from pathlib import Path

PAPER = {"cdp": 43.0, "nocdp": 8.7, "agg": 3.6}
FIELDS = ["example", "input", "variant", "kind", "granularity", "threshold", "factor", "status", "time_ms",
          "launch_errors", "mismatches", "hash", "same_as_original", "ok"]


def collect(manifest: Path, raw: Path, out: Path) -> list[dict[str, object]]:
    """Join the manifest with the RESULT lines; write results.csv and results.json; return the rows."""
    builds = {f"{b['example']}__{b['variant']}": b for b in json.loads(manifest.read_text())}
    rows: list[dict[str, object]] = []
    for line in raw.read_text().splitlines():
        parts = line.split("\t")
        name, inp = parts[0], parts[1] if len(parts) > 1 else ""
        rc = parts[2] if len(parts) > 2 else ""
        res = parts[3] if len(parts) > 3 else ""
        b = builds[name]
        row: dict[str, object] = {k: b.get(k) for k in ("example", "variant", "kind", "granularity", "threshold",
                                                         "factor")}
        row["input"] = inp
        m = re.match(r"RESULT \S+ (PASS|FAIL) (.*)", res)
        if m:
            kv = dict(x.split("=", 1) for x in m.group(2).split())
            row.update(status=m.group(1), time_ms=float(kv["time_ms"]), launch_errors=int(kv["launch_errors"]),
                       mismatches=int(kv["mismatches"]), hash=kv["hash"])
        else:
            row.update(status=rc if rc in ("BUILD_FAILED", "SKIPPED_DEADLINE", "DRY_RUN") else (res or f"rc={rc}"),
                       time_ms=None, launch_errors=None, mismatches=None, hash=None)
        rows.append(row)
    orig = {(r["example"], r["input"]): r["hash"] for r in rows if r["variant"] == "original"}
    for r in rows:
        r["same_as_original"] = r["hash"] is not None and r["hash"] == orig.get((r["example"], r["input"]))
        r["ok"] = r["status"] == "PASS" and bool(r["same_as_original"])
    out.mkdir(parents=True, exist_ok=True)
    with (out / "results.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    summary = summarise(rows)
    gpu = (out / "gpu.txt").read_text().strip() if (out / "gpu.txt").exists() else ""
    (out / "results.json").write_text(json.dumps({"gpu": gpu, "rows": rows, "summary": summary}, indent=1) + "\n")
    return rows


def _best(rows: list[dict[str, object]], kinds: tuple[str, ...]) -> dict[str, object] | None:
    ok = [r for r in rows if r["kind"] in kinds and r["ok"] and r["time_ms"] is not None]
    return min(ok, key=lambda r: float(r["time_ms"])) if ok else None  # type: ignore[arg-type]


def summarise(rows: list[dict[str, object]]) -> dict[str, object]:
    """Per example: CDP, no-CDP, aggregation-only and best-framework times and speedups; geomeans."""
    per: dict[str, dict[str, object]] = {}
    for ex in dict.fromkeys(f"{r['example']}@{r['input']}" for r in rows):
        rs = [r for r in rows if f"{r['example']}@{r['input']}" == ex]
        cdp, nocdp = _best(rs, ("original",)), _best(rs, ("nocdp",))
        # the sweep's best: the serial point (no-CDP: threshold 2^31 - 1) belongs to the threshold sweep too
        agg, best = _best(rs, ("agg",)), _best(rs, ("nocdp", "tc", "agg", "tca"))
        e: dict[str, object] = {"failed": [str(r["variant"]) for r in rs if not r["ok"]]}
        for key, r in (("cdp", cdp), ("nocdp", nocdp), ("agg", agg), ("best", best)):
            e[f"{key}_ms"] = r["time_ms"] if r else None
            e[f"{key}_variant"] = r["variant"] if r else None
        for key in ("cdp", "nocdp", "agg"):
            a, b = e[f"{key}_ms"], e["best_ms"]
            e[f"x_over_{key}"] = float(a) / float(b) if a and b else None  # type: ignore[arg-type]
        per[ex] = e
    geo = {}
    for key in ("cdp", "nocdp", "agg"):
        xs = [float(e[f"x_over_{key}"]) for e in per.values() if e[f"x_over_{key}"]]  # type: ignore[arg-type]
        geo[key] = math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None
    return {"examples": per, "geomean": geo, "paper": PAPER}


def _f(x: object, fmt: str = "{:.3f}") -> str:
    return "–" if x is None else fmt.format(x)


def table(summary: dict[str, object]) -> str:
    """Markdown table of the summary (also readable as plain text)."""
    per: dict[str, dict[str, object]] = summary["examples"]  # type: ignore[assignment]
    geo: dict[str, float | None] = summary["geomean"]  # type: ignore[assignment]
    lines = ["| benchmark | CDP ms | no-CDP ms | aggregation only ms | best ms (variant) | × over CDP | "
             "× over no-CDP | × over aggregation only | failed variants |",
             "|---|---:|---:|---:|---|---:|---:|---:|---|"]
    for ex, e in per.items():
        lines.append(f"| {ex} | {_f(e['cdp_ms'])} | {_f(e['nocdp_ms'])} | {_f(e['agg_ms'])} ({e['agg_variant']}) | "
                     f"{_f(e['best_ms'])} ({e['best_variant']}) | {_f(e['x_over_cdp'], '{:.2f}×')} | "
                     f"{_f(e['x_over_nocdp'], '{:.2f}×')} | {_f(e['x_over_agg'], '{:.2f}×')} | "
                     f"{', '.join(e['failed']) or 'none'} |")  # type: ignore[arg-type]
    lines.append(f"| **geometric mean** | | | | | **{_f(geo['cdp'], '{:.2f}×')}** | "
                 f"**{_f(geo['nocdp'], '{:.2f}×')}** | "
                 f"**{_f(geo['agg'], '{:.2f}×')}** | |")
    lines.append(f"| CGO'22 paper (geomean) | | | | | {PAPER['cdp']}× | {PAPER['nocdp']}× | {PAPER['agg']}× | |")
    return "\n".join(lines)


def merge(raw1: Path, raw2: Path, replace: set[str], out: Path) -> list[str]:
    """raw.tsv of two runs into one: an example (``bfs``) or a group (``bfs@small``: one example on one
    input) in ``replace`` is taken whole from the second run, so a group's ratios stay side by side;
    otherwise the first run's line of a (build, input) unless it has no result (skipped, timed out),
    then the second's. Writes ``out`` and returns drift lines: builds timed in both runs."""
    def lines(raw: Path) -> dict[tuple[str, str], str]:
        out_: dict[tuple[str, str], str] = {}
        for ln in raw.read_text().splitlines():
            parts = ln.split("\t")
            out_[(parts[0], parts[1] if len(parts) > 1 else "")] = ln
        return out_

    a, b = lines(raw1), lines(raw2)
    merged: dict[tuple[str, str], str] = {}
    drift = []
    for key in dict.fromkeys([*a, *b]):
        ex = key[0].split("__")[0]
        ex = f"{ex}@{key[1]}" if f"{ex}@{key[1]}" in replace else ex
        la, lb = a.get(key), b.get(key)
        has = (lambda ln: ln is not None and "RESULT" in ln)  # noqa: E731
        if ex in replace:
            pick = lb if lb is not None else la
        else:
            pick = la if has(la) else (lb if lb is not None else la)
        if has(la) and has(lb) and ex not in replace:
            ta = re.search(r"time_ms=([\d.]+)", la or "")
            tb = re.search(r"time_ms=([\d.]+)", lb or "")
            if ta and tb:
                drift.append(f"{key[0]}@{key[1]}: run 1 {ta.group(1)} ms, run 2 {tb.group(1)} ms")
        if pick is not None:
            merged[key] = pick
    out.write_text("\n".join(merged.values()) + "\n")
    return drift


def complete_groups(raw: Path) -> set[str]:
    """The groups (``example@input``) of a raw.tsv none of whose builds was skipped (gpu.sh runs a group whole
    or not at all: these are the groups its run measured side by side)."""
    seen: dict[str, bool] = {}
    for ln in raw.read_text().splitlines():
        parts = ln.split("\t")
        if len(parts) < 3:
            continue
        g = f"{parts[0].split('__')[0]}@{parts[1]}"
        seen[g] = seen.get(g, True) and parts[2] not in ("SKIPPED_DEADLINE", "NOT_SELECTED")
    return {g for g, ok in seen.items() if ok}


def _geo(xs: list[float]) -> float | None:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def plan_table(summary: dict[str, object], plans: dict[str, dict[str, object]], tie: float = 0.0) -> str:
    """Markdown table with the profile-guided choice (plan_eval.py) beside the baselines and the sweep's best;
    geometric means of both over CDP, no-CDP and aggregation only."""
    per: dict[str, dict[str, object]] = summary["examples"]  # type: ignore[assignment]
    lines = ["| benchmark | CDP ms | no-CDP ms | aggregation only ms | profile-guided ms (build) | best ms (variant) | "
             "guided / best | guided × over CDP | × over no-CDP | × over agg. only | default ms (build) |",
             "|---|---:|---:|---:|---|---|---:|---:|---:|---:|---|"]
    keys = ("g_cdp", "g_nocdp", "g_agg", "b_cdp", "b_nocdp", "b_agg", "g_best", "d_best")
    subsets: dict[str, dict[str, list[float]]] = {n: {k: [] for k in keys} for n in
                                                  ("all inputs", "xl inputs", "large inputs", "small inputs")}
    for ex, e in per.items():
        pl = plans.get(ex, {})
        g = pl.get("plan", {}) if isinstance(pl.get("plan"), dict) else {}
        d = pl.get("default", {}) if isinstance(pl.get("default"), dict) else {}
        gt, dt, bt = g.get("time_ms"), d.get("time_ms"), e["best_ms"]  # type: ignore[union-attr]
        for name, ratios in subsets.items():
            if name != "all inputs" and not ex.endswith("@" + name.split()[0]):
                continue
            for key, t in (("g", gt), ("b", bt)):
                for base in ("cdp", "nocdp", "agg"):
                    if t and e[f"{base}_ms"]:
                        ratios[f"{key}_{base}"].append(float(e[f"{base}_ms"]) / float(t))  # type: ignore[arg-type]
            if gt and bt:
                ratios["g_best"].append(float(gt) / float(bt))  # type: ignore[arg-type]
            if dt and bt:
                ratios["d_best"].append(float(dt) / float(bt))  # type: ignore[arg-type]

        def x(base: str, t: object = gt, e: dict[str, object] = e) -> str:
            b = e[f"{base}_ms"]
            return _f(float(b) / float(t) if b and t else None, "{:.2f}×")  # type: ignore[arg-type]

        lines.append(f"| {ex} | {_f(e['cdp_ms'])} | {_f(e['nocdp_ms'])} | {_f(e['agg_ms'])} ({e['agg_variant']}) | "
                     f"{_f(gt)} ({g.get('build')}{' †' if g.get('note') else ''}) | "  # type: ignore[union-attr]
                     f"{_f(bt)} ({e['best_variant']}) | "
                     f"{_f(float(gt) / float(bt) if gt and bt else None, '{:.2f}')} | "  # type: ignore[arg-type]
                     f"{x('cdp')} | {x('nocdp')} | {x('agg')} | {_f(dt)} ({d.get('build')}) |")  # type: ignore[union-attr]
    for name, ratios in subsets.items():
        geo = {k: _geo(v) for k, v in ratios.items()}
        lines.append(f"| **geometric mean, profile-guided, {name}** | | | | | | **{_f(geo['g_best'], '{:.2f}')}** | "
                     f"**{_f(geo['g_cdp'], '{:.2f}×')}** | **{_f(geo['g_nocdp'], '{:.2f}×')}** | "
                     f"**{_f(geo['g_agg'], '{:.2f}×')}** | default / best {_f(geo['d_best'], '{:.2f}')} |")
        lines.append(f"| geometric mean, best of sweep, {name} | | | | | | 1.00 | {_f(geo['b_cdp'], '{:.2f}×')} | "
                     f"{_f(geo['b_nocdp'], '{:.2f}×')} | {_f(geo['b_agg'], '{:.2f}×')} | |")
    lines.append(f"| CGO'22 paper (geomean, best of its sweep) | | | | | | | {PAPER['cdp']}× | {PAPER['nocdp']}× | "
                 f"{PAPER['agg']}× | |")
    lines.append("")
    if any(isinstance(p.get("plan"), dict) and p["plan"].get("note") for p in plans.values()):  # type: ignore[union-attr]
        lines.append("† the choice's build was not timed in this run; every profiled child grid runs serially under "
                     "it, so the no-CDP time (the same serial path) stands in")
        lines.append("")
    lines.append(goals(per, plans, tie))
    return "\n".join(lines)


def noise(raw1: Path, raw2: Path, q: float = 0.5) -> tuple[float, int]:
    """Run-to-run noise of the sweep's times: the ``q`` quantile of |t2 / t1 - 1| over every (build, input)
    that passed in both raw.tsv files with the same output hash (the same build and input timed in two
    runs on the same GPU model), and how many pairs it comes from. (0.0, 0) when no build was timed in both."""
    def times(raw: Path) -> dict[tuple[str, str], tuple[float, str]]:
        out: dict[tuple[str, str], tuple[float, str]] = {}
        for ln in raw.read_text().splitlines():
            parts = ln.split("\t")
            m = re.search(r"RESULT \S+ PASS time_ms=([\d.]+) .*hash=(\S+)", ln)
            if m and len(parts) > 1 and float(m.group(1)) > 0:
                out[(parts[0], parts[1])] = (float(m.group(1)), m.group(2))
        return out

    a, b = times(raw1), times(raw2)
    # the same output hash: the same input (an input changed between the runs is no measure of noise)
    devs = sorted(abs(b[k][0] / a[k][0] - 1) for k in a.keys() & b.keys() if a[k][1] == b[k][1])
    if not devs:
        return 0.0, 0
    return devs[min(len(devs) - 1, int(q * len(devs)))], len(devs)


def goals(per: dict[str, dict[str, object]], plans: dict[str, dict[str, object]], tie: float = 0.0) -> str:
    """The issue's per-input goals for the profile-guided choice, counted: within 10% of the sweep's best,
    faster than CDP, faster than no-CDP (a ratio of 1.00 is not faster), and the worst of each. ``tie``
    (a fraction, e.g. the run-to-run noise of :func:`noise`): a ratio over no-CDP within 1 +- tie is
    counted as a tie, not as a loss or a win."""
    within, over_cdp, over_nocdp, n = [], [], [], 0
    for ex, e in per.items():
        g = plans.get(ex, {}).get("plan")
        t = g.get("time_ms") if isinstance(g, dict) else None
        if not t or not e["best_ms"]:
            continue
        n += 1
        within.append((float(t) / float(e["best_ms"]), ex))  # type: ignore[arg-type]
        if e["cdp_ms"]:
            over_cdp.append((float(e["cdp_ms"]) / float(t), ex))  # type: ignore[arg-type]
        if e["nocdp_ms"]:
            over_nocdp.append((float(e["nocdp_ms"]) / float(t), ex))  # type: ignore[arg-type]
    if not n:
        return "no profile-guided times"
    tied = [ex for x, ex in over_nocdp if abs(x - 1) <= tie]
    text = (f"profile-guided choice on {n} inputs: within 10% of the sweep's best on "
            f"{sum(x <= 1.10 for x, _ in within)} (worst {max(within)[0]:.2f}× the best, {max(within)[1]}); "
            f"faster than CDP on {sum(x > 1 for x, _ in over_cdp)} of {len(over_cdp)} "
            f"(lowest {min(over_cdp)[0]:.2f}×, {min(over_cdp)[1]}); faster than no-CDP on "
            f"{sum(x > 1 for x, _ in over_nocdp)} of {len(over_nocdp)} (lowest {min(over_nocdp)[0]:.2f}×, "
            f"{min(over_nocdp)[1]})")
    if tie:
        text += (f"; within the run-to-run noise (±{100 * tie:.1f}%) of no-CDP on {len(tied)} "
                 f"({', '.join(tied) or 'none'}), beyond it faster on "
                 f"{sum(x > 1 + tie for x, _ in over_nocdp)}, slower on {sum(x < 1 - tie for x, _ in over_nocdp)}")
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="DP benchmark results")
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--manifest", required=True, type=Path)
    c.add_argument("--raw", required=True, type=Path)
    c.add_argument("--out", required=True, type=Path)
    g = sub.add_parser("merge", help="join the raw.tsv of a second (subset) run into the first")
    g.add_argument("--raw", required=True, type=Path)
    g.add_argument("--raw2", required=True, type=Path)
    g.add_argument("--replace", default="", help="comma-separated examples (bfs) or groups (bfs@small) taken "
                   "whole from the second run")
    g.add_argument("--complete-groups", action="store_true",
                   help="also take whole every group the second run measured whole (complete_groups)")
    g.add_argument("--out", required=True, type=Path, help="merged raw.tsv")
    m = sub.add_parser("markdown")
    m.add_argument("results", type=Path)
    m.add_argument("--plans", type=Path, default=None, help="plans.json of plan_eval.py: add the guided choice")
    m.add_argument("--noise", nargs=2, type=Path, default=None, metavar=("RAW1", "RAW2"),
                   help="two runs' raw.tsv: count a ratio over no-CDP within their run-to-run noise as a tie")
    a = ap.parse_args(argv)
    if a.cmd == "collect":
        rows = collect(a.manifest, a.raw, a.out)
        summary = json.loads((a.out / "results.json").read_text())["summary"]
        print(f"{sum(1 for r in rows if r['ok'])}/{len(rows)} variants PASS with the original's result")
        for r in rows:
            if not r["ok"]:
                print(f"  NOT OK: {r['example']} {r['variant']}: {r['status']} "
                      f"launch_errors={r['launch_errors']} same_as_original={r['same_as_original']}")
        print(table(summary))
        return 0
    if a.cmd == "merge":
        replace = {x for x in a.replace.split(",") if x} | (complete_groups(a.raw2) if a.complete_groups else set())
        print("taken whole from the second run: " + ", ".join(sorted(replace)))
        for d in merge(a.raw, a.raw2, replace, a.out):
            print(d)
        return 0
    data = json.loads(a.results.read_text())
    print(f"GPU: {data.get('gpu') or 'unknown'}\n")
    summary = summarise(data["rows"])  # recomputed: results.json of an older report.py may differ
    tie = 0.0
    if a.noise is not None:
        tie, pairs = noise(*a.noise)
        print(f"run-to-run noise: median of |t2/t1 - 1| over {pairs} builds timed in both runs = "
              f"{100 * tie:.1f}%\n")
    if a.plans is not None:
        print(plan_table(summary, json.loads(a.plans.read_text()), tie))
    else:
        print(table(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
