"""One kernel section's SASS, as the schedule tuner needs it (DESIGN.md "Schedule tuning").

The words come from the ELF section (pyelftools), the text from ``nvdisasm -c`` (which prints no control
codes; FACTS.md "Binaries without system CUDA"), block leaders from the labels nvdisasm prints (every
branch target gets a ``.L_x_N:`` label) and from function symbols inside the section. This is a small
reader of its own so the tuning path needs only pyelftools + nvdisasm on a GPU box; it returns
``warpwise.analysis.binary.model.Instruction`` objects like the main loader.
"""

from __future__ import annotations

import hashlib
import io
import os
import struct
import tempfile
from dataclasses import dataclass, field

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection
from warpwise.analysis.binary.errors import BinaryError
from warpwise.analysis.binary.model import ControlCode, Instruction
from warpwise.analysis.binary.sass import parse, split_instruction
from warpwise.analysis.binary.tools import find_tool, run_tool
from warpwise.analysis.program.cfg import CONTROL_TRANSFERS, CONVERGENCE

EM_CUDA = 190


class ScheduleError(BinaryError):
    """The cubin/kernel cannot be tuned: the message names the file and what is wrong."""


@dataclass
class KernelCode:
    """The instructions of one ``.text.<kernel>`` section in their original order.

    ``instructions[i].offset == 16 * i`` (section offsets, bytes). ``leaders``: indices that start a
    basic block (branch targets, function symbols, and the instruction after any control transfer).
    ``section_offset``: the section's byte offset in the ELF file; ``arch``: ``sm_90``.
    """

    path: str
    kernel: str
    section: str
    arch: str
    section_offset: int
    instructions: list[Instruction]
    leaders: set[int] = field(default_factory=set)

    def words(self) -> list[tuple[int, int]]:
        """(lo, hi) 64-bit words of every instruction, in order."""
        return [(i.lo, i.hi) for i in self.instructions]


def elf_arch(elf: ELFFile, path: str) -> str:
    """``sm_NN`` from a cubin's ``e_flags`` (CUDA 13: bits 8–15; older: bits 0–7; FACTS.md).

    Raises:
        ScheduleError: not a CUDA ELF, or no plausible SM number in either layout.
    """
    if elf["e_machine"] not in ("EM_CUDA", EM_CUDA):
        raise ScheduleError(f"{path}: not a CUDA ELF (e_machine {elf['e_machine']})")
    flags = int(elf["e_flags"])
    for sm in ((flags >> 8) & 0xFF, flags & 0xFF):
        if 75 <= sm <= 130:
            return f"sm_{sm}"
    raise ScheduleError(f"{path}: cannot read the SM architecture from e_flags {flags:#x}")


def open_elf(data: bytes, path: str) -> ELFFile:
    """Parse ``data`` as an ELF file.

    Raises:
        ScheduleError: not an ELF file.
    """
    try:
        return ELFFile(io.BytesIO(data))
    except ELFError as e:
        raise ScheduleError(f"{path}: not an ELF cubin ({e})") from e


def kernel_section_name(elf: ELFFile, kernel: str, path: str) -> str:
    """The ``.text.<kernel>`` section name; ``kernel`` may be the mangled name or a unique substring.

    Raises:
        ScheduleError: no such kernel, or the substring matches several sections.
    """
    names = [s.name for s in elf.iter_sections() if s.name.startswith(".text.")]
    exact = ".text." + kernel
    if exact in names:
        return exact
    hits = [n for n in names if kernel in n[len(".text.") :]]
    if len(hits) == 1:
        return hits[0]
    known = ", ".join(n[len(".text.") :] for n in names) or "none"
    what = "matches several" if hits else "matches no"
    raise ScheduleError(f"{path}: kernel {kernel!r} {what} .text sections (kernels: {known})")


_LISTINGS: dict[str, str] = {}


def _disassemble(data: bytes, path: str) -> str:
    """``nvdisasm -c`` listing of cubin bytes; memoised by content (a few recent cubins)."""
    key = hashlib.sha256(data).hexdigest()
    if key in _LISTINGS:
        return _LISTINGS[key]
    listing = _run_nvdisasm(data, path)
    if len(_LISTINGS) >= 8:
        _LISTINGS.pop(next(iter(_LISTINGS)))
    _LISTINGS[key] = listing
    return listing


def _run_nvdisasm(data: bytes, path: str) -> str:
    with tempfile.TemporaryDirectory(prefix="warpwise-sass-") as d:
        p = os.path.join(d, "k.cubin")
        with open(p, "wb") as f:
            f.write(data)
        return run_tool([find_tool("nvdisasm"), "-c", p], f"nvdisasm on {path}")


def _split(text: str) -> tuple[str | None, str, list[str]]:
    """(predicate, opcode, operands) of one SASS statement without its ``;`` (the binary loader's split)."""
    return split_instruction(text)


def parse_listing(listing: str, section: str) -> tuple[dict[int, str], set[int]]:
    """SASS text by section offset and the offsets that carry a label, for ``section`` of a listing (the
    binary loader's parser, warpwise.analysis.binary.sass.parse)."""
    d = parse(listing)
    return {x.offset: x.text for x in d.sections.get(section, [])}, set(d.labelled.get(section, set()))


# Instructions that end a region moves may not cross: control transfers and convergence points.
CONTROL_TRANSFER = CONTROL_TRANSFERS | CONVERGENCE


def load_kernel(data: bytes, kernel: str, path: str = "<memory>") -> KernelCode:
    """Instructions of ``.text.<kernel>`` in cubin bytes ``data`` (nvdisasm supplies the text).

    Raises:
        ScheduleError: not a CUDA ELF, unknown kernel, section size not a multiple of 16 bytes, or
            nvdisasm's listing does not cover every instruction word.
        ToolError: nvdisasm is missing or failed.
    """
    elf = open_elf(data, path)
    arch = elf_arch(elf, path)
    name = kernel_section_name(elf, kernel, path)
    sec = elf.get_section_by_name(name)
    assert sec is not None  # kernel_section_name found it
    raw = sec.data()
    if len(raw) % 16:
        raise ScheduleError(f"{path}: {name} is {len(raw)} bytes, not a multiple of 16 (pre-Volta?)")
    texts, labelled = parse_listing(_disassemble(data, path), name)
    sec_index = next(i for i, s in enumerate(elf.iter_sections()) if s.name == name)
    symtab = elf.get_section_by_name(".symtab")
    starts = {0}
    if isinstance(symtab, SymbolTableSection):
        for sym in symtab.iter_symbols():
            if sym["st_shndx"] == sec_index and sym["st_info"]["type"] == "STT_FUNC":
                starts.add(int(sym["st_value"]))
    ins: list[Instruction] = []
    for off in range(0, len(raw), 16):
        lo, hi = struct.unpack_from("<QQ", raw, off)
        if off not in texts:
            raise ScheduleError(f"{path}: nvdisasm printed no instruction at {name}+{off:#x}")
        text = texts[off]
        pred, opcode, ops = _split(text)
        ins.append(Instruction(off, text, opcode, pred, ops, lo, hi, ControlCode.from_hi(hi)))
    leaders = {off // 16 for off in labelled | starts if off < len(raw)}
    for i, x in enumerate(ins[:-1]):
        if x.base_opcode in CONTROL_TRANSFER:
            leaders.add(i + 1)
    return KernelCode(path, name[len(".text.") :], name, arch, int(sec["sh_offset"]), ins, leaders)
