"""The ELF side of a cubin: architecture, code sections, function symbols and build kind (pyelftools).

Facts used here (FACTS.md, checked on nvcc 13.0 cubins for sm_75..sm_121):
- CUDA cubins have ``e_machine`` EM_CUDA = 190.
- The SM number sits in ``e_flags`` bits 8..15 since CUDA 13 (ELF ABI version 8, e.g. 0x0a005a04 for
  sm_90) and in bits 0..7 before (ABI version 7, e.g. 0x005a055a); both layouts are read.
- Kernels are function symbols with ``STO_CUDA_ENTRY`` (0x10) in ``st_other`` (nvdisasm prints it as
  ``.other name,@"STO_CUDA_ENTRY ..."``); static kernels (e.g. the device runtime's) are LOCAL.
- A non-rdc build keeps ``__noinline__`` device functions inside the kernel's ``.text.<kernel>`` section
  as LOCAL/WEAK symbols, while the kernel symbol's ``st_size`` spans the whole section.
- ``-G`` builds: ptxas runs with ``-g`` (recorded in ``.note.nv.tkinfo``) and emit ``.debug_info`` and
  ``.nv_debug_info_reg_sass``; ``-lineinfo`` builds have only ``.debug_line``/``.nv_debug_line_sass``.
"""

from __future__ import annotations

import io
import re
import struct
from dataclasses import dataclass, field

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from .errors import BinaryError, NoDeviceCodeError, NotCudaElfError, NotElfError, UnsupportedArchError, magic_text

EM_CUDA = 190
STO_CUDA_ENTRY = 0x10
ET_REL = "ET_REL"
# Oldest SM with the 128-bit Volta+ encoding that the PyPI nvdisasm (13.x) accepts (FACTS.md: SM75..SM121).
MIN_SM = 75
# Largest SM number we take as plausible when telling the two e_flags layouts apart.
MAX_SM = 199
TEXT_PREFIX = ".text."
_SYM_SIZE = 24  # sizeof(Elf64_Sym); st_other is byte 5
_PTXAS_DEBUG = re.compile(rb"(?:^|[\s\x00])(?:-g|--device-debug)(?=[\s\x00]|$)")


@dataclass(frozen=True)
class FunctionSymbol:
    """One function's place in a code section: ``start``/``size`` in bytes within ``section``."""

    name: str
    section: str
    start: int
    size: int
    is_kernel: bool


@dataclass
class CudaElf:
    """What :func:`read_cuda_elf` found: arch (``sm_90``), code section bytes by name, function symbols."""

    path: str
    arch: str
    sm: int
    relocatable: bool
    debug_build: bool
    texts: dict[str, bytes] = field(default_factory=dict)
    functions: list[FunctionSymbol] = field(default_factory=list)
    line_table: bytes = b""  # the .debug_line section (empty: built without line info)


def sm_from_flags(e_flags: int, abi_version: int) -> int | None:
    """The SM number (``90`` for sm_90) encoded in a cubin's ``e_flags``, or None if neither layout fits.

    CUDA 13 (ELF ABI version >= 8) keeps it in bits 8..15, older toolkits in bits 0..7 (FACTS.md).
    The layout named by the ABI version is tried first, then the other one.
    """
    new, old = (e_flags >> 8) & 0xFF, e_flags & 0xFF
    for sm in ((new, old) if abi_version >= 8 else (old, new)):
        if 10 <= sm <= MAX_SM:
            return sm
    return None


def _check_extents(path: str, data: bytes, elf: ELFFile) -> None:
    """Reject a truncated file before pyelftools reads past its end with an obscure error."""
    size = len(data)
    hdr = elf.header
    end = hdr["e_shoff"] + hdr["e_shnum"] * hdr["e_shentsize"]
    if end > size:
        raise BinaryError(
            f"{path}: truncated ELF: the section header table ends at byte {end} but the file has {size} bytes"
        )
    for i in range(hdr["e_shnum"]):
        sh = elf._get_section_header(i)
        if sh["sh_type"] != "SHT_NOBITS" and sh["sh_offset"] + sh["sh_size"] > size:
            raise BinaryError(
                f"{path}: truncated ELF: section {i} ends at byte {sh['sh_offset'] + sh['sh_size']} "
                f"but the file has {size} bytes"
            )


def _is_debug_build(elf: ELFFile) -> bool:
    """True for a ``-G`` build: ptxas ran with ``-g``, or device DWARF beyond the line table is present."""
    note = elf.get_section_by_name(".note.nv.tkinfo")
    if note is not None and _PTXAS_DEBUG.search(note.data()):
        return True
    return any(elf.get_section_by_name(n) is not None for n in (".debug_info", ".nv_debug_info_reg_sass"))


