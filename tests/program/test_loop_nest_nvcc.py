"""Loop nesting on a real cubin compiled here (nvcc), since no example has nested loops."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from warpwise.analysis.binary.load import load_cubin
from warpwise.analysis.program.build import build_program

NVCC = shutil.which("nvcc")

SOURCE = """\
extern "C" __global__ void nest(const float* __restrict__ a, float* __restrict__ out, int n, int m) {
  float acc = 0.f;
#pragma unroll 1
  for (int i = 0; i < n; ++i) {
    acc += a[i];
#pragma unroll 1
    for (int j = 0; j < m; ++j) {
      int k = j;
#pragma unroll 1
      while (k < n) {
        acc = acc * a[k] + 1.0f;
        k += m + 1;
      }
    }
  }
  out[threadIdx.x] = acc;
}
"""


@pytest.mark.skipif(NVCC is None, reason="needs nvcc")
def test_triple_nest_depths_and_lines(tmp_path: Path) -> None:
    cu, cubin = tmp_path / "nest.cu", tmp_path / "nest.cubin"
    cu.write_text(SOURCE)
    subprocess.run([str(NVCC), "-cubin", "-arch=sm_90", "-O3", "-lineinfo", "-o", str(cubin), str(cu)],
                   check=True, capture_output=True)
    k = build_program(load_cubin(cubin)).function("nest")
    # nvcc versions the outer loop: a copy for m <= 0 (just acc += a[i]) beside the triple nest
    assert sorted(lp.depth for lp in k.loops.values()) == [1, 1, 2, 3]
    inner = next(lp for lp in k.loops.values() if lp.depth == 3)
    assert inner.parent is not None
    middle = k.loops[inner.parent]
    assert middle.parent is not None
    outer = k.loops[middle.parent]
    assert (middle.depth, outer.depth, outer.parent) == (2, 1, None)
    assert outer.children == (middle.header,) and middle.children == (inner.header,)
    assert inner.blocks < middle.blocks < outer.blocks
    assert (outer.first_line, outer.last_line) == (4, 11)  # for i (line 4) .. the while body (line 11)
    assert (middle.first_line, middle.last_line) == (7, 11)
    assert (inner.first_line, inner.last_line) == (10, 11)
    copy = next(lp for lp in k.loops.values() if lp.depth == 1 and lp is not outer)
    assert (copy.first_line, copy.last_line, copy.children) == (4, 5, ())
    # the while loop's load a[k] (line 11) sits in all three loops
    ldg = [i for i in k.instructions if i.base_opcode == "LDG" and k.loop_of(i.offset) is inner]
    assert len(ldg) == 1 and ldg[0].loc is not None and ldg[0].loc.line == 11
    assert [lp.header for lp in k.loop_nest(ldg[0].offset)] == [inner.header, middle.header, outer.header]
