"""load_cubin on the committed example cubins (nvcc 13.0, sm_90, -lineinfo -O3; examples/VERSIONS.txt)."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable

import pytest
from binfixtures import EXAMPLES, line_of
from warpwise.analysis.binary.load import load_cubin
from warpwise.analysis.binary.model import Cubin, Instruction
from warpwise.analysis.binary.tools import find_tool

NAMES = ["stencil", "gather", "intdiv", "noinline", "cdp"]
ADVANCE = "_Z7advancePfPKfiif"
DAMP = "$_Z7advancePfPKfiif$_Z4dampfff"
SLOWPATH = "$__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath"
BLUR = "_Z9blur_rowsPKfPfii"


def by_section(c: Cubin) -> dict[str, list[Instruction]]:
    out: dict[str, list[Instruction]] = {}
    for f in sorted(c.functions.values(), key=lambda f: (f.section, f.start)):
        out.setdefault(f.section, []).extend(f.instructions)
    return out


def test_noinline_functions_share_the_kernel_section(example: Callable[[str], Cubin]) -> None:
    c = example("noinline")
    assert c.arch == "sm_90" and not c.debug_build and not c.relocatable
    assert set(c.functions) == {ADVANCE, DAMP, SLOWPATH}
    assert [k.name for k in c.kernels()] == [ADVANCE]
    sec = f".text.{ADVANCE}"
    got = {n: (f.section, f.start, f.size, len(f.instructions)) for n, f in c.functions.items()}
    # starts are the symbols' st_value (nvdisasm prints the labels at /*03b0*/ and /*04e0*/)
    assert got == {ADVANCE: (sec, 0x0, 0x3B0, 59), DAMP: (sec, 0x3B0, 0x130, 19), SLOWPATH: (sec, 0x4E0, 0x720, 114)}
    assert c.functions[DAMP].source_name == "_Z4dampfff"
    # offsets stay relative to the section: damp's first instruction is at 0x3b0
    first = c.functions[DAMP].instructions[0]
    assert (first.offset, first.text) == (0x3B0, "FADD R14, |R9|.reuse, 1")
    src = (EXAMPLES / "noinline" / "noinline.cu").read_text()
    assert first.loc is not None and first.loc.line == line_of(src, "return v - dt * f")


def test_sass_text_predicates_and_operands(example: Callable[[str], Cubin]) -> None:
    f = example("noinline").functions[ADVANCE]
    exit_ = f.at(0x70)
    assert exit_ is not None and (exit_.predicate, exit_.opcode, exit_.operands) == ("P0", "EXIT", [])
    bra = f.at(0x100)
    assert bra is not None and (bra.predicate, bra.opcode, bra.operands) == ("!P0", "BRA", ["`(.L_x_0)"])
    ldg = f.at(0xD0)
    assert ldg is not None and ldg.text == "LDG.E R9, desc[UR4][R4.64]"
    assert (ldg.predicate, ldg.opcode, ldg.base_opcode) == (None, "LDG.E", "LDG")
    assert ldg.operands == ["R9", "desc[UR4][R4.64]"]
    call = f.at(0x1C0)
    assert call is not None and call.opcode == "CALL.REL.NOINC" and call.operands == [f"`({DAMP})"]
    slow = example("noinline").functions[SLOWPATH]
    two_preds = slow.at(0x640)
    assert two_preds is not None and (two_preds.predicate, two_preds.operands) == ("!P1", ["!P3", "`(.L_x_13)"])


def test_control_codes_of_known_instructions(example: Callable[[str], Cubin]) -> None:
    """Words and decodings of instructions whose words nvdisasm -hex printed (noinline.sm_90.cubin)."""
    f = example("noinline").functions[ADVANCE]
    ldg, call = f.at(0xD0), f.at(0x1C0)
    s2r, imad = f.at(0x10), f.at(0x40)
    viadd = f.at(0x120)
    assert ldg is not None and call is not None and s2r is not None and imad is not None and viadd is not None
    # LDG.E R9: /* 0x0000000404097981 */ /* 0x000162000c1e1900 */
    assert (ldg.lo, ldg.hi) == (0x0000000404097981, 0x000162000C1E1900)
    assert (ldg.control.write_barrier, ldg.control.read_barrier, ldg.control.stall) == (5, 0, 1)
    # first use of R9 is the call's argument: CALL waits on scoreboard 5 (hi 0x020fea0003c00000)
    assert call.control.waits_on == (5,)
    # S2R R0, SR_TID.X sets write barrier 0; IMAD R7, R7, UR4, R0 waits on it
    assert (s2r.control.write_barrier, s2r.control.read_barrier, s2r.control.stall) == (0, None, 7)
    assert imad.control.waits_on == (0,) and imad.control.write_barrier is None
    # VIADD R0, R6.reuse, ...: reuse flag of operand slot A
    assert viadd.control.reuse == 1


def test_stencil_lines_and_barriers(example: Callable[[str], Cubin]) -> None:
    f = example("stencil").functions[BLUR]
    src = (EXAMPLES / "stencil" / "stencil.cu").read_text()
    tap = line_of(src, "acc += 0.1 *")
    f2f = [i for i in f.instructions if i.opcode == "F2F.F64.F32"]
    # one float->double convert per tap value (9) and per partial sum fed into the next tap (8)
    assert len(f2f) == 9 + 8
    assert {(i.loc.file.rsplit("/", 1)[-1], i.loc.line) for i in f2f if i.loc} == {("stencil.cu", tap)}
    assert all(i.inline_chain == () for i in f.instructions)
    ldg = f.at(0x170)
    use = f.at(0x220)
    assert ldg is not None and use is not None
    assert ldg.text == "LDG.E.CONSTANT R9, desc[UR4][R10.64+-0x10]" and use.text == "F2F.F64.F32 R12, R9"
    assert ldg.control.write_barrier == 2 and use.control.waits_on == (2,)
    s2r, imad = f.at(0x60), f.at(0xB0)  # S2R R5, SR_CTAID.Y -> IMAD R5, R5, UR4, R0
    assert s2r is not None and imad is not None
    assert s2r.control.write_barrier == 1 and 1 in imad.control.waits_on
    entry = f.at(0)
    assert entry is not None and entry.loc is not None
    assert entry.loc.line == line_of(src, "__global__ void blur_rows")


@pytest.mark.parametrize("name", NAMES)
def test_every_instruction_matches_nvdisasm_hex(name: str, example: Callable[[str], Cubin]) -> None:
    """Independent check: each (lo, hi) equals the words nvdisasm -hex prints; counts = size / 16."""
    c = example(name)
    out = subprocess.run(
        [find_tool("nvdisasm"), "-c", "-hex", str(EXAMPLES / name / f"{name}.sm_90.cubin")],
        capture_output=True, text=True, check=True,
    ).stdout
    words: dict[tuple[str, int], tuple[int, int]] = {}
    sec, pending = "", None
    for line in out.splitlines():
        s = line.strip()
        if s.startswith(".section") and s[8:9] in " \t":
            sec = s.split()[1].split(",")[0]
        elif m := re.match(r"/\*([0-9a-f]+)\*/.*/\* (0x[0-9a-f]{16}) \*/$", s):
            pending = (int(m.group(1), 16), int(m.group(2), 16))
        elif (m := re.match(r"/\* (0x[0-9a-f]{16}) \*/$", s)) and pending:
            words[(sec, pending[0])] = (pending[1], int(m.group(1), 16))
            pending = None
    secs = by_section(c)
    assert sum(len(v) for v in secs.values()) == len(words) > 0
    for s, ins in secs.items():
        assert [i.offset for i in ins] == list(range(0, 16 * len(ins), 16))
        for i in ins:
            assert words[(s, i.offset)] == (i.lo, i.hi), (s, hex(i.offset))


@pytest.mark.parametrize("name", NAMES)
def test_barrier_semantics_hold(name: str, example: Callable[[str], Cubin]) -> None:
    """Reasoning check of the decoding: waits have setters, fixed-latency ALU ops set no barrier,
    loads and S2R with a register destination set a write barrier."""
    alu = {"IMAD", "IADD3", "LOP3", "ISETP", "FFMA", "FADD", "FMUL", "MOV", "SHF", "LEA", "FSETP", "SEL"}
    for sec, ins in by_section(example(name)).items():
        setters = {i.control.write_barrier for i in ins} | {i.control.read_barrier for i in ins}
        for i in ins:
            assert set(i.control.waits_on) <= setters, (sec, hex(i.offset), i.text)
            if i.base_opcode in alu:
                assert i.control.write_barrier is None and i.control.read_barrier is None, i.text
            if i.base_opcode in {"LDG", "LDS", "S2R"} and i.operands[0] != "RZ":
                assert i.control.write_barrier is not None, i.text


def test_cdp_kernels_and_device_runtime(example: Callable[[str], Cubin]) -> None:
    c = example("cdp")
    kernels = {k.name for k in c.kernels()}
    assert {"_Z9scale_allPKiPKfPfifPi", "_Z13scale_segmentPKfPfiif"} <= kernels
    assert not c.functions["__cudaCDP2LaunchDeviceV2"].is_kernel
    for f in c.functions.values():
        assert len(f.instructions) * 16 == f.size


@pytest.mark.parametrize("name", ["stencil", "gather", "intdiv", "noinline"])
def test_lines_agree_with_nsight_compute(name: str, example: Callable[[str], Cubin]) -> None:
    """Independent check of the line table: Nsight Compute's source_info for every sampled PC."""
    ncu_report = pytest.importorskip("ncu_report")
    report = ncu_report.load_report(str(EXAMPLES / name / f"{name}.ncu-rep"))
    action = report.range_by_idx(0).action_by_idx(0)
    m = action.metric_by_name("smsp__pcsamp_sample_count")
    pcs = sorted(m.correlation_ids().as_uint64(i) for i in range(m.num_instances()))
    kernel = example(name).kernels()[0]
    section = by_section(example(name))[kernel.section]
    checked = 0
    for pc in pcs:
        ins = section[(pc - pcs[0]) // 16]  # PC 0 of the section is always sampled (its first LDC)
        info = action.source_info(pc)
        assert info is not None and ins.loc is not None
        assert (ins.loc.file, ins.loc.line) == (info.file_name(), info.line()), hex(pc - pcs[0])
        checked += 1
    assert checked >= 30


def test_load_is_cheap_next_to_nvdisasm() -> None:
    """The whole load costs less than 3x nvdisasm's own run (the 20k-instruction budget, scaled)."""
    path = str(EXAMPLES / "cdp" / "cdp.sm_90.cubin")
    t0 = time.perf_counter()
    subprocess.run([find_tool("nvdisasm"), "-c", "-gi", path], capture_output=True, check=True)
    t1 = time.perf_counter()
    load_cubin(path)
    t2 = time.perf_counter()
    assert t2 - t1 < 3 * (t1 - t0) + 0.2
