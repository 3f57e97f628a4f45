"""The join without SASS text (issue 15 item 4): a report read without ``sass_by_pc`` (ncu-report's disassembler
costs the reader ~72 MiB) is accepted by its executed instructions per opcode, each PC's counters and its source
lines, names the report's ``$fnN`` functions as the SASS join does, and on anything else reads the SASS after all:
another build is refused with the SASS check's message. Each check has a binary only it catches."""

from __future__ import annotations

import copy
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from warpwise.analysis.binary.load import load_cubin
from warpwise.analysis.binary.model import Cubin, Instruction, SourceLoc, opcode_of_sass
from warpwise.analysis.profile import join as join_module
from warpwise.analysis.profile import ncu
from warpwise.analysis.profile.join import (
    MismatchError,
    _code_sha256,
    _without_sass,
    join,
    sections,
)
from warpwise.analysis.profile.model import KernelProfile
from warpwise.analysis.profile.ncu import (
    UNATTRIBUTED,
    embedded_code,
    fill_sass,
    load_profiles,
    load_profiles_in_process,
)

from tests.conftest import example

NVCC = shutil.which("nvcc") or ("/usr/local/bin/nvcc" if Path("/usr/local/bin/nvcc").exists() else None)


@cache
def _read(name: str, sass: bool) -> tuple[KernelProfile, ...]:
    return tuple(load_profiles_in_process(example(name, ".ncu-rep"), sass=sass))


def read(name: str, sass: bool) -> KernelProfile:
    return copy.deepcopy(_read(name, sass)[0])  # join renames in place


def test_the_worker_reads_no_sass_when_asked() -> None:
    got = load_profiles(example("stencil", ".ncu-rep"), sass=False)[0]  # through the worker's --no-sass
    assert got.pcs and not any(s.sass for s in got.pcs.values())
    # the launch's executed instructions, by opcode, as the per-PC counts add them up
    assert sum(got.executed_per_opcode.values()) == sum(s.inst_executed for s in got.pcs.values()) == 77594624
    assert got.executed_per_opcode["DFMA"] == 9437184 and got == read("stencil", False)


@pytest.mark.parametrize("name", ["stencil", "cdp"])
def test_join_without_sass_equals_the_sass_join(name: str) -> None:
    cubin = cubin_of(name)
    with_sass, without = join(read(name, True), cubin), join(read(name, False), cubin)
    assert sorted(without.pcs) == sorted(with_sass.pcs)
    names = set(without.functions())
    if name == "cdp":  # $fn1..4: the child kernel and three device-runtime functions, named as by their SASS
        assert names == {UNATTRIBUTED, "_Z9scale_allPKiPKfPfifPi", "_Z13scale_segmentPKfPfiif",
                         "__cudaCDP2GetParameterBufferV2", "__cudaCDP2LaunchDeviceV2", "__cudaCDP2GetLastError"}
    for key, s in without.pcs.items():
        if s.function == UNATTRIBUTED:
            continue
        # the text comes from the binary now: the same instruction as ncu's disassembly at that PC
        assert s.sass and opcode_of_sass(s.sass) == opcode_of_sass(with_sass.pcs[key].sass)


def _moved_by_one_instruction(cubin: Cubin, kernel: str) -> Cubin:
    """``cubin`` as if its kernel were rebuilt with one more instruction at the top (every later one 16 bytes
    further on): the same opcodes in the same order, none at the profiled offsets."""
    functions = {}
    for name, f in cubin.functions.items():
        if f.section == f".text.{kernel}":
            nop = replace(copy.copy(f.instructions[0]), text="NOP", opcode="NOP", predicate=None, operands=[])
            moved = [replace(copy.copy(i), offset=i.offset + 16) for i in f.instructions]
            f = replace(f, size=f.size + 16, instructions=[nop, *moved])
        functions[name] = f
    return replace(cubin, functions=functions)


def _edited(cubin: Cubin, change: Callable[[Instruction], Instruction | None]) -> Cubin:
    return replace(cubin, functions={n: replace(f, instructions=[change(i) or i for i in f.instructions])
                                     for n, f in cubin.functions.items()})


