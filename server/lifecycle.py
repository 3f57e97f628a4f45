"""Server lifetime under hostile inputs: ``shutdown`` stops running tools, ``exit`` ends the process at
once even when a worker thread is stuck (docs/security.md).

pygls answers ``exit`` with ``sys.exit``; the interpreter then joins every worker thread, so one blocked
in a read would keep the process alive (issue 13: SIGKILL was needed). Here ``shutdown`` and ``exit``
kill every tool process group started through :mod:`warpwise.analysis.bounded`, and ``exit`` arms a
watchdog that ends the process with ``os._exit`` after a short grace if the normal exit has not finished.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
from typing import Any

from lsprotocol import types as lsp
from warpwise.analysis import gcpause
from warpwise.analysis.bounded import kill_all
from warpwise.analysis.bounded import kill_group as kill_group
from warpwise.analysis.bounded import track_group as track_group
from warpwise.analysis.bounded import untrack_group as untrack_group

#: Seconds the normal exit path gets before the watchdog ends the process.
EXIT_GRACE_S = 1.0


def _hard_exit(code: int, grace: float) -> None:
    time.sleep(grace)
    try:
        sys.stdout.flush()
    except Exception:  # stdout may be gone with the client
        pass
    os._exit(code)


def _cancel_pending(protocol: Any) -> None:
    """Cancel the requests still running (a tune command waiting on its tuner, say) before pygls does.

    pygls 2.1's own shutdown loop cancels them while iterating over ``_request_futures``; cancelling a
    ``concurrent.futures.Future`` runs its done-callback at once, which pops the dict entry, so the loop
    raised ``RuntimeError: dictionary changed size during iteration`` and ``shutdown`` was never answered
    whenever a request was pending. Iterating over a copy here leaves pygls nothing left to cancel."""
    futures = getattr(protocol, "_request_futures", None)
    if not isinstance(futures, dict):
        return
    current = getattr(protocol, "msg_id", None)
    for msg_id, future in list(futures.items()):
        if msg_id != current and not future.done():
            future.cancel()


def install(server: Any) -> None:
    """Register ``shutdown``/``exit`` handlers on pygls ``server`` (pygls runs them before its own)."""
    state = {"shutdown": False}

    @server.feature(lsp.SHUTDOWN)
    def on_shutdown(ls: Any, *args: Any) -> None:
        state["shutdown"] = True
        kill_all(final=True)
        _cancel_pending(ls.protocol)

    @server.feature(lsp.EXIT)
    def on_exit(ls: Any, *args: Any) -> None:
        kill_all(final=True)
        code = 0 if state["shutdown"] else 1  # LSP: exit without shutdown ends with 1
        threading.Thread(target=_hard_exit, args=(code, EXIT_GRACE_S), daemon=True, name="warpwise-exit").start()


class _PipeReader:
    """pygls's reader interface (``readline``/``readexactly``, ``b""`` at end of input) over an asyncio
    stream: stdin is read by the event loop itself. pygls's own stdin reader hops through a thread pool
    for every header line and body (three hand-offs per message); under a 500 edits/s burst on a loaded
    machine those hand-offs, not warpwise's handlers, filled the event loop."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.stream = stream

    async def readline(self) -> bytes:
        return await self.stream.readline()

    async def readexactly(self, n: int) -> bytes:
        try:
            return await self.stream.readexactly(n)
        except asyncio.IncompleteReadError:
            return b""


class _PipeWriter:
    """pygls's writer interface over an asyncio write transport on stdout: a write never blocks the event
    loop. pygls's own stdout writer writes and flushes synchronously, so while the client was slow to read
    (its pipe full: 3 ms per write in the burst soak) the event loop stood still and every queued request,
    hovers included, waited behind it. Writes from worker threads are handed to the loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, transport: asyncio.WriteTransport) -> None:
        self.loop = loop
        self.transport = transport
        self.thread = threading.get_ident()

    def write(self, data: bytes) -> None:
        if self.transport.is_closing():
            return
        if threading.get_ident() == self.thread:
            self.transport.write(data)
        else:
            self.loop.call_soon_threadsafe(self.transport.write, data)

    def close(self) -> None:
        self.transport.close()


def serve_stdio(server: Any) -> None:
    """Run pygls ``server`` on stdin/stdout with stdin read by the event loop (:class:`_PipeReader`);
    falls back to pygls's own ``start_io`` when stdin is not a pipe or socket (e.g. a regular file)."""
    from pygls.io_ import StdoutWriter, run_async

    log = logging.getLogger("warpwise")
    try:
        os.set_blocking(sys.stdin.fileno(), True)
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError):
        mode = 0
    import stat

    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        try:
            server.start_io()
        finally:
            kill_all(final=True)
        return

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stream = asyncio.StreamReader(limit=1 << 28)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), sys.stdin.buffer)
        server._stop_event = threading.Event()
        try:
            transport, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout.buffer)
            server.protocol.set_writer(_PipeWriter(loop, transport))
        except (OSError, ValueError):  # stdout not a pipe/socket/character device: write synchronously
            server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
        await run_async(stop_event=server._stop_event, reader=_PipeReader(stream), protocol=server.protocol,
                        logger=log, error_handler=server.report_server_error)

    code = 0
    try:
        asyncio.run(main())
    except BrokenPipeError:
        log.error("connection to the client lost; shutting down")
    except KeyboardInterrupt:
        pass
    except SystemExit as e:  # pygls's exit handler: 1 when exit came without shutdown (LSP)
        code = e.code if isinstance(e.code, int) else 0
    finally:
        kill_all(final=True)  # the client went away without shutdown/exit: no tool or tuner outlives the server
        server.shutdown()
    if code:
        sys.exit(code)


def freeze_heap() -> None:
    """After a reload: collect once, then move every object alive into the collector's permanent
    generation (``gc.freeze``), held there until the next reload (analysis/gcpause.freeze_long_lived).

    The analyses (profiles, cubins, blame graphs: millions of objects) live until the next reload; left in
    the collected generations, every full collection walks them all and can stall the event loop for a
    long time in the middle of a typing burst. Frozen objects are still freed by reference counting; the
    ``gc.unfreeze`` first hands the previous reload's objects back, so the collection here also frees the
    reference cycles among them. The next reload's analyses freeze what they build into the same generation
    (``gcpause.heap_frozen``), which is why the freeze goes through gcpause."""
    gcpause.freeze_long_lived()
