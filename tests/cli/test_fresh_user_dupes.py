"""Second fresh-user check (DONE-fresh, 2026-12-02): every report and launch is counted once however it is found;
a report given with --profile is never dropped silently; CSV pages given alone say where their samples come from."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.test_input_errors import run
from tests.conftest import EXAMPLES, example


@pytest.fixture()
def nested(tmp_path: Path) -> Path:
    """``a/common.cuh`` with ``a/gather/`` (source, report, cubin) one level down: the P1 layout."""
    root = tmp_path / "a"
    shutil.copytree(EXAMPLES / "gather", root / "gather")
    shutil.copy(EXAMPLES / "common.cuh", root / "common.cuh")
    return root


def test_a_folder_with_a_header_and_sources_one_level_down_counts_each_report_once(nested: Path) -> None:
    res = run("advise", str(nested), "--format", "json")
    assert res.returncode == 0, res.stderr
    kernels = json.loads(res.stdout)["kernels"]
    assert [k["name"] for k in kernels] == ["spmv_ell"]
    res = run("advise", str(nested), "--top", "1")
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("== spmv_ell") == 1
    assert "GPU time" not in res.stdout  # one kernel: no share line (it printed 50.0% when counted twice)


def test_the_examples_folder_lists_each_kernel_once() -> None:
    res = run("advise", str(EXAMPLES), "--format", "json")
    assert res.returncode == 0, res.stderr
    names = [k["name"] for k in json.loads(res.stdout)["kernels"]]
    assert sorted(names) == ["advance", "blur_rows", "bucket_score", "scale_all", "spmv_ell"]
    text = run("advise", str(EXAMPLES), "--top", "1").stdout
    assert "GPU time: 1,684.3 us, 59.9% of the profiled kernels' time" in text  # scale_all; 30.0% when doubled


def test_one_report_named_twice_is_read_once() -> None:
    rep = example("gather", ".ncu-rep")
    res = run("advise", str(example("gather", ".cu")), "--profile", str(rep), "--profile",
              str(rep.parent / ".." / "gather" / rep.name), "--format", "json")
    assert res.returncode == 0, res.stderr
    assert [k["name"] for k in json.loads(res.stdout)["kernels"]] == ["spmv_ell"]


def test_a_given_report_without_samples_in_the_sources_is_named_in_a_note() -> None:
    gather, stencil = example("gather", ".ncu-rep"), example("stencil", ".ncu-rep")
    src = str(example("gather", ".cu"))
    note = f"{stencil}: left out, it has no samples in {src}; it covers stencil.cu"
    res = run("advise", src, "--profile", str(gather), "--profile", str(stencil), "--format", "json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert [k["name"] for k in out["kernels"]] == ["spmv_ell"] and out["notes"] == [note]
    assert f"warpwise advise: note: {note}" in res.stderr
    text = run("advise", src, "--profile", str(gather), "--profile", str(stencil)).stdout
    assert text.startswith(f"note: {note}\n\n== spmv_ell")
    # alone it is an error with the same wording (docs/cli.md)
    res = run("advise", src, "--profile", str(stencil))
    assert res.returncode == 2
    assert res.stderr == f"warpwise advise: {stencil} has no samples in {src}; it covers stencil.cu\n"


def test_one_profile_given_as_report_and_as_csv_export_is_counted_once() -> None:
    rep, csv = example("gather", ".ncu-rep"), example("gather", ".source.csv")
    note = (f"{csv}: holds the same launches of spmv_ell as {rep} (same kernel, grid, block and warp samples per "
            f"PC: one profile in two files); counted once, from {rep}")
    res = run("advise", str(example("gather", ".cu")), "--profile", str(rep), "--profile", str(csv),
              "--format", "json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert [(k["name"], k["report"]) for k in out["kernels"]] == [("spmv_ell", str(rep))]
    assert out["notes"] == [note]
    text = run("advise", str(example("gather", ".cu")), "--profile", str(rep), "--profile", str(csv)).stdout
    assert text.startswith(f"note: {note}\n\n== spmv_ell") and text.count("== spmv_ell") == 1
    assert "50.0%" not in text


def test_two_reports_of_different_programs_are_both_counted(tmp_path: Path) -> None:
    src = [str(example("gather", ".cu")), str(example("stencil", ".cu"))]
    res = run("advise", *src, "--profile", str(example("gather", ".ncu-rep")), "--profile",
              str(example("stencil", ".ncu-rep")), "--format", "json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert sorted(k["name"] for k in out["kernels"]) == ["blur_rows", "spmv_ell"] and out["notes"] == []


@pytest.fixture()
def gather_csv(tmp_path: Path) -> Path:
    for ext in (".cu", ".source.csv", ".details.csv", ".sm_90.cubin"):
        shutil.copy(example("gather", ext), tmp_path / f"gather{ext}")
    return tmp_path


def test_a_details_page_given_alone_is_read_with_the_source_page_beside_it_and_the_header_names_that(
        gather_csv: Path) -> None:
    res = run("advise", "gather.cu", "--profile", "gather.details.csv", "--top", "1", cwd=gather_csv)
    assert res.returncode == 0, res.stderr
    assert "   report gather.source.csv   binary gather.sm_90.cubin" in res.stdout
    out = json.loads(run("advise", "gather.cu", "--profile", "gather.details.csv", "--format", "json",
                         cwd=gather_csv).stdout)
    assert [(k["report"], k["launch"]["grid"]) for k in out["kernels"]] == [("gather.source.csv", [4096, 1, 1])]
    # no Source page beside it: exit 2, launch facts only (docs/cli.md)
    (gather_csv / "gather.source.csv").unlink()
    res = run("advise", "gather.cu", "--profile", "gather.details.csv", cwd=gather_csv)
    assert res.returncode == 2 and "holds launch facts only, no source counters" in res.stderr


def test_a_source_that_is_not_utf8_is_named_in_a_note(tmp_path: Path) -> None:
    for ext in (".ncu-rep", ".sm_90.cubin"):
        shutil.copy(example("gather", ext), tmp_path / f"gather{ext}")
    data = example("gather", ".cu").read_bytes().replace(b"// load the column index", b"// load the col\xe9 index")
    (tmp_path / "gather.cu").write_bytes(data)
    res = run("advise", "gather.cu", "--format", "json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["notes"] == [
        "gather.cu: not UTF-8 (byte 0xe9 on line 16 is the first that is not): read one code point per byte "
        "(ISO-8859-1), so its non-ASCII characters may be shown wrong; save it as UTF-8 to see them as written"]
    # the UTF-8 original: no note
    assert json.loads(run("advise", str(example("gather", ".cu")), "--format", "json").stdout)["notes"] == []


def test_a_cubin_cut_inside_its_elf_header_is_called_truncated(tmp_path: Path) -> None:
    tiny = tmp_path / "tiny.cubin"
    tiny.write_bytes(example("gather", ".sm_90.cubin").read_bytes()[:10])
    res = run("advise", str(example("gather", ".cu")), "--binary", str(tiny))
    assert res.returncode == 2
    assert res.stderr == (f"warpwise advise: {tiny}: truncated ELF: the file has 10 bytes, fewer than the 64-byte "
                          "ELF header, so it is no cubin, executable or library: was the build or the copy "
                          "interrupted?\n")


def test_the_cdp_note_names_the_report_it_was_analysed_from_and_its_command_runs(tmp_path: Path) -> None:
    for ext in (".cu", ".ncu-rep", ".sm_90.cubin"):
        shutil.copy(example("cdp", ext), tmp_path / f"cdp{ext}")
    out = json.loads(run("advise", "cdp.cu", "--format", "json", cwd=tmp_path).stdout)
    note = next(n for k in out["kernels"] for n in k["notes"] if "launches kernels from the device" in n)
    command = f"warpwise rewrite plan cdp.cu --launch 22 --profile {(tmp_path / 'cdp.ncu-rep').resolve()}"
    assert f"`{command}`" in note and "REPORT.ncu-rep" not in note
    res = run(*command.split()[1:], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("cdp.cu:22: profile-guided: ")


def test_the_accuracy_benchmark_help_lists_the_hold_out_options() -> None:
    import subprocess
    import sys

    script = EXAMPLES.parent / "bench" / "advice" / "accuracy.py"
    res = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert "--pairs-dir DIR" in res.stdout and "--timings FILE" in res.stdout
    assert "bench/advice/holdoutN/pairs" in res.stdout


def test_rewrite_plan_refuses_a_report_of_another_program_as_advise_does(tmp_path: Path) -> None:
    src = tmp_path / "cdp.cu"
    shutil.copy(example("cdp", ".cu"), src)
    rep = example("gather", ".ncu-rep")
    res = run("rewrite", "plan", str(src), "--launch", "22", "--profile", str(rep))
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr == (f"warpwise rewrite: {rep} has no launch of `scale_all`, the parent of {src}:22; "
                          "it covers spmv_ell\n")
    res = run("rewrite", "plan", str(src), "--launch", "22", "--profile", str(example("cdp", ".ncu-rep")))
    assert res.returncode == 0 and res.stdout.startswith(f"{src}:22: profile-guided: ")


def test_an_upper_case_suffix_is_not_the_profiled_file_and_the_message_says_so(tmp_path: Path) -> None:
    for ext in (".ncu-rep", ".sm_90.cubin"):
        shutil.copy(example("gather", ext), tmp_path / f"gather{ext}")
    shutil.copy(example("gather", ".cu"), tmp_path / "gather.CU")
    res = run("advise", "gather.CU", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.endswith(
        "warpwise advise: none of the reports found next to gather.CU profiles a kernel of these sources (file "
        "names are matched case-sensitively); pass --profile REPORT.ncu-rep (record one with `warpwise profile "
        "-o REPORT.ncu-rep -- ./app`)\n")
