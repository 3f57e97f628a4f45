"""Apply a schedule to a cubin by permuting 16-byte instruction words (DESIGN.md "Schedule tuning").

Nothing is re-assembled: instruction words are position independent inside a basic block except
PC-relative control flow, which never moves (:mod:`.model` pins it). A new order of ``.text.<kernel>``
therefore needs three updates, done in place so every other byte of the file stays identical:

1. the words of ``.text.<kernel>`` in the new order;
2. ``r_offset`` of every entry of ``.rel.text.<kernel>`` / ``.rela.text.<kernel>`` (sm_80–89 use
   ``.rel``, sm_90 ``.rela``; FACTS.md) that points into a moved word;
3. every ``.nv.info.<kernel>`` attribute that lists instruction offsets (:data:`OFFSET_ATTRIBUTES`).

``.nv.info`` records are ``(format u8, attribute u8, value)``: EIFMT_NVAL (1) and EIFMT_BVAL (2) and
EIFMT_HVAL (3) carry a 2-byte value, EIFMT_SVAL (4) a u16 size then that many bytes (checked against
cuobjdump's decoding of the example cubins). Attribute numbers follow cuobjdump's names
(EIATTR_EXIT_INSTR_OFFSETS = 0x1c ...). Attributes not listed as known are scanned conservatively:
every 4-byte-aligned u32 (or HVAL) that equals an instruction offset pins that instruction.
Line tables (``.debug_line``, ``.nv_debug_line_sass``) are left as they are: after a swap two
instructions report each other's lines, which only affects source mapping, never execution.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

from .sass import ScheduleError, kernel_section_name, open_elf

EIFMT_SVAL = 4
# EIATTR_* whose SVAL payload is a list of u32 instruction offsets in the kernel's section.
OFFSET_ATTRIBUTES: dict[int, str] = {
    0x1C: "EIATTR_EXIT_INSTR_OFFSETS",
    0x1D: "EIATTR_S2RCTAID_INSTR_OFFSETS",
    0x25: "EIATTR_LD_CACHEMOD_INSTR_OFFSETS",
    0x27: "EIATTR_ATOM_SYS_INSTR_OFFSETS",
    0x28: "EIATTR_COOP_GROUP_INSTR_OFFSETS",
    0x2D: "EIATTR_ATOMF16_EMUL_INSTR_OFFSETS",
    0x31: "EIATTR_INT_WARP_WIDE_INSTR_OFFSETS",
    0x39: "EIATTR_MBARRIER_INSTR_OFFSETS",
    0x46: "EIATTR_SYSCALL_OFFSETS",
    0x47: "EIATTR_SW_WAR_MEMBAR_SYS_INSTR_OFFSETS",
}
# Attributes known to hold no instruction offsets (sizes, parameter layout, versions, symbol indices).
NON_OFFSET_ATTRIBUTES: dict[int, str] = {
    0x04: "EIATTR_CTAIDZ_USED",
    0x05: "EIATTR_MAX_THREADS",
    0x0A: "EIATTR_PARAM_CBANK",
    0x0F: "EIATTR_EXTERNS",
    0x10: "EIATTR_REQNTID",
    0x11: "EIATTR_FRAME_SIZE",
    0x12: "EIATTR_MIN_STACK_SIZE",
    0x17: "EIATTR_KPARAM_INFO",
    0x19: "EIATTR_CBANK_PARAM_SIZE",
    0x1B: "EIATTR_MAXREG_COUNT",
    0x1E: "EIATTR_CRS_STACK_SIZE",
    0x23: "EIATTR_MAX_STACK_SIZE",
    0x2B: "EIATTR_WMMA_USED",
    0x2F: "EIATTR_REGCOUNT",
    0x36: "EIATTR_SW_WAR",
    0x37: "EIATTR_CUDA_API_VERSION",
    0x50: "EIATTR_SPARSE_MMA_MASK",
}


class PatchError(ScheduleError):
    """A schedule cannot be written into the cubin, or a round-trip check failed."""


@dataclass(frozen=True)
class OffsetSlot:
    """A u32/u64 field in the file that holds an instruction offset of the kernel's section.

    ``file_pos``: byte position of the field in the file; ``size``: 4 or 8; ``value``: the original
    offset (bytes from the section start); ``what``: the attribute or relocation section name.
    """

    file_pos: int
    size: int
    value: int
    what: str


@dataclass
class Layout:
    """Where a kernel's code and the fields that point into it live in the cubin file.

    ``text_pos``/``text_size``: file position and size (bytes) of ``.text.<kernel>``. ``slots``:
    updatable offset fields. ``pinned``: instruction indices referenced by attributes this module does
    not understand (they must never move). ``attributes``: names of the offset attributes seen.
    """

    section: str
    text_pos: int
    text_size: int
    slots: list[OffsetSlot] = field(default_factory=list)
    pinned: set[int] = field(default_factory=set)
    attributes: list[str] = field(default_factory=list)


def nv_info_records(raw: bytes, name: str, path: str) -> list[tuple[int, int, int, int]]:
    """(position, format, attribute, payload size) of each record of a ``.nv.info*`` section's bytes
    ``raw``; an SVAL payload starts at position+4, an NVAL/BVAL/HVAL value at position+2.

    Raises:
        PatchError: a record header or payload runs past the section end, or an unknown format byte.
    """
    out = []
    i = 0
    while i < len(raw):
        if i + 4 > len(raw):
            raise PatchError(f"{path}: {name} ends inside a record header at byte {i}")
        fmt, attr = raw[i], raw[i + 1]
        if fmt == EIFMT_SVAL:
            size = struct.unpack_from("<H", raw, i + 2)[0]
            if i + 4 + size > len(raw):
                raise PatchError(f"{path}: {name} record at byte {i} runs past the section end")
            out.append((i, fmt, attr, size))
            i += 4 + size
        elif fmt in (1, 2, 3):
            out.append((i, fmt, attr, 2))
            i += 4
        else:
            raise PatchError(f"{path}: {name} has unknown record format {fmt} at byte {i}")
    return out


def layout(data: bytes, kernel: str, path: str = "<memory>") -> Layout:
    """Find ``.text.<kernel>`` and every field in the file that holds one of its instruction offsets.

    Raises:
        ScheduleError/PatchError: no such kernel, malformed ``.nv.info`` records, or a relocation
            section whose entry size is neither 16 (REL) nor 24 (RELA).
    """
    elf = open_elf(data, path)
    name = kernel_section_name(elf, kernel, path)
    sec = elf.get_section_by_name(name)
    assert sec is not None
    lay = Layout(name, int(sec["sh_offset"]), int(sec["sh_size"]))
    n_ins = lay.text_size // 16
    suffix = name[len(".text.") :]
    for rname in (".rel" + name, ".rela" + name):
        rs = elf.get_section_by_name(rname)
        if rs is None:
            continue
        ent = int(rs["sh_entsize"]) or (24 if rname.startswith(".rela") else 16)
        if ent not in (16, 24):
            raise PatchError(f"{path}: {rname} has entry size {ent}")
        base = int(rs["sh_offset"])
        for k in range(int(rs["sh_size"]) // ent):
            pos = base + k * ent
            (r_off,) = struct.unpack_from("<Q", data, pos)
            lay.slots.append(OffsetSlot(pos, 8, r_off, rname))
    info = elf.get_section_by_name(".nv.info." + suffix)
    if info is not None:
        raw = info.data()
        ipos = int(info["sh_offset"])
        for pos, fmt, attr, size in nv_info_records(raw, info.name, path):
            if attr in NON_OFFSET_ATTRIBUTES:
                continue
            if attr in OFFSET_ATTRIBUTES and fmt == EIFMT_SVAL:
                lay.attributes.append(OFFSET_ATTRIBUTES[attr])
                for k in range(size // 4):
                    (v,) = struct.unpack_from("<I", raw, pos + 4 + 4 * k)
                    if v % 16 or v >= lay.text_size:
                        raise PatchError(
                            f"{path}: {OFFSET_ATTRIBUTES[attr]} lists {v:#x}, not an instruction of {name}"
                        )
                    lay.slots.append(OffsetSlot(ipos + pos + 4 + 4 * k, 4, v, OFFSET_ATTRIBUTES[attr]))
                continue
            # unknown attribute: pin anything that looks like an instruction offset
            if fmt == EIFMT_SVAL:
                vals = [struct.unpack_from("<I", raw, pos + 4 + 4 * k)[0] for k in range(size // 4)]
            elif fmt == 3:
                vals = [struct.unpack_from("<H", raw, pos + 2)[0]]
            else:
                vals = []
            lay.pinned |= {v // 16 for v in vals if v % 16 == 0 and v // 16 < n_ins}
    return lay


def permute(data: bytes, lay: Layout, order: Sequence[int]) -> bytes:
    """Cubin bytes with ``.text`` words in ``order`` (``order[pos]`` = original index) and every offset
    field of ``lay`` updated; all other bytes are copied unchanged.

    Raises:
        PatchError: ``order`` is not a permutation of the section's instructions, or it moves a pinned
            instruction.
    """
    n = lay.text_size // 16
    if sorted(order) != list(range(n)):
        raise PatchError(f"{lay.section}: the order is not a permutation of its {n} instructions")
    new_pos = [0] * n
    for pos, idx in enumerate(order):
        new_pos[idx] = pos
    moved_pinned = [i for i in lay.pinned if new_pos[i] != i]
    if moved_pinned:
        raise PatchError(f"{lay.section}: instruction at {16 * moved_pinned[0]:#x} is pinned by an unknown attribute")
    out = bytearray(data)
    base = lay.text_pos
    for pos, idx in enumerate(order):
        out[base + 16 * pos : base + 16 * pos + 16] = data[base + 16 * idx : base + 16 * idx + 16]
    for s in lay.slots:
        if s.value >= lay.text_size:
            continue
        idx, within = divmod(s.value, 16)
        struct.pack_into("<Q" if s.size == 8 else "<I", out, s.file_pos, 16 * new_pos[idx] + within)
    return bytes(out)


def text_hash(data: bytes, lay: Layout) -> str:
    """SHA-256 (hex) of the kernel's ``.text`` words: the cache key of an evaluated schedule."""
    return hashlib.sha256(data[lay.text_pos : lay.text_pos + lay.text_size]).hexdigest()


