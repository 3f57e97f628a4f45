"""Server lifetime helpers: the heap freeze after a reload keeps old analyses collectable."""

from __future__ import annotations

import gc
import weakref

from warpwise.server.lifecycle import freeze_heap


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


def test_freeze_then_next_reload_frees_old_cycles() -> None:
    old = _Node()
    ref = weakref.ref(old)
    freeze_heap()
    try:
        assert gc.get_freeze_count() > 0
        del old
        gc.collect()
        assert ref() is not None  # frozen: the collector does not look at it
        freeze_heap()  # the next reload hands the frozen objects back first
        assert ref() is None
    finally:
        gc.unfreeze()


def test_server_writes_never_block_on_a_client_that_does_not_read() -> None:
    # pygls's stdout writer wrote and flushed synchronously: with the client's pipe full the event loop
    # stood still (issue 13's burst hovers queued behind it). 4 MiB into a pipe nobody reads returns at once.
    import asyncio
    import os
    import threading
    import time

    from warpwise.server.lifecycle import _PipeWriter

    async def main() -> float:
        r, w = os.pipe()
        loop = asyncio.get_running_loop()
        transport, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(w, "wb"))
        writer = _PipeWriter(loop, transport)
        t = time.monotonic()
        writer.write(b"x" * (4 << 20))
        th = threading.Thread(target=writer.write, args=(b"y" * 1000,))  # from a worker thread: handed over
        th.start()
        th.join(5)
        took = time.monotonic() - t
        await asyncio.sleep(0)
        assert transport.get_write_buffer_size() >= (4 << 20) - 65536 * 16
        transport.abort()
        os.close(r)
        return took

    assert asyncio.run(main()) < 1.0
