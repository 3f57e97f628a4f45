"""Renderers on real advice: SARIF 2.1.0 structure, the contract's JSON advice array, the Fig. 8 text."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from warpwise.analysis.advice import OPTIMIZER_IDS, AdviceReport, render_text, report_json, to_json, to_sarif
from warpwise.analysis.advice.report import docs_anchor

DOCS = Path(__file__).resolve().parents[2] / "docs" / "optimizers.md"
_LEVELS = {"none", "note", "warning", "error"}


def _check_message(m: Any) -> None:
    assert isinstance(m, dict) and isinstance(m.get("text"), str) and m["text"]


def _check_physical(p: Any) -> None:
    uri = p["artifactLocation"]["uri"]
    assert isinstance(uri, str) and uri and " " not in uri
    assert isinstance(p["region"]["startLine"], int) and p["region"]["startLine"] >= 1


def check_sarif(log: dict[str, Any]) -> None:
    """Structural subset of the SARIF 2.1.0 schema (sarif-schema-2.1.0.json) that warpwise's logs use."""
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    assert isinstance(log["runs"], list) and log["runs"]
    for run in log["runs"]:
        driver = run["tool"]["driver"]
        assert isinstance(driver["name"], str) and driver["name"]
        rules = driver["rules"]
        ids = [r["id"] for r in rules]
        assert len(ids) == len(set(ids))
        for r in rules:
            assert set(r) <= {"id", "name", "shortDescription", "fullDescription", "help", "helpUri",
                              "defaultConfiguration", "properties"}
            _check_message(r["shortDescription"])
            _check_message(r["fullDescription"])
            _check_message(r["help"])
            assert isinstance(r["help"]["markdown"], str)
            assert r["defaultConfiguration"]["level"] in _LEVELS
            if "helpUri" in r:  # SARIF 2.1.0 §3.49.12: an absolute URI
                assert urlparse(r["helpUri"]).scheme in ("file", "https", "http"), r["helpUri"]
        for res in run["results"]:
            assert set(res) <= {"ruleId", "ruleIndex", "level", "message", "locations", "relatedLocations",
                                "properties"}
            assert res["ruleId"] in ids
            assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
            assert res["level"] in _LEVELS
            _check_message(res["message"])
            for loc in res.get("locations", []):
                _check_physical(loc["physicalLocation"])
            for rel in res.get("relatedLocations", []):
                assert isinstance(rel["id"], int) and rel["id"] >= 0
                _check_physical(rel["physicalLocation"])
                _check_message(rel["message"])
            assert isinstance(res.get("properties", {}), dict)
    json.dumps(log)  # serializable


