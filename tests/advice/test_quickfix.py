"""Quick-fix finders on the examples' real sources and small synthetic CUDA snippets: exact byte edits."""

from __future__ import annotations

from pathlib import Path

import pytest
from warpwise.analysis.advice.quickfix import (
    DEFAULT_UNROLL,
    Edit,
    fast_math_note,
    float_literal_fixes,
    forceinline_fix,
    unroll_fix,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def apply(source: str, edits: tuple[Edit, ...]) -> str:
    data = source.encode("utf-8")
    for e in sorted(edits, key=lambda e: -e.start):
        data = data[: e.start] + e.new_text.encode("utf-8") + data[e.end:]
    return data.decode("utf-8")


def read(name: str) -> tuple[str, str]:
    p = EXAMPLES / name / f"{name}.cu"
    return p.read_text(encoding="utf-8"), str(p)


def test_stencil_double_literal_gets_f_suffix() -> None:
    src, path = read("stencil")
    fixes = float_literal_fixes(src, path)
    assert len(fixes) == 1  # 0.0f is already float; the host code's 1e-4 is compared with a double
    q = fixes[0]
    assert (q.line, q.extra["literal"], q.extra["operator"]) == (18, "0.1", "*")
    (e,) = q.edits
    assert (e.line, e.column, e.end_line, e.end_column, e.new_text) == (18, 15, 18, 15, "f")
    out = apply(src, q.edits).splitlines()
    assert out[17] == "    acc += 0.1f * row[x + k];  // double literal: F2F.F64.F32 + DFMA + F2F.F32.F64 per tap"
    assert "write 0.1f" in q.explanation


def test_literal_rules_on_synthetic_source() -> None:
    src = (
        "__device__ float a(float x, double d) {\n"
        "  float y = x * 2.5;\n"          # flagged: float * double literal
        "  double z = d * 2.5;\n"         # not flagged: other operand is double
        "  y += 1.5;\n"                   # flagged: compound assignment to float
        "  if (x < 0.25) y = 0.5f;\n"     # flagged: comparison with float; 0.5f already float
        "  return y + (float)z + 3.0e-2;\n"  # flagged: (y + (float)z) is float
        "}\n"
        "float host(float x) { return x * 2.5; }\n"  # host code: not flagged
    )
    fixes = float_literal_fixes(src, "t.cu")
    assert [(q.line, q.extra["literal"]) for q in fixes] == [(2, "2.5"), (4, "1.5"), (5, "0.25"), (6, "3.0e-2")]
    out = apply(src, tuple(e for q in fixes for e in q.edits))
    assert "x * 2.5f;" in out and "d * 2.5;" in out and "y += 1.5f;" in out and "x < 0.25f" in out
    assert "3.0e-2f;" in out and "return x * 2.5; }" in out


def test_literal_column_is_utf8_bytes() -> None:
    src = "__device__ float a(float x) {\n  /* é */ return x * 0.5;\n}\n"
    (q,) = float_literal_fixes(src, "u.cu")
    (e,) = q.edits
    # "  /* é */ return x * " is 21 characters but 22 bytes: the literal ends at byte column 26.
    assert (e.line, e.column) == (2, 26)
    assert apply(src, q.edits).splitlines()[1] == "  /* é */ return x * 0.5f;"


def test_noinline_damp_gets_forceinline() -> None:
    src, path = read("noinline")
    q = forceinline_fix(src, path, "damp")
    assert q is not None and q.line == 9
    (e,) = q.edits
    assert (e.line, e.column, e.end_column) == (9, 12, 24)
    assert apply(src, q.edits).splitlines()[8] == \
        "__device__ __forceinline__ float damp(float v, float drag, float dt) {"
    assert forceinline_fix(src, path, "no_such_function") is None


def test_forceinline_added_after_device() -> None:
    src = "__device__ float f(float x) { return x; }\n__global__ void k(float* p) { p[0] = f(p[0]); }\n"
    q = forceinline_fix(src, "f.cu", "f")
    assert q is not None
    assert apply(src, q.edits).startswith("__device__ __forceinline__ float f(float x)")
    assert forceinline_fix(apply(src, q.edits), "f.cu", "f") is None  # already inlined: nothing to do


def test_gather_pragma_unroll_1_is_replaced() -> None:
    src, path = read("gather")
    q = unroll_fix(src, path, 15, 17)
    assert q is not None and q.line == 15
    (e,) = q.edits
    assert (e.line, e.column, e.end_column) == (14, 1, 17)
    lines = apply(src, q.edits).splitlines()
    assert lines[13] == f"#pragma unroll {DEFAULT_UNROLL}"  # run-time trip count: plain pragma would not unroll
    assert lines[14].lstrip().startswith("for (int k = 0; k < width; ++k)")


def test_intdiv_pragma_inserted_with_indentation() -> None:
    src, path = read("intdiv")
    q = unroll_fix(src, path, 14, 18)
    assert q is not None
    (e,) = q.edits
    assert (e.start, e.end, e.line, e.column) == (e.start, e.start, 14, 1)
    lines = apply(src, q.edits).splitlines()
    assert lines[13] == f"  #pragma unroll {DEFAULT_UNROLL}"
    assert lines[14] == "  for (int r = 0; r < rounds; ++r) {"


def test_constant_trip_count_gets_plain_pragma() -> None:
    src = "__global__ void k(float* p) {\n  for (int i = 0; i < 8; ++i) {\n    p[i] *= 2.0f;\n  }\n}\n"
    q = unroll_fix(src, "c.cu", 2, 3)
    assert q is not None
    assert apply(src, q.edits).splitlines()[1] == "  #pragma unroll"


def test_unroll_fix_none_outside_loops() -> None:
    src, path = read("stencil")
    assert unroll_fix(src, path, 11, 11) is None


def test_fast_math_note_has_no_edit() -> None:
    q = fast_math_note("n.cu", 12, "__cuda_sm3x_div_rn_noftz_f32_slowpath")
    assert q.edits == () and "--use_fast_math" in q.explanation and "__fdividef" in q.explanation


@pytest.mark.parametrize("name", ["gather", "intdiv", "noinline", "cdp"])
def test_no_false_literal_fixes_in_other_examples(name: str) -> None:
    src, path = read(name)
    assert float_literal_fixes(src, path) == []
