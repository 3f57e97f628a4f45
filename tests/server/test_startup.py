"""Start-up order: the file in front of the user gets its diagnostics before the rest of a five-report
workspace is analysed (issue 11: every report used to be analysed before any file got diagnostics)."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.conftest import EXAMPLES, example

SERVER = [sys.executable, "-m", "warpwise.server.cli", "lsp"]


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient) -> Any:
    lsp_client.set_configuration({}, section="warpwise")
    events: list[tuple[float, str]] = []
    lsp_client.events = events  # type: ignore[attr-defined]

    @lsp_client.feature(lsp.WORKSPACE_INLAY_HINT_REFRESH)
    def inlay_refresh(params: None) -> None:
        return None

    @lsp_client.feature(lsp.WORKSPACE_CODE_LENS_REFRESH)
    def lens_refresh(params: None) -> None:
        return None

    @lsp_client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def register(params: lsp.RegistrationParams) -> None:
        return None

    @lsp_client.feature("warpwise/status")
    def on_status(params: Any) -> None:
        events.append((time.perf_counter(), "status"))

    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities("neovim"), root_uri=EXAMPLES.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(uri=EXAMPLES.as_uri(), name="examples")]))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="module")
async def test_open_file_is_published_before_the_workspace_is_analysed(client: LanguageClient) -> None:
    # stencil's report is the last of the five in folder order
    path = example("stencil", ".cu")
    uri = path.resolve().as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri, language_id="cuda-cpp", version=1, text=path.read_text())))
    first = None
    for _ in range(600):
        if client.diagnostics.get(uri) and first is None:
            first = time.perf_counter()
        if client.events:  # type: ignore[attr-defined]
            break
        await asyncio.sleep(0.05)
    assert first is not None, "the open file got no diagnostics before the workspace was analysed"
    (t_status, _), *_ = client.events  # type: ignore[attr-defined]
    assert first < t_status
    assert any(d.code == "strength_reduction" for d in client.diagnostics[uri])
    # the reports analysed after the open file's were shown as $/progress, begun and ended
    loads = [r for t, r in client.progress_reports.items() if str(t).startswith("warpwise-load-")]
    assert loads, client.progress_reports
    (reports,) = loads
    assert isinstance(reports[0], lsp.WorkDoneProgressBegin) and isinstance(reports[-1], lsp.WorkDoneProgressEnd)
    assert reports[-1].message == "5 profile(s)"
