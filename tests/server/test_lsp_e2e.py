"""End to end: the server as a subprocess over stdio (pytest-lsp) on the committed examples."""

from __future__ import annotations

import asyncio
import re
import sys
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.conftest import EXAMPLES, example

SETTINGS: dict[str, Any] = {"minShare": 0.01}


SERVER = [sys.executable, "-m", "warpwise.server.cli", "lsp"]


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient) -> Any:
    lsp_client.set_configuration(SETTINGS, section="warpwise")

    @lsp_client.feature(lsp.WORKSPACE_INLAY_HINT_REFRESH)
    def inlay_refresh(params: None) -> None:
        return None

    @lsp_client.feature(lsp.WORKSPACE_CODE_LENS_REFRESH)
    def lens_refresh(params: None) -> None:
        return None

    @lsp_client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def register(params: lsp.RegistrationParams) -> None:
        return None

    status: list[Any] = []
    lsp_client.status = status  # type: ignore[attr-defined]

    @lsp_client.feature("warpwise/status")
    def on_status(params: Any) -> None:
        status.append(params)

    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities("neovim"), root_uri=EXAMPLES.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(uri=EXAMPLES.as_uri(), name="examples")]))
    yield
    await lsp_client.shutdown_session()


async def open_and_wait(client: LanguageClient, name: str) -> tuple[str, list[lsp.Diagnostic]]:
    path = example(name, ".cu")
    uri = path.resolve().as_uri()
    # a fresh document each time: close any earlier (possibly edited) copy and forget its diagnostics
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
    await asyncio.sleep(0.2)
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri, language_id="cuda-cpp", version=1, text=path.read_text())))
    for _ in range(300):  # analysis runs in the server's worker; wait up to 30 s
        if client.diagnostics.get(uri):
            break
        await asyncio.sleep(0.1)
    return uri, client.diagnostics.get(uri, [])


@pytest.mark.asyncio(loop_scope="module")
async def test_diagnostics_on_hot_lines(client: LanguageClient) -> None:
    _uri, diags = await open_and_wait(client, "gather")
    assert diags, "no diagnostics published for gather.cu"
    lines = [d.range.start.line for d in diags]
    assert len(lines) == len(set(lines)), lines  # one warpwise diagnostic per line (one kernel here)
    (d,) = [d for d in diags if d.range.start.line == 16]  # gather.cu:17, its best finding
    assert d.source == "warpwise"
    assert d.severity == lsp.DiagnosticSeverity.Information
    assert d.code == "hot_line" and "long_scoreboard 99.8%" in d.message
    # range covers the statement text, not the indentation (UTF-16 columns)
    assert d.range.start.character == 4


@pytest.mark.asyncio(loop_scope="module")
async def test_hover_breakdown(client: LanguageClient) -> None:
    uri, _ = await open_and_wait(client, "stencil")
    h = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=17, character=8)))
    assert h is not None
    text = h.contents.value if isinstance(h.contents, lsp.MarkupContent) else str(h.contents)
    assert "26,850" in text and "28,464" in text  # the line's and the kernel's samples, exact
    assert "| mio_throttle | 12,165 |" in text
    assert "F2F.F64.F32" in text  # SASS of the line


@pytest.mark.asyncio(loop_scope="module")
async def test_results_follow_edits(client: LanguageClient) -> None:
    uri, _diags = await open_and_wait(client, "gather")
    text = example("gather", ".cu").read_text()
    # insert two lines at the top: the hot line moves from 16 to 18 (0-based)
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text="// a\n// b\n" + text)]))
    def hot_lines() -> set[int]:
        return {d.range.start.line for d in client.diagnostics.get(uri, [])
                if "long_scoreboard 9" in d.message}

    for _ in range(50):
        await asyncio.sleep(0.1)
        lines = hot_lines()
        if 18 in lines:
            break
    assert lines == {18}
    # now edit the hot line itself: its finding is marked stale (a hint), the others stay
    edited = ("// a\n// b\n" + text).split("\n")
    edited[18] = "    sum += vals[k * rows + r] * __ldg(&x[c]);"
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=3),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text="\n".join(edited))]))
    codes: dict[int, str] = {}
    for _ in range(50):
        await asyncio.sleep(0.1)
        codes = {d.range.start.line: str(d.code) for d in client.diagnostics.get(uri, [])}
        if codes.get(18) == "stale":
            break
    assert codes.get(18) == "stale" and any(c != "stale" for c in codes.values()), codes


