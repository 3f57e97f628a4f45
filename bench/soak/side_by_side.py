"""Burst hover latency of two server versions side by side (issue 13 item 6): runs ``lsp_soak.py`` for a
baseline tree and for this checkout alternately, ``--runs`` times each, and prints min / median / max of
the burst/idle hover p95 ratio (goal <= 3x) and of the burst p95 per version.

    git archive <baseline-commit> | (mkdir -p /tmp/base/warpwise && tar -x -C /tmp/base/warpwise)
    python bench/soak/side_by_side.py --baseline /tmp/base [--runs 3] [--edits 1000] [--docs 10]

The baseline runs with ``PYTHONPATH=<baseline>`` (its ``warpwise`` package shadows this checkout's editable
install); both use this checkout's soak client, so only the server differs. Alternating the runs spreads
the machine's background load over both versions.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

SOAK = Path(__file__).resolve().parent / "lsp_soak.py"


def one(baseline: str | None, edits: int, docs: int) -> dict[str, float]:
    """One soak round; the burst/idle ratio and the p95s (ms)."""
    env = dict(os.environ)
    if baseline:
        env["PYTHONPATH"] = baseline + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run([sys.executable, str(SOAK), "--edits", str(edits), "--docs", str(docs), "--rounds", "1"],
                         capture_output=True, text=True, env=env, timeout=600)
    out = json.loads(res.stdout[: res.stdout.rindex("}") + 1])
    r = out["rounds"][0]
    return {"ratio": out["burst_over_idle_p95"], "burst_p95_ms": r["burst_p95_ms"], "idle_p95_ms": r["idle_p95_ms"],
            "errors": out["n_errors"], "same": float(r["same_as_fresh_open"])}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True, help="folder holding the baseline's warpwise/ package")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--edits", type=int, default=1000)
    ap.add_argument("--docs", type=int, default=10)
    a = ap.parse_args()
    got: dict[str, list[dict[str, float]]] = {"baseline": [], "this": []}
    for i in range(a.runs):
        for name, tree in (("baseline", a.baseline), ("this", None)):
            r = one(tree, a.edits, a.docs)
            got[name].append(r)
            print(f"run {i + 1} {name}: {json.dumps(r)}", file=sys.stderr, flush=True)
    summary = {}
    for name, rs in got.items():
        summary[name] = {k: {"min": min(x[k] for x in rs), "median": statistics.median(x[k] for x in rs),
                             "max": max(x[k] for x in rs)} for k in ("ratio", "burst_p95_ms", "idle_p95_ms")}
        summary[name]["errors"] = sum(x["errors"] for x in rs)
        summary[name]["all_same_as_fresh_open"] = all(x["same"] for x in rs)
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
