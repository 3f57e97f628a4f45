"""GPU evaluator of schedules through the CUDA driver API (cuda-python's ``cuda.bindings.driver``).

Loads a cubin from memory (cuModuleLoadData), launches the kernel with the harness's arguments
(cuLaunchKernel), times it with CUDA events after warm-up (SIP §3.3 "Execution on GPUs": warm up, then
measure), and tests a candidate against the original on seeded random inputs generated and compared
on the device (:mod:`.devkernels`, SIP §4.2 probabilistic testing). Needs cuda-python and numpy,
imported lazily so the rest of :mod:`warpwise.analysis.schedule` works without them.

The :class:`Evaluator` protocol is what :mod:`.tune` uses; :class:`DryRunEvaluator` implements it
without a GPU (energy = a deterministic function of the cubin's bytes) for rehearsing scripts.
"""

from __future__ import annotations

import hashlib
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from .devkernels import COMPARE_MODES, DISTS, DTYPES, PTX
from .harness import Arg, Harness

# Errors after which the CUDA context is unusable (CUDA driver API docs, CUresult).
STICKY_ERRORS = frozenset(
    {
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        "CUDA_ERROR_LAUNCH_FAILED",
        "CUDA_ERROR_ILLEGAL_INSTRUCTION",
        "CUDA_ERROR_MISALIGNED_ADDRESS",
        "CUDA_ERROR_INVALID_PC",
        "CUDA_ERROR_HARDWARE_STACK_ERROR",
        "CUDA_ERROR_INVALID_ADDRESS_SPACE",
        "CUDA_ERROR_LAUNCH_TIMEOUT",
        "CUDA_ERROR_ECC_UNCORRECTABLE",
    }
)
_CHECK_EVERY = 256  # test samples between host synchronisations


class EvaluatorError(RuntimeError):
    """A driver call failed. ``sticky``: the context is lost (the evaluator must be rebuilt)."""

    def __init__(self, message: str, sticky: bool = False) -> None:
        super().__init__(message)
        self.sticky = sticky


@dataclass(frozen=True)
class Timing:
    """Kernel durations (ms, CUDA events) of ``repeats`` launches after warm-up: median, quartiles, range."""

    median_ms: float
    q1_ms: float
    q3_ms: float
    min_ms: float
    max_ms: float
    repeats: int

    @staticmethod
    def of(samples: Sequence[float]) -> Timing:
        """Summary of per-launch durations (ms).

        Raises:
            ValueError: no samples.
        """
        if not samples:
            raise ValueError("no timing samples")
        s = sorted(samples)
        if len(s) >= 4:
            q = statistics.quantiles(s, n=4)
            q1, q3 = q[0], q[2]
        else:
            q1, q3 = s[0], s[-1]
        return Timing(statistics.median(s), q1, q3, s[0], s[-1], len(s))

    def to_json(self) -> dict[str, float | int]:
        """Plain dict for the manifest."""
        return asdict(self)


@dataclass(frozen=True)
class TestResult:
    """Outcome of probabilistic testing: ``samples`` random input sets tried, ``failed`` those whose
    outputs differed (counted per batch of up to 256 samples), ``error`` a launch error, if any."""

    __test__ = False  # not a pytest class

    samples: int
    failed: int
    error: str = ""

    @property
    def passed(self) -> bool:
        """No mismatch and no error."""
        return self.failed == 0 and not self.error


class Evaluator(Protocol):
    """What the tuner needs from a GPU."""

    def time(self, cubin: bytes, warmup: int, repeats: int) -> Timing:
        """Durations of the kernel in ``cubin`` on fixed random inputs."""
        ...

    def time_pair(self, a: bytes, b: bytes, rounds: int, repeats: int, warmup: int) -> tuple[Timing, Timing]:
        """``a`` and ``b`` measured side by side (alternating rounds)."""
        ...

    def test(self, candidate: bytes, reference: bytes, samples: int, seed: int) -> TestResult:
        """Compare outputs of ``candidate`` and ``reference`` on ``samples`` fresh random input sets."""
        ...

    def describe(self) -> dict[str, str]:
        """Device and driver facts for the manifest."""
        ...

    def close(self) -> None:
        """Release the device resources."""
        ...


