"""Harness description: how to launch a kernel with random inputs and which buffers are its outputs.

JSON (one object)::

    {
      "kernel": "spmv_ell",                # optional: default for --kernel
      "grid": [4096, 1, 1], "block": [256, 1, 1], "shared_bytes": 0,
      "args": [
        {"name": "cols", "buffer": {"dtype": "int32", "count": 33554432,
                                     "init": {"dist": "randint", "low": 0, "high": 16777216}}},
        {"name": "y", "buffer": {"dtype": "float32", "count": 1048576, "output": true,
                                  "tolerance": {"atol": 0, "rtol": 0}}},
        {"name": "rows", "scalar": {"dtype": "int32", "value": 1048576}},
        {"name": "scratch", "null_pointer": true}
      ]
    }

Buffers: ``dtype`` one of :data:`.devkernels.DTYPES`; ``count`` elements; ``init`` a distribution
(``uniform`` low/high, ``normal`` mean/std, ``randint`` low/high (high exclusive), ``constant``
value, ``zeros``); ``output: true`` marks a buffer compared against the original kernel's (any number).
Without ``tolerance`` outputs must match bit for bit (reordering independent instructions does not
change arithmetic); floating outputs may set ``atol``/``rtol``. Scalars: ``int32``, ``uint32``,
``int64``, ``uint64``, ``float32``, ``float64``. ``null_pointer`` passes a 0 pointer (e.g. Triton's
scratch parameters). Inputs are refilled from a fresh seed before every test launch, so in-place
kernels are tested correctly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from warpwise.analysis.bounded import InputFileError, read_bytes

from .devkernels import DTYPES

SCALAR_DTYPES = frozenset({"int32", "uint32", "int64", "uint64", "float32", "float64"})
DTYPE_BYTES = {
    "float32": 4,
    "float16": 2,
    "bfloat16": 2,
    "int32": 4,
    "int64": 8,
    "uint8": 1,
    "int8": 1,
    "float64": 8,
    "uint32": 4,
    "uint64": 8,
}


class HarnessError(ValueError):
    """The harness description is invalid; the message names the file and the argument."""


@dataclass(frozen=True)
class Init:
    """A distribution: ``dist`` in uniform/normal/randint/constant, parameters ``a``, ``b``."""

    dist: str = "uniform"
    a: float = 0.0
    b: float = 1.0


@dataclass(frozen=True)
class Arg:
    """One kernel argument: ``kind`` is ``buffer``, ``scalar`` or ``null``.

    Buffers: ``dtype``, ``count`` (elements), ``init``, ``output``, ``atol``/``rtol`` (None = bitwise).
    Scalars: ``dtype`` and ``value``.
    """

    name: str
    kind: str
    dtype: str = "uint64"
    count: int = 0
    init: Init = field(default_factory=Init)
    output: bool = False
    atol: float | None = None
    rtol: float | None = None
    value: float = 0

    @property
    def nbytes(self) -> int:
        """Size of a buffer in bytes."""
        return self.count * DTYPE_BYTES[self.dtype]


@dataclass(frozen=True)
class Harness:
    """Launch configuration (grid/block in CTAs/threads, dynamic shared memory in bytes) and arguments."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int
    args: tuple[Arg, ...]
    kernel: str | None = None

    @property
    def outputs(self) -> list[Arg]:
        """Buffers compared against the original."""
        return [a for a in self.args if a.output]

    def to_json(self) -> dict[str, Any]:
        """The JSON form (round-trips through :func:`parse_harness`)."""
        args: list[dict[str, Any]] = []
        for a in self.args:
            if a.kind == "null":
                args.append({"name": a.name, "null_pointer": True})
            elif a.kind == "scalar":
                args.append({"name": a.name, "scalar": {"dtype": a.dtype, "value": a.value}})
            else:
                init: dict[str, Any] = {"dist": a.init.dist}
                keys = {
                    "uniform": ("low", "high"),
                    "normal": ("mean", "std"),
                    "randint": ("low", "high"),
                    "constant": ("value", None),
                }[a.init.dist]
                init[keys[0]] = a.init.a
                if keys[1]:
                    init[keys[1]] = a.init.b
                buf: dict[str, Any] = {"dtype": a.dtype, "count": a.count, "init": init, "output": a.output}
                if a.atol is not None:
                    buf["tolerance"] = {"atol": a.atol, "rtol": a.rtol or 0.0}
                args.append({"name": a.name, "buffer": buf})
        out: dict[str, Any] = {
            "grid": list(self.grid),
            "block": list(self.block),
            "shared_bytes": self.shared_bytes,
            "args": args,
        }
        if self.kernel:
            out["kernel"] = self.kernel
        return out


def _dim3(v: Any, what: str, where: str) -> tuple[int, int, int]:
    if isinstance(v, int):
        v = [v]
    if not isinstance(v, list) or not 1 <= len(v) <= 3 or not all(isinstance(x, int) and x > 0 for x in v):
        raise HarnessError(f"{where}: {what} must be 1–3 positive integers, got {v!r}")
    x, y, z = [*v, 1, 1][:3]
    return x, y, z


