"""Bad inputs give a BinaryError subclass whose message names the file and the problem."""

from __future__ import annotations

import shutil
import struct
import sys
from pathlib import Path

import pytest
from binfixtures import EXAMPLES
from warpwise.analysis.binary.elf import sm_from_flags
from warpwise.analysis.binary.errors import (
    BinaryError,
    NoDeviceCodeError,
    NotCudaElfError,
    NotElfError,
    ToolError,
    UnsupportedArchError,
)
from warpwise.analysis.binary.load import load_binary, load_cubin, normalize_arch

CUBIN = EXAMPLES / "gather" / "gather.sm_90.cubin"


def patched(tmp_path: Path, name: str, edit: dict[int, bytes] | None = None, cut: int | None = None) -> Path:
    data = bytearray(CUBIN.read_bytes())
    for off, b in (edit or {}).items():
        data[off : off + len(b)] = b
    p = tmp_path / name
    p.write_bytes(bytes(data[:cut] if cut is not None else data))
    return p


def test_not_an_elf(tmp_path: Path) -> None:
    p = tmp_path / "notes.txt"
    p.write_text("hello, not a cubin\n")
    with pytest.raises(NotElfError, match=r"notes\.txt: not an ELF file"):
        load_cubin(p)
    with pytest.raises(NotElfError, match=r"notes\.txt: neither a cubin"):
        load_binary(p)


def test_truncated_cubin(tmp_path: Path) -> None:
    half = patched(tmp_path, "half.cubin", cut=CUBIN.stat().st_size // 2)
    with pytest.raises(BinaryError, match=r"half\.cubin: truncated ELF"):
        load_cubin(half)
    head = patched(tmp_path, "head.cubin", cut=40)
    with pytest.raises(NotElfError, match=r"head\.cubin: .*truncated"):
        load_cubin(head)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BinaryError, match=r"nope\.cubin: no such binary file"):
        load_cubin(tmp_path / "nope.cubin")


def test_host_elf_is_not_a_cubin() -> None:
    with pytest.raises(NotCudaElfError, match=r"not a CUDA cubin \(EM_CUDA = 190\)"):
        load_cubin(sys.executable)


def test_host_binary_without_device_code() -> None:
    exe = shutil.which("ls") or sys.executable
    with pytest.raises(NoDeviceCodeError, match="no CUDA device code"):
        load_binary(exe)


def test_unsupported_and_unknown_arch(tmp_path: Path) -> None:
    # e_flags at byte 0x30: sm_70 in the CUDA 13 layout (bits 8..15), then an undecodable value
    sm70 = patched(tmp_path, "sm70.cubin", {0x30: struct.pack("<I", 0x0A004604)})
    with pytest.raises(UnsupportedArchError, match=r"sm70\.cubin: sm_70 is not supported"):
        load_cubin(sm70)
    zero = patched(tmp_path, "zero.cubin", {0x30: struct.pack("<I", 0)})
    with pytest.raises(UnsupportedArchError, match=r"zero\.cubin: unknown CUDA architecture"):
        load_cubin(zero)
    with pytest.raises(UnsupportedArchError, match="unknown CUDA architecture 'volta'"):
        normalize_arch("volta")


def test_nvdisasm_failure_is_reported(tmp_path: Path) -> None:
    from elftools.elf.elffile import ELFFile

    with open(CUBIN, "rb") as f:
        text = next(s for s in ELFFile(f).iter_sections() if s.name.startswith(".text."))
        off = text["sh_offset"]
    bad = patched(tmp_path, "garbage.cubin", {off: b"\xff" * 64})
    with pytest.raises(ToolError, match=r"nvdisasm on .*garbage\.cubin: nvdisasm exited with status"):
        load_cubin(bad)


def test_e_flags_layouts() -> None:
    assert sm_from_flags(0x0A005A04, 8) == 90  # CUDA 13: SM in bits 8..15 (examples' cubins)
    assert sm_from_flags(0x0A007802, 8) == 120
    assert sm_from_flags(0x005A055A, 7) == 90  # CUDA 12: SM in bits 0..7, virtual SM in 16..23
    assert sm_from_flags(0x00500550, 7) == 80
    assert sm_from_flags(0x0A004B04, 7) == 75  # mislabelled ABI: the other layout is tried
    assert sm_from_flags(0, 8) is None
    assert normalize_arch("sm_90a") == normalize_arch("90") == normalize_arch("SM90") == 90


def test_magic_bytes_read_as_hex_and_text() -> None:
    from warpwise.analysis.binary.errors import magic_text

    assert magic_text(b"hello world") == '68 65 6c 6c "hell"'
    assert magic_text(b"\x00\x01\xff\x10") == "00 01 ff 10"
    assert magic_text(b"") == "(empty)"


def test_not_a_cubin_names_its_first_bytes_without_python_syntax(tmp_path: Path) -> None:
    p = tmp_path / "fake.cubin"
    p.write_bytes(b"hello world")
    with pytest.raises(NotElfError, match=r'starts with 68 65 6c 6c "hell"\)$'):
        load_binary(str(p))
