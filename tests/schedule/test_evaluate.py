"""The driver-API evaluator against a CPU stand-in of cuda.bindings.driver, and on a real GPU if present."""

from __future__ import annotations

import ctypes
import struct
from pathlib import Path

import pytest
from warpwise.analysis.schedule.evaluate import DriverEvaluator, EvaluatorError, Timing
from warpwise.analysis.schedule.harness import parse_harness

np = pytest.importorskip("numpy")
from fake_driver import FakeDriver  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
STENCIL = ROOT / "examples/stencil/stencil.sm_90.cubin"
N = 64

HARNESS = parse_harness(
    {
        "grid": [1],
        "block": [64],
        "args": [
            {"name": "x", "buffer": {"dtype": "float32", "count": N, "init": {"dist": "uniform", "low": 0, "high": 1}}},
            {"name": "y", "buffer": {"dtype": "float32", "count": N, "output": True, "init": {"dist": "zeros"}}},
            {"name": "n", "scalar": {"dtype": "int32", "value": N}},
        ],
    }
)


def _double(drv: FakeDriver, image: bytes, params: int, wrong: bytes | None) -> None:
    """y = 2x, except that the image ``wrong`` gets y[5] off by one."""
    xp, yp, n = drv._args(params, "QQi")
    bx, ox = drv._buf(xp)
    by, oy = drv._buf(yp)
    xs = struct.unpack_from(f"<{n}f", bx, ox)
    ys = [2 * v for v in xs]
    if wrong is not None and image == wrong:
        ys[5] += 1.0
    struct.pack_into(f"<{n}f", by, oy, *ys)


def _make(wrong: bytes | None = None) -> tuple[FakeDriver, DriverEvaluator]:
    data = STENCIL.read_bytes()
    drv = FakeDriver(len(data), {"k": lambda d, img, p: _double(d, img, p, wrong)})
    return drv, DriverEvaluator(HARNESS, "k", driver=drv)


def test_identical_cubins_pass_and_launch_order_is_fill_ref_fill_candidate() -> None:
    data = STENCIL.read_bytes()
    drv, ev = _make()
    res = ev.test(data, data, samples=3, seed=1)
    assert res.passed and res.samples == 3
    # per sample: two fills, reference, two fills, candidate, one compare (one output)
    assert drv.launches[:7] == ["ww_fill", "ww_fill", "k", "ww_fill", "ww_fill", "k", "ww_compare"]
    assert drv.launches.count("ww_compare") == 3


def test_a_wrong_candidate_is_rejected() -> None:
    data = STENCIL.read_bytes()
    bad = bytearray(data)
    bad[-1] ^= 0xFF  # another image of the same size
    _, ev = _make(wrong=bytes(bad))
    res = ev.test(bytes(bad), data, samples=4, seed=1)
    assert not res.passed and res.failed == 4
    assert ev.test(data, data, samples=2, seed=1).passed


def test_scalar_argument_reaches_the_kernel_and_timing_summarises_events() -> None:
    drv, ev = _make()
    seen = []
    drv.kernels["k"] = lambda d, img, p: seen.append(d._args(p, "QQi")[2])
    t = ev.time(STENCIL.read_bytes(), warmup=2, repeats=5)
    assert seen == [N] * 7
    assert t.median_ms == 0.5 and t.repeats == 5


def test_timing_summary_quartiles() -> None:
    t = Timing.of([1.0, 2.0, 3.0, 4.0, 100.0])
    assert t.median_ms == 3.0 and t.min_ms == 1.0 and t.max_ms == 100.0
    assert t.q1_ms == 1.5 and t.q3_ms == 52.0


def test_missing_driver_library_is_a_clear_error() -> None:
    class NoDriver:
        def cuInit(self, f: int) -> None:
            raise OSError("libcuda.so.1 not found")

    with pytest.raises(EvaluatorError, match="no CUDA driver"):
        DriverEvaluator(HARNESS, "k", driver=NoDriver())


def _gpu() -> bool:
    try:
        from cuda.bindings import driver as cu

        return int(cu.cuInit(0)[0]) == 0 and int(cu.cuDeviceGetCount()[1]) > 0
    except Exception:
        return False


@pytest.mark.gpu
@pytest.mark.skipif(not _gpu(), reason="needs an NVIDIA GPU")
def test_real_gpu_stencil_original_matches_itself() -> None:
    h = parse_harness(
        {
            "grid": [8, 64],
            "block": [128, 2],
            "args": [
                {"name": "in", "buffer": {"dtype": "float32", "count": 1024 * 128}},
                {"name": "out", "buffer": {"dtype": "float32", "count": 1024 * 128, "output": True}},
                {"name": "nx", "scalar": {"dtype": "int32", "value": 1024}},
                {"name": "ny", "scalar": {"dtype": "int32", "value": 128}},
            ],
        }
    )
    ev = DriverEvaluator(h, "_Z9blur_rowsPKfPfii")
    try:
        data = STENCIL.read_bytes()
        assert ev.test(data, data, 4, 0).passed
        assert ev.time(data, 2, 5).median_ms > 0
    finally:
        ev.close()


def test_fake_driver_reads_host_copies() -> None:
    # the evaluator hands the driver an address of a host copy of the image: check it is readable
    _, ev = _make()
    addr = ev._image(b"\x7fELF" + b"x" * 12)
    assert ctypes.string_at(addr, 4) == b"\x7fELF"
