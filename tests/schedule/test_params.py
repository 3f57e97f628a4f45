"""Kernel parameter tables from real cubins, and harnesses refused when they do not fit the kernel."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from warpwise.analysis.binary.errors import ToolError
from warpwise.analysis.binary.tools import find_tool, run_tool
from warpwise.analysis.schedule.harness import HarnessError, load_harness, parse_harness
from warpwise.analysis.schedule.params import KernelParam, check_harness, kernel_params

ROOT = Path(__file__).resolve().parents[2]
STENCIL = ROOT / "examples/stencil/stencil.sm_90.cubin"  # blur_rows(const float*, float*, int, int)
# spmv_ell(const int*, const float*, const float*, float*, int, int)
GATHER = ROOT / "examples/gather/gather.sm_90.cubin"
TILED = Path(__file__).parent / "fixtures/tiled.sm_90.cubin"  # axpy4 and sgemm_tiled
TRITON = Path(__file__).parent / "fixtures/matmul_leaky_h200.sm_90.cubin"  # Triton 3.6: A, B, C + 2 scratch
STENCIL_H = ROOT / "bench/tune/harness/stencil.json"
GATHER_H = ROOT / "bench/tune/harness/gather.json"
BLUR = "_Z9blur_rowsPKfPfii"
SPMV = "_Z8spmv_ellPKiPKfS2_Pfii"


def _cuobjdump_params(cubin: Path, kernel: str) -> list[tuple[int, int, int]]:
    """(ordinal, offset, size) of every EIATTR_KPARAM_INFO cuobjdump -elf decodes in .nv.info.<kernel>."""
    try:
        text = run_tool([find_tool("cuobjdump"), "-elf", str(cubin)], "cuobjdump -elf")
    except ToolError as e:
        pytest.skip(f"cuobjdump unavailable: {e}")
    section = text.split(f"\n.nv.info.{kernel}\n", 1)[1].split("\n.", 1)[0]
    rows = re.findall(r"Ordinal\s*:\s*(0x[0-9a-f]+)\s+Offset\s*:\s*(0x[0-9a-f]+)\s+Size\s*:\s*(0x[0-9a-f]+)", section)
    return sorted((int(o, 16), int(f, 16), int(s, 16)) for o, f, s in rows)


@pytest.mark.parametrize(
    ("cubin", "kernel"),
    [
        (STENCIL, BLUR),
        (GATHER, SPMV),
        (TILED, "_Z5axpy4PKfS0_Pffi"),
        (TILED, "_Z11sgemm_tiledPKfS0_Pfi"),
        (TRITON, "matmul_leaky"),
    ],
)
def test_parameter_table_agrees_with_cuobjdump(cubin: Path, kernel: str) -> None:
    name, params = kernel_params(cubin.read_bytes(), kernel, str(cubin))
    assert name == kernel
    assert [(p.ordinal, p.offset, p.size) for p in params] == _cuobjdump_params(cubin, kernel)


def test_parameter_tables_of_the_examples() -> None:
    assert kernel_params(STENCIL.read_bytes(), "blur", str(STENCIL)) == (
        BLUR,
        [KernelParam(0, 0, 8), KernelParam(1, 8, 8), KernelParam(2, 16, 4), KernelParam(3, 20, 4)],
    )
    name, params = kernel_params(GATHER.read_bytes(), "spmv_ell", str(GATHER))
    assert name == SPMV and [p.size for p in params] == [8, 8, 8, 8, 4, 4]
    assert [p.offset for p in params] == [0, 8, 16, 24, 32, 36]


def _stencil_args() -> list[dict[str, object]]:
    return list(json.loads(STENCIL_H.read_text())["args"])


def _harness(args: list[dict[str, object]], kernel: str | None = BLUR) -> dict[str, object]:
    return {"kernel": kernel, "grid": [32, 1024, 1], "block": [128, 2, 1], "args": args}


def test_the_benchmark_harnesses_fit_their_kernels() -> None:
    data = STENCIL.read_bytes()
    assert check_harness(load_harness(STENCIL_H), data, BLUR, str(STENCIL), str(STENCIL_H)) == BLUR
    assert check_harness(load_harness(STENCIL_H), data, "blur_rows", str(STENCIL)) == BLUR
    assert check_harness(load_harness(GATHER_H), GATHER.read_bytes(), SPMV, str(GATHER)) == SPMV


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda a: a[:3],
            r"h\.json: 3 arguments, but _Z9blur_rowsPKfPfii in .*stencil.sm_90.cubin takes 4 parameters"
            r" \(sizes in bytes: 8, 8, 4, 4\)",
        ),
        (lambda a: [*a, {"name": "extra", "scalar": {"dtype": "int32", "value": 1}}], "5 arguments, but .* takes 4"),
        (
            lambda a: [*a[:3], {"name": "ny", "scalar": {"dtype": "int64", "value": 2048}}],
            r"argument 3 'ny' is an int64 scalar \(8 bytes\), parameter 3 is 4 bytes",
        ),
        (
            lambda a: [a[2], a[3], a[0], a[1]],
            r"argument 0 'nx' is an int32 scalar \(4 bytes\), parameter 0 is 8 bytes; .*"
            r"argument 3 'out' is a float32 buffer \(pointer, 8 bytes\), parameter 3 is 4 bytes",
        ),
    ],
    ids=["3 args", "5 args", "int64 for int", "reordered"],
)
def test_stencil_harness_that_does_not_fit_is_refused(change, message: str) -> None:  # type: ignore[no-untyped-def]
    h = parse_harness(_harness(change(_stencil_args())), "h.json")
    with pytest.raises(HarnessError, match=message):
        check_harness(h, STENCIL.read_bytes(), BLUR, str(STENCIL), "h.json")


def test_harness_for_another_kernel_is_refused() -> None:
    # the gather harness names spmv_ell, which the stencil cubin does not hold
    with pytest.raises(
        HarnessError,
        match=r"gather.json: \"kernel\" is '_Z8spmv_ellPKiPKfS2_Pfii', which names no "
        r"single kernel of .*stencil.sm_90.cubin",
    ):
        check_harness(load_harness(GATHER_H), STENCIL.read_bytes(), BLUR, str(STENCIL), str(GATHER_H))
    # both kernels in one cubin: a harness written for axpy4, tuning sgemm_tiled (same argument count)
    args = [{"name": n, "buffer": {"dtype": "float32", "count": 16, "output": n == "c"}} for n in "abc"]
    h = parse_harness(_harness([*args, {"name": "n", "scalar": {"dtype": "int32", "value": 4}}], "axpy4"), "h.json")
    with pytest.raises(
        HarnessError,
        match=r"the harness is for kernel _Z5axpy4PKfS0_Pffi .*but "
        r"_Z11sgemm_tiledPKfS0_Pfi is being tuned",
    ):
        check_harness(h, TILED.read_bytes(), "sgemm_tiled", str(TILED), "h.json")
    # the same harness without the "kernel" field fits sgemm_tiled(const float*, const float*, float*, int)
    h = parse_harness(_harness([*args, {"name": "n", "scalar": {"dtype": "int32", "value": 4}}], None), "h.json")
    assert check_harness(h, TILED.read_bytes(), "sgemm_tiled", str(TILED)) == "_Z11sgemm_tiledPKfS0_Pfi"


def test_cli_refuses_a_bad_harness_before_any_work_also_in_a_dry_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from warpwise.server.tune_cmd import main

    bad = tmp_path / "blur_rows.harness.json"
    bad.write_text(
        json.dumps(_harness([*_stencil_args()[:3], {"name": "ny", "scalar": {"dtype": "int64", "value": 2048}}]))
    )
    out = tmp_path / "o"
    assert main([str(STENCIL), "--harness", str(bad), "--dry-run", "-o", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "warpwise tune: " in err and "'ny' is an int64 scalar (8 bytes), parameter 3 is 4 bytes" in err
    assert not out.exists()  # stopped before the search: nothing written
    assert main([str(GATHER), "--harness", str(STENCIL_H), "--dry-run", "-o", str(out), "--no-progress"]) == 2
    assert "kernel '_Z9blur_rowsPKfPfii' matches no .text sections" in capsys.readouterr().err
    assert main([str(GATHER), "--kernel", "spmv", "--harness", str(STENCIL_H), "--dry-run", "-o", str(out)]) == 2
    assert "stencil.json: \"kernel\" is '_Z9blur_rowsPKfPfii', which names no single kernel of" in (
        capsys.readouterr().err
    )
    assert not out.exists()


def test_triton_harness_with_trailing_scratch_pointers_fits() -> None:
    # bench/tune/triton_kernels.py's matmul_leaky harness: three float16 buffers, then null pointers
    # for Triton's scratch parameters up to the cubin's parameter count
    args = [{"name": n, "buffer": {"dtype": "float16", "count": 16, "output": n == "C"}} for n in "ABC"]
    scratch = [{"name": f"scratch{j}", "null_pointer": True} for j in range(2)]
    h = parse_harness(_harness([*args, *scratch], "matmul_leaky"), "h.json")
    assert check_harness(h, TRITON.read_bytes(), "matmul_leaky", str(TRITON)) == "matmul_leaky"
    with pytest.raises(HarnessError, match=r"4 arguments, but matmul_leaky .* takes 5 parameters"):
        check_harness(parse_harness(_harness([*args, scratch[0]], None), "h.json"), TRITON.read_bytes(), "matmul")