class DryRunEvaluator:
    """Evaluator without a GPU: time = base × (1 + a hash of the kernel words in [-5 %, +5 %)).

    For rehearsing the tuning pipeline (bench dry runs, tests of the search); every test passes unless
    the cubin's bytes are in ``failing``.
    """

    def __init__(self, base_ms: float = 1.0, failing: frozenset[bytes] = frozenset()) -> None:
        self.base_ms = base_ms
        self.failing = failing
        self.launches = 0

    def _ms(self, cubin: bytes) -> float:
        h = int.from_bytes(hashlib.sha256(cubin).digest()[:8], "little") / 2**64
        return self.base_ms * (0.95 + 0.1 * h)

    def time(self, cubin: bytes, warmup: int, repeats: int) -> Timing:
        """A constant timing per cubin (see class docstring)."""
        self.launches += warmup + repeats
        return Timing.of([self._ms(cubin)] * repeats)

    def time_pair(self, a: bytes, b: bytes, rounds: int, repeats: int, warmup: int) -> tuple[Timing, Timing]:
        """Both timings."""
        return self.time(a, warmup, rounds * repeats), self.time(b, warmup, rounds * repeats)

    def test(self, candidate: bytes, reference: bytes, samples: int, seed: int) -> TestResult:
        """Passes unless ``candidate`` is listed in ``failing``."""
        self.launches += 2 * samples
        return TestResult(samples, samples if candidate in self.failing else 0)

    def describe(self) -> dict[str, str]:
        """Marks the run as a dry run."""
        return {"device": "dry-run (no GPU)", "driver": "none"}

    def close(self) -> None:
        """Nothing to release."""


