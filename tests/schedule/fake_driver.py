"""A CPU stand-in for ``cuda.bindings.driver`` (the true external boundary of the GPU evaluator).

Memory is host bytearrays keyed by fake device pointers; ``cuLaunchKernel`` reads the kernel
parameter array exactly as the driver would (an array of pointers to argument values) and runs a
Python version of the called function: ``ww_fill``/``ww_compare`` (the device kernels of
:mod:`warpwise.analysis.schedule.devkernels`) and ``kernels[name]`` supplied by the test, which gets
the loaded image bytes so a test can make one cubin compute something else.
"""

from __future__ import annotations

import ctypes
import hashlib
import random
import struct
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any


class CUresult(int):
    pass


OK = CUresult(0)


class FakeDriver:
    """Module-like object with the driver functions the evaluator calls."""

    def __init__(self, image_size: int, kernels: dict[str, Callable[..., None]], ms: float = 0.5) -> None:
        self.mem: dict[int, bytearray] = {}
        self.next = 0x10000
        self.image_size = image_size
        self.kernels = kernels
        self.modules: dict[int, bytes] = {}
        self.loaded = 0
        self.ms = ms
        self.launches: list[str] = []
        self.CUfunction_attribute = SimpleNamespace(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES=8)

    # memory
    def _buf(self, ptr: int) -> tuple[bytearray, int]:
        for base, b in self.mem.items():
            if base <= ptr < base + len(b):
                return b, ptr - base
        raise KeyError(hex(ptr))

    def cuMemAlloc(self, n: int) -> tuple[CUresult, int]:
        p = self.next
        self.mem[p] = bytearray(n)
        self.next += n + 0x1000
        return OK, p

    def cuMemFree(self, p: int) -> tuple[CUresult]:
        self.mem.pop(int(p), None)
        return (OK,)

    def cuMemsetD8Async(self, p: int, v: int, n: int, s: Any) -> tuple[CUresult]:
        b, o = self._buf(int(p))
        b[o : o + n] = bytes([v]) * n
        return (OK,)

    def cuMemcpyDtoDAsync(self, d: int, s: int, n: int, st: Any) -> tuple[CUresult]:
        bd, od = self._buf(int(d))
        bs, os_ = self._buf(int(s))
        bd[od : od + n] = bs[os_ : os_ + n]
        return (OK,)

    def cuMemcpyDtoHAsync(self, host: int, s: int, n: int, st: Any) -> tuple[CUresult]:
        bs, os_ = self._buf(int(s))
        ctypes.memmove(host, bytes(bs[os_ : os_ + n]), n)
        return (OK,)

    # context, streams, events
    def cuInit(self, f: int) -> tuple[CUresult]:
        return (OK,)

    def cuDeviceGet(self, i: int) -> tuple[CUresult, int]:
        return OK, i

    def cuDevicePrimaryCtxRetain(self, d: int) -> tuple[CUresult, str]:
        return OK, "ctx"

    def cuDevicePrimaryCtxRelease(self, d: int) -> tuple[CUresult]:
        return (OK,)

    def cuDevicePrimaryCtxReset(self, d: int) -> tuple[CUresult]:
        return (OK,)

    def cuCtxSetCurrent(self, c: Any) -> tuple[CUresult]:
        return (OK,)

    def cuStreamCreate(self, f: int) -> tuple[CUresult, str]:
        return OK, "stream"

    def cuStreamSynchronize(self, s: Any) -> tuple[CUresult]:
        return (OK,)

    def cuEventCreate(self, f: int) -> tuple[CUresult, object]:
        return OK, object()

    def cuEventRecord(self, e: Any, s: Any) -> tuple[CUresult]:
        return (OK,)

    def cuEventSynchronize(self, e: Any) -> tuple[CUresult]:
        return (OK,)

    def cuEventElapsedTime(self, a: Any, b: Any) -> tuple[CUresult, float]:
        return OK, self.ms

    def cuGetErrorName(self, e: Any) -> tuple[CUresult, bytes]:
        return OK, b"CUDA_ERROR_FAKE"

    def cuDeviceGetName(self, n: int, d: int) -> tuple[CUresult, bytes]:
        return OK, b"Fake GPU\0"

    def cuDriverGetVersion(self) -> tuple[CUresult, int]:
        return OK, 13000

    # modules and launches
    def cuModuleLoadData(self, addr: int) -> tuple[CUresult, int]:
        head = ctypes.string_at(addr, 4)
        image = ctypes.string_at(addr, self.image_size) if head == b"\x7fELF" else b"PTX"
        self.loaded += 1
        self.modules[self.loaded] = image
        return OK, self.loaded

    def cuModuleUnload(self, m: int) -> tuple[CUresult]:
        return (OK,)

    def cuModuleGetFunction(self, m: int, name: bytes) -> tuple[CUresult, tuple[str, bytes]]:
        return OK, (name.decode(), self.modules[m])

    def cuFuncSetAttribute(self, f: Any, a: Any, v: int) -> tuple[CUresult]:
        return (OK,)

    def _args(self, params: int, fmt: str) -> list[Any]:
        out = []
        for k, code in enumerate(fmt):
            addr = ctypes.c_uint64.from_address(params + 8 * k).value
            size = struct.calcsize(code)
            out.append(struct.unpack("<" + code, ctypes.string_at(addr, size))[0])
        return out

    def cuLaunchKernel(
        self,
        fn: tuple[str, bytes],
        gx: int,
        gy: int,
        gz: int,
        bx: int,
        by: int,
        bz: int,
        shared: int,
        stream: Any,
        params: int,
        extra: int,
    ) -> tuple[CUresult]:
        name, image = fn
        self.launches.append(name)
        if name == "ww_fill":
            p, n, seed, dtype, dist, a, b = self._args(params, "QQQiidd")
            buf, off = self._buf(p)
            rng = random.Random(seed)
            assert dtype == 0, "fake fills float32 only"
            vals = [a + (b - a) * rng.random() if dist == 0 else a for _ in range(n)]
            buf[off : off + 4 * n] = struct.pack(f"<{n}f", *vals)
        elif name == "ww_compare":
            ra, rb, n, mode, _atol, _rtol, counter = self._args(params, "QQQiddQ")
            ba, oa = self._buf(ra)
            bb, ob = self._buf(rb)
            assert mode == 0
            bad = sum(1 for i in range(n) if ba[oa + i] != bb[ob + i])
            bc, oc = self._buf(counter)
            cur = struct.unpack_from("<Q", bc, oc)[0]
            struct.pack_into("<Q", bc, oc, cur + bad)
        else:
            self.kernels[name](self, image, params)
        return (OK,)

    def sha(self, image: bytes) -> str:
        return hashlib.sha256(image).hexdigest()
