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
