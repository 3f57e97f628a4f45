"""Parse errors in the user's file stop find_launches / rewrite / launch_diagnostics with file:line:col
and clang's message, instead of a wrong "no launch here" on a partial AST."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_helpers import ROOT
from warpwise.analysis.rewrite import RewriteError, apply_edits, find_launches, launch_diagnostics, rewrite
from warpwise.analysis.rewrite.parse import blocking_errors, parse

CHILD = """__global__ void child(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 1;
}
"""
# the missing ';' on line 7 makes clang drop the launch on line 8 from the AST
PARENT_MISSING_SEMI = CHILD + """
__global__ void parent(int *a, int *n) {
  int m = n[threadIdx.x]
  child<<<(m + 31) / 32, 32>>>(a, m);
}
"""
PARENT_OK = CHILD + """
__global__ void parent(int *a, int *n) {
  int m = n[threadIdx.x];
  child<<<(m + 31) / 32, 32>>>(a, m);
}
"""


def test_missing_semicolon_in_parent_is_reported_not_a_missing_launch() -> None:
    with pytest.raises(RewriteError, match=r"^parse failed at syn\.cu:7:25: expected ';'"):
        rewrite(PARENT_MISSING_SEMI, "syn.cu", "threshold", 8)
    with pytest.raises(RewriteError, match=r"syn\.cu:7:25: .*expected ';'"):
        find_launches(PARENT_MISSING_SEMI, "syn.cu")
    with pytest.raises(RewriteError, match=r"syn\.cu:7:25: .*expected ';'"):
        launch_diagnostics(PARENT_MISSING_SEMI, "syn.cu")


def test_syntax_error_in_host_main_is_refused() -> None:
    src = PARENT_OK + "\nint main() {\n  int x = 1\n  return x;\n}\n"
    (la,) = find_launches(PARENT_OK, "ok.cu")
    assert la.line == 8
    with pytest.raises(RewriteError, match=r"^parse failed at m\.cu:12:12: expected ';'"):
        rewrite(src, "m.cu", "coarsen", 8)


def test_undeclared_name_in_device_code_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    src = PARENT_OK.replace("a[i] = 1;", "a[i] = __not_a_builtin(3u);")
    with pytest.raises(RewriteError, match=r"^parse failed at t\.cu:3:21: .*undeclared identifier '__not_a_builtin'"):
        find_launches(src, "t.cu")
    monkeypatch.setenv("WARPWISE_CUDA_HEADERS", "shim")  # without the CUDA headers the reason says so
    with pytest.raises(RewriteError, match=r"t\.cu:3:21: .*undeclared identifier '__not_a_builtin' .*shim"):
        find_launches(src, "t.cu")


def test_host_code_using_unread_system_headers_is_tolerated(monkeypatch: pytest.MonkeyPatch) -> None:
    src = "#include <vector>\n" + PARENT_OK + "\nint main() {\n  std::vector<int> v(4);\n  return v[0];\n}\n"
    assert parse(src, "v.cu").errors == []  # with the real headers std::vector is known
    # with the shim (no CUDA headers installed) std:: is unknown; the errors stay in host-only main
    monkeypatch.setenv("WARPWISE_CUDA_HEADERS", "shim")
    p = parse(src, "v.cu")
    assert p.errors and all(e.line >= 12 for e in p.errors)
    assert blocking_errors(p) == []
    (la,) = find_launches(src, "v.cu")
    out = apply_edits(src, rewrite(src, "v.cu", "threshold", la.line))
    assert "ww_child_serial(" in out


def _shipped_sources() -> list[Path]:
    files = [*sorted((ROOT / "examples" / "dp").glob("*/*.cu")), ROOT / "examples" / "cdp" / "cdp.cu"]
    return files + sorted((ROOT / "bench" / "dp" / "generated").glob("*/*.cu"))


def test_shipped_examples_and_generated_variants_parse_clean() -> None:
    files = _shipped_sources()
    examples = sorted((ROOT / "examples" / "dp").glob("*/*.cu"))
    assert len(examples) >= 10 and len(files) > len(examples) + 1  # the DP examples, cdp.cu, generated variants
    dirty = {str(f.relative_to(ROOT)): blocking_errors(parse(f.read_text(), str(f))) for f in files}
    assert {k: v for k, v in dirty.items() if v} == {}
    # cdp.cu's own header includes <cstdio>: errors outside the user's file do not count
    cdp = ROOT / "examples" / "cdp" / "cdp.cu"
    assert len(find_launches(cdp.read_text(), str(cdp))) >= 1


def test_code_actions_on_a_broken_file_are_disabled_with_the_reason() -> None:
    from warpwise.server.actions import rewrite_actions

    uri = "file:///tmp/syn.cu"
    ok = rewrite_actions(uri, 1, PARENT_OK, "/tmp/syn.cu", 1, 20, None, True, True)
    single = [a for a in ok if not a.title.startswith(("DP rewrite", "Profile-guided", "Alternative DP"))]
    assert len(single) == 6 and ok[0].title.startswith("DP rewrite (default, no profile)")
    broken = rewrite_actions(uri, 1, PARENT_MISSING_SEMI, "/tmp/syn.cu", 1, 20, None, True, True)
    assert broken and all(a.edit is None and a.disabled is not None
                          and a.disabled.reason.startswith("parse failed at /tmp/syn.cu:7:25") for a in broken)
    assert rewrite_actions(uri, 1, PARENT_MISSING_SEMI, "/tmp/syn.cu", 1, 20, None, True, False) == []
