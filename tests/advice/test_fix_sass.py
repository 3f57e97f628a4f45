"""Quick fixes change the machine code the way their advice says: compiled before and after with nvcc
(-lineinfo -O3 -arch=sm_90, no GPU needed) and compared in SASS."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from warpwise.analysis.advice import AdviceReport
from warpwise.analysis.advice.quickfix import QuickFix, combined_literal_fix, fixes_for_advice, float_literal_fixes
from warpwise.analysis.binary.tools import find_tool


def _rewrite_helpers() -> Any:
    """tests/rewrite/rewrite_helpers.py loaded by path (putting tests/rewrite on sys.path would shadow this
    folder's conftest for later imports)."""
    path = Path(__file__).resolve().parents[1] / "rewrite" / "rewrite_helpers.py"
    spec = importlib.util.spec_from_file_location("rewrite_helpers_for_advice", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


find_nvcc = _rewrite_helpers().find_nvcc
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def nvcc() -> str:
    path = find_nvcc()
    if path is None:
        pytest.skip("nvcc not found (PATH, PyPI nvidia-cuda-nvcc, cuda-pathfinder)")
    return path


def _apply(source: str, fix: QuickFix) -> str:
    data = source.encode("utf-8")
    for e in sorted(fix.edits, key=lambda e: -e.start):
        data = data[: e.start] + e.new_text.encode("utf-8") + data[e.end:]
    return data.decode("utf-8")


def _sass(nvcc: str, src: Path, out: Path) -> str:
    subprocess.run([nvcc, "-lineinfo", "-O3", "-arch=sm_90", "-cubin", "-o", str(out), str(src)],
                   check=True, capture_output=True, timeout=300)
    tool = find_tool("cuobjdump")
    assert tool is not None
    return subprocess.run([tool, "-sass", str(out)], check=True, capture_output=True, text=True, timeout=120).stdout


def _ops(sass: str) -> list[str]:
    return re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w\s+)?([A-Z][A-Z0-9_.]+)", sass)


LAPLACE = """__global__ void lap(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1) {
    float c = in[i];
    out[i] = c + 0.125 * (in[i - 1] + in[i + 1] - 4.0 * c);
  }
}
"""


def test_two_double_literals_fixed_together_remove_all_fp64(nvcc: str, tmp_path: Path) -> None:
    fixes = float_literal_fixes(LAPLACE, "lap.cu")
    assert [q.extra["literal"] for q in fixes] == ["0.125", "4.0"]
    fix = combined_literal_fix(fixes)
    assert fix is not None and fix.title == "Write 0.125f and 4.0f (float literals)"
    before, after = tmp_path / "before.cu", tmp_path / "after.cu"
    before.write_text(LAPLACE)
    after.write_text(_apply(LAPLACE, fix))
    fp64 = [o for o in _ops(_sass(nvcc, before, tmp_path / "b.cubin")) if o.startswith(("D", "F2F"))]
    assert len(fp64) >= 4  # F2F.F64.F32 in, DFMA/DADD/DMUL, F2F.F32.F64 out
    assert [o for o in _ops(_sass(nvcc, after, tmp_path / "a.cubin")) if o.startswith(("D", "F2F"))] == []


def test_unroll_fix_uses_the_advised_factor_and_changes_the_sass(reports: dict[str, AdviceReport], nvcc: str,
                                                                  tmp_path: Path) -> None:
    src_path = EXAMPLES / "gather" / "gather.cu"
    text = src_path.read_text()
    lu = next(a for a in reports["gather"].candidates if a.optimizer == "loop_unrolling")
    (fix,) = fixes_for_advice(lu, lambda _: text)
    pragma = fix.edits[0].new_text.strip()
    # the hint names the same pragma the fix inserts
    assert pragma in lu.hint or pragma.lower() in lu.hint
    before = _sass(nvcc, src_path, tmp_path / "b.cubin")
    (tmp_path / "gather").mkdir()
    (tmp_path / "common.cuh").write_text((EXAMPLES / "common.cuh").read_text())
    fixed = tmp_path / "gather" / "gather.cu"
    fixed.write_text(_apply(text, fix))
    after = _sass(nvcc, fixed, tmp_path / "a.cubin")
    assert _ops(before) != _ops(after)
    assert _ops(after).count("LDG.E.CONSTANT") > _ops(before).count("LDG.E.CONSTANT")
