"""Patching real sm_90 cubins: word permutation, relocations, .nv.info offsets, round trip via nvdisasm."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest
from warpwise.analysis.schedule.model import MOVABLE_ALL, apply_move
from warpwise.analysis.schedule.patch import PatchError, layout, permute, verify_roundtrip
from warpwise.analysis.schedule.sass import ScheduleError, load_kernel
from warpwise.analysis.schedule.target import load_target

ROOT = Path(__file__).resolve().parents[2]
CDP = ROOT / "examples/cdp/cdp.sm_90.cubin"
TILED = Path(__file__).parent / "fixtures/tiled.sm_90.cubin"


def test_layout_finds_relocations_and_offset_attributes() -> None:
    data = CDP.read_bytes()
    lay = layout(data, "_Z9scale_allPKiPKfPfifPi", str(CDP))
    # cuobjdump -elf lists 11 relocations in .rela.text._Z9scale_all..., EXIT at 0x70 0xf0 0x3a0 0x420
    # and one INT_WARP_WIDE instruction at 0x3d0
    relocs = [s.value for s in lay.slots if s.what.startswith(".rela")]
    assert len(relocs) == 11 and relocs[:2] == [0x110, 0x120]
    assert [s.value for s in lay.slots if s.what == "EIATTR_EXIT_INSTR_OFFSETS"] == [0x70, 0xF0, 0x3A0, 0x420]
    assert [s.value for s in lay.slots if s.what == "EIATTR_INT_WARP_WIDE_INSTR_OFFSETS"] == [0x3D0]
    code = load_kernel(data, "_Z9scale_allPKiPKfPfifPi", str(CDP))
    for off in (0x70, 0xF0, 0x3A0, 0x420):
        assert code.instructions[off // 16].base_opcode == "EXIT"


def test_relocated_word_moves_with_its_relocation() -> None:
    data = CDP.read_bytes()
    kernel = "_Z9scale_allPKiPKfPfifPi"
    lay = layout(data, kernel, str(CDP))
    order = list(range(lay.text_size // 16))
    i = 0x110 // 16
    order[i], order[i + 1] = order[i + 1], order[i]
    new = permute(data, lay, order)
    verify_roundtrip(data, new, kernel, order, str(CDP))
    after = layout(new, kernel, str(CDP))
    relocs = [s.value for s in after.slots if s.what.startswith(".rela")]
    assert relocs[:2] == [0x120, 0x110]  # the two relocated words swapped places, so did their entries
    # the relocation entries still name the same symbols / types: only r_offset changed
    for a, b in zip(lay.slots, after.slots, strict=True):
        if a.size == 8:
            assert data[a.file_pos + 8 : a.file_pos + 24] == new[b.file_pos + 8 : b.file_pos + 24]


@pytest.mark.parametrize(
    "path, kernel",
    [
        (ROOT / "examples/stencil/stencil.sm_90.cubin", "blur_rows"),
        (TILED, "sgemm_tiled"),
        (TILED, "axpy4"),
        (ROOT / "examples/noinline/noinline.sm_90.cubin", "advance"),
        (Path(__file__).parent / "fixtures/matmul_leaky.sm_90.cubin", "matmul_leaky"),
    ],
)
def test_random_legal_walks_round_trip(path: Path, kernel: str) -> None:
    data = path.read_bytes()
    t = load_target(data, kernel, str(path), MOVABLE_ALL)
    rng = random.Random(7)
    order = t.identity
    for _ in range(60):
        legal = t.model.legal_moves(order)
        if not legal:
            break
        order = apply_move(order, rng.choice(legal))
    assert order != t.identity
    new = t.build(order)
    verify_roundtrip(data, new, t.code.kernel, order, str(path))
    assert len(new) == len(data)
    assert t.key(order) != t.key(t.identity)


def test_round_trip_check_catches_a_wrong_order_and_stray_bytes() -> None:
    data = TILED.read_bytes()
    t = load_target(data, "axpy4", str(TILED), MOVABLE_ALL)
    order = t.replay([m for m in t.model.legal_moves(t.identity)[:1]])
    new = t.build(order)
    with pytest.raises(PatchError, match="expected"):
        verify_roundtrip(data, new, "axpy4", t.identity, str(TILED))
    stray = bytearray(new)
    stray[10] ^= 1  # inside the ELF header's e_ident padding
    with pytest.raises(PatchError, match="outside"):
        verify_roundtrip(data, bytes(stray), "axpy4", order, str(TILED))


def test_bad_orders_and_inputs_are_refused() -> None:
    data = TILED.read_bytes()
    lay = layout(data, "axpy4", str(TILED))
    with pytest.raises(PatchError, match="permutation"):
        permute(data, lay, [0, 0, 1])
    with pytest.raises(ScheduleError, match="matches no"):
        layout(data, "nonexistent", str(TILED))
    with pytest.raises(ScheduleError, match="not an ELF"):
        layout(b"hello", "k", "x.cubin")


def test_nv_info_records_parse_to_the_section_end() -> None:
    from warpwise.analysis.schedule.patch import nv_info_records

    raw = bytes([4, 0x1C, 8, 0]) + struct.pack("<II", 0x70, 0x210) + bytes([3, 0x1B, 0xFF, 0])
    assert nv_info_records(raw, "s", "p") == [(0, 4, 0x1C, 8), (12, 3, 0x1B, 2)]
    with pytest.raises(PatchError, match="runs past"):
        nv_info_records(raw[:10], "s", "p")
    with pytest.raises(PatchError, match="unknown record format"):
        nv_info_records(bytes([9, 1, 0, 0]), "s", "p")
