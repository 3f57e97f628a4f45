"""LSP soak (issue 13 item 6): the server over stdio on the examples, bounded in count and time.

    python bench/soak/lsp_soak.py [--edits 2000] [--docs 50] [--rounds 1] [--time-limit 180]

Per round: opens ``--docs`` documents (the five examples plus copies under virtual names beside them),
waits until their diagnostics are published, measures hover latency while idle (one hover every 50 ms),
then sends ``--edits`` incremental edits to the hottest example (a line inserted and removed, so the text
ends as it began), paced at ``--rate`` edits/s (default 500, the issue's burst), with a hover after every
10 edits, a code-action request after every 5, an inlay-hint request after every 10 and a cancelled hover
after every 50 (what an editor sends while typing), then waits for the diagnostics to settle.

Asserts: no error response (other than cancelled / content modified), no error message from the server
and no traceback in its log, diagnostics of the edited document equal to those of a fresh open of the
same text, and a clean exit (shutdown + exit, status 0 within 5 s). Reports hover p50/p95 idle and during
the burst, their ratio (goal <= 3x) and the server's RSS growth. Prints JSON and PASS/FAIL; exit 1 on FAIL.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = ROOT / "examples"
NAMES = ("stencil", "gather", "intdiv", "noinline", "cdp")
SERVER = [sys.executable, "-m", "warpwise.server.cli", "lsp"]
BENIGN = ("cancel", "content modified", "contentmodified")


def log(msg: str) -> None:
    """Progress on stderr."""
    print(f"[soak {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def rss_kb(pid: int) -> int:
    """Resident set size of process ``pid`` (kB), 0 when unknown."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def pct(xs: list[float], q: float) -> float:
    """q-th percentile (0..100) by nearest rank; 0 for an empty list."""
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q / 100 * len(s) + 0.5) - 1))]


class Soak:
    def __init__(self) -> None:
        self.client = LanguageClient("warpwise-soak", "1")
        self.errors: list[str] = []
        self.status: list[Any] = []
        c = self.client

        @c.feature("warpwise/status")
        def on_status(params: Any) -> None:
            self.status.append(params)

        @c.feature(lsp.WINDOW_LOG_MESSAGE)
        def on_log(params: lsp.LogMessageParams) -> None:
            if params.type == lsp.MessageType.Error:
                self.errors.append(f"log: {params.message}")

        @c.feature(lsp.WINDOW_SHOW_MESSAGE)
        def on_show(params: lsp.ShowMessageParams) -> None:
            if params.type == lsp.MessageType.Error:
                self.errors.append(f"showMessage: {params.message}")

        @c.feature(lsp.WORKSPACE_CONFIGURATION)
        def on_config(params: lsp.ConfigurationParams) -> list[Any]:
            return [{"minShare": 0.01}]

        @c.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diags(params: lsp.PublishDiagnosticsParams) -> None:
            self.diags[params.uri] = (params.version, params.diagnostics)
            self.published += 1

        self.diags: dict[str, tuple[int | None, list[lsp.Diagnostic]]] = {}
        self.published = 0
        self.seq = 0
        self.code_actions = 0

    async def start(self) -> None:
        await self.client.start_io(*SERVER)
        self.stderr_task = asyncio.ensure_future(self.drain_stderr())
        await self.client.initialize_async(lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(workspace=lsp.WorkspaceClientCapabilities(configuration=True)),
            root_uri=EXAMPLES.as_uri(), workspace_folders=[lsp.WorkspaceFolder(uri=EXAMPLES.as_uri(), name="ex")]))
        self.client.initialized(lsp.InitializedParams())
        for _ in range(1200):
            if self.status:
                return
            await asyncio.sleep(0.1)
        raise SystemExit("the server never reported its status")

    async def drain_stderr(self) -> None:
        """Read the server's log (pygls gives it a pipe: unread, a full pipe would stop the server);
        a Python traceback in it counts as an error."""
        proc = self.client._server
        if proc is None or proc.stderr is None:
            return
        while line := await proc.stderr.readline():
            text = line.decode(errors="replace")
            if text.startswith("Traceback") or text.startswith("ERROR"):
                self.errors.append(f"stderr: {text.strip()}")

    @property
    def pid(self) -> int:
        proc = self.client._server
        return proc.pid if proc is not None else 0

    def open(self, uri: str, text: str) -> None:
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="cuda-cpp", version=1, text=text)))

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(lsp.DidCloseTextDocumentParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri)))

    async def hover(self, uri: str, line: int) -> float:
        t = time.perf_counter()
        try:
            await asyncio.wait_for(self.client.text_document_hover_async(lsp.HoverParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=line, character=6))),
                60)
        except Exception as e:
            if not any(b in str(e).lower() for b in BENIGN):
                self.errors.append(f"hover: {type(e).__name__}: {e}")
        return time.perf_counter() - t

    async def request(self, method: str, params: Any, cancel: bool = False) -> None:
        """Send request ``method``; with ``cancel`` send $/cancelRequest for it at once. Errors other
        than cancelled / content modified count."""
        self.seq += 1
        msg_id = f"soak-{self.seq}"
        fut = self.client.protocol.send_request_async(method, params, msg_id=msg_id)
        if cancel:
            self.client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))
        try:
            await asyncio.wait_for(fut, 60)
        except Exception as e:
            if not any(b in f"{type(e).__name__} {e}".lower() for b in BENIGN):
                self.errors.append(f"{method}: {type(e).__name__}: {e}")
        if method == lsp.TEXT_DOCUMENT_CODE_ACTION:
            self.code_actions += 1

    async def quiet(self, for_s: float, timeout: float = 60) -> None:
        """Wait until no diagnostics were published for ``for_s`` seconds (or ``timeout``)."""
        t = time.monotonic()
        last, since = self.published, time.monotonic()
        while time.monotonic() - t < timeout and time.monotonic() - since < for_s:
            await asyncio.sleep(0.1)
            if self.published != last:
                last, since = self.published, time.monotonic()

    async def settle(self, uri: str, version: int, timeout: float = 30) -> list[lsp.Diagnostic]:
        """Diagnostics of ``uri`` once published for ``version`` and unchanged for 1 s."""
        t = time.monotonic()
        last = -1
        stable_since = time.monotonic()
        while time.monotonic() - t < timeout:
            got = self.diags.get(uri)
            if got is not None and got[0] == version:
                if self.published != last:
                    last, stable_since = self.published, time.monotonic()
                elif time.monotonic() - stable_since > 1.0:
                    return got[1]
            await asyncio.sleep(0.1)
        got = self.diags.get(uri)
        return got[1] if got else []


