"""The report is read in a child process (memory: ncu-report's native reader is given back), with the same
result as reading in-process and the same errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from warpwise.analysis.profile.ncu import ProfileLoadError, load_profiles

from tests.conftest import example


def test_child_read_equals_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    rep = example("noinline", ".ncu-rep")
    child = load_profiles(rep)
    monkeypatch.setenv("WARPWISE_NCU_INPROCESS", "1")
    here = load_profiles(rep)
    assert child == here and child[0].pcs and child[0].source_files


def test_reader_memory_stays_in_the_child() -> None:
    code = ("import sys; from warpwise.analysis.profile.ncu import load_profiles; "
            f"p = load_profiles({str(example('stencil', '.ncu-rep'))!r}); "
            "hwm = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) // 1024; "
            "print(len(p[0].pcs), 'ncu_report' in sys.modules, hwm)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    n, imported, hwm = out.stdout.split()
    assert int(n) > 50 and imported == "False"
    assert int(hwm) < 100  # MiB: the native reader alone takes ~125 MiB


def test_child_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "junk.ncu-rep"
    bad.write_bytes(b"\x00\x01 not a report" * 100)
    with pytest.raises(ProfileLoadError, match=r"junk\.ncu-rep"):
        load_profiles(bad)
