"""Cubin / fatbin / executable reading (DESIGN.md "Binary model"): ``load_cubin``, ``load_binary``."""

from .errors import (
    BinaryError,
    NoDeviceCodeError,
    NotCudaElfError,
    NotElfError,
    ToolError,
    UnsupportedArchError,
)
from .load import load_binary, load_cubin
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