@pytest.mark.asyncio(loop_scope="module")
async def test_status_and_report_command(client: LanguageClient) -> None:
    await open_and_wait(client, "intdiv")
    for _ in range(100):
        if client.status:  # type: ignore[attr-defined]
            break
        await asyncio.sleep(0.1)
    st = client.status[-1]  # type: ignore[attr-defined]
    assert (st.profiles, st.kernels) == (5, 5)
    report = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="warpwise.showReport", arguments=[example("intdiv", ".cu").resolve().as_uri()]))
    assert "bucket_score" in report and "30,172 total" in report


@pytest.mark.asyncio(loop_scope="module")
async def test_inlay_hint_at_line_end(client: LanguageClient) -> None:
    uri, _ = await open_and_wait(client, "stencil")
    text = example("stencil", ".cu").read_text().split("\n")
    hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri),
        range=lsp.Range(lsp.Position(0, 0), lsp.Position(len(text), 0))))
    assert hints
    by_line = {h.position.line: h for h in hints}
    h = by_line[17]  # stencil.cu:18 holds 94.3% of the samples
    assert str(h.label) == "94.3% of warp samples · est. 2.19× if fixed"
    assert h.position.character == len(text[17].encode("utf-8"))  # end of the line (utf-8 negotiated)


@pytest.mark.asyncio(loop_scope="module")
async def test_code_lens_on_kernel(client: LanguageClient) -> None:
    uri, _ = await open_and_wait(client, "noinline")
    lenses = await client.text_document_code_lens_async(lsp.CodeLensParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri)))
    assert lenses
    lens = lenses[0]
    src = example("noinline", ".cu").read_text().split("\n")
    assert "__global__ void advance" in src[lens.range.start.line]
    assert lens.command is not None and lens.command.command == "warpwise.showProfileView"
    assert "advance · 1 launch · report noinline.ncu-rep · 13,879 warp samples" in lens.command.title
    assert [c.command.command for c in lenses if c.command] == ["warpwise.showProfileView", "warpwise.showReport"]


@pytest.mark.asyncio(loop_scope="module")
async def test_dp_rewrite_actions_on_device_launch(client: LanguageClient) -> None:
    uri, _ = await open_and_wait(client, "cdp")
    src = example("cdp", ".cu").read_text().split("\n")
    line = next(i for i, t in enumerate(src) if "scale_segment<<<" in t)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri),
        range=lsp.Range(lsp.Position(line, 4), lsp.Position(line, 4)),
        context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.RefactorRewrite])))
    assert actions
    titles = [a.title for a in actions if isinstance(a, lsp.CodeAction)]
    assert any(t.startswith("Threshold") for t in titles)
    assert any("multiblock" in t for t in titles)
    assert not any(re.search(r"\b_[A-Z]", t) for t in titles), titles  # no reserved identifiers in titles
    # the launch line shows what the children and the device runtime cost (it holds 0.0% itself)
    h = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=line, character=4)))
    assert h is not None and "scale_segment 73.7%" in h.contents.value  # type: ignore[union-attr]
    (d,) = [d for d in client.diagnostics.get(uri, []) if d.range.start.line == line and d.code == "dp_launch"]
    assert "device runtime 26.3%" in d.message
    thr = next(a for a in actions if isinstance(a, lsp.CodeAction) and a.title.startswith("Threshold"))
    resolved = await client.code_action_resolve_async(thr)
    assert resolved.edit is not None and resolved.edit.document_changes
    new_text = "".join(e.new_text for dc in resolved.edit.document_changes for e in dc.edits)
    assert "WARPWISE_THRESHOLD" in new_text


