"""Run an :class:`~.evaluate.Evaluator` in a worker process, so a faulting candidate cannot end the search.

A candidate schedule that executes an illegal instruction or address leaves a *sticky* CUDA error: the
process's primary context is lost and, in practice, every later driver call of that process fails
(``cuDevicePrimaryCtxRetain`` included; seen on the H200). :class:`WorkerEvaluator` therefore keeps
the GPU work in a child process (``multiprocessing`` with the ``spawn`` start method: no CUDA state is
inherited) that serves evaluator calls over a pipe. When the child reports a sticky error, dies, or
does not answer within ``call_timeout`` seconds (a hung kernel), the call raises
:class:`~.evaluate.EvaluatorError` with ``sticky=True`` and the next call starts a fresh child; the
tuner records the candidate as rejected by errors and goes on.

``factory`` builds the real evaluator *inside* the child; it must be picklable (a module-level class
or function, or ``functools.partial`` of one — e.g. ``partial(DriverEvaluator, harness, kernel, 0)``).
"""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from .evaluate import Evaluator, EvaluatorError, TestResult, Timing

_CALLS = frozenset({"time", "time_pair", "test", "describe"})


def _serve(conn: Connection, factory: Callable[[], Evaluator]) -> None:
    """Child process: build the evaluator, then answer ``(method, args)`` requests until ``close``.

    Replies: ``("ok", value)`` or ``("err", message, sticky)``. After a sticky error the child exits
    (its CUDA context is unusable), so the parent starts a new one.
    """
    try:
        ev = factory()
    except EvaluatorError as e:
        conn.send(("err", str(e), e.sticky))
        return
    except Exception as e:  # report any start-up failure instead of dying silently
        conn.send(("err", f"worker start failed: {e!r}", False))
        return
    conn.send(("ok", None))
    try:
        while True:
            try:
                method, args = conn.recv()
            except EOFError:
                return
            if method == "close":
                return
            try:
                conn.send(("ok", getattr(ev, method)(*args)))
            except EvaluatorError as e:
                conn.send(("err", str(e), e.sticky))
                if e.sticky:
                    return
            except Exception as e:
                conn.send(("err", f"{method} raised {e!r}: {traceback.format_exc(limit=3)}", False))
    finally:
        try:
            ev.close()
        except Exception:
            pass  # the context may be gone; the process exits anyway


class WorkerEvaluator:
    """:class:`~.evaluate.Evaluator` whose calls run in a restartable child process (see module doc).

    ``start_timeout``/``call_timeout``: seconds to wait for the child to start / answer one call
    (a call that runs longer is treated as a hung kernel: the child is killed). ``restarts`` counts
    the children started after the first.

    Raises (every method): EvaluatorError — ``sticky`` when the child faulted, died or hung.
    """

    def __init__(
        self, factory: Callable[[], Evaluator], start_timeout: float = 120.0, call_timeout: float = 300.0
    ) -> None:
        self.factory = factory
        self.start_timeout = start_timeout
        self.call_timeout = call_timeout
        self.restarts = 0
        self._ctx = multiprocessing.get_context("spawn")
        self._proc: Any = None
        self._conn: Connection | None = None
        self._started = 0
        self._start()

    @property
    def pid(self) -> int | None:
        """Process id of the current child (None when none is running)."""
        return self._proc.pid if self._proc is not None and self._proc.is_alive() else None

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(target=_serve, args=(child, self.factory), daemon=True, name="warpwise-eval")
        proc.start()
        child.close()
        self._proc, self._conn = proc, parent
        if self._started:
            self.restarts += 1
        self._started += 1
        try:
            self._reply("start", self.start_timeout)
        except EvaluatorError:
            self._kill()
            raise

    def _kill(self) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._proc is not None:
            if self._proc.is_alive():
                self._proc.kill()
            self._proc.join(10)
        self._proc, self._conn = None, None

    def _reply(self, what: str, timeout: float) -> Any:
        conn = self._conn
        assert conn is not None
        try:
            if not conn.poll(timeout):
                self._kill()
                raise EvaluatorError(f"evaluator worker: {what} gave no answer in {timeout:.0f} s (hung)", True)
            msg = conn.recv()
        except (EOFError, OSError) as e:
            code = self._proc.exitcode if self._proc is not None else None
            self._kill()
            raise EvaluatorError(f"evaluator worker died during {what} (exit code {code}): {e!r}", True) from e
        if msg[0] == "ok":
            return msg[1]
        _, text, sticky = msg
        if sticky:
            self._kill()
        raise EvaluatorError(text, sticky)

    def _call(self, method: str, *args: Any) -> Any:
        if method not in _CALLS:
            raise ValueError(method)
        if self._conn is None:
            self._start()
        assert self._conn is not None
        try:
            self._conn.send((method, args))
        except (BrokenPipeError, OSError) as e:
            self._kill()
            raise EvaluatorError(f"evaluator worker gone before {method}: {e!r}", True) from e
        return self._reply(method, self.call_timeout)

    def restart(self) -> None:
        """Replace the child by a fresh one now (after a sticky error it is started lazily anyway)."""
        self._kill()
        self._start()

    def time(self, cubin: bytes, warmup: int, repeats: int) -> Timing:
        """See :meth:`.Evaluator.time`."""
        return self._call("time", cubin, warmup, repeats)

    def time_pair(self, a: bytes, b: bytes, rounds: int, repeats: int, warmup: int) -> tuple[Timing, Timing]:
        """See :meth:`.Evaluator.time_pair`."""
        return self._call("time_pair", a, b, rounds, repeats, warmup)

    def test(self, candidate: bytes, reference: bytes, samples: int, seed: int) -> TestResult:
        """See :meth:`.Evaluator.test`."""
        return self._call("test", candidate, reference, samples, seed)

    def describe(self) -> dict[str, str]:
        """See :meth:`.Evaluator.describe`; adds the number of worker restarts."""
        d: dict[str, str] = dict(self._call("describe"))
        d["worker_restarts"] = str(self.restarts)
        return d

    def close(self) -> None:
        """Ask the child to release the device and exit; kill it if it does not."""
        if self._conn is not None:
            try:
                self._conn.send(("close", ()))
            except (BrokenPipeError, OSError):
                pass
            if self._proc is not None:
                self._proc.join(30)
        self._kill()
