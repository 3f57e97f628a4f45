"""Rules added for kernels of the hold-out sets (bench/advice/holdout*/): each is checked on the committed H200
report it was found on and on the main-set kernels that must not match it."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from warpwise.analysis.advice.code import value_indexed_constant_loads
from warpwise.analysis.binary.load import load_cubin
from warpwise.analysis.pipeline import analyze
from warpwise.analysis.program.build import build_program

from tests.conftest import pair_report

ADVICE = Path(__file__).resolve().parents[2] / "bench" / "advice"


@cache
def _report(where: str, pair: str) -> Any:
    """The advice report of the longest launch of ``pair``'s kernel in bench/advice/<where>/pairs."""
    d = ADVICE / where / "pairs" / pair
    meta = json.loads((d / "pair.json").read_text())
    srcs = [p for p in sorted(d.iterdir()) if p.suffix in (".cu", ".cuh")] + [ADVICE / "pairs" / "bench.cuh"]
    an = analyze(pair_report(d), sorted(d.glob("orig.*.cubin")), srcs, kernel=meta["kernel"])
    ks = [k for k in an.kernels if k.advice_report is not None]
    return max(ks, key=lambda k: k.profile.launch.duration_ns).advice_report


class _View:
    """The two attributes value_indexed_constant_loads reads."""

    def __init__(self, cubin: Path) -> None:
        self.program = build_program(load_cubin(cubin))


def test_a_constant_table_indexed_by_pixel_values_is_a_transaction_reduction() -> None:
    # tone_curve_constant: three 256-entry curves in __constant__ read as curve[c][pixel] (LDC c[0x3][R]);
    # the constant cache replays each warp's lookup per distinct value and every LDC waits behind the
    # replays (mio_throttle at the LDCs, short_scoreboard on their results: 91% of the samples). H200: 17.3x
    # from staging the curves in shared memory; before this rule nothing matched (occupancy_decrease 1.01x).
    rep = _report("holdout2", "tone_curve_constant")
    top = rep.advice[0]
    assert top.optimizer == "memory_transaction_reduction" and top.params.get("constant_lookup") == 1
    inputs = top.estimate.inputs
    assert inputs["indexed_loads"] == 3.0
    assert 0.85 < inputs["M"] / inputs["T"] < 0.95 and inputs["M_indexed"] > 0.3 * inputs["T"]
    s = inputs["T"] / (inputs["T"] - inputs["M"])  # eq. 2 before the launch floor
    assert top.estimated_speedup == pytest.approx(inputs["T_ns"] / (inputs["f_ns"] + (inputs["T_ns"] - inputs["f_ns"])
                                                                    / s))
    assert "shared memory" in top.hint and "line 13" in top.hint.replace("lines", "line")


@pytest.mark.parametrize(("where", "pair", "indexed"), [
    ("holdout2", "tone_curve_constant", 3),
    # register-indexed constant loads whose index is a loop counter or the block's channel: broadcast
    ("pairs", "bias_relu_float4", 0), ("pairs", "fir_window", 0), ("pairs", "rbf_fastmath_double", 0),
    ("holdout3", "gmm_loglik", 0),
])
def test_only_constant_loads_indexed_by_loaded_data_are_matched(where: str, pair: str, indexed: int) -> None:
    cubin = ADVICE / where / ("pairs" if where != "pairs" else "") / pair / "orig.sm_90.cubin"
    found = value_indexed_constant_loads(_View(cubin))  # type: ignore[arg-type]
    assert len(found) == indexed
    assert all("c[0x3][R" in text for text in found.values())


def _division_line(cubin: Path, line: int) -> tuple[list[Any], list[Any]]:
    """(all instructions, the division sequence) of ``line`` in the cubin's first function holding a seed there."""
    from warpwise.analysis.advice.code import division_sequence

    prog = build_program(load_cubin(cubin))
    for pf in prog.functions.values():
        ins = [i for i in pf.instructions if i.loc is not None and i.loc.line == line]
        if any(i.base_opcode == "I2F" and ".RP" in i.opcode for i in ins):
            return ins, division_sequence(ins)
    raise AssertionError(f"no division on line {line}")


