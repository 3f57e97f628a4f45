"""Bounded reading and tool runs (issue 13 item 1): special files are refused, hung tools are killed as a
group, a crashing tool is a clear error naming the file and the tool."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from warpwise.analysis import bounded
from warpwise.analysis.binary.errors import BinaryError, ToolError
from warpwise.analysis.binary.load import load_binary, load_cubin
from warpwise.analysis.profile.ncu import ProfileLoadError, load_profiles

from tests.conftest import example


def _special_files(tmp: Path, suffix: str) -> list[Path]:
    fifo = tmp / f"fifo{suffix}"
    os.mkfifo(fifo)
    folder = tmp / f"folder{suffix}"
    folder.mkdir()
    zero = tmp / f"zero{suffix}"
    zero.symlink_to("/dev/zero")
    stdin = tmp / f"stdin{suffix}"
    stdin.symlink_to("/dev/stdin")
    loop = tmp / f"loop{suffix}"
    loop.symlink_to(loop.name)
    return [fifo, folder, zero, stdin, loop]


def test_special_report_files_are_refused_without_blocking(tmp_path: Path) -> None:
    for f in _special_files(tmp_path, ".ncu-rep"):
        t = time.monotonic()
        with pytest.raises(ProfileLoadError) as e:
            load_profiles(f)
        assert time.monotonic() - t < 5 and str(f) in str(e.value)
    with pytest.raises(ProfileLoadError, match="is a FIFO"):
        load_profiles(tmp_path / "fifo.ncu-rep")
    with pytest.raises(ProfileLoadError, match="character device"):
        load_profiles(tmp_path / "zero.ncu-rep")


def test_special_binary_files_are_refused(tmp_path: Path) -> None:
    for f in _special_files(tmp_path, ".cubin"):
        with pytest.raises(BinaryError) as e:
            load_binary(f)
        assert str(f) in str(e.value)


def test_size_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cubin = tmp_path / "k.cubin"
    cubin.write_bytes(example("gather", ".sm_90.cubin").read_bytes())
    monkeypatch.setenv("WARPWISE_MAX_BINARY_BYTES", "1000")
    with pytest.raises(BinaryError, match=r"larger than the binary limit .*WARPWISE_MAX_BINARY_BYTES"):
        load_cubin(cubin)
    monkeypatch.setenv("WARPWISE_MAX_REPORT_BYTES", "1000")
    with pytest.raises(ProfileLoadError, match="larger than the report limit"):
        load_profiles(example("gather", ".ncu-rep"))


def _fake_tool(tmp: Path, body: str) -> Path:
    exe = tmp / "nvdisasm"
    exe.write_text("#!/bin/sh\n" + body)
    exe.chmod(0o755)
    return exe


def test_hung_nvdisasm_with_a_child_holding_stdout_is_killed_as_a_group(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pidfile = tmp_path / "child.pid"
    # the tool starts a child that keeps stdout open, then hangs itself
    exe = _fake_tool(tmp_path, f"sleep 300 &\necho $! > {pidfile}\nsleep 300\n")
    monkeypatch.setenv("WARPWISE_NVDISASM", str(exe))
    monkeypatch.setenv("WARPWISE_TOOL_TIMEOUT_S", "1.5")
    t = time.monotonic()
    with pytest.raises(ToolError) as e:
        load_cubin(example("gather", ".sm_90.cubin"))
    assert time.monotonic() - t < 10  # two attempts (plain, then -ndf), 1.5 s each
    assert "nvdisasm" in str(e.value) and "gather.sm_90.cubin" in str(e.value) and "1.5 s" in str(e.value)
    child = int(pidfile.read_text())
    time.sleep(0.2)
    assert not Path(f"/proc/{child}").exists() or "Z" in Path(f"/proc/{child}/stat").read_text().split()[2]
    assert bounded.kill_all() == 0  # nothing left registered


def test_tool_that_exits_but_leaves_a_child_holding_stdout_does_not_wait_for_it(
        tmp_path: Path) -> None:
    exe = _fake_tool(tmp_path, "echo out\nsleep 300 &\nexit 0\n")
    t = time.monotonic()
    res = bounded.run([str(exe)], "fake", timeout=60)
    assert time.monotonic() - t < 5 and res.returncode == 0 and res.stdout == b"out\n"
    assert res.left_behind == 1  # said, so a caller can tell a misbehaving tool from an empty result
    # one that closes its pipes first, then leaves a child: counted too; a plain tool leaves none
    exe = _fake_tool(tmp_path, "exec >/dev/null 2>&1\nsleep 300 &\nexit 0\n")
    assert bounded.run([str(exe)], "fake", timeout=60).left_behind == 1
    assert bounded.run(["/bin/sh", "-c", "echo ok"], "sh", timeout=60).left_behind == 0


def test_misbehaving_cuobjdump_is_a_tool_error_not_no_device_code(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fresh-user: a cuobjdump that exited leaving a child (its listing empty) made an executable "no CUDA
    device code". A tool that leaves processes behind, or is killed, is named as the tool failing, with its
    status; a host binary that really holds no device code still says so."""
    from warpwise.analysis.binary.errors import NoDeviceCodeError

    host = tmp_path / "app"
    host.write_bytes(Path("/bin/true").read_bytes())  # an ELF executable without a fatbin
    host.chmod(0o755)
    with pytest.raises(NoDeviceCodeError, match=r"app: no CUDA device code"):
        load_binary(host)  # the real cuobjdump
    cases = {"sleep 300 &\nexit 0\n": r"cuobjdump -lelf on .*app: cuobjdump misbehaved: it exited with status 0 "
                                       r"but left 1 process of its own running \(killed\); its output is not used",
             "kill -KILL $$\n": r"cuobjdump -lelf on .*app: cuobjdump was killed by SIGKILL"}
    for body, msg in cases.items():
        fake = tmp_path / "cuobjdump"
        fake.write_text("#!/bin/sh\n" + body)
        fake.chmod(0o755)
        monkeypatch.setenv("WARPWISE_CUOBJDUMP", str(fake))
        with pytest.raises(ToolError, match=msg) as e:
            load_binary(host)
        assert not isinstance(e.value, NoDeviceCodeError)