def key(diags: list[lsp.Diagnostic]) -> list[tuple[Any, ...]]:
    return sorted((d.range.start.line, d.range.start.character, d.range.end.line, str(d.code), d.message)
                  for d in diags)


async def round_(s: Soak, edits: int, docs: int, deadline: float, rate: float) -> dict[str, Any]:
    texts = {n: (EXAMPLES / n / f"{n}.cu").read_text() for n in NAMES}
    uris = []
    for i in range(docs):
        n = NAMES[i % len(NAMES)]
        name = f"{n}.cu" if i < len(NAMES) else f"{n}_soak{i}.cu"  # virtual copies: no file on disk
        uri = (EXAMPLES / n / name).as_uri()
        s.open(uri, texts[n])
        uris.append(uri)
    hot_uri, hot_text = uris[0], texts["stencil"]
    hot_line = next(i for i, t in enumerate(hot_text.splitlines()) if "out[" in t or "+=" in t)
    fresh = key(await s.settle(hot_uri, 1))
    await s.quiet(4.0)  # the other documents' first diagnostics are computed before anything is timed
    log(f"opened {docs} documents; {len(fresh)} diagnostics on {Path(hot_uri).name}")
    idle = []
    for _ in range(40):
        idle.append(await s.hover(hot_uri, hot_line))
        await asyncio.sleep(0.05)
    log(f"idle hovers: p95 {1000 * pct(idle, 95):.1f} ms")
    burst: list[float] = []
    pending: list[asyncio.Task[float]] = []
    side: list[asyncio.Future[None]] = []
    version = 1
    t0 = time.perf_counter()
    for i in range(edits):
        if time.monotonic() > deadline:
            break
        version += 1
        if i % 2 == 0:
            change = lsp.TextDocumentContentChangePartial(range=lsp.Range(start=lsp.Position(line=0, character=0),
                                                                          end=lsp.Position(line=0, character=0)),
                                                          text="// soak edit\n")
        else:
            change = lsp.TextDocumentContentChangePartial(range=lsp.Range(start=lsp.Position(line=0, character=0),
                                                                          end=lsp.Position(line=1, character=0)),
                                                          text="")
        s.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=hot_uri, version=version), content_changes=[change]))
        line = hot_line + (1 if i % 2 == 0 else 0)
        if i % 10 == 5:
            pending.append(asyncio.ensure_future(s.hover(hot_uri, line)))
        if i % 5 == 0:  # what an editor sends while typing: code actions at the cursor, inlay hints
            rng = lsp.Range(start=lsp.Position(line=line, character=0), end=lsp.Position(line=line, character=0))
            side.append(asyncio.ensure_future(s.request(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionParams(
                text_document=lsp.TextDocumentIdentifier(uri=hot_uri), range=rng,
                context=lsp.CodeActionContext(diagnostics=[])))))
        if i % 10 == 0:
            side.append(asyncio.ensure_future(s.request(lsp.TEXT_DOCUMENT_INLAY_HINT, lsp.InlayHintParams(
                text_document=lsp.TextDocumentIdentifier(uri=hot_uri),
                range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=80, character=0))))))
        if i % 50 == 25:  # a hover cancelled right away ($/cancelRequest)
            side.append(asyncio.ensure_future(s.request(lsp.TEXT_DOCUMENT_HOVER, lsp.HoverParams(
                text_document=lsp.TextDocumentIdentifier(uri=hot_uri), position=lsp.Position(line=line, character=6)),
                cancel=True)))
        await asyncio.sleep(max(0.0, t0 + (i + 1) / rate - time.perf_counter()))  # paced at --rate edits/s
    sent = version - 1
    burst_s = time.perf_counter() - t0
    log(f"sent {sent} edits in {burst_s:.1f} s")
    burst = list(await asyncio.gather(*pending))
    await asyncio.gather(*side)
    log(f"{len(burst)} burst hovers answered")
    if sent % 2:  # leave the text as it began
        version += 1
        s.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=hot_uri, version=version),
            content_changes=[lsp.TextDocumentContentChangePartial(
                range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=1, character=0)),
                text="")]))
    after = key(await s.settle(hot_uri, version))
    s.close(hot_uri)
    await asyncio.sleep(0.3)
    s.diags.pop(hot_uri, None)
    s.open(hot_uri, hot_text)
    reopened = key(await s.settle(hot_uri, 1))
    for u in uris[1:]:
        s.close(u)
    s.close(hot_uri)
    return {"edits": sent, "edits_per_s": round(sent / burst_s, 1) if burst_s else 0.0,
            "idle_p50_ms": round(1000 * statistics.median(idle), 1), "idle_p95_ms": round(1000 * pct(idle, 95), 1),
            "burst_p50_ms": round(1000 * statistics.median(burst), 1) if burst else 0.0,
            "burst_p95_ms": round(1000 * pct(burst, 95), 1), "hovers_in_burst": len(burst),
            "diagnostics": len(after), "same_as_fresh_open": after == fresh == reopened}


