"""Rules added for the sixth hold-out set (bench/advice/holdout6/, issue 10, helper model2), checked on the
committed H200 reports and cubins they were found on and on kernels that must not match them:

- a loop nvcc unrolled completely (no back edge in the SASS) is loop_no_unroll's, found from the line table
  (one source line's instructions repeated in straight-line code), not function_split's;
- rolling a loop back up keeps the SM's work, so the SM roofline caps loop_no_unroll;
- an index load whose first use is the validity test guarding the gather is an indirection too."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from warpwise.analysis.advice import common as cm
from warpwise.analysis.advice import ranking as rk
from warpwise.analysis.advice.code import _guards_dependent_access
from warpwise.analysis.binary.load import load_cubin
from warpwise.analysis.program.build import build_program
from warpwise.analysis.program.model import ProgramFunction

from tests.conftest import pair_advice_report

ADVICE = Path(__file__).resolve().parents[2] / "bench" / "advice"
ASIAN = ADVICE / "holdout6" / "pairs" / "asian_unroll_all"
IM2COL = ADVICE / "holdout6" / "pairs" / "im2col_indexmap"


@cache
def _kernel_fn(cubin: Path, name: str) -> ProgramFunction:
    prog = build_program(load_cubin(cubin))
    return next(pf for pf in prog.functions.values() if name in pf.name and not pf.name.startswith("$"))




def test_the_fully_unrolled_step_loop_is_found_in_the_line_table() -> None:
    # 252 steps under '#pragma unroll': no loop in the SASS; lines 34-37 of the body (inlined into the kernel at
    # line 44) repeated: 252 copies of lines 35 and 36, two hashes' adds per step on line 34, and mix32's lines
    # (18-22, inlined twice per step at line 34) count as copies of line 34, the loop's line that calls them
    pf = _kernel_fn(ASIAN / "orig.sm_90.cubin", "asian_paths")
    assert not pf.loops
    loop_level: dict[tuple[int, int], int] = {}
    for i in pf.instructions:
        hit = cm.fully_unrolled_line(pf, i)
        if hit is not None:
            loop_level[(hit[1], hit[2])] = hit[3]
    assert loop_level == {(34, 1): 503, (35, 1): 252, (36, 1): 252, (37, 1): 126}
    # the prologue (lines 29, 30: dt, drift, the path's key, whose mix32 is inlined at line 30) and the payoff
    # (line 39) are not copies
    for i in pf.instructions:
        if i.loc is not None and (i.loc.line in (29, 30, 39) or any(c.line == 30 for c in i.inline_chain)):
            assert cm.fully_unrolled_line(pf, i) is None


def test_a_rolled_loop_and_a_line_calling_a_helper_twice_are_not_full_unrolls() -> None:
    # gather's spmv loop is '#pragma unroll 1': each line's instructions once
    pf = _kernel_fn(ADVICE.parent.parent / "examples" / "gather" / "gather.sm_90.cubin", "spmv_ell")
    assert cm.repeated_lines(pf) == {}


def test_asian_loop_no_unroll_replaces_function_split_and_is_capped_by_the_sm() -> None:
    rep = pair_advice_report(ASIAN)
    cands = {a.optimizer: a for a in rep.candidates}
    no = cands["loop_no_unroll"]
    assert "#pragma unroll 4" in no.hint and "lines 34, 35, 36 and 37" in no.hint and "about 252 times" in no.hint
    # 66% of the samples are instruction-fetch stalls (eq. 2: 2.98x); rolling keeps every step's instructions,
    # so the SM at 67.6% of its peak caps the gain (1.31x measured)
    assert no.share > 0.6
    assert no.cap is not None and no.cap.unit == "sm" and no.cap.binding
    assert 1.3 < no.estimated_speedup < 1.55
    # function_split keeps only the inlined code that is not a copy of the body (or nothing)
    split = cands.get("function_split")
    assert split is None or split.matched_samples < 0.01 * no.matched_samples
    assert "loop_no_unroll" in rk.UNCHANGED_UNITS and "sm" in rk.UNCHANGED_UNITS["loop_no_unroll"]


def test_the_padding_test_of_a_loaded_offset_guards_the_gather() -> None:
    # LDG R5 = map[i]; ISETP.GE P0, R5, RZ; @P0 IMAD.WIDE R2, R5, 4, R2; @P0 LDG R9, [R2]
    pf = _kernel_fn(IM2COL / "orig.sm_90.cubin", "unfold_cols")
    test = next(i for i in pf.instructions if i.base_opcode == "ISETP" and "R5" in i.operands)
    assert _guards_dependent_access(pf, test, {"R5"})
    # the bounds test on the thread index guards only the EXIT, and reads no loaded value
    bound = next(i for i in pf.instructions if i.base_opcode == "ISETP")
    assert bound.offset < test.offset and not _guards_dependent_access(pf, bound, {"R2", "R3"})
    # a value that does not reach the gather's address: the test guards the gather, but not through R7
    assert not _guards_dependent_access(pf, test, {"R7"})


@pytest.mark.parametrize(("d", "first"), [(IM2COL, True),
                                          (ADVICE / "holdout" / "pairs" / "mesh_neighbors", True)])
def test_gathers_get_indirect_address_elimination(d: Path, first: bool) -> None:
    rep = pair_advice_report(d)
    assert (rep.advice[0].optimizer == "indirect_address_elimination") == first
