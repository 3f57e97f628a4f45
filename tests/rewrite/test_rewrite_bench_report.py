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