def _init(d: Any, where: str) -> Init:
    if d is None:
        return Init("uniform", 0.0, 1.0)
    if not isinstance(d, dict) or "dist" not in d:
        raise HarnessError(f"{where}: init must be an object with 'dist'")
    dist = d["dist"]
    try:
        if dist == "uniform":
            return Init(dist, float(d.get("low", 0.0)), float(d.get("high", 1.0)))
        if dist == "normal":
            return Init(dist, float(d.get("mean", 0.0)), float(d.get("std", 1.0)))
        if dist == "randint":
            lo, hi = int(d["low"]), int(d["high"])
            if hi <= lo:
                raise HarnessError(f"{where}: randint needs high > low")
            return Init(dist, float(lo), float(hi))
        if dist == "constant":
            return Init(dist, float(d["value"]), 0.0)
        if dist == "zeros":
            return Init("constant", 0.0, 0.0)
    except KeyError as e:
        raise HarnessError(f"{where}: init {dist} needs {e.args[0]!r}") from e
    raise HarnessError(f"{where}: unknown distribution {dist!r} (uniform, normal, randint, constant, zeros)")


def parse_harness(obj: Any, where: str = "<harness>") -> Harness:
    """Validate a decoded harness JSON object.

    Raises:
        HarnessError: missing/invalid fields, unknown dtypes or distributions, no output buffer.
    """
    if not isinstance(obj, dict):
        raise HarnessError(f"{where}: the harness must be a JSON object")
    grid = _dim3(obj.get("grid"), "grid", where)
    block = _dim3(obj.get("block"), "block", where)
    shared = obj.get("shared_bytes", 0)
    if not isinstance(shared, int) or shared < 0:
        raise HarnessError(f"{where}: shared_bytes must be a non-negative integer")
    raw_args = obj.get("args")
    if not isinstance(raw_args, list):
        raise HarnessError(f"{where}: 'args' must be a list")
    args: list[Arg] = []
    for k, a in enumerate(raw_args):
        w = f"{where}: args[{k}]"
        if not isinstance(a, dict):
            raise HarnessError(f"{w} must be an object")
        name = str(a.get("name", f"arg{k}"))
        w = f"{where}: argument {name!r}"
        if a.get("null_pointer"):
            args.append(Arg(name, "null"))
        elif "scalar" in a:
            s = a["scalar"]
            if not isinstance(s, dict) or s.get("dtype") not in SCALAR_DTYPES or "value" not in s:
                raise HarnessError(f"{w}: scalar needs dtype in {sorted(SCALAR_DTYPES)} and a value")
            args.append(Arg(name, "scalar", dtype=s["dtype"], value=s["value"]))
        elif "buffer" in a:
            b = a["buffer"]
            if not isinstance(b, dict) or b.get("dtype") not in DTYPES:
                raise HarnessError(f"{w}: buffer dtype must be one of {sorted(DTYPES)}")
            count = b.get("count")
            if not isinstance(count, int) or count <= 0:
                raise HarnessError(f"{w}: buffer count must be a positive integer")
            tol = b.get("tolerance")
            atol = rtol = None
            if tol is not None:
                if b["dtype"] not in ("float32", "float16", "bfloat16"):
                    raise HarnessError(f"{w}: tolerance is only for float32/float16/bfloat16 outputs")
                atol, rtol = float(tol.get("atol", 0.0)), float(tol.get("rtol", 0.0))
            args.append(
                Arg(
                    name,
                    "buffer",
                    dtype=b["dtype"],
                    count=count,
                    init=_init(b.get("init"), w),
                    output=bool(b.get("output", False)),
                    atol=atol,
                    rtol=rtol,
                )
            )
        else:
            raise HarnessError(f"{w}: needs one of 'buffer', 'scalar', 'null_pointer'")
    if not any(a.output for a in args):
        raise HarnessError(f'{where}: no buffer is marked "output": true, so nothing can be tested')
    kernel = obj.get("kernel")
    return Harness(grid, block, shared, tuple(args), str(kernel) if kernel else None)


def load_harness(path: str | Path) -> Harness:
    """Read and validate a harness JSON file: a regular file within the manifest size limit (16 MiB,
    :mod:`warpwise.analysis.bounded`), so a FIFO, a device or a huge file is refused, never read.

    Raises:
        HarnessError: unreadable, special or oversized file, invalid JSON, or invalid description.
    """
    try:
        data = read_bytes(path, "harness")
    except InputFileError as e:
        raise HarnessError(f"cannot read harness: {e}") from e
    try:
        obj = json.loads(data)
    except ValueError as e:  # JSONDecodeError, or bytes that are not UTF-8/16/32
        raise HarnessError(f"{path}: invalid JSON: {e}") from e
    return parse_harness(obj, str(path))
