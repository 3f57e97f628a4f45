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
