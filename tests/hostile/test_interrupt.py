"""Ctrl-C ends ``warpwise advise`` / ``rewrite`` with a message and status 130 even when the SIGINT lands
inside a libclang callback (ctypes swallows exceptions raised there: before the change the command ran
to the end and exited 0, printing an "Exception ignored" traceback).

The driver (a child process) makes the timing deterministic: it wraps libclang's ``clang_visitChildren``
so that the first cursor visit sends the process SIGINT from inside the ctypes callback."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, example

_DRIVER = """
import os, signal, sys
import clang.cindex as ci
from warpwise.server.cli import main

lib = ci.conf.lib
orig = lib.clang_visitChildren
fired = []

def patched(cursor, cb, data):
    def inner(child, parent, d):
        if not fired:
            fired.append(1)
            os.kill(os.getpid(), signal.SIGINT)  # the handler runs here, inside the ctypes callback
            sum(range(1000))
        return cb(child, parent, d)
    return orig(cursor, ci.callbacks["cursor_visit"](inner), data)

lib.clang_visitChildren = patched
rc = main(sys.argv[1:])
print("finished", rc, len(fired), file=sys.stderr)
sys.exit(rc)
"""


@pytest.mark.parametrize("argv", [
    ["advise", str(example("stencil", ".cu"))],
    ["rewrite", "threshold", str(ROOT / "examples/dp/mandelbrot/mandelbrot.cu"), "--launch", "107"],
], ids=["advise", "rewrite"])
def test_sigint_inside_a_libclang_callback_ends_the_command(tmp_path: Path, argv: list[str]) -> None:
    driver = tmp_path / "driver.py"
    driver.write_text(_DRIVER)
    t = time.monotonic()
    proc = subprocess.run([sys.executable, str(driver), *argv], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert proc.returncode == 130, proc.stderr[-2000:]
    assert "warpwise: interrupted" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert "finished" not in proc.stderr  # ended at the interrupt, not after running to the end
    assert proc.stdout == ""  # no advice / rewritten source printed after Ctrl-C
    assert time.monotonic() - t < 60


_LATE_DRIVER = """
import os, signal, sys, threading, time
from warpwise.server.cli import main

rc = main(sys.argv[2:])
print("returned", rc, file=sys.stderr, flush=True)
if sys.argv[1] == "after":  # Ctrl-C between main's return and the exit
    os.kill(os.getpid(), signal.SIGINT)
    sum(range(100000))
else:  # Ctrl-C while the interpreter waits at exit for a thread still running
    threading.Thread(target=time.sleep, args=(30,)).start()
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
sys.exit(rc)
"""


@pytest.mark.parametrize("when", ["after", "at-exit"])
def test_sigint_right_at_the_end_prints_the_message(tmp_path: Path, when: str) -> None:
    # fresh-user test: a Ctrl-C right at the end of advise once gave 130 without the message (it landed
    # after main returned: a KeyboardInterrupt traceback and the default SIGINT exit)
    driver = tmp_path / "late.py"
    driver.write_text(_LATE_DRIVER)
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k() {}\n")
    t = time.monotonic()
    proc = subprocess.run([sys.executable, str(driver), when, "rewrite", "threshold", str(src), "--launch", "1"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert "returned 2" in proc.stderr, proc.stderr[-2000:]  # the command itself ended (no launch on line 1)
    assert proc.returncode == 130, proc.stderr[-2000:]
    assert proc.stderr.count("warpwise: interrupted") == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert time.monotonic() - t < 25  # at once, not after the 30 s thread
