"""Rules for nothing-to-gain kernels and over-estimates (issue 10, helper modelH), checked on the committed H200
reports and cubins they were found on:

- global loads that queue in the memory system (context.KernelView.load_queueing: their wait per execution,
  Little's law over the PC samples, at least arch/roofline.QUEUEING_FACTOR times DRAM's latency at the launch's
  throughput) set DRAM's reach for the traffic as issued (KernelView.reach_now): the bound line and the caps of
  fixes that leave the traffic unchanged use it."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from warpwise.analysis.arch import roofline

from tests.conftest import ROOT, pair_advice_report, pair_report

H11 = ROOT / "bench" / "advice" / "holdout11" / "pairs"
KINETIC = H11 / "kinetic_energy_fp64"
JACOBI = H11 / "jacobi5_stream"


@cache
def _view(pair: Path) -> Any:
    """The KernelView of the longest launch of ``pair``'s kernel (its committed report, cubin and sources)."""
    from warpwise.analysis.advice.context import build_view
    from warpwise.analysis.arch.facts import arch_facts
    from warpwise.analysis.pipeline import analyze

    meta = json.loads((pair / "pair.json").read_text())
    srcs = [p for p in sorted(pair.iterdir()) if p.suffix in (".cu", ".cuh")]
    srcs.append(ROOT / "bench" / "advice" / "pairs" / "bench.cuh")
    an = analyze(pair_report(pair), sorted(pair.glob("orig.*.cubin")), srcs, kernel=meta["kernel"])
    k = max((k for k in an.kernels if k.advice_report is not None), key=lambda k: k.profile.launch.duration_ns)
    return build_view(k.profile, k.program, k.blame, arch_facts(k.profile.arch), None, None)


def test_kinetic_loads_queue_for_dram() -> None:
    v = _view(KINETIC)
    q = v.load_queueing
    assert q is not None and q.queued
    # 84.7 us launch at 66.5% of DRAM peak: its LDG.128s wait 1.50 us per execution (the first of each group of
    # four 2.2 us), against 0.44 us of DRAM latency at that throughput; 91% of the samples wait on them
    assert q.dram_pct == pytest.approx(66.5, abs=0.1)
    assert q.wait_ns == pytest.approx(1500, rel=0.03)
    assert q.latency_ns == pytest.approx(roofline.dram_latency_ns(q.dram_pct))
    assert q.latency_ns == pytest.approx(436, abs=3)
    assert q.share == pytest.approx(0.91, abs=0.01)
    assert v.reach["dram"] == pytest.approx(0.893, abs=0.002)  # read-only: the datasheet stream's reach
    assert v.reach_now["dram"] == pytest.approx(q.dram_pct / 100)


def test_kinetic_bound_and_nothing_to_gain() -> None:
    rep = pair_advice_report(KINETIC)
    assert rep.bound is not None and rep.bound.unit == "dram" and rep.bound.cap == pytest.approx(1.0)
    assert "queue" in rep.bound.text and "1.50 us per load" in rep.bound.text
    # strength_reduction 1.32x, occupancy_increase 1.17x, loop_unrolling and code_reordering were above 1.05x
    # before; its probe (512-thread blocks) measured 1.003x
    assert all(a.estimated_speedup <= 1.05 for a in rep.advice)


def test_jacobi_waits_are_not_queueing() -> None:
    # the stencil's loads hit L1/L2 for the neighbours: 0.25 us per execution, below DRAM's 0.42 us at 58%
    q = _view(JACOBI).load_queueing
    assert q is not None and not q.queued
    assert q.wait_ns == pytest.approx(250, rel=0.05) and q.wait_ns < q.latency_ns
    assert _view(JACOBI).reach_now == _view(JACOBI).reach


def _backward(pair: Path, d: int, off: int) -> float:
    """Whether ``off`` lies in the backward slice of the instruction at ``d`` (latency._backward_slices with one
    def of weight 1 and one issued sample at ``off``)."""
    from warpwise.analysis.advice import latency

    fn = next(f for f in _view(pair).program.functions.values() if f.is_kernel)
    index, rows = latency._slice_rows(fn)
    return latency._backward_slices(fn, index, rows, {d: 1.0}, {d: 1}, {off: 1.0}, None)


