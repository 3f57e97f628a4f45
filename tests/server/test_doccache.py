"""Per-text caches of the editor requests (issue 15): doccache, line maps, stale launches."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from warpwise.server import actions, doccache
from warpwise.server.linemap import LineMap, line_map

from tests.conftest import example


def test_cached_computes_once_per_text_and_keeps_failures() -> None:
    doccache.clear()
    calls: list[str] = []

    def compute(t: str) -> Callable[[], int]:
        def f() -> int:
            calls.append(t)
            if t == "bad":
                raise ValueError("no parse")
            return len(t)
        return f

    assert doccache.cached("k", "/a.cu", "abc", compute("abc")) == 3
    assert doccache.cached("k", "/a.cu", "abc", compute("abc")) == 3
    bad = doccache.cached("k", "/a.cu", "bad", compute("bad"))
    assert isinstance(bad, doccache.Failed) and "no parse" in str(bad.error)
    assert doccache.cached("k", "/a.cu", "bad", compute("bad")) is bad
    assert calls == ["abc", "bad"]


def test_fresh_or_stale_answers_from_older_text_and_runs_one_job(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doccache, "QUIET_S", 0.0)  # no typing pause to wait for
    doccache.clear()
    jobs: list[Callable[[], None]] = []
    assert doccache.fresh_or_stale("k", "/b.cu", "v1", lambda: "r1", jobs.append) == ("v1", "r1")  # first: now
    assert not jobs
    assert doccache.fresh_or_stale("k", "/b.cu", "v2", lambda: "r2", jobs.append) == ("v1", "r1")
    assert doccache.fresh_or_stale("k", "/b.cu", "v3", lambda: "r3", jobs.append) == ("v1", "r1")
    assert len(jobs) == 1  # single flight: v3 waits for v2's job to finish
    jobs.pop()()
    assert doccache.fresh_or_stale("k", "/b.cu", "v2", lambda: "x", jobs.append) == ("v2", "r2")
    assert doccache.fresh_or_stale("k", "/b.cu", "v3", lambda: "r3", jobs.append) == ("v2", "r2")
    assert len(jobs) == 1


def test_line_map_is_shared_and_maps_around_an_insertion() -> None:
    base = "\n".join(f"int x{i} = {i};" for i in range(200))
    lines = base.split("\n")
    cur = "\n".join([*lines[:50], "int added = 1;", "int more = 2;", *lines[50:120], *lines[121:]])
    m = line_map(base, cur)
    assert line_map(base, cur) is m
    assert m.line(10) == 10 and m.line(51) == 53 and m.line(120) == 122
    assert m.line(121) is None  # deleted
    assert m.line(200) == 201
    full = LineMap(base, cur)
    assert all(full.line(k) == m.line(k) for k in range(1, 201))


def test_same_lines() -> None:
    assert actions.same_lines("a\nb\nc", "a\nb\nc", 1, 3)
    assert actions.same_lines("a\nb\nc", "x\nb\nc", 2, 3)
    assert not actions.same_lines("a\nb\nc", "a\nB\nc", 2, 2)
    assert not actions.same_lines("a\nb", "a\nb\nc", 2, 3)  # line 3 only in one of them


def test_launches_from_an_older_text_only_where_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doccache, "QUIET_S", 0.0)
    doccache.clear()
    path = str(example("cdp", ".cu"))
    text = example("cdp", ".cu").read_text()
    jobs: list[Callable[[], None]] = []
    first = actions.rewrite_actions("file:///x.cu", 1, text, path, 1, 999, None, True, True, submit=jobs.append)
    assert first and not jobs
    line = next(a.data["line"] for a in first)
    far = text.replace("\n", "\n// edited\n", 1)  # an edit above shifts the launch: not offered from stale
    assert actions.rewrite_actions("file:///x.cu", 2, far, path, 1, 999, None, True, True, submit=jobs.append) == []
    assert len(jobs) == 1
    jobs.pop()()
    fresh = actions.rewrite_actions("file:///x.cu", 2, far, path, 1, 999, None, True, True, submit=jobs.append)
    assert fresh and next(a.data["line"] for a in fresh) == line + 1
    tail = far + "\n// edit at the end\n"  # an edit below the launch keeps the older parse usable
    stale = actions.rewrite_actions("file:///x.cu", 3, tail, path, 1, 999, None, True, True, submit=jobs.append)
    assert [a.title for a in stale] == [a.title for a in fresh] and len(jobs) == 1


def test_background_waits_for_a_typing_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doccache, "QUIET_S", 0.15)
    doccache.clear()
    jobs: list[Callable[[], None]] = []
    doccache.fresh_or_stale("k", "/c.cu", "v1", lambda: 1, jobs.append)
    for i in range(2, 6):  # a request for a newer text every 50 ms: nothing starts
        assert doccache.fresh_or_stale("k", "/c.cu", f"v{i}", lambda i=i: i, jobs.append) == ("v1", 1)
        time.sleep(0.05)
        assert not jobs
    time.sleep(0.3)
    assert len(jobs) == 1
    jobs.pop()()
    assert doccache.fresh_or_stale("k", "/c.cu", "v5", lambda: 0, jobs.append) == ("v5", 5)  # the newest


def test_threshold_alone_is_disabled_for_a_launch_in_a_loop() -> None:
    # examples/dp/histo launches its child inside the parent's grid-stride loop: the single threshold action is
    # disabled with the reason (a warp split between a launch and the serial copy livelocked on the H200), while
    # the profile-guided rewrite (threshold with aggregation) and aggregation stay offered
    doccache.clear()
    src = Path(__file__).resolve().parents[2] / "examples" / "dp" / "histo" / "histo.cu"
    text = src.read_text()
    got = actions.rewrite_actions("file:///h.cu", 1, text, str(src), 1, 999, None, True, True)
    thr = [a for a in got if a.data and a.data["transform"] == "threshold"]
    assert len(thr) == 1 and thr[0].disabled is not None and "livelocked" in thr[0].disabled.reason
    plan = [a for a in got if a.data and a.data["transform"] == "plan"]
    assert plan and all(a.disabled is None for a in plan) and all(a.data["granularity"] for a in plan)
    assert any(a.data["transform"] == "aggregate" and a.disabled is None for a in got if a.data)
