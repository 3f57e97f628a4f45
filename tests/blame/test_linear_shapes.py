"""Reaching definitions stay linear on the shape that made them quadratic (issue 15): one register
redefined in many skippable loops, built from PTX with ptxas (skipped where ptxas is missing)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bench_profile import synthetic
from warpwise.analysis.binary.load import load_cubin
from warpwise.analysis.blame.attribute import attribute
from warpwise.analysis.blame.slice import FunctionIndex
from warpwise.analysis.program.build import build_program
from warpwise.analysis.program.model import Program

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "perf"))
import shapes

PTXAS = shutil.which("ptxas") or (str(Path(shutil.which("nvcc") or "").with_name("ptxas")) if shutil.which("nvcc")
                                   else None)


def _loops_program(tmp_path: Path, units: int) -> Program:
    """bench/perf/shapes.py's skippable loops (``units`` of them), built with ptxas."""
    ptx = tmp_path / "loops.ptx"
    ptx.write_text(shapes.ptx_loops_source(units))
    cubin = tmp_path / "loops.cubin"
    subprocess.run([str(PTXAS), "-arch=sm_90", "-O3", "-o", str(cubin), str(ptx)], check=True, timeout=300)
    return build_program(load_cubin(str(cubin)))


@pytest.mark.skipif(not PTXAS or not Path(PTXAS).is_file(), reason="needs ptxas")
def test_skippable_loops_keep_reaching_sets_small(tmp_path: Path) -> None:
    prog = _loops_program(tmp_path, 300)
    pf = prog.functions["big"]
    assert len(pf.loops) >= 300
    fx = FunctionIndex(pf, "sm_90")
    for j in range(len(fx.ins)):
        fx.slice_candidates(j)
    # every register's summary: O(blocks) entries in all, not blocks x defs (the accumulator alone has
    # ~300 defs that all reach every later block)
    worst = max(sum(len(v) for v in inn.values()) for inn in fx._reach.values())
    assert worst <= 2 * len(pf.blocks)
    # and the far candidates (coverage_before) stay capped at two per block entry
    assert all(len(v) <= 2 for far in fx._reach_far.values() for v in far.values())
    # the whole blame graph comes out (sanity: edges on the loops' FFMAs)
    g = attribute(prog, synthetic(pf))
    assert len(g.edges) > len(pf.instructions)


def _reference_reaching(fx: FunctionIndex, reg: str) -> tuple[dict[int, dict[int, tuple[int, int]]],
                                                               dict[int, dict[int, int]]]:
    """The reaching-definitions fixpoint as first written (every pop re-sends its whole entry set, far sets
    merged by copying): the optimized FunctionIndex._reaching_in must give the same sets, in the same order."""
    import heapq

    from warpwise.analysis.blame.slice import SEARCH_LIMIT_CYCLES, _two_nearest, covers

    bnd, cum, first, end, du = fx._bounds(), fx.cum, fx.first, fx.end, fx.du
    rpo = fx._rpo_index()
    order = sorted(fx.first, key=rpo.__getitem__)
    limit = SEARCH_LIMIT_CYCLES
    gen = {}
    for b in fx._def_blocks(reg):
        e, found, gfar, covered = end[b], {}, {}, False
        preds: frozenset[str] = frozenset()
        for k in fx.defs_before(b, e, reg):
            c = cum[e] - cum[k]
            if c <= bnd[k]:
                found[k] = (c, e - k)
            elif c <= limit:
                gfar[k] = c
            if du[k].clobbers_all or du[k].guard is None:
                covered = True
                break
            preds = preds | {du[k].guard}
            if covers(preds, None):
                covered = True
                break
        gen[b] = (found, _two_nearest(gfar), covered)
    inn: dict[int, dict[int, tuple[int, int]]] = {}
    far: dict[int, dict[int, int]] = {}
    heap, queued = sorted(rpo[b] for b in gen), set(gen)
    while heap:
        b = order[heapq.heappop(heap)]
        queued.discard(b)
        found, gfar, covered = gen.get(b, ({}, {}, False))
        lc, ln = cum[end[b]] - cum[first[b]], end[b] - first[b]
        ofar = dict(gfar)
        out = dict(found)
        if not covered:
            for k, c in far.get(b, {}).items():
                if c + lc <= limit and c + lc < ofar.get(k, limit + 1):
                    ofar[k] = c + lc
            for k, (c, n) in inn.get(b, {}).items():
                c, n = c + lc, n + ln
                if c > bnd[k]:
                    if c <= limit and c < ofar.get(k, limit + 1):
                        ofar[k] = c
                elif k not in out or (c, n) < out[k]:
                    out[k] = (c, n)
        ofar = _two_nearest(ofar)
        for s in fx.succs.get(b, ()):
            tgt = inn.setdefault(s, {})
            changed = False
            for k, cn in out.items():
                if k not in tgt or cn < tgt[k]:
                    tgt[k], changed = cn, True
            if ofar:
                merged = dict(far.get(s, {}))
                for k, c in ofar.items():
                    if c < merged.get(k, limit + 1):
                        merged[k] = c
                merged = _two_nearest(merged)
                if merged != far.get(s):
                    far[s], changed = merged, True
            if changed and s not in queued:
                heapq.heappush(heap, rpo[s])
                queued.add(s)
    return inn, far


@pytest.mark.skipif(not PTXAS or not Path(PTXAS).is_file(), reason="needs ptxas")
def test_reaching_fixpoint_matches_the_plain_one(tmp_path: Path) -> None:
    # a far set changes without the entry set (the skippable loops carry defs past their bound around their
    # back edges): the optimized fixpoint re-sends only the far set then, and must lose nothing
    pf = _loops_program(tmp_path, 40).functions["big"]
    fx = FunctionIndex(pf, "sm_90")
    regs = sorted({r for (_b, r) in fx._defs})
    assert len(regs) > 10
    far_blocks = 0
    for reg in regs:
        inn, far = _reference_reaching(fx, reg)
        got = fx._reaching_in(reg)
        assert {b: list(v.items()) for b, v in got.items() if v} == {b: list(v.items()) for b, v in inn.items() if v}
        assert {b: v for b, v in fx._reach_far[reg].items() if v} == {b: v for b, v in far.items() if v}
        far_blocks += sum(1 for v in far.values() if v)
    assert far_blocks > len(pf.blocks)  # the far sets were exercised, not empty
