"""Server lifetime under hostile inputs: ``shutdown`` stops running tools, ``exit`` ends the process at
once even when a worker thread is stuck (docs/security.md).

pygls answers ``exit`` with ``sys.exit``; the interpreter then joins every worker thread, so one blocked
in a read would keep the process alive (issue 13: SIGKILL was needed). Here ``shutdown`` and ``exit``
kill every tool process group started through :mod:`warpwise.analysis.bounded`, and ``exit`` arms a
watchdog that ends the process with ``os._exit`` after a short grace if the normal exit has not finished.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

from lsprotocol import types as lsp
from warpwise.analysis.bounded import kill_all

#: Seconds the normal exit path gets before the watchdog ends the process.
EXIT_GRACE_S = 1.0


def _hard_exit(code: int, grace: float) -> None:
    time.sleep(grace)
    try:
        sys.stdout.flush()
    except Exception:  # stdout may be gone with the client
        pass
    os._exit(code)


def install(server: Any) -> None:
    """Register ``shutdown``/``exit`` handlers on pygls ``server`` (pygls runs them before its own)."""
    state = {"shutdown": False}

    @server.feature(lsp.SHUTDOWN)
    def on_shutdown(ls: Any, *args: Any) -> None:
        state["shutdown"] = True
        kill_all()

    @server.feature(lsp.EXIT)
    def on_exit(ls: Any, *args: Any) -> None:
        kill_all()
        code = 0 if state["shutdown"] else 1  # LSP: exit without shutdown ends with 1
        threading.Thread(target=_hard_exit, args=(code, EXIT_GRACE_S), daemon=True, name="warpwise-exit").start()
