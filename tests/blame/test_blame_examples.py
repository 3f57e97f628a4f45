"""The blamer on the examples' real H200 profiles and sm_90 cubins."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
from warpwise.analysis.binary.load import load_cubin
from warpwise.analysis.blame.attribute import attribute
from warpwise.analysis.blame.model import BlameGraph
from warpwise.analysis.profile.model import KernelProfile
from warpwise.analysis.profile.ncu import load_profiles
from warpwise.analysis.program.build import build_program
from warpwise.analysis.program.model import Program

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NAMES = ("gather", "stencil", "intdiv", "noinline", "cdp")


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[Program, KernelProfile, BlameGraph]]:
    out = {}
    for e in NAMES:
        prog = build_program(load_cubin(EXAMPLES / e / f"{e}.sm_90.cubin"))
        prof = load_profiles(str(EXAMPLES / e / f"{e}.ncu-rep"))[0]
        out[e] = (prog, prof, attribute(prog, prof))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_conservation_per_reason(runs: dict, name: str) -> None:
    _, prof, g = runs[name]
    want: dict[str, int] = defaultdict(int)
    want_ni: dict[str, int] = defaultdict(int)
    for pc in prof.pcs.values():
        for r, v in pc.stalls.items():
            want[r] += v
        for r, v in pc.stalls_not_issued.items():
            want_ni[r] += v
    got: dict[str, float] = defaultdict(float)
    got_ni: dict[str, float] = defaultdict(float)
    for e in g.edges:
        got[e.reason] += e.stall_samples
        got_ni[e.reason] += e.latency_samples
    assert sum(want.values()) > 1000
    assert dict(got) == pytest.approx(dict(want))
    assert {r: v for r, v in got_ni.items() if v} == pytest.approx({r: v for r, v in want_ni.items() if v})


def test_gather_long_scoreboard_on_the_dependent_loads(runs: dict) -> None:
    prog, _, g = runs["gather"]
    k = prog.function("_Z8spmv_ellPKiPKfS2_Pfii")
    by_def: dict[int | None, float] = defaultdict(float)
    for e in g.edges:
        if e.reason == "long_scoreboard":
            by_def[e.def_offset] += e.stall_samples
    total = sum(by_def.values())
    on_ldg = {off: s for off, s in by_def.items() if off is not None and k.function.at(off).base_opcode == "LDG"}
    assert sum(on_ldg.values()) / total > 0.99
    lines = {k.function.at(off).loc.line: s for off, s in on_ldg.items()}
    assert set(lines) == {16, 17}  # cols[k*rows+r] (line 16), vals[..] and x[c] (line 17)
    # the top def is the x[c] load, the gather that depends on the index load
    top = max(on_ldg, key=on_ldg.__getitem__)
    assert "R6.64" in k.function.at(top).text and k.function.at(top).loc.line == 17
    assert all(prog.loop_of(k.name, off) is not None for off in on_ldg)
    cats = {e.category for e in g.edges if e.reason == "long_scoreboard" and e.def_offset is not None}
    assert cats == {"global_memory"}


def test_stencil_execution_dependency_on_f2f_conversions(runs: dict) -> None:
    prog, _, g = runs["stencil"]
    k = prog.function("_Z9blur_rowsPKfPfii")
    by_op: dict[str, float] = defaultdict(float)
    f2f_lines = set()
    for e in g.edges:
        if e.reason == "short_scoreboard" and e.def_offset is not None:
            ins = k.function.at(e.def_offset)
            by_op[ins.base_opcode] += e.stall_samples
            if ins.base_opcode == "F2F":
                f2f_lines.add(ins.loc.line)
    assert max(by_op, key=by_op.__getitem__) == "F2F"
    assert by_op["F2F"] / sum(by_op.values()) > 0.85
    assert f2f_lines == {18}  # acc += 0.1 * in[...]: the double literal
    # wait stalls blamed on a def land on the double-precision chain (DFMA fed by F2F) first
    wait: dict[str, float] = defaultdict(float)
    for e in g.edges:
        if e.reason == "wait" and e.def_offset is not None:
            wait[k.function.at(e.def_offset).base_opcode] += e.stall_samples
    assert max(wait, key=wait.__getitem__) == "DFMA"


def test_noinline_call_in_loop_is_blamed(runs: dict) -> None:
    prog, _, g = runs["noinline"]
    kernel = "_Z7advancePfPKfiif"
    calls = [e for e in g.edges if e.function == kernel and e.def_offset is not None
             and prog.function(kernel).function.at(e.def_offset).base_opcode == "CALL"]
    assert calls and all(prog.loop_of(e.function, e.def_offset) is not None for e in calls)
    # samples inside damp() (filed by Nsight Compute under the kernel's name) keep damp's own name
    assert any(e.function == "$_Z7advancePfPKfiif$_Z4dampfff" for e in g.edges)


def test_cdp_device_runtime_samples_self_kept(runs: dict) -> None:
    prog, prof, g = runs["cdp"]
    unresolved = [e for e in g.edges if e.section == ""]
    assert unresolved and all(e.def_offset is None for e in unresolved)
    assert g.stats["unresolved_samples"] == sum(e.stall_samples for e in unresolved)
    assert {e.function for e in unresolved} <= {f for f, _ in prof.pcs} - set(prog.functions)


def test_coverage_improves_with_pruning(runs: dict) -> None:
    for name in ("gather", "stencil", "intdiv", "noinline"):
        g = runs[name][2]
        assert 0.0 <= g.coverage_before <= g.coverage_after <= 1.0
    assert runs["gather"][2].coverage_after > runs["gather"][2].coverage_before
