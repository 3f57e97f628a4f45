"""Inputs of the wrong kind get a precise message naming the file and what is wrong, and exit 2
(issue 12): --ncu paths, a report passed as SOURCE, special files, an empty cubin, a corrupt line table
(not "built without -lineinfo"); `advise -o FILE` writes atomically; SARIF helpUri only when absolute."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from tests.conftest import example

CLI = [sys.executable, "-m", "warpwise.server.cli"]


def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "WARPWISE_NO_CACHE": "1", **(env or {})}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=cwd, env=full, timeout=120)


@pytest.fixture()
def gather(tmp_path: Path) -> Path:
    for ext in (".cu", ".ncu-rep", ".sm_90.cubin"):
        shutil.copy(example("gather", ext), tmp_path / f"gather{ext}")
    return tmp_path


def test_ncu_option_names_what_is_wrong(tmp_path: Path) -> None:
    script = tmp_path / "ncu"
    script.write_text("#!/bin/sh\n")
    cases = {str(tmp_path / "missing" / "ncu"): "no such file", str(tmp_path): "is a folder",
             str(script): "not executable", "no-such-ncu-anywhere": "not found on PATH"}
    for value, what in cases.items():
        res = run("profile", "--ncu", value, "-o", str(tmp_path / "r.ncu-rep"), "--", "/bin/true")
        assert res.returncode == 2
        assert f"--ncu {value}: {what}" in res.stderr, res.stderr


def test_inputs_of_another_kind_as_source(gather: Path) -> None:
    for name, what in (("gather.ncu-rep", "is an Nsight Compute report, not a CUDA source: pass it as --profile"),
                       ("gather.sm_90.cubin", "is an ELF binary (cubin, executable or library), not a CUDA source: "
                                              "pass it as --binary")):
        res = run("advise", name, cwd=gather)
        assert res.returncode == 2 and f"{name}: {what} {name}" in res.stderr, res.stderr


def test_a_report_as_binary(gather: Path) -> None:
    res = run("advise", "gather.cu", "--binary", "gather.ncu-rep", cwd=gather)
    assert res.returncode == 2
    assert "--binary gather.ncu-rep: is an Nsight Compute report, not a cubin or executable: pass it as --profile " \
        "gather.ncu-rep" in res.stderr, res.stderr


def test_dev_null_is_named_a_character_device(gather: Path) -> None:
    for args, head in ((["/dev/null"], "/dev/null"), (["gather.cu", "--profile", "/dev/null"], "--profile /dev/null"),
                       (["gather.cu", "--binary", "/dev/null"], "--binary /dev/null")):
        res = run("advise", *args, cwd=gather)
        assert res.returncode == 2
        assert f"{head}: is a character device, not a regular file" in res.stderr, res.stderr


def test_empty_cubin(gather: Path) -> None:
    (gather / "empty.cubin").write_bytes(b"")
    res = run("advise", "gather.cu", "--binary", "empty.cubin", cwd=gather)
    assert res.returncode == 2 and "empty.cubin: the file is empty (0 bytes)" in res.stderr, res.stderr


def _debug_line(path: Path) -> tuple[int, int]:
    with path.open("rb") as f:
        sec = ELFFile(f).get_section_by_name(".debug_line")
        return sec["sh_offset"], sec["sh_size"]


def test_corrupt_line_table_is_not_called_missing_lineinfo(gather: Path) -> None:
    good = gather / "gather.sm_90.cubin"
    off, size = _debug_line(good)
    rng = random.Random(1)
    data = bytearray(good.read_bytes())
    data[off:off + size] = bytes(rng.randrange(256) for _ in range(size))
    (gather / "bad.cubin").write_bytes(data)
    res = run("advise", "gather.cu", "--profile", "gather.ncu-rep", "--binary", "bad.cubin", cwd=gather)
    assert res.returncode == 2, res.stdout
    assert f"bad.cubin: its line table (.debug_line, {size} bytes) is corrupt: its first line program claims" \
        in res.stderr
    assert "without -lineinfo" not in res.stderr + res.stdout
    # the intact cubin still reads
    ok = run("advise", "gather.cu", "--profile", "gather.ncu-rep", "--binary", "gather.sm_90.cubin", cwd=gather)
    assert ok.returncode == 0 and "gather.cu:17" in ok.stdout


def test_advise_output_file_is_written_whole_or_not_at_all(gather: Path) -> None:
    out = gather / "report.sarif"
    res = run("advise", "gather.cu", "--format", "sarif", "-o", str(out), cwd=gather)
    assert res.returncode == 0 and res.stdout == ""
    log = json.loads(out.read_text())
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True and log["runs"][0]["results"]
    before = out.read_bytes()
    # a failing run (SARIF): the failure log replaces the file, atomically, with no temporary left behind
    res = run("advise", "missing.cu", "--format", "sarif", "-o", str(out), cwd=gather)
    assert res.returncode == 2 and "missing.cu: no such file or folder" in res.stderr
    assert json.loads(out.read_text())["runs"][0]["invocations"][0]["executionSuccessful"] is False
    assert out.read_bytes() != before and not [p for p in gather.iterdir() if p.name.endswith(".tmp")]
    # text: a failure leaves the previous file as it was
    txt = gather / "report.txt"
    assert run("advise", "gather.cu", "-o", str(txt), cwd=gather).returncode == 0
    kept = txt.read_bytes()
    assert b"gather.cu:17" in kept
    assert run("advise", "missing.cu", "-o", str(txt), cwd=gather).returncode == 2
    assert txt.read_bytes() == kept
    for bad, what in ((str(gather), "is a folder"), (str(gather / "no" / "r.txt"), "does not exist")):
        res = run("advise", "gather.cu", "-o", bad, cwd=gather)
        assert res.returncode == 2 and f"-o {bad}: " in res.stderr and what in res.stderr


def test_sarif_help_uri_only_when_absolute(gather: Path) -> None:
    res = run("advise", "gather.cu", "--format", "sarif", cwd=gather)
    rules = json.loads(res.stdout)["runs"][0]["tool"]["driver"]["rules"]
    assert rules and all("helpUri" not in r for r in rules)  # no file: URI of the installed package
    res = run("advise", "gather.cu", "--format", "sarif", "--docs-url", "https://example.org/warpwise/", cwd=gather)
    rules = json.loads(res.stdout)["runs"][0]["tool"]["driver"]["rules"]
    assert {r["helpUri"] for r in rules} == {f"https://example.org/warpwise/docs/optimizers.md#{r['id']}"
                                             for r in rules}
    res = run("advise", "gather.cu", "--format", "sarif", "--docs-url", "docs/", cwd=gather)
    assert res.returncode == 2 and "--docs-url docs/: not an absolute URI" in res.stderr


def test_output_never_overwrites_an_input(gather: Path, tmp_path: Path) -> None:
    """-o naming the source, the report found beside it or its cubin (or a link to one: every link is) is
    refused before anything is written; so is `rewrite -o` over its report (over the source: see
    test_rewrite_never_overwrites_the_source_through_o)."""
    src, rep, cubin = gather / "gather.cu", gather / "gather.ncu-rep", gather / "gather.sm_90.cubin"
    link = tmp_path / "link.ncu-rep"
    link.symlink_to(rep)
    before = {p: p.read_bytes() for p in (src, rep, cubin)}
    for out, why in ((src, "is the input"), (rep, "is the input"), (cubin, "is the input"),
                     (link, "is a symbolic link"),):  # a link is never an output, to an input or not
        r = run("advise", str(src), "-o", str(out))
        assert r.returncode == 2 and f"-o {out}: {why}" in r.stderr and "Traceback" not in r.stderr
    assert {p: p.read_bytes() for p in before} == before
    r = run("rewrite", "plan", str(src), "--launch", "1", "--profile", str(rep), "-o", str(rep))
    assert r.returncode == 2 and "is the input" in r.stderr and rep.read_bytes() == before[rep]
    fine = tmp_path / "report.txt"
    r = run("advise", str(src), "-o", str(fine))
    assert r.returncode == 0 and "spmv_ell" in fine.read_text()


def test_docs_url_without_a_trailing_slash_is_a_folder(gather: Path) -> None:
    r = run("advise", str(gather / "gather.cu"), "--format", "sarif", "--docs-url", "https://example.com/base")
    assert r.returncode == 0
    uris = {rule.get("helpUri") for rule in json.loads(r.stdout)["runs"][0]["tool"]["driver"]["rules"]}
    assert uris and all(u.startswith("https://example.com/base/docs/optimizers.md#") for u in uris)


def test_rewrite_never_overwrites_the_source_through_o(tmp_path: Path) -> None:
    # fresh-user: `rewrite ... -o SOURCE` replaced the source (advise refuses -o onto its inputs). -o SOURCE is
    # refused now, the source untouched; replacing it takes --in-place, which says what it did
    root = Path(__file__).resolve().parents[2]
    src = tmp_path / "spmv.cu"
    src.write_bytes((root / "examples" / "dp" / "spmv" / "spmv.cu").read_bytes())
    before = src.read_bytes()
    for transform in ("threshold", "plan"):
        r = run("rewrite", transform, str(src), "--launch", "47", "-o", str(src))
        assert r.returncode == 2 and r.stdout == "" and src.read_bytes() == before
        assert r.stderr == (f"warpwise rewrite: -o {src}: is SOURCE itself; -o never overwrites the source: pass "
                            "--in-place to rewrite it in place (or use the editor's code action), or name another "
                            "file\n")
    other = tmp_path / "out.cu"
    r = run("rewrite", "threshold", str(src), "--launch", "47", "-o", str(other))
    assert r.returncode == 0 and "in place" not in r.stderr and src.read_bytes() == before
    r = run("rewrite", "threshold", str(src), "--launch", "47", "--in-place")
    assert r.returncode == 0, r.stderr
    assert r.stderr == f"warpwise rewrite: rewrote {src} in place (3 edits)\n"
    assert src.read_bytes() == other.read_bytes() != before
    r = run("rewrite", "threshold", str(src), "--launch", "47", "--in-place", "-o", str(other))
    assert r.returncode == 2 and "not allowed with argument" in r.stderr


def test_profile_ncu_folder_is_named(tmp_path: Path) -> None:
    (tmp_path / "ncu_dir").mkdir()
    r = run("profile", "--ncu", "ncu_dir", "-o", "x.ncu-rep", "--", "true", cwd=tmp_path)
    assert r.returncode == 2 and "is a folder, not the ncu executable" in r.stderr, r.stderr


def test_outputs_onto_special_files_are_refused_and_files_replaced_atomically(tmp_path: Path) -> None:
    """fresh-user: `rewrite -o FIFO` replaced the FIFO with a regular file. Every output option refuses a path
    that exists and is not a regular file (looked at without following a link), naming it, and writes nothing;
    a regular file is replaced through a new file renamed over it, keeping its mode."""
    root = Path(__file__).resolve().parents[2]
    src = tmp_path / "spmv.cu"
    src.write_bytes((root / "examples" / "dp" / "spmv" / "spmv.cu").read_bytes())
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    target = tmp_path / "target.cu"
    target.write_bytes(b"kept\n")
    link = tmp_path / "link.cu"
    link.symlink_to(target)
    folder = tmp_path / "folder"
    folder.mkdir()
    rewrite = ["rewrite", "threshold", str(src), "--launch", "47", "-o"]
    for bad, what in ((fifo, "a FIFO (named pipe)"), (link, "a symbolic link"), (folder, "a folder")):
        r = run(*rewrite, str(bad))
        assert r.returncode == 2 and f"warpwise rewrite: -o {bad}: is {what}, not a regular file" in r.stderr, \
            r.stderr
    assert fifo.is_fifo() and link.is_symlink() and target.read_bytes() == b"kept\n" and not any(folder.iterdir())
    r = run("advise", str(root / "examples" / "gather" / "gather.cu"), "-o", str(fifo))
    assert r.returncode == 2 and f"-o {fifo}: is a FIFO (named pipe), not a regular file" in r.stderr, r.stderr
    # profile: refused before ncu is looked for (ncu would write into the FIFO); the suffix is ncu's
    rep = tmp_path / "run.ncu-rep"
    os.mkfifo(rep)
    r = run("profile", "-o", str(tmp_path / "run"), "--", "true")
    assert r.returncode == 2 and f"-o {rep}: is a FIFO (named pipe), not a regular file" in r.stderr, r.stderr
    # tune: the output folder, and the manifest's path inside it, before any search
    tune = ["tune", str(example("stencil", ".sm_90.cubin")), "--harness", str(root / "bench/tune/harness/stencil.json"),
            "--dry-run", "--no-progress", "--iterations", "1", "-o"]
    r = run(*tune, str(fifo))
    assert r.returncode == 2 and f"-o {fifo}: is a FIFO (named pipe), not a folder" in r.stderr, r.stderr
    man = folder / "_Z9blur_rowsPKfPfii.dry-run.tune.json"
    os.mkfifo(man)
    r = run(*tune, str(folder))
    assert r.returncode == 2 and f"-o {man}: is a FIFO (named pipe), not a regular file" in r.stderr, r.stderr
    assert man.is_fifo()
    # a regular file: replaced whole (a new inode renamed over it), its mode kept, no temporary left
    out = tmp_path / "out.cu"
    out.write_bytes(b"old\n")
    out.chmod(0o640)
    ino = out.stat().st_ino
    r = run(*rewrite, str(out))
    assert r.returncode == 0, r.stderr
    assert b"WARPWISE_THRESHOLD" in out.read_bytes() and (out.stat().st_mode & 0o777) == 0o640
    assert out.stat().st_ino != ino and not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_source_over_the_size_limit_is_named_in_a_note(tmp_path: Path) -> None:
    """fresh-user: a CUDA source over the 64 MiB read limit was silently not read (the report's embedded copy
    was shown, no word). A note names the file and the limit, in text, JSON and SARIF like the other notes."""
    for ext in (".ncu-rep", ".sm_90.cubin"):
        shutil.copy(example("stencil", ext), tmp_path / f"stencil{ext}")
    src = tmp_path / "stencil.cu"
    code = example("stencil", ".cu").read_bytes()
    src.write_bytes(code + (b"//" + b" " * 1021 + b"\n") * (65 * 1024))  # 65 MiB of text after the kernel
    res = run("advise", "stencil.cu", cwd=tmp_path)
    note = ("stencil.cu: 65.0 MiB is larger than the source limit of 64.0 MiB (raise it with "
            "WARPWISE_MAX_SOURCE_BYTES): not read; the source the report embeds is shown instead (the profiled "
            "version)")
    assert res.returncode == 0 and res.stdout.startswith(f"note: {note}\n"), res.stdout[:400] + res.stderr
    assert "stencil.cu:18" in res.stdout  # the analysis itself is unchanged
    src.write_bytes(code)
    small = {"WARPWISE_MAX_SOURCE_BYTES": "1000"}
    note = note.replace("65.0 MiB", f"{len(code):,} bytes").replace("64.0 MiB", "1,000 bytes")
    res = run("advise", "stencil.cu", "--format", "json", cwd=tmp_path, env=small)
    assert res.returncode == 0 and json.loads(res.stdout)["notes"] == [note], res.stderr
    res = run("advise", "stencil.cu", "--format", "sarif", cwd=tmp_path, env=small)
    inv = json.loads(res.stdout)["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is True
    assert inv["toolExecutionNotifications"] == [{"level": "warning", "message": {"text": note}}]
    assert f"warpwise advise: note: {note}" in res.stderr
