"""Cubin / fatbin / executable reading (DESIGN.md "Binary model"): ``load_cubin``, ``load_binary``.

``load_cubin`` and ``load_binary`` are imported on first use (PEP 562 module ``__getattr__``): their module
brings pyelftools (~4 MiB of RSS), and importing ``binary.model`` for the ``Cubin`` type must not cost that in
the ``advise`` process while the report reader runs beside it (docs/benchmarks.md, issue 15 "Sixth pass").
"""

from typing import Any

from .errors import (
    BinaryError,
    NoDeviceCodeError,
    NotCudaElfError,
    NotElfError,
    ToolError,
    UnsupportedArchError,
)
from .model import ControlCode, Cubin, Function, Instruction, SourceLoc

__all__ = [
    "BinaryError",
    "ControlCode",
    "Cubin",
    "Function",
    "Instruction",
    "NoDeviceCodeError",
    "NotCudaElfError",
    "NotElfError",
    "SourceLoc",
    "ToolError",
    "UnsupportedArchError",
    "load_binary",
    "load_cubin",
]

_LAZY = ("load_binary", "load_cubin")


def __getattr__(name: str) -> Any:
    """``load_binary`` / ``load_cubin`` from :mod:`.load`, imported on first access; AttributeError otherwise."""
    if name in _LAZY:
        from . import load

        return getattr(load, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