class DriverEvaluator:
    """Evaluator on device ``device`` through the CUDA driver API.

    Allocates every harness buffer once, plus a reference copy of each output. ``kernel`` is the
    mangled function name inside the cubins to evaluate; ``driver`` replaces ``cuda.bindings.driver``
    (tests pass a CPU stand-in).

    Raises (constructor):
        EvaluatorError: cuda-python/numpy missing, no device, or a driver call failed.
    """

    def __init__(self, harness: Harness, kernel: str, device: int = 0, driver: Any = None) -> None:
        try:
            import numpy as np

            if driver is None:
                try:
                    from cuda.bindings import driver as cuda_driver
                except ImportError:  # cuda-python < 12.6 names the module cuda.cuda
                    from cuda import cuda as cuda_driver
                driver = cuda_driver
        except ImportError as e:  # depends on the machine
            raise EvaluatorError(
                f"the GPU evaluator needs cuda-python and numpy ({e}): install warpwise's tune extra, "
                "pip install -e '.[tune]' in a checkout (pip install 'warpwise[tune]' otherwise)"
            ) from e
        cu = driver
        self.np: Any = np
        self.cu: Any = cu
        self.h = harness
        self.kernel = kernel.encode()
        self._modules: list[Any] = []
        try:
            init = cu.cuInit(0)
        except Exception as e:  # cuda-python raises when libcuda.so is absent
            raise EvaluatorError(f"no CUDA driver: {e}") from e
        self._check(init, "cuInit")
        self.dev = self._check(cu.cuDeviceGet(device), "cuDeviceGet")
        self.ctx = self._check(cu.cuDevicePrimaryCtxRetain(self.dev), "cuDevicePrimaryCtxRetain")
        self._check(cu.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")
        self.stream = self._check(cu.cuStreamCreate(0), "cuStreamCreate")
        self.ev0 = self._check(cu.cuEventCreate(0), "cuEventCreate")
        self.ev1 = self._check(cu.cuEventCreate(0), "cuEventCreate")
        util = self._check(cu.cuModuleLoadData(self._image(PTX.encode() + b"\0")), "cuModuleLoadData(PTX)")
        self._util = util
        self.f_fill = self._check(cu.cuModuleGetFunction(util, b"ww_fill"), "cuModuleGetFunction(ww_fill)")
        self.f_cmp = self._check(cu.cuModuleGetFunction(util, b"ww_compare"), "cuModuleGetFunction(ww_compare)")
        self.bufs: dict[str, int] = {}
        self.refs: dict[str, int] = {}
        for a in harness.args:
            if a.kind == "buffer":
                self.bufs[a.name] = int(self._check(self.cu.cuMemAlloc(a.nbytes), f"cuMemAlloc({a.name})"))
                if a.output:
                    self.refs[a.name] = int(self._check(self.cu.cuMemAlloc(a.nbytes), "cuMemAlloc(ref)"))
        self.counter = int(self._check(cu.cuMemAlloc(8), "cuMemAlloc(counter)"))
        self._params = self._pack_args()
        self._fixed_seed = 0x5EED

    # ---- driver plumbing -------------------------------------------------------------------------
    def _check(self, res: Any, what: str) -> Any:
        err, *rest = res if isinstance(res, tuple) else (res,)
        if int(err) != 0:
            name = getattr(err, "name", None)  # CUresult enum member: no driver call after a sticky error
            if not isinstance(name, str):
                raw = self.cu.cuGetErrorName(err)[1]
                name = raw.decode() if isinstance(raw, bytes) else str(raw)
            raise EvaluatorError(f"{what} failed: {name}", sticky=name in STICKY_ERRORS)
        if not rest:
            return None
        return rest[0] if len(rest) == 1 else tuple(rest)

    def _image(self, data: bytes) -> int:
        """Address of a host copy of ``data`` that stays alive until the next call (the driver copies it)."""
        self._image_buf = self.np.frombuffer(data, dtype=self.np.uint8).copy()
        return int(self._image_buf.ctypes.data)

    def _pack_args(self) -> Any:
        np = self.np
        holders = []
        for a in self.h.args:
            if a.kind == "buffer":
                holders.append(np.array([self.bufs[a.name]], dtype=np.uint64))
            elif a.kind == "null":
                holders.append(np.array([0], dtype=np.uint64))
            else:
                holders.append(np.array([a.value], dtype=np.dtype(a.dtype)))
        self._holders = holders
        return np.array([x.ctypes.data for x in holders], dtype=np.uint64)

    def _launch(self, fn: Any, grid: Sequence[int], block: Sequence[int], shared: int, params: Any) -> None:
        self._check(
            self.cu.cuLaunchKernel(fn, *grid, *block, shared, self.stream, params.ctypes.data, 0), "cuLaunchKernel"
        )

    def load(self, cubin: bytes) -> Any:
        """Load ``cubin`` and return the harness kernel's CUfunction (module kept until close()).

        Raises:
            EvaluatorError: the driver rejected the image or has no such function.
        """
        mod = self._check(self.cu.cuModuleLoadData(self._image(cubin)), "cuModuleLoadData")
        self._modules.append(mod)
        fn = self._check(self.cu.cuModuleGetFunction(mod, self.kernel), "cuModuleGetFunction")
        if self.h.shared_bytes > 48 * 1024:
            attr = self.cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            self._check(self.cu.cuFuncSetAttribute(fn, attr, self.h.shared_bytes), "cuFuncSetAttribute")
        return fn

    def _unload_all(self) -> None:
        for m in self._modules:
            self.cu.cuModuleUnload(m)
        self._modules.clear()

    def _fill(self, seed: int) -> None:
        np = self.np
        for k, a in enumerate(self.h.args):
            if a.kind != "buffer":
                continue
            self._fill_one(self.bufs[a.name], a, (seed * 1000003 + k) & (2**64 - 1), np)

    def _fill_one(self, ptr: int, a: Arg, seed: int, np: Any) -> None:
        vals = [
            np.array([ptr], dtype=np.uint64),
            np.array([a.count], dtype=np.uint64),
            np.array([seed], dtype=np.uint64),
            np.array([DTYPES[a.dtype]], dtype=np.int32),
            np.array([DISTS[a.init.dist]], dtype=np.int32),
            np.array([a.init.a], dtype=np.float64),
            np.array([a.init.b], dtype=np.float64),
        ]
        params = np.array([v.ctypes.data for v in vals], dtype=np.uint64)
        blocks = min(4096, (a.count + 255) // 256)
        self._launch(self.f_fill, (blocks, 1, 1), (256, 1, 1), 0, params)

    def _run(self, fn: Any) -> None:
        self._launch(fn, self.h.grid, self.h.block, self.h.shared_bytes, self._params)

    def _sync(self) -> None:
        self._check(self.cu.cuStreamSynchronize(self.stream), "kernel execution")

    def _elapsed(self) -> float:
        cu = self.cu
        f = getattr(cu, "cuEventElapsedTime", None) or cu.cuEventElapsedTime_v2
        return float(self._check(f(self.ev0, self.ev1), "cuEventElapsedTime"))

    # ---- Evaluator -------------------------------------------------------------------------------
    def _durations(self, fn: Any, warmup: int, repeats: int) -> list[float]:
        for _ in range(warmup):
            self._run(fn)
        out = []
        for _ in range(repeats):
            self._check(self.cu.cuEventRecord(self.ev0, self.stream), "cuEventRecord")
            self._run(fn)
            self._check(self.cu.cuEventRecord(self.ev1, self.stream), "cuEventRecord")
            self._check(self.cu.cuEventSynchronize(self.ev1), "kernel execution")
            out.append(self._elapsed())
        return out

    def time(self, cubin: bytes, warmup: int, repeats: int) -> Timing:
        """Median etc. of ``repeats`` event-timed launches after ``warmup`` launches (ms).

        Raises:
            EvaluatorError: load/launch failed (``sticky`` when the context is lost).
        """
        try:
            fn = self.load(cubin)
            self._fill(self._fixed_seed)
            return Timing.of(self._durations(fn, warmup, repeats))
        finally:
            self._unload_all()

    def time_pair(self, a: bytes, b: bytes, rounds: int, repeats: int, warmup: int) -> tuple[Timing, Timing]:
        """``a`` and ``b`` alternately, ``rounds`` × ``repeats`` launches each, same inputs (ms)."""
        try:
            fa, fb = self.load(a), self.load(b)
            self._fill(self._fixed_seed)
            self._durations(fa, warmup, 0)
            self._durations(fb, warmup, 0)
            da: list[float] = []
            db: list[float] = []
            for r in range(rounds):
                first, second = (fa, fb) if r % 2 == 0 else (fb, fa)
                x = self._durations(first, 0, repeats)
                y = self._durations(second, 0, repeats)
                (da, db)[0 if first is fa else 1].extend(x)
                (da, db)[1 if first is fa else 0].extend(y)
            return Timing.of(da), Timing.of(db)
        finally:
            self._unload_all()

    def test(self, candidate: bytes, reference: bytes, samples: int, seed: int) -> TestResult:
        """Probabilistic test (SIP §4.2): for each sample, fill inputs from a fresh seed, run the
        reference, keep its outputs, refill with the same seed, run the candidate, count differing
        output elements on the device (bitwise, or within the output's atol/rtol).

        Returns a failed result on a launch error instead of raising, unless the context is lost.

        Raises:
            EvaluatorError: sticky error (the caller must rebuild the evaluator).
        """
        np, cu = self.np, self.cu
        failed = 0
        try:
            fr, fc = self.load(reference), self.load(candidate)
            host = np.zeros(1, dtype=np.uint64)
            done = 0
            while done < samples:
                batch = min(_CHECK_EVERY, samples - done)
                self._check(cu.cuMemsetD8Async(self.counter, 0, 8, self.stream), "cuMemsetD8Async")
                for s in range(done, done + batch):
                    sd = (seed * 0x9E3779B1 + s + 1) & (2**63 - 1)
                    self._fill(sd)
                    self._run(fr)
                    for a in self.h.outputs:
                        self._check(
                            cu.cuMemcpyDtoDAsync(self.refs[a.name], self.bufs[a.name], a.nbytes, self.stream),
                            "cuMemcpyDtoDAsync",
                        )
                    self._fill(sd)
                    self._run(fc)
                    for a in self.h.outputs:
                        self._compare(a)
                self._check(cu.cuMemcpyDtoHAsync(host.ctypes.data, self.counter, 8, self.stream), "cuMemcpyDtoH")
                self._sync()
                done += batch
                if int(host[0]):
                    failed += batch
                    break
            return TestResult(done, failed)
        except EvaluatorError as e:
            if e.sticky:
                raise
            return TestResult(0, 0, str(e))
        finally:
            self._unload_all()

    def _compare(self, a: Arg) -> None:
        np = self.np
        tol = a.atol is not None
        mode = COMPARE_MODES[a.dtype] if tol else 0
        n = a.count if tol else a.nbytes
        vals = [
            np.array([self.refs[a.name]], dtype=np.uint64),
            np.array([self.bufs[a.name]], dtype=np.uint64),
            np.array([n], dtype=np.uint64),
            np.array([mode], dtype=np.int32),
            np.array([a.atol or 0.0], dtype=np.float64),
            np.array([a.rtol or 0.0], dtype=np.float64),
            np.array([self.counter], dtype=np.uint64),
        ]
        params = np.array([v.ctypes.data for v in vals], dtype=np.uint64)
        self._launch(self.f_cmp, (min(4096, (n + 255) // 256), 1, 1), (256, 1, 1), 0, params)

    def describe(self) -> dict[str, str]:
        """GPU name, driver version, cuda-python version."""
        cu = self.cu
        name = self._check(cu.cuDeviceGetName(256, self.dev), "cuDeviceGetName")
        drv = self._check(cu.cuDriverGetVersion(), "cuDriverGetVersion")
        try:
            from importlib.metadata import version

            cp = version("cuda-python")
        except Exception:
            cp = "unknown"
        return {
            "device": bytes(name).split(b"\0", 1)[0].decode(errors="replace"),
            "driver_api_version": str(drv),
            "cuda_python": cp,
        }

    def close(self) -> None:
        """Free buffers and release the primary context (best effort; nothing after a context reset)."""
        if getattr(self, "_closed", False):
            return
        self._closed = True
        cu = self.cu
        self._unload_all()
        for p in [*self.bufs.values(), *self.refs.values(), self.counter]:
            cu.cuMemFree(p)
        cu.cuModuleUnload(self._util)
        cu.cuDevicePrimaryCtxRelease(self.dev)

    def reset_after_sticky_error(self) -> None:
        """Drop the lost primary context so a new evaluator can start (not a device reset)."""
        self._closed = True
        self.cu.cuDevicePrimaryCtxRelease(self.dev)
        self.cu.cuDevicePrimaryCtxReset(self.dev)
