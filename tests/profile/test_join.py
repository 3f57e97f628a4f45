"""Joining profile PCs to cubin instructions, and refusing a binary of another build."""

from __future__ import annotations

import pytest
from warpwise.analysis.binary.load import load_cubin
from warpwise.analysis.profile.join import MismatchError, join
from warpwise.analysis.profile.ncu import UNATTRIBUTED, load_profiles

from tests.conftest import example


def test_join_matches_every_sampled_instruction() -> None:
    prof = load_profiles(example("gather", ".ncu-rep"))[0]
    cubin = load_cubin(str(example("gather", ".sm_90.cubin")))
    join(prof, cubin)
    fn = next(f for f in cubin.functions.values() if f.section == ".text._Z8spmv_ellPKiPKfS2_Pfii")
    for (func, off), s in prof.pcs.items():
        assert func == "_Z8spmv_ellPKiPKfS2_Pfii"
        ins = fn.at(off)
        assert ins is not None and s.sass.split()[0].lstrip("@") in (ins.opcode, ins.predicate or "")


def test_cdp_functions_named_from_cubin() -> None:
    prof = load_profiles(example("cdp", ".ncu-rep"))[0]
    join(prof, load_cubin(str(example("cdp", ".sm_90.cubin"))))
    names = set(prof.functions())
    assert "_Z13scale_segmentPKfPfiif" in names  # the child grid's PCs keep the child's name
    assert not any("$fn" in n for n in names)
    assert UNATTRIBUTED in names


def test_mismatched_binary_is_refused() -> None:
    prof = load_profiles(example("stencil", ".ncu-rep"))[0]
    with pytest.raises(MismatchError, match="_Z9blur_rowsPKfPfii"):
        join(prof, load_cubin(str(example("gather", ".sm_90.cubin"))))