@pytest.mark.asyncio(loop_scope="module")
async def test_advice_diagnostic_hover_and_quick_fix(client: LanguageClient) -> None:
    uri, diags = await open_and_wait(client, "stencil")
    adv = [d for d in diags if d.code == "strength_reduction" and d.range.start.line == 17]
    assert adv, [(d.code, d.range.start.line) for d in diags]
    d = adv[0]
    assert "×" in d.message and d.code_description is not None
    assert d.code_description.href.endswith("optimizers.md#strength_reduction")
    h = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=17, character=8)))
    assert h is not None
    text = h.contents.value if isinstance(h.contents, lsp.MarkupContent) else str(h.contents)
    assert "**strength_reduction**" in text and "T/(T-M)" in text and "T = 28,464 samples" in text
    assert re.search(r"T_ns = [\d,]+ ns, f_ns = [\d,]+ ns", text), text  # each input with its unit
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), range=d.range,
        context=lsp.CodeActionContext(diagnostics=[d], only=[lsp.CodeActionKind.QuickFix])))
    fixes = [a for a in actions or [] if isinstance(a, lsp.CodeAction) and a.edit is not None]
    assert fixes, actions
    edits = [e for dc in fixes[0].edit.document_changes for e in dc.edits]  # type: ignore[union-attr]
    src_line = example("stencil", ".cu").read_text().split("\n")[17]
    (e,) = edits
    assert e.range.start.line == e.range.end.line == 17
    b = src_line.encode()  # utf-8 positions were negotiated
    fixed = (b[:e.range.start.character] + e.new_text.encode() + b[e.range.end.character:]).decode()
    assert fixed == src_line.replace("0.1 *", "0.1f *")


@pytest.mark.asyncio(loop_scope="module")
async def test_tune_command_explains_missing_harness(client: LanguageClient) -> None:
    await open_and_wait(client, "stencil")
    msg = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="warpwise.tuneSchedule", arguments=[{"uri": example("stencil", ".cu").resolve().as_uri()}]))
    assert "no harness for _Z9blur_rowsPKfPfii" in msg and "docs/tuning.md" in msg


@pytest.mark.asyncio(loop_scope="module")
async def test_blame_related_information_and_def_line(client: LanguageClient) -> None:
    uri, diags = await open_and_wait(client, "gather")
    (hot,) = [d for d in diags if d.range.start.line == 16]
    assert hot.related_information
    targets = {(r.location.range.start.line, op) for r in hot.related_information
               for op in re.findall(r"blamed on ([^\s,]+)", r.message)}
    # one related row: the dominant edge (the value load on the hot line itself); the rest are counted and
    # listed in the hover, the index load on gather.cu:16 among them
    assert targets == {(16, "LDG.E.CONSTANT")} and "more in the hover" in hot.related_information[0].message
    h = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=16, character=8)))
    assert h is not None and "`LDG.E.CONSTANT` at line 16" in str(h.contents.value)  # type: ignore[union-attr]
    # the def line (0.1% of the samples itself) gets its own single diagnostic: its best advice, weighed by the
    # stalls it causes at line 17
    (cause,) = [d for d in diags if d.range.start.line == 15]
    assert cause.code == "indirect_address_elimination"
    assert "line causes 28.7% of spmv_ell's warp samples" in cause.message
    assert any("waits on this line" in r.message and r.location.range.start.line == 16
               for r in cause.related_information or [])


@pytest.mark.asyncio(loop_scope="module")
async def test_settings_change_severity_and_hints(client: LanguageClient) -> None:
    uri, _ = await open_and_wait(client, "stencil")
    client.set_configuration({"minShare": 0.01, "severity": {"strength_reduction": "warning"},
                              "inlayHints": {"enabled": False}}, section="warpwise")
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    sev = None
    for _ in range(100):
        await asyncio.sleep(0.1)
        sev = {d.severity for d in client.diagnostics.get(uri, []) if d.code == "strength_reduction"}
        if sev == {lsp.DiagnosticSeverity.Warning}:
            break
    assert sev == {lsp.DiagnosticSeverity.Warning}
    hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), range=lsp.Range(lsp.Position(0, 0), lsp.Position(40, 0))))
    assert not hints
    client.set_configuration(SETTINGS, section="warpwise")
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    await asyncio.sleep(1.0)


