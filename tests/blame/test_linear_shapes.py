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

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "perf"))
import shapes

PTXAS = shutil.which("ptxas") or (str(Path(shutil.which("nvcc") or "").with_name("ptxas")) if shutil.which("nvcc")
                                   else None)


@pytest.mark.skipif(not PTXAS or not Path(PTXAS).is_file(), reason="needs ptxas")
def test_skippable_loops_keep_reaching_sets_small(tmp_path: Path) -> None:
    ptx = tmp_path / "loops.ptx"
    ptx.write_text(shapes.ptx_loops_source(300))
    cubin = tmp_path / "loops.cubin"
    subprocess.run([str(PTXAS), "-arch=sm_90", "-O3", "-o", str(cubin), str(ptx)], check=True, timeout=300)
    prog = build_program(load_cubin(str(cubin)))
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
