"""server/stale.py and doccache.inline: nothing heavy starts while the user types; what is remembered answers."""

from __future__ import annotations

import time
from collections.abc import Callable
from types import SimpleNamespace

import pytest
from warpwise.server import doccache, stale


def test_typing_is_a_change_within_the_settle_time() -> None:
    stale.forget("file:///k.cu")
    assert not stale.typing("file:///k.cu")
    stale.changed("file:///k.cu")
    assert stale.typing("file:///k.cu") and not stale.typing("file:///other.cu")
    time.sleep(0.06)
    assert not stale.typing("file:///k.cu", within_s=0.05)
    stale.changed("file:///k.cu")
    stale.forget("file:///k.cu")  # closed
    assert not stale.typing("file:///k.cu")


def test_superseded_by_a_newer_version_or_a_close() -> None:
    doc = SimpleNamespace(version=3)
    ls = SimpleNamespace(workspace=SimpleNamespace(text_documents={"file:///k.cu": doc}))
    assert not stale.superseded(ls, "file:///k.cu", 3) and not stale.superseded(ls, "file:///k.cu", None)
    doc.version = 4
    assert stale.superseded(ls, "file:///k.cu", 3)
    ls.workspace.text_documents.clear()
    assert stale.superseded(ls, "file:///k.cu", 4)


def test_inline_raises_where_a_parse_would_run_and_defer_leaves_it_to_the_pause(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doccache, "QUIET_S", 0.05)
    doccache.clear()
    jobs: list[Callable[[], None]] = []
    calls: list[str] = []

    def parse(t: str) -> Callable[[], str]:
        def f() -> str:
            calls.append(t)
            return t.upper()
        return f

    with pytest.raises(doccache.Pending), doccache.inline():  # nothing remembered: off the loop
        doccache.fresh_or_stale("k", "/typing.cu", "v1", parse("v1"), jobs.append)
    with doccache.inline(defer=True):  # typing: no answer yet, and nothing computed now
        assert doccache.fresh_or_stale("k", "/typing.cu", "v1", parse("v1"), jobs.append) is None
        assert doccache.fresh_or_stale("k", "/typing.cu", "v2", parse("v2"), jobs.append) is None
    assert calls == [] and not jobs
    for _ in range(100):  # the background job is handed over once no newer text was asked for QUIET_S
        if jobs:
            break
        time.sleep(0.01)
    assert len(jobs) == 1
    jobs.pop()()
    assert calls == ["v2"]  # only the newest text asked for
    with doccache.inline():  # now remembered: answered on the loop
        assert doccache.fresh_or_stale("k", "/typing.cu", "v2", parse("v2"), jobs.append) == ("v2", "V2")
        assert doccache.fresh_or_stale("k", "/typing.cu", "v2", parse("v2"), jobs.append) == ("v2", "V2")
    doccache.clear()
