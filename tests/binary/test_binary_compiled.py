"""load_cubin / load_binary on cubins and an executable compiled in this session (skipped without nvcc)."""

from __future__ import annotations

from pathlib import Path

import pytest
from binfixtures import INLINE_CU, line_of
from warpwise.analysis.binary.errors import UnsupportedArchError
from warpwise.analysis.binary.load import load_binary, load_cubin

K = "_Z1kPfPKfi"


def test_inline_chain_innermost_first(built: Path) -> None:
    c = load_cubin(built / "inl.sm_90.cubin")
    f = c.functions[K]
    inner, outer, call = (line_of(INLINE_CU, m) for m in ("// INNER", "// OUTER", "// CALL"))
    ffma = next(i for i in f.instructions if i.base_opcode == "FFMA")  # x * x + 1.0f
    assert ffma.loc is not None and ffma.loc.line == inner
    assert [s.line for s in ffma.inline_chain] == [outer, call]
    assert all(s.file == ffma.loc.file and s.file.endswith("inl.cu") for s in ffma.inline_chain)
    fadd = next(i for i in f.instructions if i.base_opcode == "FADD")  # inner(x) * 2.0f -> R0 + R0
    assert fadd.loc is not None and fadd.loc.line == outer and [s.line for s in fadd.inline_chain] == [call]
    stg = next(i for i in f.instructions if i.base_opcode == "STG")
    assert stg.loc is not None and stg.loc.line == call and stg.inline_chain == ()


def test_sm80_and_sm90_cubins(built: Path) -> None:
    c80, c90 = load_cubin(built / "inl.sm_80.cubin"), load_cubin(built / "inl.sm_90.cubin")
    assert (c80.arch, c90.arch) == ("sm_80", "sm_90")
    for c in (c80, c90):
        f = c.functions[K]
        assert f.is_kernel and f.start == 0 and len(f.instructions) * 16 == f.size
        assert [i.offset for i in f.instructions] == list(range(0, f.size, 16))
    # kernel parameters live at c[0x0][0x160] on sm_80..89 and c[0x0][0x210] on sm_90 (FACTS.md)
    assert any("c[0x0][0x16" in i.text for i in c80.functions[K].instructions)
    assert any("c[0x0][0x21" in i.text for i in c90.functions[K].instructions)


def test_debug_build_detected(built: Path) -> None:
    assert load_cubin(built / "inl.G.sm_90.cubin").debug_build
    assert not load_cubin(built / "inl.sm_90.cubin").debug_build
    assert not load_cubin(built / "inl.noline.sm_90.cubin").debug_build


def test_without_line_info(built: Path) -> None:
    c = load_cubin(built / "inl.noline.sm_90.cubin")
    assert all(i.loc is None and i.inline_chain == () for i in c.functions[K].instructions)


def test_relocatable_cubin(built: Path) -> None:
    c = load_cubin(built / "two.rdc.sm_90.cubin")
    assert c.relocatable
    assert {k.name for k in c.kernels()} == {"_Z2k1Pff", "_Z2k2Pff"}
    f = c.functions["_Z1fff"]  # with -rdc the device function gets its own section
    assert (f.section, f.start, f.is_kernel) == (".text._Z1fff", 0, False)
    calls = [i for i in c.functions["_Z2k1Pff"].instructions if i.base_opcode == "CALL"]
    assert [i.operands for i in calls] == [["`(_Z1fff)"]]
    assert calls[0].lo >> 16 == 0  # relocated call target: zero in the word until linked (FACTS.md)


def test_non_rdc_noinline_functions_per_kernel(built: Path) -> None:
    c = load_cubin(built / "two.sm_90.cubin")
    assert not c.relocatable
    for k in ("_Z2k1Pff", "_Z2k2Pff"):
        callee = c.functions[f"${k}$_Z1fff"]
        assert callee.section == f".text.{k}" and callee.start > 0 and callee.source_name == "_Z1fff"
        kern = c.functions[k]
        assert kern.start == 0 and kern.size == callee.start
        call = next(i for i in kern.instructions if i.base_opcode == "CALL")
        assert call.operands == [f"`(${k}$_Z1fff)"] and call.lo >> 16 != 0  # resolved relative target
    sections = {f.section for f in c.functions.values()}
    for s in sections:
        fs = sorted((f for f in c.functions.values() if f.section == s), key=lambda f: f.start)
        assert [f.start for f in fs[1:]] == [f.start + f.size for f in fs[:-1]]  # they tile the section


def test_executable_holds_both_archs(built: Path) -> None:
    cubins = load_binary(built / "app")
    assert sorted(c.arch for c in cubins) == ["sm_80", "sm_90"]
    assert all(c.path == str(built / "app") and c.member and c.member.endswith(".cubin") for c in cubins)
    for c in cubins:
        assert {k.name for k in c.kernels()} == {"_Z2k1Pff", "_Z2k2Pff"}
    (only90,) = load_binary(built / "app", arch="sm_90")
    assert only90.arch == "sm_90"
    ref = load_cubin(built / "two.sm_90.cubin")
    assert set(only90.functions) == set(ref.functions)
    with pytest.raises(UnsupportedArchError, match=r"app: no cubin for sm_100 \(it holds sm_80, sm_90\)"):
        load_binary(built / "app", arch="sm_100")


def test_load_binary_on_a_cubin(built: Path) -> None:
    (c,) = load_binary(built / "inl.sm_80.cubin", arch="80")
    assert c.arch == "sm_80" and c.member is None
    with pytest.raises(UnsupportedArchError, match="no cubin for sm_90"):
        load_binary(built / "inl.sm_80.cubin", arch="sm_90")
