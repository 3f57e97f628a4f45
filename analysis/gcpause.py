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

    Inert (freezes and unfreezes nothing) when the permanent generation already holds objects at the outermost
    entry: someone else froze them (the server's ``freeze_heap`` after a reload) and ``gc.unfreeze`` would hand
    back theirs too. Exception-safe; nested and concurrent scopes share one freeze (a counter under a lock).
    Python docs: ``gc.freeze`` / ``gc.unfreeze``."""
    global _depth, _owner
    with _lock:
        if _depth == 0:
            _owner = gc.get_freeze_count() == 0
            if _owner:
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
    """Inside an owning :func:`heap_frozen` scope: freeze every object alive now (``gc.freeze``); else nothing."""
    with _lock:
        if _depth and _owner:
            gc.freeze()
