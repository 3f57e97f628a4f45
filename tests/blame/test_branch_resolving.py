"""branch_resolving samples that land on the instruction after a control transfer (observed on the H200)."""

from __future__ import annotations

from warpwise.analysis.binary.load import load_cubin
from warpwise.analysis.blame import attribute
from warpwise.analysis.profile.join import join
from warpwise.analysis.profile.ncu import load_profiles
from warpwise.analysis.program.build import build_program

from tests.conftest import example

KERNEL = "_Z7advancePfPKfiif"


def test_samples_after_ret_go_to_the_ret() -> None:
    prof = load_profiles(example("noinline", ".ncu-rep"))[0]
    cubin = load_cubin(str(example("noinline", ".sm_90.cubin")))
    join(prof, cubin)
    after_ret = prof.pcs[(KERNEL, 0x4E0)]  # first instruction of the division slow path, after damp's RET
    ret = prof.pcs[(KERNEL, 0x4D0)]
    assert after_ret.stalls["branch_resolving"] == 1490
    assert ret.inst_executed > 10 * after_ret.inst_executed
    g = attribute(build_program(cubin), prof)
    on = {(e.use_offset, e.reason): e.stall_samples for e in g.edges}
    assert on.get((0x4E0, "branch_resolving"), 0.0) == 0.0
    assert on[(0x4D0, "branch_resolving")] >= 1490
    # the RET is in damp, the function before the slow path
    assert any(e.use_offset == 0x4D0 and e.function.endswith("_Z4dampfff") for e in g.edges)


def test_frequently_executed_fall_through_keeps_its_samples() -> None:
    prof = load_profiles(example("gather", ".ncu-rep"))[0]
    cubin = load_cubin(str(example("gather", ".sm_90.cubin")))
    join(prof, cubin)
    g = attribute(build_program(cubin), prof)
    moved = g.stats.get("branch_resolving_moved", 0.0)
    total = sum(s.stalls.get("branch_resolving", 0) for s in prof.pcs.values())
    assert moved < total  # most branch_resolving samples stay where Nsight Compute put them
