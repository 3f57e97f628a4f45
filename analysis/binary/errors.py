"""Errors raised while reading cubins, fatbins and executables."""

from __future__ import annotations


class BinaryError(Exception):
    """A binary could not be read; the message names the file and what is wrong with it."""


class NotElfError(BinaryError):
    """The file is not an ELF file (no ``\\x7fELF`` magic) or its ELF headers are unreadable."""


class NotCudaElfError(BinaryError):
    """The file is an ELF file but not a CUDA one (``e_machine`` is not EM_CUDA = 190)."""


class NoDeviceCodeError(BinaryError):
    """The file holds no CUDA device code (no cubin in an executable, no ``.text.*`` section in a cubin)."""


class UnsupportedArchError(BinaryError):
    """The cubin's SM architecture is unknown or not supported (Volta-class 128-bit encodings, sm_75+)."""


class ToolError(BinaryError):
    """An NVIDIA tool (nvdisasm, cuobjdump) is missing, failed, or printed output we could not match."""


class CorruptLineTableError(BinaryError):
    """The cubin has a line table (``.debug_line``: built with -lineinfo or -G) that yields no source line."""


def magic_text(data: bytes, n: int = 4) -> str:
    """The first ``n`` bytes of ``data`` for a message: hex, and the text when they are printable ASCII
    (``68 65 6c 6c "hell"``; ``(empty)`` for no bytes)."""
    head = data[:n]
    if not head:
        return "(empty)"
    hexes = " ".join(f"{b:02x}" for b in head)
    text = head.decode("ascii", errors="replace")
    return f'{hexes} "{text}"' if text.isprintable() and "\ufffd" not in text else hexes
