"""Results derived from a document's text, computed once per text and kept for the editor's requests
(issue 15: code actions at no-op speed).

``cached(kind, path, text, compute)`` memoizes ``compute()`` per (kind, path, text) in a small LRU: a
libclang parse of an open file happens once per document version, not per codeAction. Keys hold the text
itself: Python caches a string's hash on the object and compares identical objects by identity, so a
lookup with the document's current ``source`` costs O(1).

``fresh_or_stale`` is for requests that must not wait for a parse while the user types: it returns the
current text's result when ready, else the last completed result for an older text of that document (the
caller validates what still applies) and starts the current text's computation in the background, at most
one per (kind, document) at a time, so stale work never queues up behind fast edits.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

log = logging.getLogger("warpwise")

#: Texts remembered per cache (a few open documents, a few versions each).
SIZE = 64

_lock = threading.Lock()
_memo: OrderedDict[tuple[Any, str, str], Any] = OrderedDict()
_latest: dict[tuple[Any, str], tuple[str, Any]] = {}
_inflight: set[tuple[Any, str]] = set()


class Pending(Exception):
    """Raised inside :func:`inline` where a result would have to be computed now (the caller moves the
    request to a worker thread)."""


_mode = threading.local()


class inline:
    """``with inline():`` — lookups only, on the event loop: :func:`cached` and :func:`fresh_or_stale`
    answer from what is remembered (an older text's result included) and raise :class:`Pending` instead of
    computing. Code actions run this way first, so the usual request (its document parsed already) costs
    no thread hand-off. With ``defer`` (the user is typing), :func:`fresh_or_stale` with nothing remembered
    answers None and leaves the computation to the background job that starts once the requests pause
    (``QUIET_S``), like any other text's."""

    def __init__(self, defer: bool = False) -> None:
        self.defer = defer

    def __enter__(self) -> inline:
        _mode.inline = True
        _mode.defer = self.defer
        return self

    def __exit__(self, *exc: object) -> None:
        _mode.inline = _mode.defer = False


def worker_only() -> None:
    """Raise :class:`Pending` inside :func:`inline` (called before work too heavy for the event loop)."""
    if getattr(_mode, "inline", False):
        raise Pending


class Failed:
    """A computation that raised: kept like a result so the failure is not recomputed per request."""

    def __init__(self, error: Exception) -> None:
        self.error = error


def _put(kind: Any, path: str, text: str, value: Any) -> None:
    with _lock:
        _memo[(kind, path, text)] = value
        _memo.move_to_end((kind, path, text))
        _latest[(kind, path)] = (text, value)
        while len(_memo) > SIZE:
            _memo.popitem(last=False)


def _get(kind: Any, path: str, text: str) -> tuple[bool, Any]:
    with _lock:
        key = (kind, path, text)
        if key in _memo:
            _memo.move_to_end(key)
            return True, _memo[key]
    return False, None


def cached(kind: Any, path: str, text: str, compute: Callable[[], Any]) -> Any:
    """``compute()`` for this (kind, path, text), computed at most once while remembered. An exception
    is returned as :class:`Failed` (and remembered too)."""
    hit, value = _get(kind, path, text)
    if hit:
        return value
    worker_only()
    try:
        value = compute()
    except Exception as e:  # the caller decides what a failure means (no launches, no fixes)
        value = Failed(e)
    _put(kind, path, text, value)
    return value


def fresh_or_stale(kind: Any, path: str, text: str, compute: Callable[[], Any],
                   submit: Callable[[Callable[[], None]], Any]) -> tuple[str, Any] | None:
    """(text the result belongs to, result) for ``text``, else for the newest older text of ``path`` whose
    computation finished; the first text of a document is computed right away. On a miss with an older
    result, the computation of the newest text asked for is handed to ``submit`` (e.g. a thread pool's
    submit) once no newer text was asked for ``QUIET_S`` seconds; one per (kind, document) at a time."""
    hit, value = _get(kind, path, text)
    if hit:
        return text, value
    deferred = getattr(_mode, "defer", False)
    with _lock:
        old = _latest.get((kind, path))
        if old is None and not deferred:
            worker_only()  # nothing remembered: the caller computes it off the event loop
        start = (old is not None or deferred) and (kind, path) not in _inflight
        if start:
            _inflight.add((kind, path))
    if old is None and not deferred:  # nothing to answer with yet: compute now (the caller runs off the loop)
        return text, cached(kind, path, text, compute)
    with _lock:
        _wanted[(kind, path)] = (text, compute, time.monotonic())
    if start:
        _arm(kind, path, submit, QUIET_S)
    return old  # None while deferred with nothing remembered


#: Seconds without a request for a newer text before the background computation starts (while the user
#: types, requests are answered from the older text and nothing is parsed).
QUIET_S = 0.2
_wanted: dict[tuple[Any, str], tuple[str, Callable[[], Any], float]] = {}


def _arm(kind: Any, path: str, submit: Callable[[Callable[[], None]], Any], delay: float) -> None:
    """Start the newest wanted computation of (kind, path) once no newer text was asked for ``QUIET_S``."""
    def fire() -> None:
        with _lock:
            want = _wanted.get((kind, path))
            if want is None:  # forgotten meanwhile (clear)
                _inflight.discard((kind, path))
                return
            text, compute, asked = want
        wait = asked + QUIET_S - time.monotonic()
        if wait > 0:
            _arm(kind, path, submit, wait)
            return

        def run() -> None:
            try:
                cached(kind, path, text, compute)
            finally:
                with _lock:
                    newer = _wanted.get((kind, path), (text,))[0] is not text
                    if not newer:
                        _inflight.discard((kind, path))
                if newer:
                    _arm(kind, path, submit, QUIET_S)

        try:
            submit(run)
        except Exception:  # a pool shut down at exit: nothing to compute for
            with _lock:
                _inflight.discard((kind, path))

    if delay <= 0:
        fire()
        return
    t = threading.Timer(delay, fire)
    t.daemon = True
    t.start()


def clear() -> None:
    """Forget everything (new analyses, tests)."""
    with _lock:
        _memo.clear()
        _latest.clear()
        _wanted.clear()
        _inflight.clear()
