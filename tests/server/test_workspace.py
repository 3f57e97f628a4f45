"""Glob semantics of warpwise.profiles/binaries (workspace-relative, ``**`` for any depth) and the order
reports are analysed in (those beside an open file first)."""

from __future__ import annotations

import os
from pathlib import Path

from warpwise.server.workspace import is_binary, is_report, matches, open_first, scan


def test_globs_are_relative_to_the_workspace_folder() -> None:
    assert matches("reports/a.ncu-rep", ["reports/**"])
    assert matches("reports/x/y/a.ncu-rep", ["reports/**"])
    assert not matches("src/kernel.cu", ["reports/**"])  # used to match every file (name-only matching)
    assert not matches("other/reports/a.ncu-rep", ["reports/**"])
    assert matches("a.ncu-rep", ["**/*.ncu-rep"]) and matches("a/b/c.ncu-rep", ["**/*.ncu-rep"])
    assert not matches("a/b/c.ncu-rep", ["*.ncu-rep"])
    assert matches("build/k.sm_90.cubin", ["build/*.{cubin,bin}"])


def test_scan_skips_tool_folders(tmp_path: Path) -> None:
    for rel in ("reports/a.ncu-rep", "reports/deep/b.ncu-rep", "src/k.cu", "node_modules/x/c.ncu-rep"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    got = [p.relative_to(tmp_path).as_posix() for p in scan([tmp_path], ["reports/**"])]
    assert got == ["reports/a.ncu-rep", "reports/deep/b.ncu-rep"]
    assert [p.name for p in scan([tmp_path], [], (".cu",))] == ["k.cu"]


def test_reports_beside_open_files_come_first(tmp_path: Path) -> None:
    reps = [tmp_path / d / "r.ncu-rep" for d in ("a", "b", "c/d", "e")]
    for r in reps:
        r.parent.mkdir(parents=True)
        r.write_text("x")
        os.utime(r, (1000, 1000))
    ordered = open_first(reps, [tmp_path / "c" / "k.cu"])
    assert ordered[0] == tmp_path / "c/d/r.ncu-rep" and sorted(ordered) == sorted(reps)
    assert open_first(reps, []) == reps
    # two reports beside the open file: the newest (the one the editor will show) first
    old, new = tmp_path / "c/d/a-old.ncu-rep", tmp_path / "c/d/z-new.ncu-rep"
    for p, t in ((old, 1000), (new, 2000)):
        p.write_text("x")
        os.utime(p, (t, t))
    assert open_first([old, new], [tmp_path / "c" / "k.cu"]) == [new, old]


def test_folder_globs_keep_only_reports_and_binaries(tmp_path: Path) -> None:
    (tmp_path / "k.sm_90.cubin").write_bytes(b"\x7fELF...")
    (tmp_path / "app").write_bytes(b"\x7fELF...")
    (tmp_path / "notes.txt").write_text("x")
    assert is_report(Path("r/a.ncu-rep")) and is_report(Path("r/a.source.csv"))
    assert not is_report(Path("r/a.details.csv")) and not is_report(Path("r/k.cu"))
    assert is_binary(tmp_path / "k.sm_90.cubin") and is_binary(tmp_path / "app")
    assert not is_binary(tmp_path / "notes.txt") and not is_binary(tmp_path / "missing")
