"""Load cubins, and the cubins inside executables, shared libraries and fatbins, into the binary model.

``load_cubin`` combines two readers: the ELF (pyelftools, :mod:`.elf`) gives the architecture, the
functions and the 128-bit instruction words with their control codes; one nvdisasm run (:mod:`.sass`)
gives the SASS text and the line table with inline chains. ``load_binary`` extracts the cubins of a
host binary or fatbin with ``cuobjdump -xelf all`` first (DESIGN.md "Binary model").
"""

from __future__ import annotations

import re
import struct
import tempfile
from pathlib import Path

from warpwise.analysis.bounded import InputFileError, read_bytes
from warpwise.analysis.gcpause import without_gc

from .elf import EM_CUDA, CudaElf, line_table_problem, read_cuda_elf
from .errors import (
    BinaryError,
    CorruptLineTableError,
    NoDeviceCodeError,
    NotElfError,
    ToolError,
    UnsupportedArchError,
    magic_text,
)
from .model import ControlCode, Cubin, Function, Instruction
from .sass import Disassembly, disassemble, split_instruction
from .tools import find_tool, run_tool

FATBIN_MAGIC = 0xBA55ED50  # fatbin file header (cuda's fatbinary_section.h)
_ARCH = re.compile(r"^(?:sm_?|compute_?)?(\d+)[afk]?$", re.IGNORECASE)


def _read_bytes(path: str, head: int | None = None) -> bytes:
    """Bytes of binary ``path`` (a regular file within the binary size limit, see :mod:`..bounded`)."""
    try:
        return read_bytes(path, "binary", head=head)
    except InputFileError as e:
        raise BinaryError(str(e)) from e


def load_cubin(path: str | Path) -> Cubin:
    """Read the cubin at ``path``: functions with their instructions, control codes and source lines.

    Each instruction's ``lo``/``hi`` words are ``struct.unpack_from('<QQ', text, offset)`` of its
    section; ``control`` is ``ControlCode.from_hi(hi)``. The number of instructions nvdisasm prints
    for each code section must equal the section size / 16 and their offsets must be 0, 16, 32, ...

    Raises:
        NotElfError, NotCudaElfError, UnsupportedArchError, NoDeviceCodeError: see :mod:`.errors`.
        ToolError: nvdisasm missing, failed, or its output does not match the ELF.
        BinaryError: unreadable, truncated or corrupt file.
    """
    p = str(path)
    return _load(p, _read_bytes(p), None)


@without_gc  # one object per instruction and operand: collection passes would rescan them all
def _load(path: str, data: bytes, member: str | None) -> Cubin:
    elf = read_cuda_elf(path, data)  # ELF errors first: they say more than nvdisasm's would
    return _build(path, elf, disassemble(path), member)


