"""Editor request latency: warpwise's language server vs a no-op pygls server, side by side in one run.

For each scenario the same pygls client opens the same document in both servers and times sequential
round trips of hover, inlayHint (whole file), codeLens and codeAction (on a hot line, with its warpwise
diagnostics), alternating between the two servers request by request so both see the same machine noise —
``--requests`` of each, p50 and p95 in milliseconds — and prints warpwise ÷ no-op:

- ``example``: examples/stencil (report, cubin, source) copied into a temporary workspace;
- ``stale-5k``: the same with about 5,000 lines of code inserted above the kernel since profiling (every
  profiled line moved: the line map is in play on every request);
- ``edits-20ms``: the 5,000-line file while a didChange arrives every 20 ms (requests interleaved);
- with ``--control``: ``control`` / ``control-edits``, a second no-op server in warpwise's place (example;
  5,000-line file with edits): what the method reports for two identical servers (its noise floor).

Both servers run on one CPU (``--pin``, default the last) while they are timed: unpinned, two identical
no-op servers measured this way differed up to 2.9× in p50 and 0.47–1.23× in p95 in one run (each sat on
a differently loaded core of this shared 2-core machine); pinned, 1.0–1.35× and 0.80–1.29×.

Goals (issue 15): p95 ≤ 2× the no-op on the example, ≤ 3× on the stale file and during edits. The
persistent analysis cache is pointed at a temporary directory. ``--repeat`` runs every scenario that many
times with fresh servers (the scenarios interleaved), prints each run's row and the median and range of the
ratios over the runs (this 2-core machine is shared: one run's p95 moves with its load).

    .venv/bin/python bench/perf/editor.py [--requests 200] [--repeat 3] [--scenarios example ...]
        [--pin CPU | --pin -1] [--control]
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
EXAMPLE = ROOT / "examples" / "stencil"
KINDS = ("hover", "inlayHint", "codeLens", "codeAction")


def stale_source(text: str, extra: int = 5000) -> str:
    """``text`` with ``extra`` lines of device code inserted before the first ``__global__``."""
    pad = [f"__device__ __forceinline__ int pad_{i}(int x) {{ return x * {i % 7 + 1} + {i}; }}"
           for i in range(extra)]
    k = text.index("__global__")
    cut = text.rfind("\n", 0, k) + 1
    return text[:cut] + "\n".join(pad) + "\n" + text[cut:]


def make_workspace(tmp: Path, stale: bool) -> Path:
    """A folder with the stencil report, cubin and (possibly stale) source; returns the source path."""
    ws = tmp / ("stale" if stale else "example")
    ws.mkdir()
    for f in EXAMPLE.iterdir():
        if f.suffix in (".ncu-rep", ".cubin"):
            shutil.copy(f, ws / f.name)
    src = ws / "stencil.cu"
    text = (EXAMPLE / "stencil.cu").read_text()
    src.write_text(stale_source(text) if stale else text)
    return src


class Session:
    """One server process with one open document."""

    def __init__(self, cmd: list[str], root: Path) -> None:
        self.cmd, self.root = cmd, root
        self.client = LanguageClient("bench", "0")
        self.diagnostics: dict[str, list[lsp.Diagnostic]] = {}
        self.version = 1

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diags(params: lsp.PublishDiagnosticsParams) -> None:
            self.diagnostics[params.uri] = list(params.diagnostics)

        for method in (lsp.WORKSPACE_INLAY_HINT_REFRESH, lsp.WORKSPACE_CODE_LENS_REFRESH,
                       lsp.CLIENT_REGISTER_CAPABILITY, lsp.WORKSPACE_CONFIGURATION):
            self.client.feature(method)(lambda *a: None)
        self.client.feature("warpwise/status")(lambda *a: None)
        self.client.feature(lsp.WINDOW_SHOW_MESSAGE)(lambda *a: None)
        self.client.feature(lsp.WINDOW_LOG_MESSAGE)(lambda *a: None)

    async def start(self) -> None:
        await self.client.start_io(*self.cmd)
        proc = getattr(self.client, "_server", None)
        self.stderr: list[bytes] = []
        if proc is not None and proc.stderr is not None:  # pygls pipes the server's stderr: keep it drained
            async def drain(stream: Any) -> None:
                while chunk := await stream.read(65536):
                    self.stderr.append(chunk)

            self._drain = asyncio.ensure_future(drain(proc.stderr))
        caps = lsp.ClientCapabilities(text_document=lsp.TextDocumentClientCapabilities(
            code_action=lsp.CodeActionClientCapabilities(
                resolve_support=lsp.ClientCodeActionResolveOptions(properties=["edit"]), disabled_support=True)))
        await self.client.initialize_async(lsp.InitializeParams(
            capabilities=caps, root_uri=self.root.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=self.root.as_uri(), name="ws")]))
        self.client.initialized(lsp.InitializedParams())

    async def open(self, path: Path, wait_diagnostics: bool) -> str:
        uri = path.resolve().as_uri()
        self.text = path.read_text()
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="cuda-cpp", version=1, text=self.text)))
        if wait_diagnostics:
            for _ in range(1200):
                if any(d.source == "warpwise" for d in self.diagnostics.get(uri, [])):
                    break
                await asyncio.sleep(0.05)
            else:
                tail = b"".join(getattr(self, "stderr", [])).decode(errors="replace").strip().splitlines()[-5:]
                raise SystemExit(f"no warpwise diagnostics for {path} within 60 s; server stderr: "
                                 + " | ".join(tail))
        return uri

    def edit(self, uri: str) -> None:
        """Append a character to the last line (a comment-free edit far from the hot lines)."""
        self.version += 1
        n = self.text.count("\n")
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.version),
            content_changes=[lsp.TextDocumentContentChangePartial(
                range=lsp.Range(lsp.Position(n, 0), lsp.Position(n, 0)), text=" ")]))

    async def request(self, kind: str, uri: str, line: int, diags: list[lsp.Diagnostic]) -> float:
        doc = lsp.TextDocumentIdentifier(uri=uri)
        t0 = time.perf_counter()
        if kind == "hover":
            await self.client.text_document_hover_async(lsp.HoverParams(doc, lsp.Position(line, 4)))
        elif kind == "inlayHint":
            await self.client.text_document_inlay_hint_async(lsp.InlayHintParams(
                doc, lsp.Range(lsp.Position(0, 0), lsp.Position(self.text.count("\n") + 1, 0))))
        elif kind == "codeLens":
            await self.client.text_document_code_lens_async(lsp.CodeLensParams(doc))
        else:
            await self.client.text_document_code_action_async(lsp.CodeActionParams(
                doc, lsp.Range(lsp.Position(line, 0), lsp.Position(line, 200)), lsp.CodeActionContext(diags)))
        return 1000 * (time.perf_counter() - t0)

    def pin(self, cpu: int) -> None:
        """Run every thread of the server process on ``cpu`` (Linux; nothing elsewhere)."""
        proc = getattr(self.client, "_server", None)
        if proc is None or not hasattr(os, "sched_setaffinity"):
            return
        for task in Path(f"/proc/{proc.pid}/task").iterdir():
            try:
                os.sched_setaffinity(int(task.name), {cpu})
            except OSError:  # a thread that just ended
                pass

    async def stop(self) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), 10)
            self.client.exit(None)
        except Exception:
            pass
        await self.client.stop()


async def run_requests(pair: list[tuple[Session, str]], line: int, diags: list[lsp.Diagnostic], n: int,
                       edits: bool) -> list[dict[str, list[float]]]:
    """``n`` timed round trips per kind and server, the servers' requests interleaved (warpwise, no-op, then the
    other order next round) so both see the same machine noise; didChange every 20 ms to each when ``edits``."""
    out: list[dict[str, list[float]]] = [{k: [] for k in KINDS} for _ in pair]
    stop = asyncio.Event()

    async def typist(s: Session, uri: str) -> None:
        while not stop.is_set():
            s.edit(uri)
            await asyncio.sleep(0.02)

    tasks = [asyncio.ensure_future(typist(s, u)) for s, u in pair] if edits else []
    for s, u in pair:  # warm-up round
        for k in KINDS:
            await s.request(k, u, line, diags)
    for r in range(n):
        for k in KINDS:
            order = range(len(pair)) if r % 2 == 0 else reversed(range(len(pair)))
            for x in order:
                s, u = pair[x]
                out[x][k].append(await s.request(k, u, line, diags))
    stop.set()
    for t in tasks:
        await t
    return out


def pct(v: list[float], q: float) -> float:
    """``q``-quantile (0..1) of ``v`` (nearest rank)."""
    v = sorted(v)
    return v[min(len(v) - 1, max(0, round(q * (len(v) - 1))))]


NOOP = [sys.executable, str(Path(__file__).with_name("noop_server.py"))]


async def scenario(src: Path, n: int, edits: bool, pin: int | None,
                   control: bool = False) -> dict[str, tuple[float, float, float, float]]:
    """request kind -> (warpwise p50, warpwise p95, no-op p50, no-op p95) in ms, one pair of fresh servers
    (with ``control`` a second no-op server stands in for warpwise: the method's own noise). With ``pin``
    both servers run on that CPU once warpwise has published its diagnostics."""
    ww = Session(NOOP if control else [sys.executable, "-m", "warpwise.server.cli", "lsp"], src.parent)
    await ww.start()
    uri = await ww.open(src, wait_diagnostics=not control)
    if control:
        line, at_line = 10, []
    else:
        diags = [d for d in ww.diagnostics[uri] if d.source == "warpwise"]
        hot = diags[0]  # the first warpwise diagnostic's line (codes name the advice since the one-line diagnostics)
        line = hot.range.start.line
        at_line = [d for d in diags if d.range.start.line == line]
    noop = Session(NOOP, src.parent)
    await noop.start()
    uri2 = await noop.open(src, wait_diagnostics=False)
    if pin is not None:
        ww.pin(pin)
        noop.pin(pin)

    t_ww, t_no = await run_requests([(ww, uri), (noop, uri2)], line, at_line, n, edits)
    await ww.stop()
    await noop.stop()
    return {k: (pct(t_ww[k], .5), pct(t_ww[k], .95), pct(t_no[k], .5), pct(t_no[k], .95)) for k in KINDS}


SCENARIOS = ("example", "stale-5k", "edits-20ms")


def _spread(v: list[float]) -> str:
    """``median (min–max)`` of ratios."""
    return f"{statistics.median(v):.2f}× ({min(v):.2f}–{max(v):.2f})" if len(v) > 1 else f"{v[0]:.2f}×"


async def main_async(n: int, repeat: int, names: list[str], pin: int | None, control: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="warpwise-editor-bench-") as tmp:
        os.environ["WARPWISE_CACHE_DIR"] = str(Path(tmp, "cache"))
        os.environ.pop("WARPWISE_NO_CACHE", None)
        example = make_workspace(Path(tmp), stale=False)
        stale = make_workspace(Path(tmp), stale=True)
        srcs = {"example": (example, False), "stale-5k": (stale, False), "edits-20ms": (stale, True),
                "control": (example, False), "control-edits": (stale, True)}
        names = [*names, "control", "control-edits"] if control else names
        runs: dict[str, list[dict[str, tuple[float, float, float, float]]]] = {k: [] for k in names}
        print("| run | load | scenario | request | warpwise p50 (ms) | warpwise p95 (ms) | no-op p50 (ms) "
              "| no-op p95 (ms) | p50 ratio | p95 ratio |\n|---|---:|---|---|---:|---:|---:|---:|---:|---:|",
              flush=True)
        for r in range(repeat):  # scenarios interleaved across repetitions: slow phases of the machine spread
            for name in names:
                src, edits = srcs[name]
                load = os.getloadavg()[0]
                got = await scenario(src, n, edits, pin, control=name.startswith("control"))
                runs[name].append(got)
                for k, (a50, a95, b50, b95) in got.items():
                    print(f"| {r + 1} | {load:.1f} | {name} | {k} | {a50:.2f} | {a95:.2f} | {b50:.2f} | {b95:.2f} "
                          f"| {a50 / b50:.2f}× | {a95 / b95:.2f}× |", flush=True)
        print(f"\nSummary over {repeat} run(s) of {n} requests per kind: median (min–max) of the per-run ratios\n")
        print("| scenario | request | warpwise p95 (ms), median | no-op p95 (ms), median | p50 ratio | p95 ratio |\n"
              "|---|---|---:|---:|---:|---:|")
        for name in names:
            for k in KINDS:
                rs = [x[k] for x in runs[name]]
                print(f"| {name} | {k} | {statistics.median(x[1] for x in rs):.2f} "
                      f"| {statistics.median(x[3] for x in rs):.2f} | {_spread([x[0] / x[2] for x in rs])} "
                      f"| {_spread([x[1] / x[3] for x in rs])} |", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=200, help="timed round trips per request kind and scenario")
    ap.add_argument("--repeat", type=int, default=3, help="fresh pairs of servers per scenario")
    ap.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    ap.add_argument("--pin", type=int, default=(os.cpu_count() or 1) - 1,
                    help="CPU both servers run on while timed (-1: not pinned); default the last CPU")
    ap.add_argument("--control", action="store_true",
                    help="also time a no-op server against another no-op server (the method's noise floor)")
    args = ap.parse_args(argv)
    asyncio.run(main_async(args.requests, args.repeat, args.scenarios, None if args.pin < 0 else args.pin,
                           args.control))
    return 0


if __name__ == "__main__":
    sys.exit(main())
