"""server/stale.py: code actions wait for typing to pause, but not on a document that is not changing."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

from warpwise.server import stale


def _ls(version: int) -> SimpleNamespace:
    doc = SimpleNamespace(version=version)
    return SimpleNamespace(workspace=SimpleNamespace(text_documents={"file:///k.cu": doc}), doc=doc)


def test_a_settled_version_answers_without_waiting_again() -> None:
    ls = _ls(3)
    t0 = time.perf_counter()
    assert asyncio.run(stale.settled(ls, "file:///k.cu", 3, wait_s=0.2)) is True
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    assert asyncio.run(stale.settled(ls, "file:///k.cu", 3, wait_s=0.2)) is True
    again = time.perf_counter() - t0
    assert first >= 0.2 and again < 0.05


def test_a_newer_version_drops_the_request_before_the_wait_ends() -> None:
    ls = _ls(7)

    async def go() -> tuple[bool, float]:
        async def type_() -> None:
            await asyncio.sleep(0.03)
            ls.doc.version = 8

        t = asyncio.ensure_future(type_())
        t0 = time.perf_counter()
        ok = await stale.settled(ls, "file:///k.cu", 7, wait_s=0.5)
        await t
        return ok, time.perf_counter() - t0

    ok, took = asyncio.run(go())
    assert ok is False and took < 0.25
    ls.workspace.text_documents.clear()  # closed: superseded even for a version that had settled
    assert asyncio.run(stale.settled(ls, "file:///k.cu", 3, wait_s=0.01)) is False
