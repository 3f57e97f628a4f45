"""One test per attack of issue 13 items 2 and 5: reads outside the workspace, code injection through a
tuned manifest, a binary without the profiled kernel, special files beside a source."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from warpwise.analysis import confine
from warpwise.analysis.schedule.use_tuned import UseTunedError, c_string, existing_guard, find_launches, use_tuned_edits
from warpwise.server.tuning import read_manifest, verified_cubin

from tests.conftest import ROOT, example

CLI = [sys.executable, "-m", "warpwise.server.cli"]
SGEMM = "_Z11sgemm_tiledPKfS0_Pfi"
DATA = ROOT / "tests/server/data"


@pytest.fixture(autouse=True)
def no_roots() -> Iterator[None]:
    yield
    confine.set_roots([])


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=180, cwd=cwd)


# ---- reads outside the workspace ---------------------------------------------------------------------
def _view(sources: dict[str, str] | None = None) -> object:
    from warpwise.analysis.advice.context import KernelView
    from warpwise.analysis.arch.facts import arch_facts
    from warpwise.analysis.blame.model import BlameGraph
    from warpwise.analysis.profile.ncu import load_profiles_in_process

    prof = load_profiles_in_process(example("gather", ".ncu-rep"))[0]
    return KernelView(profile=prof, program=None, blame=BlameGraph(kernel="k"), arch=arch_facts("sm_90"),
                      sources=sources or {})


def test_line_table_path_outside_the_workspace_is_not_read(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "elsewhere"
    ws.mkdir()
    outside.mkdir()
    secret = outside / "secret.cu"
    secret.write_text("TOP SECRET\n")
    inside = ws / "k.cu"
    inside.write_text("__global__ void k() {}\n")
    link = ws / "link.cu"
    link.symlink_to(secret)  # a symlink in the workspace pointing out of it
    confine.set_roots([ws])
    view = _view()
    assert view.source(str(inside)) == "__global__ void k() {}\n"  # type: ignore[attr-defined]
    assert view.source(str(secret)) is None  # type: ignore[attr-defined]
    assert view.source(str(link)) is None  # type: ignore[attr-defined]
    assert view.source(str(ws / ".." / "elsewhere" / "secret.cu")) is None  # type: ignore[attr-defined]


def test_line_table_path_to_dev_stdin_is_not_read(tmp_path: Path) -> None:
    confine.set_roots([Path("/")])  # even with the whole disk allowed, devices are never read
    view = _view()
    r, w = os.pipe()
    saved = os.dup(0)
    os.dup2(r, 0)  # stdin is a pipe nobody writes to: reading it would block
    try:
        assert view.source("/dev/stdin") is None  # type: ignore[attr-defined]
        assert view.source("/proc/self/fd/0") is None  # type: ignore[attr-defined]
        # a pipe's /proc link does not resolve; a FIFO and a device inside the roots do: the regular-file
        # check refuses them (without it the FIFO read as "" and /dev/zero was read up to the size limit)
        fifo = tmp_path / "k.cu"
        os.mkfifo(fifo)
        assert view.source(str(fifo)) is None  # type: ignore[attr-defined]
        assert view.source("/dev/zero") is None  # type: ignore[attr-defined]
    finally:
        os.dup2(saved, 0)
        os.close(r)
        os.close(w)


def test_no_roots_reads_nothing_from_disk(tmp_path: Path) -> None:
    f = tmp_path / "k.cu"
    f.write_text("x\n")
    confine.set_roots([])
    assert confine.read_source(f) is None
    confine.set_roots([tmp_path])
    assert confine.read_source(f) == "x\n"


# ---- tuned manifests ---------------------------------------------------------------------------------
def _manifest(folder: Path, cubin_name: str, cubin: bytes | None = None, sha: str | None = None) -> Path:
    m = json.loads((DATA / "sgemm_tiled.tune.json").read_text())
    data = cubin if cubin is not None else (DATA / f"{SGEMM}.tuned.cubin").read_bytes()
    m["tuned_cubin"] = {"file": cubin_name, "sha256": sha or hashlib.sha256(data).hexdigest()}
    p = folder / "k.tune.json"
    p.write_text(json.dumps(m))
    return p


def test_manifest_with_a_newline_in_the_cubin_path_is_refused(tmp_path: Path) -> None:
    name = "a\n#endif\nsystem(\"rm -rf ~\");\n#ifdef X\n.cubin"
    (tmp_path / name).write_bytes((DATA / f"{SGEMM}.tuned.cubin").read_bytes())
    assert read_manifest(_manifest(tmp_path, name), [tmp_path]) is None
    # and the literal writer refuses control characters whatever calls it
    with pytest.raises(UseTunedError, match="control character"):
        c_string(str(tmp_path / name))
    src = "#include <cstdio>\n__global__ void k() {}\nint main() {\n  k<<<1, 1>>>();\n}\n"
    with pytest.raises(UseTunedError):
        use_tuned_edits(src, "_Z1kv", str(tmp_path / name))


def test_c_string_escapes_and_round_trips() -> None:
    s = 'C:\\dir "q" ??/ é'
    lit = c_string(s)
    assert lit == '"C:\\\\dir \\"q\\" \\?\\?/ \\303\\251"'
    src = "#include <cstdio>\n__global__ void k() {}\nint main() {\n  k<<<1, 1>>>();\n}\n"
    from warpwise.analysis.schedule.use_tuned import apply_edits

    out = apply_edits(src, use_tuned_edits(src, "_Z1kv", s))
    (launch,) = find_launches(out, "k")
    guard = existing_guard(out, launch)
    assert guard is not None and guard.cubin == s and guard.mangled == "_Z1kv"


def test_manifest_sha_mismatch_is_refused(tmp_path: Path) -> None:
    shutil.copy(DATA / f"{SGEMM}.tuned.cubin", tmp_path)
    assert read_manifest(_manifest(tmp_path, f"{SGEMM}.tuned.cubin", sha="0" * 64), [tmp_path]) is None
    t = read_manifest(_manifest(tmp_path, f"{SGEMM}.tuned.cubin"), [tmp_path])
    assert t is not None and verified_cubin(t) == (tmp_path / f"{SGEMM}.tuned.cubin").resolve()
    (tmp_path / f"{SGEMM}.tuned.cubin").write_bytes(b"swapped after the scan")
    assert verified_cubin(t) is None  # checked again before a code action is offered


def test_manifest_cubin_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    outside.mkdir()
    shutil.copy(DATA / f"{SGEMM}.tuned.cubin", outside)
    assert read_manifest(_manifest(ws, f"../out/{SGEMM}.tuned.cubin"), [ws]) is None
    assert read_manifest(_manifest(ws, str(outside / f"{SGEMM}.tuned.cubin")), [ws]) is None
    (ws / "link.cubin").symlink_to(outside / f"{SGEMM}.tuned.cubin")
    assert read_manifest(_manifest(ws, "link.cubin"), [ws]) is None
    assert read_manifest(_manifest(ws, f"../out/{SGEMM}.tuned.cubin"), [tmp_path]) is not None


# ---- failures are failures ---------------------------------------------------------------------------
def test_binary_without_the_profiled_kernel_exits_2_and_sarif_says_so() -> None:
    res = run("advise", str(example("stencil", ".cu")), "--profile", str(example("stencil", ".ncu-rep")),
              "--binary", str(example("gather", ".sm_90.cubin")), "--format", "sarif")
    assert res.returncode == 2
    assert "gather.sm_90.cubin holds none of the kernels profiled" in res.stderr and "blur_rows" in res.stderr
    doc = json.loads(res.stdout)
    (inv,) = doc["runs"][0]["invocations"]
    assert inv["executionSuccessful"] is False and doc["runs"][0]["results"] == []
    (note,) = inv["toolExecutionNotifications"]
    assert note["level"] == "error" and "gather.sm_90.cubin" in note["message"]["text"]


def test_successful_sarif_run_says_so() -> None:
    res = run("advise", str(example("gather", ".cu")), "--format", "sarif")
    assert res.returncode == 0, res.stderr
    (inv,) = json.loads(res.stdout)["runs"][0]["invocations"]
    assert inv["executionSuccessful"] is True


def test_unreadable_report_exits_2_in_sarif(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ncu-rep"
    bad.write_bytes(b"\x00" * 4096)
    res = run("advise", str(example("stencil", ".cu")), "--profile", str(bad), "--format", "sarif")
    assert res.returncode == 2 and "bad.ncu-rep" in res.stderr
    (inv,) = json.loads(res.stdout)["runs"][0]["invocations"]
    assert inv["executionSuccessful"] is False
    assert "bad.ncu-rep" in inv["toolExecutionNotifications"][0]["message"]["text"]


@pytest.mark.parametrize("kind", ["folder", "loop", "fifo", "devzero"])
def test_special_file_named_like_a_report_beside_the_source(tmp_path: Path, kind: str) -> None:
    for suffix in (".cu", ".ncu-rep", ".sm_90.cubin"):
        shutil.copy(example("stencil", suffix), tmp_path)
    odd = tmp_path / "other.ncu-rep"
    if kind == "folder":
        odd.mkdir()
    elif kind == "loop":
        odd.symlink_to(odd.name)
    elif kind == "fifo":
        os.mkfifo(odd)
    else:
        odd.symlink_to("/dev/zero")
    res = run("advise", str(tmp_path / "stencil.cu"), "--format", "json")
    assert "Traceback" not in res.stderr
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["kernels"][0]["name"] == "blur_rows"
    if kind != "folder":
        assert "other.ncu-rep" in res.stderr  # said, not silently skipped


def test_report_without_source_correlation_takes_lines_from_the_cubin(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # mutation run, this session: one flipped bit (byte 5228 of stencil.ncu-rep) drops the report's source
    # correlation; advise exited 0 with every sample "on instructions without line information" (silent-wrong)
    import json

    from warpwise.server.cli import main

    data = bytearray(example("stencil", ".ncu-rep").read_bytes())
    data[5228] ^= 0x04
    rep = tmp_path / "stencil.ncu-rep"
    rep.write_bytes(bytes(data))
    src, cub = example("stencil", ".cu"), example("stencil", ".sm_90.cubin")

    def lines(report: Path) -> list[tuple[int, int]]:
        assert main(["advise", str(src), "--profile", str(report), "--binary", str(cub), "--format", "json"]) == 0
        (k,) = json.loads(capsys.readouterr().out)["kernels"]
        return [(ln["line"], ln["samples"]) for ln in k["lines"]]

    got = lines(rep)
    assert got == lines(example("stencil", ".ncu-rep")) and sum(n for _, n in got) == 28464


def test_server_reads_of_local_sources_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the editor's findings read a profiled file's text from disk with Path.read_text: no size limit (a 3 GiB
    # sparse stencil.cu in the workspace was read whole); now a regular file within the source limit only
    from warpwise.server.findings import file_findings

    big = tmp_path / "k.cu"
    big.write_text("// x\n" * 100_000)  # 500 kB
    monkeypatch.setenv("WARPWISE_MAX_SOURCE_BYTES", "100000")
    assert file_findings([], big).baseline == ""  # over the source limit: not read
    monkeypatch.setenv("WARPWISE_MAX_SOURCE_BYTES", str(1 << 20))
    assert file_findings([], big).baseline == "// x\n" * 100_000
    dev = tmp_path / "z.cu"
    dev.symlink_to("/dev/zero")
    assert file_findings([], dev).baseline == ""  # a device: not read
