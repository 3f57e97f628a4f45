"""Pausing Python's cyclic garbage collector around allocation-heavy analysis stages.

Loading a cubin, building its program, blaming and advising each allocate 10^5..10^6 small objects that
stay alive (instructions, def/use sets, blame edges) and form no garbage cycles worth collecting
mid-stage: the collection passes those allocations trigger re-scan the growing heap and cost 15-40% of a
stage's CPU time on 200k-instruction cubins (docs/benchmarks.md, issue 15). Collection resumes, and
catches up, when the outermost paused stage returns.
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast

_F = TypeVar("_F", bound=Callable[..., Any])


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector for the ``with`` body; re-enable it after only if it was enabled
    (nested pauses keep it off until the outermost ends)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def without_gc(fn: _F) -> _F:
    """Decorator: run ``fn`` inside :func:`gc_paused` (same signature, result and exceptions)."""
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        with gc_paused():
            return fn(*args, **kwargs)
    return cast(_F, run)


_lock = threading.Lock()
_depth = 0  # heap_frozen scopes open (all threads)
_owner = False  # the outermost scope froze, so the last one to close unfreezes
_held = False  # the permanent generation is freeze_long_lived's: scopes add to it and leave it frozen


@contextmanager
def heap_frozen() -> Iterator[None]:
    """Keep the analysis's long-lived objects out of the cyclic collector's full passes for the ``with`` body.

    Entering the outermost scope moves every object alive into the permanent generation (``gc.freeze``);
    :func:`freeze_built` called inside adds what was built since (a program, its blame graphs). The last scope
    to close (any thread) hands them back to the oldest generation (``gc.unfreeze``), so a long-running
    process can still collect them. Frozen objects are still freed by reference counting. Between the
    analysis's stages (the collector is paused inside each, :func:`gc_paused`) a full collection would otherwise
    walk the whole program and blame heap (~10^6 objects at 200k instructions: 0.4-0.7 s, docs/benchmarks.md,
    issue 15 "Seventh pass").

    When the permanent generation is :func:`freeze_long_lived`'s (the server's freeze after a reload), the scope
    freezes and adds as above but hands nothing back: ``gc.unfreeze`` would hand back the holder's objects too,
    and the holder's next :func:`freeze_long_lived` unfreezes and collects everything once. Inert (freezes and
    unfreezes nothing) when someone else's ``gc.freeze`` filled the permanent generation. Exception-safe; nested
    and concurrent scopes share one freeze (a counter under a lock). Python docs: ``gc.freeze`` /
    ``gc.unfreeze``."""
    global _depth, _owner, _held
    with _lock:
        if _depth == 0:
            _owner = gc.get_freeze_count() == 0
            if _owner:
                _held = False
            if _owner or _held:
                gc.freeze()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _owner:
                _owner = False
                gc.unfreeze()


def freeze_built() -> None:
    """Inside a freezing :func:`heap_frozen` scope: freeze every object alive now (``gc.freeze``); else nothing."""
    with _lock:
        if _depth and (_owner or _held):
            gc.freeze()


def freeze_long_lived() -> None:
    """Collect once, then move every object alive into the permanent generation and hold it there: for a
    long-running process whose objects now live until its next call (the server after a reload: its analyses).

    ``gc.unfreeze`` first hands the previous call's objects back (and those :func:`heap_frozen` scopes added
    since), so the collection also frees the reference cycles among them. Scopes entered later freeze what
    they build into this generation and leave it frozen (see :func:`heap_frozen`); a scope open now hands
    nothing back when it closes. Python docs: ``gc.freeze`` / ``gc.unfreeze`` / ``gc.collect``."""
    global _owner, _held
    with _lock:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        _owner = False
        _held = True
