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
"""

from __future__ import annotations

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
_state = {"interrupted": False}


def interrupted() -> bool:
    """Whether Ctrl-C arrived since :func:`install` (the command must then end with 130)."""
    return _state["interrupted"]


def _force_exit() -> None:
    kill_all(final=True)
    try:
        print(MESSAGE, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
    os._exit(130)  # 128 + SIGINT, as a shell reports for a command ended by Ctrl-C


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
