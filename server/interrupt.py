"""Ctrl-C for the one-shot commands (``warpwise advise`` / ``rewrite``): it always ends the command.

Python turns SIGINT into ``KeyboardInterrupt`` at the next bytecode the main thread runs. While libclang
walks a translation unit, that bytecode is usually inside one of its ctypes callbacks (the cursor
visitor), and ctypes reports an exception raised there as "Exception ignored" (a traceback on stderr)
and carries on: the interrupt was swallowed and the command ran to the end with status 0.

Here the SIGINT handler still raises ``KeyboardInterrupt`` (the normal path: the CLI prints
"interrupted" and returns 130). An interrupt that ctypes swallows reaches ``sys.unraisablehook``
instead; the hook installed here ends the process at once: it kills every tool process group still
running (:func:`warpwise.analysis.bounded.kill_all`), prints the message and exits with 130. For any other
way an interrupt can get lost (caught too broadly), a watchdog armed by the handler does the same after
:data:`GRACE_S` seconds, and the CLI returns 130 when the command finished anyway (:func:`interrupted`). A
second Ctrl-C ends the process at once. The watchdog can run while the main thread is inside libclang:
ctypes releases the GIL for foreign calls.

When the command is done (its output flushed), :func:`finish` replaces the handler: a Ctrl-C from then
until the process ends — after ``main`` returned, while the interpreter joins threads at exit — prints
the message and ends with 130 at once (before, one landing after ``main`` returned gave a
``KeyboardInterrupt`` traceback and 130 without the message). The message is printed once however many
paths see the interrupt (:func:`say`).
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from types import FrameType
from typing import Any

from warpwise.analysis.bounded import kill_all

#: Seconds between Ctrl-C and the forced exit when the KeyboardInterrupt did not end the command.
GRACE_S = 1.5

MESSAGE = "warpwise: interrupted"
_state = {"interrupted": False, "said": False, "installed": False, "finished": False}


def interrupted() -> bool:
    """Whether Ctrl-C arrived since :func:`install` (the command must then end with 130)."""
    return _state["interrupted"]


def say() -> None:
    """Print :data:`MESSAGE` on stderr, once per process (a plain write: safe inside a signal handler,
    where ``print`` could re-enter stderr's buffer)."""
    if _state["said"]:
        return
    _state["said"] = True
    try:
        sys.stderr.flush()
    except (OSError, ValueError, RuntimeError):
        pass
    try:
        os.write(2, (MESSAGE + "\n").encode())
    except OSError:
        pass


def _force_exit() -> None:
    kill_all(final=True)
    say()
    os._exit(130)  # 128 + SIGINT, as a shell reports for a command ended by Ctrl-C


def _late_sigint(signum: int, frame: FrameType | None) -> None:
    _state["interrupted"] = True
    _force_exit()


def finish() -> None:
    """The command is done: flush its output; from here until the process ends a Ctrl-C prints the
    message and exits 130 at once (no traceback, never 130 without the message). Python puts SIGINT back
    to its default action late in finalization, but keeps an ignored signal ignored, so the last step
    (the first atexit callback to run) ignores SIGINT for that window. A no-op unless :func:`install`
    ran (main thread only).

    Raises:
        OSError: flushing stdout failed (BrokenPipeError: the reader is gone) — the CLI's own handling.
    """
    if not _state["installed"] or threading.current_thread() is not threading.main_thread():
        return
    sys.stdout.flush()
    signal.signal(signal.SIGINT, _late_sigint)
    if not _state["finished"]:
        _state["finished"] = True
        atexit.register(signal.signal, signal.SIGINT, signal.SIG_IGN)


def install(grace: float = GRACE_S) -> None:
    """Install the SIGINT handler and the unraisable-exception hook described in the module docstring
    (main thread only; a no-op elsewhere)."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = sys.unraisablehook

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        if _state["interrupted"]:
            _force_exit()
        _state["interrupted"] = True
        timer = threading.Timer(grace, _force_exit)
        timer.daemon = True
        timer.start()
        raise KeyboardInterrupt

    def on_unraisable(u: Any) -> None:
        if isinstance(u.exc_value, KeyboardInterrupt):  # swallowed by a ctypes callback (libclang)
            _force_exit()
        previous(u)

    signal.signal(signal.SIGINT, on_sigint)
    sys.unraisablehook = on_unraisable
    _state["installed"] = True
