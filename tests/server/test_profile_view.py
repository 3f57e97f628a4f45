"""The profile view page: its model from a real analysis and the self-contained HTML file."""

from __future__ import annotations

import json
import re

import pytest
from warpwise.analysis.pipeline import analyze
from warpwise.server.cli import main
from warpwise.server.findings import group_kernels
from warpwise.server.profile_view import DATA_SLOT, page_data, render_html

from tests.conftest import example


@pytest.fixture(scope="module")
def data() -> dict:
    cu = example("stencil", ".cu").resolve()
    a = analyze(example("stencil", ".ncu-rep"), [example("stencil", ".sm_90.cubin")], [cu])
    return page_data(group_kernels([a]))


def test_model_has_lines_sass_blame_and_ranked_advice(data: dict) -> None:
    (k,) = data["kernels"]
    assert k["name"] == "blur_rows" and k["total"] == 28_464 and k["launches"] == 1
    line18 = next(ln for ln in k["lines"] if ln["line"] == 18)
    assert line18["samples"] == 26_850 and line18["stalls"]["mio_throttle"] == 12_165
    src = next(iter(k["files"].values()))
    assert "acc += 0.1 * row[x + k]" in src[17]
    ids = {s["id"] for s in k["sass"]}
    assert all(b["use"] in ids and b["def"] in ids for b in k["blame"])
    ldg = [b for b in k["blame"] if b["reason"] == "long_scoreboard"]
    assert round(sum(b["samples"] for b in ldg)) >= 6_845
    assert [a["optimizer"] for a in k["advice"][:2]] == ["strength_reduction", "code_reordering"]
    assert k["advice"][0]["line"] == 18 and k["advice"][0]["formula"] == "T/(T-M)"


def test_html_is_one_self_contained_file(data: dict) -> None:
    page = render_html(data)
    assert DATA_SLOT not in page and "/*WARPWISE_JS*/" not in page
    assert not re.search(r"""(src|href)=["']?https?:""", page)  # nothing loaded from the network
    assert "default-src 'none'" in page
    blob = re.search(r'<script type="application/json" id="warpwise-data">(.*?)</script>', page, re.S)
    assert blob and json.loads(blob.group(1)) == json.loads(json.dumps(data))


def test_source_text_cannot_close_the_script(data: dict) -> None:
    k = data["kernels"][0]
    path = next(iter(k["files"]))
    k2 = dict(k, files={path: ["</script><script>alert(1)</script>", "/*WARPWISE_CSS*/"]})
    page = render_html({"version": 1, "kernels": [k2]})
    assert "</script><script>alert(1)" not in page
    assert page.count("/*WARPWISE_CSS*/") == 1  # the source's text is not taken for a placeholder


def test_cli_advise_format_html(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["advise", str(example("stencil", ".cu")), "--format", "html"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("<!DOCTYPE html>") and "blur_rows" in out and "strength_reduction" in out
