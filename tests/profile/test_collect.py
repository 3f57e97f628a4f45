"""`warpwise profile`'s ncu argument list (a pure function) and its cubin selection (stdlib ELF reader)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from warpwise.analysis.profile.collect import (
    SECTIONS,
    SHORT_KERNEL_SAMPLING_INTERVAL,
    NcuOptions,
    ProfileError,
    extract_cubins,
    find_tool,
    kernel_stem,
    kernels_in_cubin,
    ncu_command,
    split_profile_argv,
)
from warpwise.server.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_default_command_has_sections_and_report_last_before_program() -> None:
    args = ncu_command("ncu", Path("out/r.ncu-rep"), ["./app", "-n", "3"])
    assert args[:3] == ["ncu", "--clock-control", "none"]
    assert [args[i + 1] for i, a in enumerate(args) if a == "--section"] == list(SECTIONS)
    assert args[-6:] == ["-f", "-o", "out/r", "./app", "-n", "3"]
    assert "--kernel-name" not in args and "--warp-sampling-interval" not in args


def test_documented_options_map_to_ncu_flags_in_order() -> None:
    opts = NcuOptions(kernel="regex:blur", launch_count=2, launch_skip=5,
                      sampling_interval=SHORT_KERNEL_SAMPLING_INTERVAL,
                      nvtx_include=["train/", "step"], replay_mode="application", extra=["--cache-control", "none"])
    args = ncu_command("/opt/ncu", Path("r.ncu-rep"), ["python", "t.py"], opts)
    tail = args[args.index("--kernel-name"):]
    assert tail == ["--kernel-name", "regex:blur", "--launch-skip", "5", "--launch-count", "2",
                    "--warp-sampling-interval", "0", "--nvtx", "--nvtx-include", "train/", "--nvtx-include", "step",
                    "--replay-mode", "application", "--cache-control", "none", "-f", "-o", "r", "python", "t.py"]


@pytest.mark.parametrize("bad", [["-o", "x"], ["--export=x"], ["--csv"], ["--page", "raw"]])
def test_options_warpwise_owns_are_refused(bad: list[str]) -> None:
    with pytest.raises(ProfileError, match="set by warpwise"):
        ncu_command("ncu", Path("r.ncu-rep"), ["./a"], NcuOptions(extra=bad))


def test_out_of_range_values_are_refused() -> None:
    with pytest.raises(ProfileError, match=r"0\.\.31"):
        ncu_command("ncu", Path("r.ncu-rep"), ["./a"], NcuOptions(sampling_interval=32))
    with pytest.raises(ProfileError, match="--launch-skip -1"):
        ncu_command("ncu", Path("r.ncu-rep"), ["./a"], NcuOptions(launch_skip=-1))


def test_argv_split_at_ncu_args_and_double_dash() -> None:
    assert split_profile_argv(["-o", "r", "--ncu-args", "-k", "f", "--", "./a", "--ncu-args"]) == (
        ["-o", "r"], ["-k", "f"], ["./a", "--ncu-args"])
    assert split_profile_argv(["-o", "r", "--", "./a"]) == (["-o", "r"], [], ["./a"])


def test_cli_refuses_conflicting_ncu_args_without_ncu(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", "-o", "r.ncu-rep", "--ncu-args", "--export", "x", "--", "./a"]) == 2
    assert "--export is set by warpwise" in capsys.readouterr().err
    assert main(["profile", "--short-kernels", "--sampling-interval", "3", "--", "./a"]) == 2


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == "warpwise 0.1.0"


def test_kernels_in_cubin_reads_code_sections() -> None:
    assert kernels_in_cubin((EXAMPLES / "stencil" / "stencil.sm_90.cubin").read_bytes()) == ["_Z9blur_rowsPKfPfii"]
    assert kernels_in_cubin(b"\x7fELF" + b"\0" * 100) == []
    assert kernels_in_cubin(b"not an elf") == []


def test_kernel_stem() -> None:
    assert kernel_stem("_Z9blur_rowsPKfPfii") == "blur_rows"
    assert kernel_stem("_ZN2ns5childIfEEvPT_i") == "child"
    assert kernel_stem("triton_poi_fused_0") == "triton_poi_fused_0"


@pytest.mark.skipif(shutil.which("nvcc") is None or find_tool("cuobjdump") is None, reason="needs nvcc and cuobjdump")
def test_only_cubins_with_device_code_are_saved(tmp_path: Path) -> None:
    # two translation units: one with a kernel, one with host code only (its fatbin cubin holds no code)
    (tmp_path / "k.cu").write_text("__global__ void scale(float* a) { a[threadIdx.x] *= 2.0f; }\n"
                                   "void launch(float* a) { scale<<<1, 32>>>(a); }\n")
    (tmp_path / "h.cu").write_text("void launch(float*);\nint main() { launch(nullptr); return 0; }\n")
    exe = tmp_path / "app"
    subprocess.run(["nvcc", "-arch=sm_90", "-o", str(exe), str(tmp_path / "k.cu"), str(tmp_path / "h.cu")],
                   check=True, capture_output=True, timeout=300)
    got = extract_cubins(str(exe), tmp_path, "app")
    assert [p.name for p in got] == ["app.sm_90.cubin"]
    assert kernels_in_cubin(got[0].read_bytes()) == ["_Z5scalePf"]


def test_cuobjdump_that_leaves_a_child_behind_is_a_tool_failure(tmp_path: Path) -> None:
    """`warpwise profile` saves cubins through the same guard as every other tool call (bounded.run_checked):
    a cuobjdump that exits leaving a process of its own (killed with its group) is named as misbehaving, not
    read as "no device code"; one that says the binary has no device code gives no cubins."""
    fake = tmp_path / "cuobjdump"
    app = tmp_path / "app"
    app.write_bytes(Path("/bin/true").read_bytes())
    cases = {"sleep 300 &\nexit 0\n": r"cuobjdump -xelf on .*app: cuobjdump misbehaved: it exited with status 0 but "
                                       r"left 1 process of its own running \(killed\); its output is not used",
             "echo 'cuobjdump fatal   : Could not open input file' >&2\nexit 1\n":
                 r"cuobjdump -xelf on .*app: cuobjdump exited with status 1: cuobjdump fatal   : Could not open"}
    for body, msg in cases.items():
        fake.write_text("#!/bin/sh\n" + body)
        fake.chmod(0o755)
        with pytest.raises(ProfileError, match=msg):
            extract_cubins(str(app), tmp_path, "app", cuobjdump=str(fake), timeout=30)
    fake.write_text("#!/bin/sh\necho 'cuobjdump info    : File does not contain device code' >&2\nexit 255\n")
    assert extract_cubins(str(app), tmp_path, "app", cuobjdump=str(fake), timeout=30) == []
    assert not list(tmp_path.glob("*.cubin"))