def test_jacobi_backward_slice() -> None:
    # LDG.E.CONSTANT R8, [R8.64] at 0x270 (u[c]): its address comes from IMAD R2 = ctaid.x * ntid.x + tid.x at
    # 0x70 (through IMAD.WIDE 0x130, SHL 0x150, IADD3 0x200), and it runs only past @P0 EXIT at 0xc0 (the bounds
    # test) and @P0 BRA at 0x1d0 (the interior test); the IADD3 at 0x220 builds another load's address, and the
    # LDC at 0x300 comes after it
    assert _backward(JACOBI, 0x270, 0x70) == 1.0
    assert _backward(JACOBI, 0x270, 0x200) == 1.0
    assert _backward(JACOBI, 0x270, 0xC0) == 1.0
    assert _backward(JACOBI, 0x270, 0x1D0) == 1.0
    assert _backward(JACOBI, 0x270, 0x90) == 1.0  # the ISETP the EXIT tests
    assert _backward(JACOBI, 0x270, 0x220) == 0.0
    assert _backward(JACOBI, 0x270, 0x300) == 0.0
    assert _backward(JACOBI, 0x270, 0x270) == 0.0  # the def itself is the forward pass's


def test_jacobi_nothing_to_reorder() -> None:
    # the six loads are issued together right after their address arithmetic and the bounds tests, then used:
    # code_reordering was 1.134x first (GPA eq. 4 over all the function's active samples), its probe (a shared
    # tile) measured 0.910x; now what can fill the waits is the work independent of each load, neither needed
    # before it nor already between it and its use
    rep = pair_advice_report(JACOBI)
    assert rep.bound is not None and rep.bound.unit == "l2"
    cr = next(a for a in rep.advice if a.optimizer == "code_reordering")
    assert cr.estimated_speedup == pytest.approx(1.035, abs=0.01)
    assert all(a.estimated_speedup <= 1.05 for a in rep.advice)


HASH = H11 / "hash_probe_split"


def test_hash_probe_split_fields() -> None:
    from warpwise.analysis.advice import code

    v = _view(HASH)
    fn = next(f for f in v.program.functions.values() if f.is_kernel)
    ins = {i.offset: i for i in fn.instructions}
    # keys[s] (0x180, first probe; 0x2a0, the next slot) through IMAD.WIDE.U32 R2, R7, 0x4, R4 off c[0x210];
    # vals[s] (0x340) through IMAD.MOV R2, R7 then LEA off c[0x218]: the same index roots (the LOP3 masks at
    # 0x160 and 0x280), another array
    assert code.index_roots(fn, ins[0x180]) == (frozenset({0x160}), frozenset({"c[0x0][0x210]"}))
    assert code.index_roots(fn, ins[0x2A0]) == (frozenset({0x280}), frozenset({"c[0x0][0x210]"}))
    assert code.index_roots(fn, ins[0x340]) == (frozenset({0x160, 0x280}), frozenset({"c[0x0][0x218]"}))
    assert code.split_field_loads(v) == {(fn.name, 0x340): ((fn.name, 0x180), (fn.name, 0x2A0))}
    # the coalesced probe-key load (0xd0) and the stencil's neighbours are not split fields
    assert code.split_field_loads(_view(JACOBI)) == {}
    assert code.split_field_loads(_view(KINETIC)) == {}


def test_hash_probe_interleave_first() -> None:
    # the payload load's 3.67 M of 9.73 M L2 sectors go: r = 0.623, L2 at 90.6% of peak -> 1/(0.906 r / 0.96)
    # = 1.70x on the longest launch (the L2 bound line, "at most 1.06x", caps only fixes that keep the traffic);
    # measured 1.753x; divergence_reduction 1.050x was first before
    rep = pair_advice_report(HASH)
    top = rep.advice[0]
    assert top.optimizer == "memory_transaction_reduction" and top.params.get("split_fields") == 1
    assert top.estimate.inputs["r_l2"] == pytest.approx(0.623, abs=0.002)
    assert top.estimated_speedup == pytest.approx(1.69, abs=0.02)
    assert "side by side" in top.hint


def test_queue_at_a_bound_cache_keeps_dram_reach() -> None:
    # examples/gather (ELL SpMV): its loads wait 2.16 us against DRAM's 0.43 us at 63% of peak, but L2 is at
    # 96% of peak, its own roofline: the queue is L2's, so DRAM's reach stays and the bound line is L2's
    from warpwise.analysis.advice.context import build_view
    from warpwise.analysis.arch.facts import arch_facts
    from warpwise.analysis.blame.attribute import attribute

    from tests.advice.conftest import example_inputs, example_report

    prof, prog = example_inputs("gather")
    v = build_view(prof, prog, attribute(prog, prof), arch_facts(prof.arch), None, None)
    q = v.load_queueing
    assert q is not None and q.queued
    assert q.wait_ns == pytest.approx(2160, rel=0.02) and q.latency_ns == pytest.approx(430, rel=0.02)
    assert v.reach_now == v.reach
    rep = example_report("gather")
    assert rep.bound is not None and rep.bound.unit == "l2"