def test_the_division_sequence_is_the_seed_and_what_reads_it_not_the_rest_of_the_line() -> None:
    # reduce_interleaved line 18: `if (tid % (2 * stride) == 0) s[tid] += s[tid + stride];` -- 24 instructions:
    # the divisor's doubling, nvcc's 17-instruction modulo sequence (with its zero-divisor fix-up), the == 0 test
    # of the remainder and the if body
    ins, seq = _division_line(ADVICE / "holdout3" / "pairs" / "reduce_interleaved" / "orig.sm_90.cubin", 18)
    ops = [i.opcode for i in seq]
    assert len(ins) == 24 and len(seq) == 18
    assert ops[0] == "I2F.U32.RP" and "MUFU.RCP" in ops and ops.count("IMAD.HI.U32") == 2
    assert ops[-2:] == ["LOP3.LUT", "ISETP.NE.AND"]  # ~0 for a zero divisor; the test reads the remainder
    kept = [i for i in ins if i not in seq]
    # the user's work stays: the divisor 2*stride, the body's address, loads, add and store
    assert sorted(i.opcode for i in kept) == ["FADD", "IMAD.SHL.U32", "LDS", "LDS", "LEA", "STS"]
    # periodic_divmod line 13 holds nothing but divisions/modulos by run-time extents: all of it is the sequence
    ins, seq = _division_line(ADVICE / "pairs" / "periodic_divmod" / "orig.sm_90.cubin", 13)
    assert len(seq) == len(ins) == 28


def test_idle_lanes_of_an_issue_bound_kernel_count_in_issued_instructions() -> None:
    # plasma_species: electrons and ions interleaved, one thread each, every warp runs both 64-substep pushes
    # with half its lanes (SM at 98%: issue bound). Half of 46% of the samples sit at the entry as not_selected
    # warps, so the divergent instructions' samples understate them; their executed warp instructions do not.
    # H200: 1.894x from one species per warp (before: 1.23x from the samples).
    rep = _report("holdout", "plasma_species")
    adv = next(a for a in rep.advice if a.optimizer == "divergence_reduction")
    d = ADVICE / "holdout" / "pairs" / "plasma_species"
    an = analyze(pair_report(d), sorted(d.glob("orig.*.cubin")), [d / "orig.cu", ADVICE / "pairs" / "bench.cuh"],
                 kernel="push")
    prof = max((k.profile for k in an.kernels), key=lambda p: p.launch.duration_ns)
    issued = sum(s.inst_executed for s in prof.pcs.values())
    wasted = sum(s.inst_executed * (1 - s.thread_inst_executed / (32 * s.inst_executed))
                 for s in prof.pcs.values()
                 if s.inst_executed > 0 and s.thread_inst_executed < 0.9 * 32 * s.inst_executed)
    assert 0.45 < wasted / issued < 0.5  # both sides at half the lanes: nearly half the issue slots are idle lanes
    assert adv.estimate.inputs["M"] == pytest.approx(adv.estimate.inputs["T"] * wasted / issued)
    assert adv is rep.advice[0]


def test_lanes_idle_in_loops_of_uneven_trip_counts_are_load_imbalance() -> None:
    # spmv_csr_powerlaw: CSR SpMV, one thread per row of a power-law matrix (SM 4%: latency bound); the row
    # loop's back edge diverges, so a warp runs its longest row with 8-48% of its lanes. H200: a warp per row
    # (vector CSR) 8.44x; before this rule index prefetching (2.36x) was first and coalescing second (1.05x).
    # (Since helper modelF, global_memory_coalesce ranks the warp per row first, idle lanes included:
    # tests/advice/test_modelF_rules.py; this finding, the sorted-rows option, is second.)
    rep = _report("holdout2", "spmv_csr_powerlaw")
    top = next(a for a in rep.advice if a.optimizer == "divergence_reduction")
    assert rep.advice.index(top) == 1
    assert "back edge diverges" in top.estimate.formula and "whole warp" in top.hint
    assert 0.85 < top.estimate.inputs["M"] / top.estimate.inputs["T"] < 0.95
    # capped by the L1 it leaves in place (14.8% of peak: at most 6.76x)
    assert top.cap is not None and top.cap.unit == "l1" and top.estimated_speedup == pytest.approx(
        100 / 14.8, rel=0.01)


def test_a_divergent_branch_inside_a_loop_every_lane_runs_as_long_is_not_imbalance() -> None:
    # knn_local: the top-8 insertion diverges inside the candidate loop, whose trip count is the same for every
    # lane (its back edge never diverges); latency bound (SM 24%), so no idle-lane estimate (38% of its
    # instructions run with idle lanes, which would have read as 1.62x over register_reuse's 1.23x)
    d = ADVICE / "pairs" / "knn_local"
    meta = json.loads((d / "pair.json").read_text())
    an = analyze(pair_report(d), sorted(d.glob("orig.*.cubin")), [d / "orig.cu", ADVICE / "pairs" / "bench.cuh"],
                 kernel=meta["kernel"])
    rep = max((k for k in an.kernels if k.advice_report is not None and k.profile.name.startswith(meta["kernel"])),
              key=lambda k: k.profile.launch.duration_ns).advice_report
    assert rep.advice[0].optimizer == "register_reuse"
    assert all("back edge diverges" not in a.estimate.formula for a in rep.advice)
