"""The analysis's heap freeze (analysis/gcpause.heap_frozen): frozen for the scope, handed back after, never
unfreezing another scope's or another owner's objects."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator

import pytest
from warpwise.analysis.gcpause import freeze_built, freeze_long_lived, heap_frozen


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


@pytest.fixture(autouse=True)
def _nothing_frozen() -> Iterator[None]:
    gc.unfreeze()  # another test (the server's freeze_heap) may have left objects frozen
    yield
    gc.unfreeze()


def test_scope_freezes_then_hands_back_for_collection() -> None:
    old = _Node()
    ref = weakref.ref(old)
    with heap_frozen():
        assert gc.get_freeze_count() > 0
        del old
        gc.collect()
        assert ref() is not None  # frozen: the full collection does not walk it
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert ref() is None


def test_freeze_built_adds_what_the_scope_built() -> None:
    with heap_frozen():
        before = gc.get_freeze_count()
        built = [_Node() for _ in range(1000)]
        freeze_built()
        assert gc.get_freeze_count() >= before + 1000
        del built
    assert gc.get_freeze_count() == 0


def test_exception_inside_still_unfreezes() -> None:
    with pytest.raises(ValueError), heap_frozen():
        raise ValueError("stage failed")
    assert gc.get_freeze_count() == 0


def test_nested_scope_leaves_the_outer_frozen() -> None:
    with heap_frozen():
        with heap_frozen():
            pass
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0


def test_concurrent_scopes_last_one_out_unfreezes() -> None:
    entered, release = threading.Event(), threading.Event()

    def other() -> None:
        with heap_frozen():
            entered.set()
            release.wait(10)

    with heap_frozen():
        t = threading.Thread(target=other)
        t.start()
        assert entered.wait(10)
    assert gc.get_freeze_count() > 0  # the other thread's analysis is still running
    release.set()
    t.join(10)
    assert gc.get_freeze_count() == 0


def test_inert_when_someone_else_froze_first() -> None:
    theirs = _Node()
    gc.freeze()  # e.g. the server's freeze_heap after a reload
    frozen = gc.get_freeze_count()
    with heap_frozen():
        mine = _Node()
        freeze_built()
        assert gc.get_freeze_count() == frozen  # adds nothing
    assert gc.get_freeze_count() == frozen  # and does not hand theirs back
    del theirs, mine


def test_pipeline_hands_the_heap_back_and_leaves_the_servers_freeze(monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    from warpwise.analysis.pipeline import analyze

    monkeypatch.setenv("WARPWISE_NO_CACHE", "1")
    ex = Path(__file__).resolve().parents[2] / "examples" / "stencil"
    args = (ex / "stencil.source.csv", [ex / "stencil.sm_90.cubin"], [ex / "stencil.cu"])
    first = analyze(*args)
    assert first.kernels[0].advice and gc.get_freeze_count() == 0
    gc.freeze()  # the server after a reload
    frozen = gc.get_freeze_count()
    again = analyze(*args)
    assert gc.get_freeze_count() == frozen
    assert [a.optimizer for a in again.kernels[0].advice] == [a.optimizer for a in first.kernels[0].advice]


def test_after_a_held_freeze_scopes_freeze_and_leave_it_to_the_holder() -> None:
    # the server's freeze after a reload (lifecycle.freeze_heap) used to make every later analysis's scope inert:
    # the reload's analyses were walked by the collector's full passes again
    freeze_long_lived()
    held = gc.get_freeze_count()
    young = [_Node() for _ in range(1000)]  # allocated after the holder's freeze
    with heap_frozen():
        assert gc.get_freeze_count() >= held + 1000
        built = [_Node() for _ in range(1000)]
        garbage = _Node()
        ref = weakref.ref(garbage)
        freeze_built()
        assert gc.get_freeze_count() >= held + 2000
        del garbage
    assert gc.get_freeze_count() >= held + 2000 - 10  # nothing handed back (refcounting may free a few)
    gc.collect()
    assert ref() is not None  # frozen until the holder's next freeze
    freeze_long_lived()  # the next reload: unfreeze, collect, freeze
    assert ref() is None
    del young, built


def test_a_held_freeze_taken_inside_an_open_scope_stays() -> None:
    with heap_frozen():  # owns the freeze ...
        freeze_long_lived()  # ... until the server's reload finishes beside it
        held = gc.get_freeze_count()
    assert gc.get_freeze_count() >= held - 10 > 0  # the scope's exit does not unfreeze the holder's generation


def test_pipeline_adds_to_the_servers_held_freeze(monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    from warpwise.analysis.pipeline import analyze

    monkeypatch.setenv("WARPWISE_NO_CACHE", "1")
    ex = Path(__file__).resolve().parents[2] / "examples" / "stencil"
    args = (ex / "stencil.source.csv", [ex / "stencil.sm_90.cubin"], [ex / "stencil.cu"])
    first = analyze(*args)
    freeze_long_lived()  # the server after its first reload
    held = gc.get_freeze_count()
    again = analyze(*args)
    assert gc.get_freeze_count() > held  # the second analysis's objects were frozen, and stay for the holder
    assert [a.optimizer for a in again.kernels[0].advice] == [a.optimizer for a in first.kernels[0].advice]