def _build(path: str, elf: CudaElf, dis: Disassembly, member: str | None) -> Cubin:
    if dis.target:
        m = _ARCH.match(dis.target)
        if m and int(m.group(1)) != elf.sm:
            raise ToolError(f"{path}: ELF header says {elf.arch} but nvdisasm disassembled it as {dis.target}")
    controls: dict[int, ControlCode] = {}  # control bits repeat a lot: decode each pattern once
    # texts repeat too (a 200k-instruction cubin holds ~20-40k distinct ones): split each once; instructions
    # of equal text share the (never mutated) operand list
    splits: dict[str, tuple[str | None, str, list[str]]] = {}
    by_section: dict[str, list[Instruction]] = {}
    for sec, text in elf.texts.items():
        lines = dis.sections.get(sec)
        n = len(text) // 16
        if lines is None or len(lines) != n:
            got = 0 if lines is None else len(lines)
            raise ToolError(
                f"{path}: nvdisasm printed {got} instructions for section {sec}, "
                f"but the section holds {n} (size {len(text)} / 16)"
            )
        out: list[Instruction] = []
        for i, (lo, hi) in enumerate(struct.iter_unpack("<QQ", text)):
            ln = lines[i]
            off = i * 16
            if ln.offset != off:
                raise ToolError(f"{path}: nvdisasm offset {ln.offset:#x} in {sec} where {off:#x} was expected")
            key = hi >> 41
            cc = controls.get(key)
            if cc is None:
                cc = controls[key] = ControlCode.from_hi(hi)
            t = ln.text
            sp = splits.get(t)
            if sp is None:
                sp = splits[t] = split_instruction(t)
            out.append(Instruction(off, t, sp[1], sp[0], sp[2], lo, hi, cc, ln.loc, ln.inline_chain))
        by_section[sec] = out

    if elf.line_table and not any(i.loc is not None for ins in by_section.values() for i in ins):
        # built with line info, yet no instruction has a line: the table is damaged, not missing
        why = line_table_problem(elf.line_table) or "nvdisasm decoded no source line from it"
        raise CorruptLineTableError(
            f"{path}: its line table (.debug_line, {len(elf.line_table)} bytes) is corrupt: {why}; the cubin was "
            "built with line info, so rebuild it (nvcc -lineinfo) or pass an intact copy")
    functions: dict[str, Function] = {}
    for fs in elf.functions:
        ins = by_section[fs.section][fs.start // 16 : (fs.start + fs.size) // 16]
        name = fs.name if fs.name not in functions else f"{fs.name}@{fs.section}"
        functions[name] = Function(fs.name, fs.section, fs.start, fs.size, fs.is_kernel, ins)
    return Cubin(
        path=path,
        arch=elf.arch,
        functions=functions,
        debug_build=elf.debug_build,
        relocatable=elf.relocatable,
        member=member,
    )


def normalize_arch(arch: str | int) -> int:
    """SM number of an architecture name: ``"sm_90"``, ``"sm_90a"``, ``"90"``, ``90`` -> ``90``.

    Raises:
        UnsupportedArchError: not an architecture name.
    """
    m = _ARCH.match(str(arch).strip())
    if not m:
        raise UnsupportedArchError(f"unknown CUDA architecture {arch!r} (expected e.g. sm_90)")
    return int(m.group(1))


def _kind(path: str, head: bytes) -> str:
    if not head:
        raise NotElfError(f"{path}: the file is empty (0 bytes), not a cubin, executable or fatbin: was the build "
                          "or the copy interrupted?")
    if head[:4] == b"\x7fELF":
        need = 52 if head[4:5] == b"\x01" else 64  # the ELF header: ELFCLASS32 52 bytes, ELFCLASS64 64 (gABI)
        if len(head) < need:  # a cut file would otherwise go to cuobjdump ("Invalid fatbin header")
            raise NotElfError(f"{path}: truncated ELF: the file has {len(head)} bytes, fewer than the {need}-byte "
                              "ELF header, so it is no cubin, executable or library: was the build or the copy "
                              "interrupted?")
        if len(head) >= 20 and struct.unpack_from("<H", head, 18)[0] == EM_CUDA:
            return "cubin"
        return "host"
    if len(head) >= 4 and struct.unpack_from("<I", head, 0)[0] == FATBIN_MAGIC:
        return "fatbin"
    raise NotElfError(
        f"{path}: neither a cubin, an ELF executable/shared library nor a fatbin (starts with {magic_text(head)})"
    )


def load_binary(path: str | Path, arch: str | None = None) -> list[Cubin]:
    """Cubins in ``path``: a .cubin, or an executable / shared library / fatbin holding cubins.

    Host binaries and fatbins are unpacked with ``cuobjdump -xelf all`` into a temporary folder (fatbins
    in executables are compressed by default; cuobjdump decompresses them). The returned cubins'
    ``path`` is ``path`` and ``member`` the ELF's name inside it. With ``arch`` (``"sm_90"``), only
    cubins of that SM number are returned. Embedded ELFs without code sections are skipped.

    Raises:
        NotElfError: neither ELF nor fatbin.
        NoDeviceCodeError: no cubin in the file.
        UnsupportedArchError: ``arch`` is not a name, or no cubin has that architecture (the message
            lists the ones present).
        ToolError: cuobjdump or nvdisasm missing or failed.
        BinaryError: unreadable or corrupt file.
    """
    p = str(path)
    want = normalize_arch(arch) if arch is not None else None
    head = _read_bytes(p, head=64)
    kind = _kind(p, head)
    if kind == "cubin":
        cubins = [load_cubin(p)]
    else:
        cubins = _extract(p)
    if want is None:
        return cubins
    picked = [c for c in cubins if normalize_arch(c.arch) == want]
    if not picked:
        have = ", ".join(sorted({c.arch for c in cubins}))
        raise UnsupportedArchError(f"{p}: no cubin for sm_{want} (it holds {have})")
    return picked


def _extract(path: str) -> list[Cubin]:
    exe = find_tool("cuobjdump")
    src = str(Path(path).resolve())
    try:
        listing = run_tool([exe, "-lelf", src], f"cuobjdump -lelf on {path}")
    except ToolError as e:
        if "does not contain device code" in str(e):
            raise NoDeviceCodeError(f"{path}: no CUDA device code (cuobjdump finds no fatbin in it)") from e
        raise
    names = re.findall(r"^ELF file\s+\d+:\s+(\S+)\s*$", listing, re.MULTILINE)
    if not names:
        raise NoDeviceCodeError(f"{path}: no CUDA device code (cuobjdump lists no cubin)")
    cubins: list[Cubin] = []
    with tempfile.TemporaryDirectory(prefix="warpwise-xelf-") as tmp:
        run_tool([exe, "-xelf", "all", src], f"cuobjdump -xelf on {path}", cwd=tmp)
        # cuobjdump names members after the source and arch; equal names overwrite each other, so
        # each distinct name is loaded once (the last member of that name is what cuobjdump kept).
        for name in dict.fromkeys(names):
            member = Path(tmp) / name
            if member.resolve().parent != Path(tmp).resolve():  # a crafted member name: stay in tmp
                raise BinaryError(f"{path}: embedded ELF name {name!r} is not a plain file name")
            if not member.is_file():
                raise ToolError(f"{path}: cuobjdump listed {name} but did not extract it")
            try:
                cub = _load(str(member), _read_bytes(str(member)), name)
            except NoDeviceCodeError:
                continue
            except BinaryError as e:
                raise type(e)(f"{path} (member {name}): {e}") from e
            cub.path = path
            cubins.append(cub)
    if not cubins:
        raise NoDeviceCodeError(f"{path}: its cubins ({', '.join(dict.fromkeys(names))}) hold no code sections")
    return cubins
