"""The kernel's signature line in the editor (brief "editor"): its samples are the kernel's entry (the prologue
and warps waiting there at launch), so it gets no hot-line diagnostic or inlay hint; the webview says warp
samples like the rest."""

from __future__ import annotations

from lsprotocol import types as lsp
from warpwise.analysis.pipeline import analyze
from warpwise.server import render
from warpwise.server.config import parse_settings
from warpwise.server.findings import file_findings
from warpwise.server.linemap import LineMap

from tests.conftest import ROOT, example

ALL = lsp.Range(lsp.Position(0, 0), lsp.Position(10_000, 0))


def test_signature_line_gets_no_hot_line_finding() -> None:
    cu = example("noinline", ".cu").resolve()
    a = analyze(example("noinline", ".ncu-rep"), [example("noinline", ".sm_90.cubin")], [cu])
    (g,) = a.groups
    (entry,) = [ls for ls in g.lines if ls.entry]
    # `__global__ void advance(...)`: 751 of 13,879 warp samples (5.4%), most of them not_selected at launch
    assert (entry.line, entry.samples, g.total_samples) == (15, 751, 13_879)
    assert entry.top_reasons(1) == [("not_selected", 649)]
    assert cu.read_text().splitlines()[14].startswith("__global__ void advance(")
    ff = file_findings([a], cu)
    assert all(f.stats is None for f in ff.findings if f.line == 15)
    text = cu.read_text()
    lmap = LineMap(ff.baseline, text)
    s, problems = parse_settings({"minShare": 0.01})
    assert not problems
    diags = render.diagnostics(ff, lmap, text, s, cu.as_uri())
    hints = render.inlay_hints(ff, lmap, text, s, ALL)
    assert diags and hints  # the body's hot lines still have theirs
    assert not [d for d in diags if d.range.start.line == 14 and "warp samples" in d.message
                and "line has" in d.message]
    assert not [h for h in hints if h.position.line == 14]
    # the hover says what the samples are
    h = render.hover(ff, lmap, text, 15)
    assert h is not None
    assert ("**warpwise** · `advance` · kernel entry: 751 of advance's warp samples (5.4%) are on this signature line "
            "— the prologue (parameter set-up) and warps waiting there at launch, not a line to change "
            "(not_selected 86.4%, dispatch_stall 11.9%, no_instructions 1.7%)") in h.contents.value  # type: ignore[union-attr]
    # two lines added above: it follows the line
    moved = "// a\n// b\n" + text
    h2 = render.hover(ff, LineMap(ff.baseline, moved), moved, 17)
    assert h2 is not None and "kernel entry: 751" in h2.contents.value  # type: ignore[union-attr]
    old_place = render.hover(ff, LineMap(ff.baseline, moved), moved, 15)
    assert old_place is None or "kernel entry" not in old_place.contents.value  # type: ignore[union-attr]


def test_webview_says_warp_samples() -> None:
    page = (ROOT / "vscode-client" / "webview" / "profile.mjs").read_text()
    bundle = (ROOT / "server" / "webview" / "profile.js").read_text()
    for text in (page, bundle):
        assert "warp samples blamed on" in text and "of the kernel's warp samples" in text
        assert " samples blamed on" not in text.replace("warp samples blamed on", "")
        assert "of the kernel's samples" not in text
    html = (ROOT / "server" / "webview" / "profile.html").read_text()
    assert 'aria-label="Source with warp samples per line"' in html