@pytest.mark.asyncio(loop_scope="module")
async def test_quick_fix_edit_retires_the_advice(client: LanguageClient) -> None:
    uri, diags = await open_and_wait(client, "stencil")
    assert any(d.code == "strength_reduction" for d in diags)
    text = example("stencil", ".cu").read_text()
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text.replace("0.1 * row", "0.1f * row"))]))
    codes: set[str] = set()
    for _ in range(50):
        await asyncio.sleep(0.1)
        codes = {str(d.code) for d in client.diagnostics.get(uri, [])}
        if "strength_reduction" not in codes:
            break
    assert "strength_reduction" not in codes and codes
    lenses = await client.text_document_code_lens_async(lsp.CodeLensParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri)))
    titles = [c.command.title for c in lenses or [] if c.command]
    assert any("profile is stale (1 profiled line edited)" in t for t in titles), titles
    assert not any("strength_reduction" in t for t in titles)


@pytest.mark.asyncio(loop_scope="module")
async def test_profile_view_command_and_reports(client: LanguageClient) -> None:
    uri, _ = await open_and_wait(client, "stencil")
    page = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="warpwise.profileView", arguments=[{"uri": uri, "kernel": "_Z9blur_rowsPKfPfii"}]))
    (k,) = page["kernels"]
    assert k["name"] == "blur_rows" and k["total"] == 28_464 and k["advice"][0]["optimizer"] == "strength_reduction"
    reports = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="warpwise.reports", arguments=[{"kernel": "_Z9blur_rowsPKfPfii"}]))
    (r,) = reports
    assert r["active"].endswith("stencil.ncu-rep") and len(r["reports"]) == 1 and r["reports"][0]["launches"] == 1


@pytest.mark.asyncio(loop_scope="module")
async def test_current_line_follows_edits_for_the_profile_view(client: LanguageClient) -> None:
    """The profile view reveals profiled lines where they are now: 2 lines inserted above line 18 put it on
    line 20; an edited line is reported stale at the line of its edit."""
    uri, _ = await open_and_wait(client, "stencil")
    path = str(example("stencil", ".cu").resolve())
    text = "// one\n// two\n" + example("stencil", ".cu").read_text().replace(
        "  out[static_cast<size_t>(y) * nx + x] = acc;", "  out[static_cast<size_t>(y) * nx + x] = acc + 0;")
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)]))
    await asyncio.sleep(0.3)

    async def where(line: int) -> Any:
        return await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            command="warpwise.currentLine", arguments=[{"file": path, "line": line}]))

    assert await where(18) == {"line": 20, "stale": False}
    assert await where(20) == {"line": 22, "stale": True}  # `out[...] = acc` was edited
    assert await where(10) == {"line": 12, "stale": False}
    other = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="warpwise.currentLine", arguments=[{"file": "/etc/passwd", "line": 3}]))
    assert other == {"line": 3, "stale": False}  # not a profiled file: not read, the line as given


@pytest.mark.asyncio(loop_scope="module")
async def test_profile_output_that_is_a_fifo_is_refused(client: LanguageClient, tmp_path: Any) -> None:
    """warpwise.profile.output naming an existing FIFO: refused before ncu runs (it would write into it)."""
    import os

    fifo = tmp_path / "run.ncu-rep"
    os.mkfifo(fifo)
    client.set_configuration({**SETTINGS, "profile": {"command": ["true"], "output": str(tmp_path / "run")}},
                             section="warpwise")
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    await asyncio.sleep(0.5)
    try:
        msg = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command="warpwise.profile"))
        assert msg == f"warpwise.profile.output {fifo}: is a FIFO (named pipe), not a regular file; name a regular " \
                      "file (or a new one) to write"
        assert fifo.is_fifo()
    finally:
        client.set_configuration(SETTINGS, section="warpwise")
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
        await asyncio.sleep(0.5)