def verify_roundtrip(
    original: bytes, patched: bytes, kernel: str, order: Sequence[int], path: str = "<memory>"
) -> None:
    """Check a patched cubin by disassembling both (nvdisasm) and comparing byte ranges.

    Checks: the patched ``.text`` disassembles to the original instructions in ``order`` (same
    multiset, new order); the relocation and attribute fields name the moved instructions; every
    byte outside ``.text`` and those fields is identical.

    Raises:
        PatchError: any difference, naming the first one.
        ToolError: nvdisasm missing or failed.
    """
    from .sass import load_kernel

    lay = layout(original, kernel, path)
    if len(original) != len(patched):
        raise PatchError(f"{path}: patched size {len(patched)} != original {len(original)}")
    a = load_kernel(original, kernel, path)
    b = load_kernel(patched, kernel, path + " (patched)")
    want = [a.instructions[i].text for i in order]
    got = [x.text for x in b.instructions]
    if sorted(want) != sorted(got):
        raise PatchError(f"{path}: patched {lay.section} holds different instructions")
    for pos, (w, g) in enumerate(zip(want, got, strict=True)):
        if w != g:
            raise PatchError(f"{path}: at {16 * pos:#x} expected {w!r}, disassembled {g!r}")
    allowed = set(range(lay.text_pos, lay.text_pos + lay.text_size))
    for s in lay.slots:
        allowed |= set(range(s.file_pos, s.file_pos + s.size))
    diff = [i for i in range(len(original)) if original[i] != patched[i] and i not in allowed]
    if diff:
        raise PatchError(f"{path}: byte {diff[0]:#x} outside {lay.section} and its offset fields changed")
    new_pos = {idx: pos for pos, idx in enumerate(order)}
    for s in lay.slots:
        if s.value >= lay.text_size:
            continue
        fmt = "<Q" if s.size == 8 else "<I"
        (v,) = struct.unpack_from(fmt, patched, s.file_pos)
        idx, within = divmod(s.value, 16)
        if v != 16 * new_pos[idx] + within:
            raise PatchError(f"{path}: {s.what} field at {s.file_pos:#x} is {v:#x}, expected the moved offset")
