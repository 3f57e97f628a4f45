"""A synthetic profile with samples on every instruction (shared by scaling tests)."""

from __future__ import annotations

from warpwise.analysis.profile.model import KernelProfile, LaunchConfig, PCSample
from warpwise.analysis.program.model import ProgramFunction


def synthetic(pf: ProgramFunction) -> KernelProfile:
    """long_scoreboard / wait / short_scoreboard samples on every instruction of ``pf``."""
    pcs = {}
    for k, ins in enumerate(pf.instructions):
        st = {"long_scoreboard": 5 + k % 7, "wait": 1 + k % 3, "short_scoreboard": k % 2}
        pcs[(pf.name, ins.offset)] = PCSample(pf.name, ins.offset, ins.offset, ins.text, samples=sum(st.values()),
                                              not_issued=0, stalls=st, stalls_not_issued={}, inst_executed=100,
                                              thread_inst_executed=3200)
    return KernelProfile(name=pf.name, mangled=pf.name, arch="sm_90", launch=LaunchConfig(), pcs=pcs)
