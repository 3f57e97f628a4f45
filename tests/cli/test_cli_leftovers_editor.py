"""Fresh-user leftovers (brief "editor"): what `warpwise profile --help` says about -o, and what the reports say
about launch-shape estimates, the kernel entry line, CSV exports found one folder down."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from warpwise.server.cli import DEFAULT_REPORT, build_parser

from tests.cli.test_input_errors import run
from tests.conftest import ROOT, example, pair_report

BENCH = ROOT / "bench" / "advice"


def _profile_parser() -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["profile"]


def test_profile_help_states_the_output_default() -> None:
    prof = _profile_parser()
    text = " ".join(prof.format_help().split())
    assert f"(default: {DEFAULT_REPORT} in the current folder" in text
    # the default the help states is the one the parser applies
    assert prof.parse_args(["--", "./app"]).output == DEFAULT_REPORT == "warpwise.ncu-rep"


def test_text_and_json_report_the_signature_line_as_the_kernel_entry(tmp_path: Path) -> None:
    d = tmp_path / "fourblock"
    src = BENCH / "pairs" / "fourblock_poly"
    shutil.copytree(src, d, ignore=shutil.ignore_patterns("*.xz"))
    shutil.copy(pair_report(src), d / "orig.ncu-rep")  # committed xz-compressed
    shutil.copy(BENCH / "pairs" / "bench.cuh", tmp_path / "bench.cuh")
    res = run("advise", "fourblock/orig.cu", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert ("   kernel entry: 2 warp samples (0.0%) on the signature line fourblock/orig.cu:7 (the prologue: parameter "
            "set-up, warps waiting at launch; not listed as a hot line): no_instructions 100.0%") in res.stdout
    assert "   Hot lines (top 4 of 4)" in res.stdout
    assert "orig.cu:7  __global__" not in res.stdout  # not a hot-line row
    res = run("advise", "fourblock/orig.cu", "--format", "json", cwd=tmp_path)
    (k,) = json.loads(res.stdout)["kernels"]
    assert [(ln["line"], ln["samples"]) for ln in k["lines"] if ln["kernel_entry"]] == [(7, 2)]
    assert [ln["line"] for ln in k["lines"] if not ln["kernel_entry"]] == [12, 13, 9, 8]
    top = k["advice"][0]
    assert top["optimizer"] == "block_increase" and top["basis"].startswith("GPA eqs. 6-10 over the launch facts (4 "
                                                                            "CTAs of 32 threads on 132 SMs")


def _exports(folder: Path, *names: str) -> None:
    folder.mkdir()
    for name in names:
        for page in (".source.csv", ".details.csv"):
            shutil.copy(example(name, page), folder / f"{name}{page}")


def test_a_csv_export_of_another_program_one_folder_down_is_not_used(tmp_path: Path) -> None:
    shutil.copy(example("gather", ".cu"), tmp_path / "gather.cu")
    _exports(tmp_path / "exports", "intdiv")  # intdiv's bucket_score, without its cubin: no line information
    res = run("advise", "gather.cu", cwd=tmp_path)
    # before: exit 0 and a report of bucket_score, a kernel gather.cu does not define
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.splitlines() == [
        "warpwise advise: exports/intdiv.source.csv: not used for bucket_score: no sample maps to a line of gather.cu "
        "(the report has no line information for it) and no kernel of that name is defined there; pass the report "
        "with --profile to use it anyway",
        "warpwise advise: none of the reports found next to gather.cu profiles a kernel of these sources (file "
        "names are matched case-sensitively); pass --profile REPORT.ncu-rep (record one with `warpwise profile "
        "-o REPORT.ncu-rep -- ./app`)"]
    # given explicitly, the user's choice stands
    res = run("advise", "gather.cu", "--profile", "exports/intdiv.source.csv", cwd=tmp_path)
    assert res.returncode == 0 and "== bucket_score" in res.stdout


def test_of_two_csv_exports_one_folder_down_the_sources_kernel_is_used(tmp_path: Path) -> None:
    shutil.copy(example("gather", ".cu"), tmp_path / "gather.cu")
    _exports(tmp_path / "exports", "gather", "intdiv")
    res = run("advise", "gather.cu", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "== spmv_ell  [spmv_ell]" in res.stdout and "bucket_score" not in res.stdout.split("\n\n", 1)[1]
    assert res.stdout.startswith("note: exports/intdiv.source.csv: not used for bucket_score: no sample maps to a "
                                 "line of gather.cu")
    res = run("advise", "gather.cu", "--format", "json", cwd=tmp_path)
    obj = json.loads(res.stdout)
    assert [k["name"] for k in obj["kernels"]] == ["spmv_ell"]
    assert obj["notes"][0].startswith("exports/intdiv.source.csv: not used for bucket_score")


def test_the_sources_kernels_are_read_from_their_declarations(tmp_path: Path) -> None:
    from warpwise.analysis import confine
    from warpwise.server.advise_cmd import _defined_kernels

    src = tmp_path / "k.cu"
    body = ('template <int N> __global__ void __launch_bounds__(256, 2) tk(float* x) {}\n'
            'extern "C" __global__ void plain(int n);\nnamespace ns { __global__ void\nsplit_line (int a)\n{ }\n}\n'
            "__device__ void helper(int b) {}\n")
    src.write_text(body)
    broken = tmp_path / "b.cu"  # a call of an undeclared name in a kernel: libclang's AST is not trusted
    broken.write_text("__global__ void __launch_bounds__(128) bk(int a) { foo(a); }\n")
    before = confine._roots
    try:
        confine.set_roots([tmp_path])
        # the libclang parse (analysis/rewrite): the compiler's names, not __launch_bounds__
        assert _defined_kernels([src]) == ({"tk", "plain", "split_line"}, [])
        names, fallback = _defined_kernels([broken])
        assert names == {"__launch_bounds__", "bk"}  # the text scan's superset
        # (the parse's own hint after the message depends on whether the CUDA headers are installed)
        assert len(fallback) == 1 and fallback[0].startswith(
            f"kernel names of b.cu read by a text scan (parse failed at {broken}:1:52: use of undeclared identifier "
            "'foo'")
    finally:
        confine._roots = before