def test_sarif_structure_one_result_per_advice_line(reports: dict[str, AdviceReport]) -> None:
    reps = [reports[n] for n in ("stencil", "gather", "noinline")]
    log = to_sarif(reps, map_file=lambda p: str(Path(p).relative_to(Path(p).parents[2])))
    check_sarif(log)
    run = log["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == list(OPTIMIZER_IDS)
    # one result per (advice, source line of its hotspots): a line's hotspots are one PR annotation
    expected = sum(max(1, len({(h.use.file, h.use.line) for h in a.hotspots})) for r in reps for a in r.advice)
    assert len(run["results"]) == expected
    keys = [(r["properties"]["kernel"], r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
            for r in run["results"]]
    assert len(keys) == len(set(keys))
    sr = [r for r in run["results"] if r["ruleId"] == "strength_reduction" and r["properties"]["kernel"] == "blur_rows"]
    assert sr[0]["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "examples/stencil/stencil.cu"}, "region": {"startLine": 18}}
    assert "write 0.1f" in sr[0]["message"]["text"]
    # line 18's samples are the sum of its hotspots
    adv = next(a for a in reports["stencil"].advice if a.optimizer == "strength_reduction")
    assert sr[0]["properties"]["samples"] == pytest.approx(sum(h.samples for h in adv.hotspots if h.use.line == 18),
                                                           abs=1e-3)
    with_def = [r for r in sr if "relatedLocations" in r]
    assert with_def and with_def[0]["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 18
    rule = run["tool"]["driver"]["rules"][OPTIMIZER_IDS.index("strength_reduction")]
    # no docs URL given: no helpUri (never the install's file: URI), the docs page named in the help text
    assert "helpUri" not in rule and "docs/optimizers.md#strength_reduction" in rule["help"]["markdown"]
    based = to_sarif(reps, docs_base="https://example.org/warpwise/")["runs"][0]["tool"]["driver"]["rules"]
    assert based[OPTIMIZER_IDS.index("strength_reduction")]["helpUri"] == \
        "https://example.org/warpwise/docs/optimizers.md#strength_reduction"


def test_sarif_absolute_paths_become_file_uris(reports: dict[str, AdviceReport]) -> None:
    log = to_sarif(reports["stencil"], top=1)
    check_sarif(log)
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.startswith("file:///") and uri.endswith("examples/stencil/stencil.cu")


def test_json_advice_matches_contract(reports: dict[str, AdviceReport]) -> None:
    rep = reports["stencil"]
    arr = to_json(rep.advice, map_file=lambda p: "stencil.cu")
    assert [a["optimizer"] for a in arr] == [a.optimizer for a in rep.advice]
    first = arr[0]
    for key in ("optimizer", "scope", "matched_samples", "estimated_speedup", "estimate", "hotspots", "hint"):
        assert key in first
    assert first["scope"]["kind"] in ("line", "loop", "function", "kernel")
    assert first["scope"]["file"] == "stencil.cu" and first["scope"]["line"] == 18
    assert first["estimate"]["formula"] == "T_ns/(f_ns+(T_ns-f_ns)/S), S=T/(T-M)"
    assert set(first["estimate"]["inputs"]) == {"T", "M", "T_ns", "f_ns"}
    h = next(h for h in first["hotspots"] if h["def"] is not None)
    assert re.fullmatch(r"0x[0-9a-f]+", h["def"]["pc"]) and h["def"]["line"] == 18
    assert set(h) >= {"def", "use", "samples", "distance"}
    full = report_json(rep, top=2)
    assert len(full["advice"]) == 2 and len(full["skipped"]) == len(rep.skipped)
    json.dumps(full)


def test_text_report_like_fig8(reports: dict[str, AdviceReport]) -> None:
    text = render_text(reports["gather"], top=3)
    lines = text.splitlines()
    assert lines[0].startswith("Kernel spmv_ell (sm_90): 66700 samples")
    assert re.search(r"^1\. Indirect address elimination \[indirect_address_elimination\]: \d+\.\d% of warp samples, "
                     r"upper bound \d\.\d{3}x \(sampling 95% \d\.\d{3}-\d\.\d{3}x\)$", text, re.M)
    assert "from /" in text and "gather.cu:16 " in text
    assert "  bound: L2 bandwidth is at 96% of peak" in text
    assert "e_C=1-1/C_l2 (bound by l2)" in text
    assert "   why: #1: upper bound 1.11x (sampling 95% 1.11-1.12x), ranked at its midpoint 1.06x from" in text
    assert re.search(r"alternatives for the same samples: loop_unrolling 1\.0\d\dx; code_reordering 1\.0\d\dx", text)


def test_docs_have_one_section_per_optimizer() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for opt in OPTIMIZER_IDS:
        anchor = docs_anchor(opt).split("#", 1)[1]
        assert f'<a id="{anchor}"></a>' in text
        assert re.search(rf"^## `?{opt}`?\s*$", text, re.M), opt


def test_the_report_says_what_an_estimate_rests_on() -> None:
    # A launch-shape estimate does not scale with a matched share ("2.7% of warp samples, upper bound 31.9x" read
    # as if 2.7% of the time gave 31.9x); a traffic estimate names the traffic and keeps the share beside it.
    from warpwise.analysis.advice.model import Advice, Estimate, Scope
    from warpwise.analysis.advice.report import basis_text

    def adv(opt: str, e: Estimate, basis: str = "") -> Advice:
        return Advice(optimizer=opt, kernel="k", scope=Scope(kind="kernel"), matched_samples=27.0, share=0.027,
                      estimate=e, basis=basis)

    launch = "GPA eqs. 6-10 over the launch facts (4 CTAs of 32 threads on 132 SMs: ...)"
    assert basis_text(adv("block_increase", Estimate(31.9, "(P_new/P)/work", {}, "GPA eqs. 6-10"), launch)) == \
        "from the launch shape"
    # a parallel-family optimizer that matches samples (eq. 4 over throttle stalls) says its share
    assert basis_text(adv("occupancy_decrease", Estimate(1.1, "T/(T-min(A,M))", {}, "GPA eq. 4"))) == \
        "2.7% of warp samples"
    traffic = Estimate(7.4, "min(...)", {}, "roofline after the fix (SpeedOfLight x traffic), launch floor (Amdahl)")
    assert basis_text(adv("global_memory_coalesce", traffic)) == \
        "from the traffic after the fix (2.7% of warp samples matched)"
    assert basis_text(adv("strength_reduction", Estimate(1.2, "T/(T-M)", {}, "GPA eq. 2"))) == "2.7% of warp samples"


def test_lines_text_orders_files_the_same_in_every_process() -> None:
    # Callers pass sets of (file, line); the phrase must not depend on the hash seed (perf: the double-literal hint
    # listed a header's line before or after the kernel's lines from one process to the next).
    from warpwise.analysis.advice.common import lines_text, strip_refs

    a = {("b.cu", 4), ("b.cu", 8), ("a.hpp", 385)}
    assert strip_refs(lines_text(a)) == strip_refs(lines_text(sorted(a, reverse=True))) == \
        "line 385 and lines 4 and 8"