def read_cuda_elf(path: str, data: bytes) -> CudaElf:
    """Parse the CUDA ELF ``data`` (the bytes of file ``path``) into a :class:`CudaElf`.

    Function extents: each STT_FUNC symbol defined in a ``.text.*`` section starts at its ``st_value``
    and ends where the next function symbol of that section starts (the last one at the section's end).
    ``st_size`` is not used: a kernel's symbol spans its whole section, including the ``__noinline__``
    functions placed after it, and trailing padding belongs to the last function.
    A code section without any function symbol becomes one function named after the section.

    Raises:
        NotElfError: no ELF magic, not 64-bit little-endian, or unreadable headers.
        NotCudaElfError: ``e_machine`` is not EM_CUDA (190).
        UnsupportedArchError: the SM number is unreadable or below sm_75.
        NoDeviceCodeError: no ``.text.*`` section.
        BinaryError: truncated or corrupt ELF.
    """
    if data[:4] != b"\x7fELF":
        raise NotElfError(f"{path}: not an ELF file (starts with {magic_text(data)}, expected 7f 45 4c 46)")
    if len(data) < 64 or data[4] != 2 or data[5] != 1:
        raise NotElfError(f"{path}: not a 64-bit little-endian ELF file (or truncated before its header ends)")
    machine = struct.unpack_from("<H", data, 18)[0]
    if machine != EM_CUDA:
        raise NotCudaElfError(
            f"{path}: ELF file for machine {machine}, not a CUDA cubin (EM_CUDA = {EM_CUDA}); "
            "for an executable or library use load_binary"
        )
    try:
        elf = ELFFile(io.BytesIO(data))
        _check_extents(path, data, elf)
        return _read(path, data, elf)
    except (ELFError, struct.error, ValueError, IndexError, KeyError) as e:
        raise BinaryError(f"{path}: corrupt or truncated CUDA ELF: {e}") from e


def _read(path: str, data: bytes, elf: ELFFile) -> CudaElf:
    abi = data[8]
    sm = sm_from_flags(elf.header["e_flags"], abi)
    if sm is None:
        raise UnsupportedArchError(
            f"{path}: unknown CUDA architecture in ELF e_flags {elf.header['e_flags']:#x} (ABI version {abi})"
        )
    if sm < MIN_SM:
        raise UnsupportedArchError(f"{path}: sm_{sm} is not supported (warpwise reads sm_{MIN_SM} and newer)")

    texts: dict[str, bytes] = {}
    index_to_text: dict[int, str] = {}
    for i, sec in enumerate(elf.iter_sections()):
        if sec.name.startswith(TEXT_PREFIX) and sec["sh_type"] == "SHT_PROGBITS":
            texts[sec.name] = sec.data()
            index_to_text[i] = sec.name
    if not texts:
        raise NoDeviceCodeError(f"{path}: CUDA ELF without device code (no .text.* section)")
    for name, text in texts.items():
        if len(text) % 16:
            raise BinaryError(f"{path}: section {name} is {len(text)} bytes, not a multiple of 16")

    # Per section: (start, st_size, name, kernel, global); st_other read raw: pyelftools drops bit 4.
    found: dict[str, list[tuple[int, int, str, bool, bool]]] = {s: [] for s in texts}
    symtab = elf.get_section_by_name(".symtab")
    if isinstance(symtab, SymbolTableSection):
        raw = symtab.data()
        for i, sym in enumerate(symtab.iter_symbols()):
            shndx = sym["st_shndx"]
            if sym["st_info"]["type"] != "STT_FUNC" or not isinstance(shndx, int) or shndx not in index_to_text:
                continue
            other = raw[i * _SYM_SIZE + 5]
            found[index_to_text[shndx]].append(
                (sym["st_value"], sym["st_size"], sym.name, bool(other & STO_CUDA_ENTRY),
                 sym["st_info"]["bind"] == "STB_GLOBAL")
            )

    functions: list[FunctionSymbol] = []
    for sec_name, syms in found.items():
        size = len(texts[sec_name])
        if not syms:
            functions.append(FunctionSymbol(sec_name[len(TEXT_PREFIX):], sec_name, 0, size, False))
            continue
        # Aliases at one address: keep the kernel/global one.
        syms.sort(key=lambda s: (s[0], not s[3], not s[4]))
        starts: list[tuple[int, int, str, bool, bool]] = []
        for s in syms:
            if not starts or starts[-1][0] != s[0]:
                starts.append(s)
        for k, (start, _size, name, kernel, _glob) in enumerate(starts):
            end = starts[k + 1][0] if k + 1 < len(starts) else size
            functions.append(FunctionSymbol(name, sec_name, start, end - start, kernel))

    lines = elf.get_section_by_name(".debug_line")
    return CudaElf(
        path=path,
        arch=f"sm_{sm}",
        sm=sm,
        relocatable=elf.header["e_type"] == ET_REL,
        debug_build=_is_debug_build(elf),
        texts=texts,
        functions=functions,
        line_table=lines.data() if lines is not None and lines["sh_type"] == "SHT_PROGBITS" else b"",
    )


def line_table_problem(data: bytes) -> str | None:
    """What is wrong with the header of the first line program of a ``.debug_line`` section, or None.

    DWARF 4/5 §6.2.4: ``unit_length`` (4 bytes; 0xffffffff then 8 bytes: 64-bit DWARF) counts the bytes
    after itself and must fit in the section; ``version`` (2 bytes) is 2..5.
    """
    if len(data) < 6:
        return f"it is {len(data)} bytes, shorter than a line-program header"
    length, head = struct.unpack_from("<I", data, 0)[0], 4
    if length == 0xFFFFFFFF:
        if len(data) < 14:
            return "it is truncated inside a 64-bit line-program header"
        length, head = struct.unpack_from("<Q", data, 4)[0], 12
    if length + head > len(data):
        return f"its first line program claims {length} bytes but the section holds {len(data) - head}"
    version = struct.unpack_from("<H", data, head)[0]
    if not 2 <= version <= 5:
        return f"its first line program has DWARF version {version} (expected 2 to 5)"
    return None
