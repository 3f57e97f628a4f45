"""Time to the first diagnostics of the open file after opening a folder with five reports (issue 11).

Starts the language server (``python -m warpwise.server.cli lsp``) as a subprocess over stdio, as an editor
does, on a temporary copy of the five examples (five .ncu-rep reports with their cubins and sources), sends
initialize/initialized and opens one source file at once, then measures:

- ``first``: from didOpen to the first non-empty publishDiagnostics of that file;
- ``all``: from didOpen to the end of the workspace analysis (the warpwise/status notification), which is
  when the server published anything before this change (every report was analysed first).

Cold: a fresh server process on a fresh copy with an empty on-disk analysis cache (``WARPWISE_CACHE_DIR``
set to a new folder). Warm: a new server process on the same copy with the cache the cold run filled (the
editor reopened). Prints one line per run and a summary with the ratio all/first measured in the same runs.

    .venv/bin/python bench/editor/first_diagnostics.py [--open stencil] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ("cdp", "gather", "intdiv", "noinline", "stencil")


def make_workspace(dst: Path) -> None:
    """Copy the five examples (source, report, cubin) and the shared header into ``dst``."""
    for name in EXAMPLES:
        src = ROOT / "examples" / name
        (dst / name).mkdir(parents=True)
        for f in src.iterdir():
            if f.suffix in (".cu", ".cuh", ".ncu-rep", ".cubin"):
                shutil.copy2(f, dst / name / f.name)
    shutil.copy2(ROOT / "examples" / "common.cuh", dst / "common.cuh")


async def one_run(ws: Path, open_name: str, cache: Path, timeout: float = 120.0) -> tuple[float, float, float]:
    """Seconds to the open file's first diagnostics from didOpen and from the server's start, and from
    didOpen to the end of the whole workspace's analysis."""
    client = LanguageClient("bench", "1")
    first = asyncio.get_running_loop().create_future()
    status = asyncio.get_running_loop().create_future()
    path = (ws / open_name / f"{open_name}.cu").resolve()
    uri = path.as_uri()

    @client.feature(lsp.WORKSPACE_CONFIGURATION)
    def configuration(params: lsp.ConfigurationParams) -> list[Any]:
        return [{} for _ in params.items]

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def diagnostics(params: lsp.PublishDiagnosticsParams) -> None:
        if params.uri == uri and params.diagnostics and not first.done():
            first.set_result(time.perf_counter())

    @client.feature("warpwise/status")
    def on_status(params: Any) -> None:
        if not status.done():
            status.set_result(time.perf_counter())

    @client.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def progress(params: Any) -> None:
        return None

    t_spawn = time.perf_counter()
    env = {**os.environ, "WARPWISE_CACHE_DIR": str(cache)}  # the on-disk analysis cache of this run
    await client.start_io(sys.executable, "-m", "warpwise.server.cli", "lsp", env=env)
    caps = lsp.ClientCapabilities(
        workspace=lsp.WorkspaceClientCapabilities(configuration=True),
        window=lsp.WindowClientCapabilities(work_done_progress=True))
    await client.initialize_async(lsp.InitializeParams(
        capabilities=caps, root_uri=ws.as_uri(), workspace_folders=[lsp.WorkspaceFolder(uri=ws.as_uri(), name="ws")]))
    client.initialized(lsp.InitializedParams())
    t0 = time.perf_counter()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
        uri=uri, language_id="cuda-cpp", version=1, text=path.read_text())))
    try:
        t_first = await asyncio.wait_for(first, timeout)
        t_all = await asyncio.wait_for(status, timeout)
    finally:
        try:
            await asyncio.wait_for(client.shutdown_async(None), 10)
            client.exit(None)
        except Exception:
            pass
        await client.stop()
    return t_first - t0, t_first - t_spawn, t_all - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--open", default="stencil", choices=EXAMPLES, help="example whose .cu is opened")
    ap.add_argument("--runs", type=int, default=3, help="cold runs and warm runs each")
    args = ap.parse_args()
    cold: list[tuple[float, float, float]] = []
    warm: list[tuple[float, float, float]] = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="ww-bench-editor-") as d:
            ws = Path(d) / "ws"
            make_workspace(ws)
            cache = Path(d) / "cache"  # empty: cold; the warm run finds what the cold run stored
            c = asyncio.run(one_run(ws, args.open, cache))
            w = asyncio.run(one_run(ws, args.open, cache))
        cold.append(c)
        warm.append(w)
        print(f"cold: first {c[0]:.2f} s ({c[1]:.2f} s from server start), all {c[2]:.2f} s   "
              f"warm: first {w[0]:.2f} s ({w[1]:.2f} s from server start), all {w[2]:.2f} s", flush=True)

    def med(xs: list[tuple[float, float, float]], i: int) -> float:
        return statistics.median(x[i] for x in xs)

    for label, xs in (("cold", cold), ("warm", warm)):
        print(f"median of {args.runs} {label}: first diagnostics {med(xs, 0):.2f} s after didOpen "
              f"({med(xs, 1):.2f} s after the server started); whole workspace {med(xs, 2):.2f} s "
              f"({med(xs, 2) / med(xs, 0):.1f}x later); goal: first <= 3 s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
