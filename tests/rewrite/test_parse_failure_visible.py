"""A file that does not parse: rewrites are withheld with the reason, launch checks come from tokens (issue 12
item 2) — in the CLI, the code actions and the diagnostics, never silently."""

from __future__ import annotations

import pytest
from warpwise.analysis.rewrite import RewriteError, rewrite
from warpwise.analysis.rewrite.parse import CODE_PARSE_FAILED, fallback_launch_diagnostics
from warpwise.server.actions import rewrite_actions
from warpwise.server.render import launch_diagnostics

BROKEN = """__global__ void child(int* a) { a[threadIdx.x] = 1; }
__global__ void parent(int* a, int n) {
  child<<<(n + 31) / 32, 32>>>(a);
  int x = 1
}
__global__ void checked(int* a) {
  child<<<1, 32>>>(a);
  cudaGetLastError();
}
"""


def test_cli_and_api_refuse_with_the_position() -> None:
    with pytest.raises(RewriteError, match=r"^parse failed at b\.cu:4:12: expected ';'"):
        rewrite(BROKEN, "b.cu", "threshold", 3)


def test_token_scan_keeps_the_unchecked_launch_warning() -> None:
    found = fallback_launch_diagnostics(BROKEN, "b.cu")
    assert found is not None
    assert [(d.code, d.line) for d in found] == [(CODE_PARSE_FAILED, 4), ("cdp-unchecked-launch", 3)]
    assert found[0].message.startswith("parse failed at b.cu:4:12: expected ';'")
    assert fallback_launch_diagnostics(BROKEN.replace("int x = 1\n", "int x = 1;\n"), "b.cu") is None


def test_editor_gets_an_information_diagnostic_and_disabled_actions() -> None:
    diags = launch_diagnostics(BROKEN, "b.cu")
    info = [d for d in diags if d.code == CODE_PARSE_FAILED]
    assert len(info) == 1 and info[0].severity == 3 and info[0].range.start.line == 3
    assert any(d.code == "cdp-unchecked-launch" and d.range.start.line == 2 for d in diags)
    actions = rewrite_actions("file:///b.cu", 1, BROKEN, "b.cu", 3, 3, None, resolve=True, disabled_ok=True)
    assert len(actions) == 3 and all(a.disabled is not None and a.edit is None for a in actions)
    assert all(a.disabled.reason.startswith("parse failed at b.cu:4:12") for a in actions if a.disabled)
    assert rewrite_actions("file:///b.cu", 1, BROKEN, "b.cu", 3, 3, None, resolve=True, disabled_ok=False) == []
