"""A tuner started from the editor never outlives the server (issue 13 item 1): ``shutdown``/``exit``,
cancellation and a server that dies kill the tuner's whole process group.

The tuner is the true external boundary here: ``WARPWISE_TUNE_PYTHON`` names a stub script that stands
in for the interpreter running ``warpwise tune``; it starts a child of its own (like the tuner's GPU
worker) and both sleep. Before the change the stub and its child kept running after the server exited."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from tests.conftest import ROOT, example

SERVER = [sys.executable, "-m", "warpwise.server.cli", "lsp"]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _gone(pids: list[int], within: float) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.1)
    return False


def _workspace(tmp: Path) -> tuple[Path, Path]:
    for suffix in (".cu", ".ncu-rep", ".sm_90.cubin"):
        shutil.copy(example("stencil", suffix), tmp)
    shutil.copy(ROOT / "bench/tune/harness/stencil.json", tmp / "blur_rows.harness.json")
    pids = tmp / "pids"
    stub = tmp / "fake-python"
    # stands in for `python -m warpwise.server.cli tune ...`: a child like the GPU worker, then a long run
    stub.write_text(f"#!/bin/sh\nsleep 300 &\necho $$ $! > {pids}.tmp\nmv {pids}.tmp {pids}\n"
                    "echo 'search 1/200'\nsleep 300\n")
    stub.chmod(0o755)
    return stub, pids


async def _start(root: Path, stub: Path) -> tuple[LanguageClient, list[Any], list[str]]:
    client = LanguageClient("tuner-test", "1")
    status: list[Any] = []
    tokens: list[str] = []

    @client.feature("warpwise/status")
    def on_status(params: Any) -> None:
        status.append(params)

    @client.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def on_create(params: lsp.WorkDoneProgressCreateParams) -> None:
        tokens.append(str(params.token))

    @client.feature(lsp.WORKSPACE_CONFIGURATION)
    def on_config(params: lsp.ConfigurationParams) -> list[Any]:
        return [{}]

    os.environ["WARPWISE_TUNE_PYTHON"] = str(stub)
    try:
        await client.start_io(*SERVER)
    finally:
        del os.environ["WARPWISE_TUNE_PYTHON"]
    proc = client._server
    assert proc is not None and proc.stderr is not None

    async def drain(stream: asyncio.StreamReader) -> None:
        while await stream.readline():
            pass

    client.stderr_task = asyncio.ensure_future(drain(proc.stderr))  # type: ignore[attr-defined]
    await client.initialize_async(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(workspace=lsp.WorkspaceClientCapabilities(configuration=True),
                                            window=lsp.WindowClientCapabilities(work_done_progress=True)),
        root_uri=root.as_uri(), workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name="w")]))
    client.initialized(lsp.InitializedParams())
    for _ in range(600):
        if status:
            break
        await asyncio.sleep(0.1)
    assert status and status[-1].profiles == 1, status
    return client, status, tokens


async def _tuner_running(client: LanguageClient, root: Path, pids: Path) -> tuple[asyncio.Future[Any], list[int]]:
    fut = asyncio.ensure_future(client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="warpwise.tuneSchedule", arguments=[{"uri": (root / "stencil.cu").as_uri()}])))
    for _ in range(200):
        if pids.exists() or fut.done():
            break
        await asyncio.sleep(0.05)
    assert pids.exists(), fut.result() if fut.done() else "the tuner did not start"
    got = [int(x) for x in pids.read_text().split()]
    assert len(got) == 2 and all(_alive(p) for p in got)
    return fut, got


@pytest.mark.asyncio
@pytest.mark.parametrize("how", ["shutdown_exit", "exit_only", "cancel"])
async def test_tuner_group_is_killed(tmp_path: Path, how: str) -> None:
    stub, pids = _workspace(tmp_path)
    client, _status, tokens = await _start(tmp_path, stub)
    fut, got = await _tuner_running(client, tmp_path, pids)
    try:
        if how == "cancel":
            client.window_work_done_progress_cancel(lsp.WorkDoneProgressCancelParams(token=tokens[-1]))
            assert await asyncio.wait_for(fut, 10) == "tuning cancelled"
            assert _gone(got, 5), "the tuner or its child survived the cancel"
            await asyncio.wait_for(client.shutdown_async(None), 10)
        elif how == "shutdown_exit":
            await asyncio.wait_for(client.shutdown_async(None), 10)
        proc = client._server
        assert proc is not None
        client.exit(None)
        rc = await asyncio.wait_for(proc.wait(), 10)
        assert rc == (1 if how == "exit_only" else 0)
        assert _gone(got, 5), "the tuner or its child outlived the server"
    finally:  # never leave a stub or a server behind, also when the test fails
        for p in got:
            if _alive(p):
                os.kill(p, signal.SIGKILL)
        server = client._server
        if server is not None and server.returncode is None:
            server.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.stop(), 10)


def test_tuner_ends_when_the_server_is_killed(tmp_path: Path) -> None:
    # the real `warpwise tune` (a dry run long enough to still be searching) under a parent that is SIGKILLed
    # and so cannot clean up: --exit-with-parent ends the tuner and its worker process
    cmd = [sys.executable, "-m", "warpwise.server.cli", "tune", str(example("stencil", ".sm_90.cubin")),
           "--harness", str(ROOT / "bench/tune/harness/stencil.json"), "--dry-run", "--iterations", "100000000",
           "--no-progress", "-o", str(tmp_path / "o"), "--exit-with-parent"]
    parent_code = ("import subprocess, sys, time; p = subprocess.Popen(sys.argv[1:], start_new_session=True); "
                   "print(p.pid, flush=True); time.sleep(300)")
    parent = subprocess.Popen([sys.executable, "-c", parent_code, *cmd], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    tuner = int(parent.stdout.readline())
    try:
        time.sleep(4)  # imports done, the worker process spawned, the search running
        assert _alive(tuner)
        group = [int(p) for p in os.listdir("/proc") if p.isdigit() and _pgid(int(p)) == tuner]
        assert len(group) >= 2, group  # the tuner and its GPU worker (dry-run stand-in)
        parent.kill()
        parent.wait()
        assert _gone(group, 5), "the tuner outlived the process that started it"
    finally:
        try:
            os.killpg(tuner, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _pgid(pid: int) -> int:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return -1