def test_crashing_tool_is_named_with_its_signal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = _fake_tool(tmp_path, "kill -SEGV $$\n")
    monkeypatch.setenv("WARPWISE_NVDISASM", str(exe))
    with pytest.raises(ToolError, match=r"gather.sm_90.cubin: nvdisasm was killed by SIGSEGV"):
        load_cubin(example("gather", ".sm_90.cubin"))


def test_cancel_kills_the_group(tmp_path: Path) -> None:
    import threading

    exe = _fake_tool(tmp_path, "sleep 300\n")
    ev = threading.Event()
    threading.Timer(0.3, ev.set).start()
    t = time.monotonic()
    with pytest.raises(bounded.ToolRunError) as e:
        bounded.run([str(exe)], "fake on x", timeout=60, cancel=ev)
    assert e.value.cancelled and time.monotonic() - t < 5


def test_report_loader_timeout_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ProfileLoadError, match=r"gather.ncu-rep: the Nsight Compute report library did not finish"):
        load_profiles(example("gather", ".ncu-rep"), timeout=0.01)


def test_special_csv_files_are_refused_without_blocking(tmp_path: Path) -> None:
    from warpwise.analysis.profile.csv_load import load_csv_profiles
    from warpwise.analysis.profile.csvfile import CsvError

    for f in _special_files(tmp_path, ".source.csv"):
        t = time.monotonic()
        with pytest.raises(CsvError) as e:
            load_csv_profiles([f])
        assert time.monotonic() - t < 5 and str(f) in str(e.value)
    with pytest.raises(CsvError, match="is a FIFO"):
        load_csv_profiles([tmp_path / "fifo.source.csv"])


def test_huge_sparse_report_and_cubin_are_refused_at_the_default_limits(tmp_path: Path) -> None:
    # issue 13: a 3 GiB report was still loading after 300 s at 8.4 GB RSS; refused before a byte is read
    for suffix, load, err, kind in ((".ncu-rep", load_profiles, ProfileLoadError, "report"),
                                    (".cubin", load_binary, BinaryError, "binary")):
        huge = tmp_path / f"huge{suffix}"
        with huge.open("wb") as f:
            f.truncate(3 << 30)  # sparse: no disk used
        t = time.monotonic()
        with pytest.raises(err, match=rf"huge\{suffix}: 3,072.0 MiB is larger than the {kind} limit"):
            load(huge)
        assert time.monotonic() - t < 5


def test_no_tool_starts_once_the_process_is_ending(monkeypatch: pytest.MonkeyPatch) -> None:
    """After shutdown/exit/Ctrl-C (kill_all(final=True)) a worker thread still busy cannot start a tool that
    would outlive the server (fresh-user test: nvdisasm started during shutdown ran on under PID 1)."""
    import threading

    monkeypatch.setattr(bounded, "_closed", threading.Event())
    assert bounded.run([sys.executable, "-c", "print(1)"], "python").returncode == 0
    bounded.kill_all(final=True)
    with pytest.raises(bounded.ToolRunError, match="shutting down"):
        bounded.run([sys.executable, "-c", "import time; time.sleep(60)"], "python sleeper")
    assert bounded.kill_all() == 0
