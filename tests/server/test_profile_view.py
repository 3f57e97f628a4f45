"""The profile view page: its model from a real analysis and the self-contained HTML file."""

from __future__ import annotations

import json
import re
from pathlib import Path

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
    assert k["advice"][0]["line"] == 18 and k["advice"][0]["formula"] == "T_ns/(f_ns+(T_ns-f_ns)/S), S=T/(T-M)"


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


def test_kernel_notes_are_in_the_page() -> None:
    """The text report's kernel notes (here: samples in the CDP device runtime, outside any source line) are in
    the page's model, and the page script draws them (issue 11: the HTML page left them out)."""
    cu = example("cdp", ".cu").resolve()
    a = analyze(example("cdp", ".ncu-rep"), [example("cdp", ".sm_90.cubin")], [cu])
    (k,) = [k for k in page_data(group_kernels([a]))["kernels"] if k["name"] == "scale_all"]
    assert k["notes"] and k["notes"] == a.groups[0].notes
    assert any("device runtime" in n for n in k["notes"])
    page = render_html({"version": 1, "kernels": [k]})
    # styled and drawn by the page (the e2e opens the page in Chromium and reads the drawn notes)
    assert "header ul.notes" in page and '"notes"' in page and "note: ${" in page


def test_no_lineinfo_note_in_the_page(tmp_path: Path) -> None:
    """A cubin built without -lineinfo: the page says so, as `advise` text does."""
    import shutil
    import subprocess

    src = example("stencil", ".cu")
    out = tmp_path / "stencil.nolines.cubin"
    nvcc = shutil.which("nvcc") or "/usr/local/bin/nvcc"
    if not shutil.which(nvcc):
        pytest.skip("nvcc not installed")
    subprocess.run([nvcc, "-cubin", "-arch=sm_90", "-O3", "-I", str(src.parent.parent), "-o", str(out), str(src)],
                   check=True, timeout=120, capture_output=True)
    a = analyze(example("stencil", ".ncu-rep"), [out], [src.resolve()])
    (k,) = page_data(group_kernels([a]))["kernels"]
    assert any("without -lineinfo" in n for n in k["notes"]), k["notes"]
