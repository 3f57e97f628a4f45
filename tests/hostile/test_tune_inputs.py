"""``warpwise tune`` reads its cubin and harness through the bounded opener (issue 13 item 1): a FIFO, a
``/dev/zero`` symlink or a huge sparse file is refused at once with exit 2 and a message naming the file.

Before the change the FIFO blocked the command forever and ``/dev/zero`` / the sparse file were read
until memory ran out. The cases run in one child process (with an address-space limit and a time limit)
so that a regression fails the test instead of hanging or swapping the machine."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, example

_DRIVER = """
import contextlib, io, json, sys
from warpwise.server.tune_cmd import main
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = main(argv + ["--dry-run", "--no-progress", "--iterations", "1", "--verify-samples", "1"])
    print(json.dumps({"rc": rc, "err": err.getvalue()}), flush=True)
"""


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def _specials(tmp: Path, suffix: str) -> list[Path]:
    fifo = tmp / f"fifo{suffix}"
    os.mkfifo(fifo)
    zero = tmp / f"zero{suffix}"
    zero.symlink_to("/dev/zero")
    huge = tmp / f"huge{suffix}"
    with huge.open("wb") as f:  # sparse: 6 GiB of holes, no disk used
        f.truncate(6 << 30)
    return [fifo, zero, huge]


def test_tune_refuses_special_and_huge_harness_and_cubin(tmp_path: Path) -> None:
    cubin = example("stencil", ".sm_90.cubin")
    harness = ROOT / "bench/tune/harness/stencil.json"
    bad_h = _specials(tmp_path, ".harness.json")
    bad_c = _specials(tmp_path, ".cubin")
    cases = [[str(cubin), "--harness", str(h), "-o", str(tmp_path / "o")] for h in bad_h]
    cases += [[str(c), "--harness", str(harness), "-o", str(tmp_path / "o")] for c in bad_c]
    proc = subprocess.run([sys.executable, "-c", _DRIVER, json.dumps(cases)], capture_output=True, text=True,
                          timeout=60, preexec_fn=_limit_memory, cwd=ROOT)
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(results) == len(cases), proc.stderr[-2000:]
    named = bad_h + bad_c
    why = ["is a FIFO", "character device", "larger than the harness limit",
           "is a FIFO", "character device", "larger than the binary limit"]
    for r, path, w in zip(results, named, why, strict=True):
        assert r["rc"] == 2 and str(path) in r["err"] and w in r["err"], r
