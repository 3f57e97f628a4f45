"""Child-thread-count recovery: the ceil-division patterns of CGO'22 Fig. 4."""

from __future__ import annotations

import pytest
from warpwise.analysis.rewrite import find_launches

KERNEL = "__global__ void child(int *a, int n) { a[blockIdx.x * blockDim.x + threadIdx.x] = n; }\n"


def _count(body: str, params: str = "int *a, int n, int m, int b, int start, int end") -> tuple[str | None, str | None]:
    src = KERNEL + f"__global__ void parent({params}) {{\n{body}\n}}\n"
    (launch,) = find_launches(src, "fig4.cu")
    return launch.thread_count, launch.thread_count_pattern


@pytest.mark.parametrize("grid, count, pattern", [
    ("(n - 1) / 128 + 1", "n", "(N-1)/b+1"),                      # Fig. 4 (a)
    ("(n + 127) / 128", "n", "(N+b-1)/b"),                        # (b), b folded into a constant
    ("(n + b - 1) / b", "n", "(N+b-1)/b"),                        # (b), b a variable
    ("n / 128 + (n % 128 == 0 ? 0 : 1)", "n", "N/b+(N%b==0?0:1)"),  # (c)
    ("n / b + (n % b != 0)", "n", "N/b+(N%b==0?0:1)"),              # (c), boolean form
    ("ceil((float)n / 128)", "n", "ceil((float)N/b)"),            # (d)
    ("ceil(n / (float)b)", "n", "ceil(N/(float)b)"),              # (e)
    ("ceilf(float(n) / b)", "n", "ceil((float)N/b)"),             # (d), functional cast
    ("(end - start + 255) / 256", "end - start", "(N+b-1)/b"),    # N is itself an expression
    ("n % 64 == 0 ? n / 64 : n / 64 + 1", "n", "N%b ? N/b+1 : N/b"),
])
def test_inline_patterns(grid: str, count: str, pattern: str) -> None:
    assert _count(f"  child<<<{grid}, 128>>>(a, n);") == (count, pattern)


def test_dim3_pattern_f_multiplies_the_dimensions() -> None:
    tc, pat = _count("  child<<<dim3((n + 15) / 16, (m + 15) / 16), dim3(16, 16)>>>(a, n);")
    assert (tc, pat) == ("(n) * (m)", "dim3(...)")
    tc, pat = _count("  child<<<dim3((n - 1) / 32 + 1, 1, 1), 32>>>(a, n);")
    assert (tc, pat) == ("n", "dim3(...)")


def test_split_across_statements() -> None:
    body = "  int len = end - start;\n  int blocks = (len + 63) / 64;\n  child<<<blocks, 64>>>(a, len);"
    assert _count(body) == ("len", "(N+b-1)/b (split across statements)")
    body = "  dim3 g((n - 1) / 64 + 1);\n  child<<<g, 64>>>(a, n);"
    assert _count(body) == ("n", "(N-1)/b+1 (split across statements)")
    body = "  int blocks;\n  blocks = ceil((float)m / 32);\n  child<<<blocks, 32>>>(a, m);"
    assert _count(body) == ("m", "ceil((float)N/b) (split across statements)")


def test_no_pattern_gives_none() -> None:
    assert _count("  child<<<n, 128>>>(a, n);") == (None, None)
    assert _count("  int g = n;\n  g += 1;\n  child<<<g, 128>>>(a, n);") == (None, None)


def test_out_of_scope_count_is_rejected() -> None:
    body = "  int blocks;\n  { int k = n * 2; blocks = (k + 31) / 32; }\n  child<<<blocks, 32>>>(a, n);"
    assert _count(body) == (None, None)