async def main_async(args: argparse.Namespace) -> int:
    s = Soak()
    deadline = time.monotonic() + args.time_limit
    await s.start()
    log("server ready")
    rss0 = rss_kb(s.pid)
    rounds = []
    for _ in range(args.rounds):
        rounds.append(await round_(s, args.edits, args.docs, deadline, args.rate))
        rounds[-1]["rss_mb"] = round(rss_kb(s.pid) / 1024, 1)  # growth after round 1 is what a leak shows
    rss1 = rss_kb(s.pid)
    await asyncio.wait_for(s.client.shutdown_async(None), 10)
    t = time.monotonic()
    s.client.exit(None)
    proc = s.client._server
    rc = await asyncio.wait_for(proc.wait(), 10) if proc is not None else -1
    exit_s = time.monotonic() - t
    await s.client.stop()
    idle95 = max(r["idle_p95_ms"] for r in rounds)
    burst95 = max(r["burst_p95_ms"] for r in rounds)
    out = {"rounds": rounds, "errors": s.errors[:10], "n_errors": len(s.errors), "rss_start_mb": round(rss0 / 1024, 1),
           "rss_end_mb": round(rss1 / 1024, 1), "rss_growth_mb": round((rss1 - rss0) / 1024, 1),
           "rss_growth_after_round_1_mb": round(rss1 / 1024 - rounds[0]["rss_mb"], 1),
           "exit_status": rc, "exit_s": round(exit_s, 2), "burst_over_idle_p95": round(burst95 / max(idle95, 1e-3), 2)}
    print(json.dumps(out, indent=1))
    ok = (not s.errors and rc == 0 and exit_s < 5 and all(r["same_as_fresh_open"] for r in rounds)
          and burst95 <= 3 * max(idle95, 5.0))  # idle p95 under 5 ms counts as 5 ms (timer noise)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edits", type=int, default=2000)
    ap.add_argument("--docs", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--time-limit", type=float, default=180.0)
    ap.add_argument("--rate", type=float, default=500.0, help="edits per second in the burst (issue 13: 490)")
    return asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
