"""Leftovers of the fresh-user test: a SOURCE no report covers is named, not dropped; a cubin whose line table
was removed gives the same line-scoped advice as the intact one, with a note that says where the lines come
from (not "hot lines cannot be placed" above placed hot lines and "unknown lines" in the hints)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from tests.cli.test_input_errors import run
from tests.conftest import example


@pytest.fixture()
def stencil(tmp_path: Path) -> Path:
    for ext in (".cu", ".ncu-rep", ".sm_90.cubin"):
        shutil.copy(example("stencil", ext), tmp_path / f"stencil{ext}")
    return tmp_path


def test_a_source_without_a_report_is_named_not_dropped(stencil: Path,
                                                        tmp_path_factory: pytest.TempPathFactory) -> None:
    lone = tmp_path_factory.mktemp("lone") / "lone.cu"
    lone.write_text("__global__ void lone(float* a) { a[threadIdx.x] = 1.0f; }\n")
    note = (f"{lone}: left out, no profiled kernel covers it (no report was found beside it); pass its report "
            "with --profile, or record one with `warpwise profile`")
    res = run("advise", "stencil.cu", str(lone), cwd=stencil)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"note: {note}\n\n== blur_rows")
    res = run("advise", "stencil.cu", str(lone), "--format", "json", cwd=stencil)
    assert res.returncode == 0
    out = json.loads(res.stdout)
    assert out["notes"] == [note] and [k["name"] for k in out["kernels"]] == ["blur_rows"]
    assert f"warpwise advise: note: {note}" in res.stderr
    # a report given that does not cover the file: said so
    res = run("advise", "stencil.cu", str(lone), "--profile", "stencil.ncu-rep", "--format", "json", cwd=stencil)
    assert json.loads(res.stdout)["notes"] == [
        f"{lone}: left out, no profiled kernel covers it (the report given (stencil.ncu-rep) records no line of "
        "it); pass its report with --profile, or record one with `warpwise profile`"]
    # every source covered: no note
    assert json.loads(run("advise", "stencil.cu", "--format", "json", cwd=stencil).stdout)["notes"] == []


def _strip_line_table(src: Path, dst: Path) -> None:
    """``src`` with its .debug_line section renamed (as if stripped: the loader finds no line table)."""
    data = bytearray(src.read_bytes())
    with src.open("rb") as f:
        elf = ELFFile(f)
        names = elf.get_section(elf["e_shstrndx"])
        sec = elf.get_section_by_name(".debug_line")
        off = names["sh_offset"] + sec["sh_name"]
    assert data[off:off + 11] == b".debug_line"
    data[off:off + 11] = b".nodbg_line"
    dst.write_bytes(data)


def test_a_cubin_without_line_table_gives_the_same_line_scoped_advice(stencil: Path) -> None:
    _strip_line_table(stencil / "stencil.sm_90.cubin", stencil / "noline.cubin")
    args = ("advise", "stencil.cu", "--profile", "stencil.ncu-rep", "--binary")
    intact = run(*args, "stencil.sm_90.cubin", cwd=stencil)
    stripped = run(*args, "noline.cubin", cwd=stencil)
    assert intact.returncode == stripped.returncode == 0, stripped.stderr
    note = ("   note: no line table in noline.cubin (built without -lineinfo, or stripped): lines come from "
            "stencil.ncu-rep, whose PCs Nsight Compute correlated with the profiled build's line table; inlined "
            "call sites are not known")
    got = stripped.stdout.splitlines()
    assert note in got
    assert "unknown lines" not in stripped.stdout and "cannot be placed" not in stripped.stdout
    # apart from the binary's name and that note, the output is the intact cubin's
    assert [ln for ln in got if ln != note] == [ln.replace("stencil.sm_90.cubin", "noline.cubin")
                                                for ln in intact.stdout.splitlines()]
