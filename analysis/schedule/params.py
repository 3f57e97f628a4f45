"""A kernel's parameter table from its cubin, and the check of a harness against it.

ptxas lists every parameter of a kernel (used or not) in ``.nv.info.<kernel>`` as an
EIATTR_KPARAM_INFO (0x17) EIFMT_SVAL record with a 12-byte payload: u32 index, u16 ordinal, u16
offset (bytes into the parameter constant bank), u32 flags whose bits 18–31 hold the size in bytes
(bits 0–7: pointee log-alignment, 8–11: space, 12–16: cbank). The layout was checked against
``cuobjdump -elf``'s decoded "Ordinal / Offset / Size" of the example cubins (stencil, gather, the
tiled fixture) and of an nvcc 13 kernel with unused, struct, ``char`` and ``double`` parameters.
A kernel without parameters has no such record.

The check compares what the cubin can tell: the parameter count and each parameter's byte size
(a buffer or null pointer is 8 bytes; scalars as their dtype). It cannot see signedness, int versus
float of the same size, pointee types, or two same-size arguments given in swapped order.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from .harness import DTYPE_BYTES, Arg, Harness, HarnessError
from .patch import EIFMT_SVAL, PatchError, nv_info_records
from .sass import ScheduleError, kernel_section_name, open_elf

EIATTR_KPARAM_INFO = 0x17
POINTER_BYTES = 8  # 64-bit device pointers (every Volta+ cubin warpwise tunes)


@dataclass(frozen=True)
class KernelParam:
    """One kernel parameter: ``ordinal`` (0-based position), ``offset`` and ``size`` in bytes."""

    ordinal: int
    offset: int
    size: int


def kernel_params(data: bytes, kernel: str, path: str = "<memory>") -> tuple[str, list[KernelParam]]:
    """(mangled kernel name, its parameters in ordinal order) from the cubin bytes ``data``.

    ``kernel`` is the mangled name or a unique part of it (as for ``--kernel``).

    Raises:
        ScheduleError: not a cubin, no such kernel (or several match), no ``.nv.info.<kernel>``
            section, or ordinals that are not 0..n-1.
        PatchError: malformed ``.nv.info`` records or a KPARAM_INFO payload shorter than 12 bytes.
    """
    elf = open_elf(data, path)
    section = kernel_section_name(elf, kernel, path)
    mangled = section[len(".text.") :]
    info = elf.get_section_by_name(".nv.info." + mangled)
    if info is None:
        raise ScheduleError(f"{path}: {mangled} has no .nv.info section, so its parameters cannot be checked")
    raw = info.data()
    params: list[KernelParam] = []
    for pos, fmt, attr, size in nv_info_records(raw, info.name, path):
        if attr != EIATTR_KPARAM_INFO or fmt != EIFMT_SVAL:
            continue
        if size < 12:
            raise PatchError(f"{path}: {info.name}: EIATTR_KPARAM_INFO at byte {pos} has {size} bytes, expected 12")
        _index, ordinal, offset, flags = struct.unpack_from("<IHHI", raw, pos + 4)
        params.append(KernelParam(ordinal, offset, (flags >> 18) & 0x3FFF))
    params.sort(key=lambda p: p.ordinal)
    if [p.ordinal for p in params] != list(range(len(params))):
        raise ScheduleError(f"{path}: {info.name} lists parameter ordinals {[p.ordinal for p in params]}")
    return mangled, params


def arg_bytes(a: Arg) -> int:
    """Bytes the harness argument ``a`` passes: 8 for a buffer or null pointer, the dtype's size for a scalar."""
    return POINTER_BYTES if a.kind in ("buffer", "null") else DTYPE_BYTES[a.dtype]


def _describe(a: Arg) -> str:
    if a.kind == "buffer":
        return f"a {a.dtype} buffer (pointer, 8 bytes)"
    if a.kind == "null":
        return "a null pointer (8 bytes)"
    return f"an {a.dtype} scalar ({DTYPE_BYTES[a.dtype]} bytes)"


def check_harness(
    harness: Harness, data: bytes, kernel: str, path: str = "<memory>", harness_path: str = "<harness>"
) -> str:
    """Check ``harness`` against kernel ``kernel`` of cubin bytes ``data``; return the mangled name.

    Refused: a harness ``kernel`` field that names another kernel (or none in the cubin), a different
    number of arguments than the kernel has parameters, or an argument whose byte size differs from
    its parameter's (e.g. an int64 scalar for an ``int``, a buffer for a ``float``).

    Raises:
        HarnessError: the harness does not fit the kernel (message names both files and every mismatch).
        ScheduleError/PatchError: the cubin or its parameter table cannot be read (see :func:`kernel_params`).
    """
    mangled, params = kernel_params(data, kernel, path)
    if harness.kernel and harness.kernel != mangled:
        try:
            named = kernel_section_name(open_elf(data, path), harness.kernel, path)[len(".text.") :]
        except ScheduleError as e:
            raise HarnessError(
                f'{harness_path}: "kernel" is {harness.kernel!r}, which names no single kernel of {path} ({e})'
            ) from e
        if named != mangled:
            raise HarnessError(
                f'{harness_path}: the harness is for kernel {named} ("kernel": {harness.kernel!r}), '
                f'but {mangled} is being tuned; use that kernel\'s harness or fix "kernel"'
            )
    sizes = ", ".join(str(p.size) for p in params) or "none"
    if len(harness.args) != len(params):
        raise HarnessError(
            f"{harness_path}: {len(harness.args)} arguments, but {mangled} in {path} takes {len(params)} "
            f"parameters (sizes in bytes: {sizes}); list one argument per parameter, in order"
        )
    wrong = [
        f"argument {k} {a.name!r} is {_describe(a)}, parameter {k} is {p.size} bytes"
        for k, (a, p) in enumerate(zip(harness.args, params, strict=True))
        if arg_bytes(a) != p.size
    ]
    if wrong:
        raise HarnessError(
            f"{harness_path}: arguments do not match the parameters of {mangled} in {path} "
            f"(sizes in bytes: {sizes}): " + "; ".join(wrong)
        )
    return mangled
