"""The server in a hostile workspace (issue 13): a FIFO and a /dev/zero symlink named like a report and a
cubin; the server keeps answering, shows the problem in a window message and exits on `exit`."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from tests.conftest import example

SERVER = [sys.executable, "-m", "warpwise.server.cli", "lsp"]


async def _start(root: Path) -> tuple[LanguageClient, list[Any], list[str]]:
    client = LanguageClient("hostile-test", "1")
    status: list[Any] = []
    shown: list[str] = []

    @client.feature("warpwise/status")
    def on_status(params: Any) -> None:
        status.append(params)

    @client.feature(lsp.WINDOW_SHOW_MESSAGE)
    def on_show(params: lsp.ShowMessageParams) -> None:
        shown.append(params.message)

    @client.feature(lsp.WORKSPACE_CONFIGURATION)
    def on_config(params: lsp.ConfigurationParams) -> list[Any]:
        return [{}]

    await client.start_io(*SERVER)
    proc = client._server
    assert proc is not None and proc.stderr is not None

    async def drain(stream: asyncio.StreamReader) -> None:  # an unread log pipe would fill and stop the server
        while await stream.readline():
            pass

    client.stderr_task = asyncio.ensure_future(drain(proc.stderr))  # type: ignore[attr-defined]
    await client.initialize_async(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(workspace=lsp.WorkspaceClientCapabilities(configuration=True)),
        root_uri=root.as_uri(), workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name="w")]))
    client.initialized(lsp.InitializedParams())
    return client, status, shown


@pytest.mark.asyncio
async def test_fifo_and_dev_zero_in_the_workspace(tmp_path: Path) -> None:
    for suffix in (".cu", ".ncu-rep", ".sm_90.cubin"):
        shutil.copy(example("stencil", suffix), tmp_path)
    os.mkfifo(tmp_path / "x.ncu-rep")
    os.mkfifo(tmp_path / "x.cubin")
    (tmp_path / "z.ncu-rep").symlink_to("/dev/zero")
    (tmp_path / "stencil2.ncu-rep").mkdir()
    client, status, shown = await _start(tmp_path)
    for _ in range(600):
        if status:
            break
        await asyncio.sleep(0.1)
    assert status and status[-1].profiles == 1, status  # stencil.ncu-rep analysed, the rest refused
    # the workspace scan takes regular files only: the FIFOs, the /dev/zero link and the folder are passed over
    # without being opened (nothing blocks) and without an error message
    assert not any("x.ncu-rep" in m or "z.ncu-rep" in m for m in shown), shown
    src = tmp_path / "stencil.cu"
    uri = src.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
        uri=uri, language_id="cuda-cpp", version=1, text=src.read_text())))
    line = next(i for i, t in enumerate(src.read_text().splitlines()) if "blur_rows" in t)
    hov = await asyncio.wait_for(client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=line, character=4))), 20)
    assert hov is None or isinstance(hov, lsp.Hover)
    await asyncio.wait_for(client.shutdown_async(None), 10)
    t = time.monotonic()
    client.exit(None)
    proc = client._server
    assert proc is not None
    rc = await asyncio.wait_for(proc.wait(), 10)
    assert rc == 0 and time.monotonic() - t < 5
    await client.stop()


@pytest.mark.asyncio
async def test_exit_while_a_worker_is_stuck(tmp_path: Path) -> None:
    # a report-loader that never finishes (a huge time limit): exit still ends the server at once
    for suffix in (".cu", ".ncu-rep", ".sm_90.cubin"):
        shutil.copy(example("stencil", suffix), tmp_path)
    hang = tmp_path / "python-hangs"
    hang.write_text("#!/bin/sh\nsleep 300\n")
    hang.chmod(0o755)
    os.environ["WARPWISE_NVDISASM"] = str(hang)  # nvdisasm hangs for the whole tool timeout
    os.environ["WARPWISE_TOOL_TIMEOUT_S"] = "300"
    try:
        client, _status, _shown = await _start(tmp_path)
    finally:
        del os.environ["WARPWISE_NVDISASM"], os.environ["WARPWISE_TOOL_TIMEOUT_S"]
    await asyncio.sleep(3)  # the worker is now inside nvdisasm
    await asyncio.wait_for(client.shutdown_async(None), 10)
    t = time.monotonic()
    client.exit(None)
    proc = client._server
    assert proc is not None
    rc = await asyncio.wait_for(proc.wait(), 10)
    assert rc == 0 and time.monotonic() - t < 5
    await client.stop()


@pytest.mark.asyncio
async def test_two_copies_of_a_source_only_the_one_beside_the_report_gets_diagnostics(tmp_path: Path) -> None:
    # issue 13 "wrong file": with a/stencil.cu and b/{stencil.cu, .ncu-rep, .cubin}, a got b's diagnostics, b none
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        shutil.copy(example("stencil", ".cu"), tmp_path / d)
    for suffix in (".ncu-rep", ".sm_90.cubin"):
        shutil.copy(example("stencil", suffix), tmp_path / "b")
    shutil.copy(example("stencil", ".cu").parent.parent / "common.cuh", tmp_path)
    client, _status, _shown = await _start(tmp_path)
    published: dict[str, list[lsp.Diagnostic]] = {}

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: lsp.PublishDiagnosticsParams) -> None:
        published[params.uri] = params.diagnostics

    a, b = (tmp_path / d / "stencil.cu" for d in ("a", "b"))
    for src in (a, b):
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
            uri=src.as_uri(), language_id="cuda-cpp", version=1, text=src.read_text())))
    for _ in range(900):
        if published.get(b.as_uri()):
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(2.0)  # a publish for a (both documents are analysed together) would land here
    mine = [d for d in published.get(b.as_uri(), []) if d.source == "warpwise"]
    assert [d.range.start.line for d in mine] == [17] and "strength_reduction" in mine[0].message, mine
    assert not [d for d in published.get(a.as_uri(), []) if d.source == "warpwise"], published.get(a.as_uri())
    await asyncio.wait_for(client.shutdown_async(None), 10)
    client.exit(None)
    await client.stop()