@cache
def cubin_of(name: str) -> Cubin:
    """The example's cubin, loaded once (nvdisasm): join and the edits below never change a loaded cubin."""
    return load_cubin(str(example(name, ".sm_90.cubin")))


def _stencil() -> Cubin:
    return cubin_of("stencil")


def _secs_and_funcs(prof: KernelProfile, cubin: Cubin) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    by_func: dict[str, list[Any]] = {}
    for s in prof.pcs.values():
        by_func.setdefault(s.function, []).append(s)
    return by_func, sections(cubin)


def accepted_without_sass(name: str, cubin: Cubin, module: bool = True) -> bool:
    """Whether the join accepts ``cubin`` for ``name``'s report without reading SASS; ``module=False``: as if
    the report carried no copy of the profiled module."""
    prof = read(name, False)
    if not module:
        prof.profiled_code_sha256 = {}
    by_func, secs = _secs_and_funcs(prof, cubin)
    return _without_sass(prof, by_func, secs) is not None


@pytest.mark.parametrize("name", ["stencil", "gather", "intdiv", "noinline", "cdp"])
def test_the_profiled_binary_is_accepted_without_reading_sass(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_second_read(profile: KernelProfile) -> int:
        raise AssertionError("the report was read again for its SASS")

    monkeypatch.setattr(join_module, "fill_sass", no_second_read)
    prof = join(read(name, False), cubin_of(name))
    assert all(s.sass for s in prof.pcs.values() if s.function != UNATTRIBUTED)


def test_the_reports_module_is_the_profiled_code() -> None:
    for name in ("stencil", "cdp"):
        code = embedded_code(example(name, ".ncu-rep"))
        secs = sections(cubin_of(name))
        assert set(code) == set(secs)  # cdp: the kernels and the device runtime's functions
        assert all(code[n] == [_code_sha256(sec)] for n, sec in secs.items())
    assert embedded_code(example("stencil", ".cu")) == {}


def test_each_check_has_a_binary_only_it_refuses() -> None:
    kernel = read("stencil", False).mangled
    moved = _moved_by_one_instruction(_stencil(), kernel)
    # code moved by one instruction: the module's bytes differ; without the module, the PCs' counters (a guarded
    # instruction, global sectors) no longer fit the instruction at their offset (the opcode counts hardly
    # change: one straight-line block)
    assert not accepted_without_sass("stencil", moved)
    assert not accepted_without_sass("stencil", moved, module=False)
    # the guard dropped from the instructions the report saw predicated off (same bytes): only the counters tell
    unguarded = _edited(_stencil(), lambda i: replace(copy.copy(i), predicate=None) if i.predicate else None)
    assert not accepted_without_sass("stencil", unguarded)
    # other conversions (F2F -> F2I, same bytes): no PC counter and no line tells; the executed opcode counts do
    f2i = _edited(_stencil(), lambda i: replace(copy.copy(i), opcode="F2I.F64.F32") if i.base_opcode == "F2F"
                  else None)
    assert not accepted_without_sass("stencil", f2i)
    # without the module: the lines at the profiled offsets; every line moved by 3 (the source edited above the
    # kernel, the same SASS) is accepted, as by SASS; lines taken away leave nothing offset-exact: SASS decides
    shifted = _edited(_stencil(), lambda i: replace(copy.copy(i), loc=SourceLoc(i.loc.file, i.loc.line + 3))
                      if i.loc else None)
    assert accepted_without_sass("stencil", shifted, module=False)
    lineless = _edited(_stencil(), lambda i: replace(copy.copy(i), loc=None))
    assert not accepted_without_sass("stencil", lineless, module=False)
    assert accepted_without_sass("stencil", lineless)  # the module's bytes prove the build: no lines needed
    assert accepted_without_sass("stencil", _stencil()) and accepted_without_sass("stencil", _stencil(), False)


@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
def test_another_build_of_the_same_kernel_is_refused(tmp_path: Path) -> None:
    # the same source and kernel with another register budget: instructions of one source line reordered within
    # their block, so the opcode counts, the PCs' counters and the lines agree; the module's bytes do not
    out = tmp_path / "stencil.sm_90.cubin"
    subprocess.run([str(NVCC), "-cubin", "-arch=sm_90", "-lineinfo", "-O3", "-maxrregcount=16",
                    "-o", str(out), str(example("stencil", ".cu"))], check=True, capture_output=True, timeout=120)
    other = load_cubin(str(out))
    assert not accepted_without_sass("stencil", other)
    # then the SASS is read and its check refuses, with its own message (as when the SASS was read at first)
    for sass in (False, True):
        with pytest.raises(MismatchError, match=r"stencil\.sm_90\.cubin does not match .*stencil\.ncu-rep for "
                                                r"kernel blur_rows: only \d+/75 sampled instructions agree\. first "
                                                r"difference at offset 0x2f0"):
            join(read("stencil", sass), other)


def test_moved_code_is_refused_with_the_sass_message() -> None:
    prof = read("stencil", False)
    with pytest.raises(MismatchError, match=r"only \d+/75 sampled instructions agree\. first difference at offset"):
        join(prof, _moved_by_one_instruction(_stencil(), prof.mangled))
    assert all(s.sass for s in prof.pcs.values())  # read from the report for the check


class _WithoutPerOpcodeCounts:
    """A real ncu-report action that hides the per-opcode counts (a report collected without them, e.g. by
    another ncu version): everything else is the library's."""

    def __init__(self, action: Any) -> None:
        self._action = action

    def metric_by_name(self, name: str) -> Any:
        return None if name == "sass__inst_executed_per_opcode" else self._action.metric_by_name(name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._action, name)


def test_report_without_per_opcode_counts_is_read_with_sass() -> None:
    lib = ncu._import_ncu_report()
    report = lib.load_report(str(example("gather", ".ncu-rep")))
    action = _WithoutPerOpcodeCounts(report.range_by_idx(0).action_by_idx(0))
    prof = ncu._profile_of(action, lib, "gather.ncu-rep", (0, 0), sass=False)
    assert not prof.executed_per_opcode
    assert all(s.sass for s in prof.pcs.values())  # the join's SASS check needs it: read at once
    with pytest.raises(MismatchError, match="sampled instructions agree"):
        join(prof, _moved_by_one_instruction(cubin_of("gather"), prof.mangled))


def test_a_launch_without_binary_gets_the_reports_sass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WARPWISE_NCU_INPROCESS", "1")
    prof = read("stencil", False)
    assert fill_sass(prof) == len(prof.pcs) == 75
    assert {k: s.sass for k, s in prof.pcs.items()} == {k: s.sass for k, s in read("stencil", True).pcs.items()}
    assert fill_sass(prof) == 0  # nothing left to fill


def test_embedded_code_is_bounded_on_a_report_full_of_elf_headers(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # A crafted "report": 5,000 ELF64 headers claiming section tables to the end of the file. Only the first
    # MAX_EMBEDDED_IMAGES plausible ones are parsed; none is a real image, so nothing is found and nothing raises.
    import struct

    from warpwise.analysis.profile.ncu import MAX_EMBEDDED_IMAGES, embedded_code

    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    n = 5000
    blob = bytearray()
    for i in range(n):
        h = bytearray(header)
        struct.pack_into("<Q", h, 0x28, (n - i) * 64 - 64)  # section table at the end of the file
        struct.pack_into("<HH", h, 0x3A, 64, 1)
        blob += h
    blob += bytes(64)
    p = tmp_path / "crafted.ncu-rep"
    p.write_bytes(bytes(blob))
    import elftools.elf.elffile as elffile

    parsed = []
    real = elffile.ELFFile

    def counting(stream: Any) -> Any:
        parsed.append(1)
        return real(stream)

    monkeypatch.setattr(elffile, "ELFFile", counting)
    assert MAX_EMBEDDED_IMAGES < n
    assert embedded_code(p) == {}
    assert len(parsed) == MAX_EMBEDDED_IMAGES
