"""VS Code trust model (issue 13 item 7): settings that run programs or choose where warpwise writes are
restricted in untrusted workspaces (docs/security.md)."""

from __future__ import annotations

import json

from tests.conftest import ROOT


def test_restricted_settings() -> None:
    pkg = json.loads((ROOT / "vscode-client/package.json").read_text())
    trust = pkg["capabilities"]["untrustedWorkspaces"]
    assert trust["supported"] == "limited"
    restricted = set(trust["restrictedConfigurations"])
    assert {"warpwise.server.path", "warpwise.server.python", "warpwise.ncuPath", "warpwise.profile.command",
            "warpwise.profile.output"} <= restricted
    declared = set(pkg["contributes"]["configuration"]["properties"])
    assert restricted <= declared  # each restricted name is a real setting


def test_stale_line_map_is_shared_per_version() -> None:
    from warpwise.server import stale

    base = "a\nb\n"
    a = stale.line_map("file:///x.cu", 3, base, "a\nx\nb\n")
    assert stale.line_map("file:///x.cu", 3, base, "a\nx\nb\n") is a  # one diff per version
    b = stale.line_map("file:///x.cu", 4, base, "a\nb\n")
    assert b is not a and a.line(2) == 3 and b.line(2) == 2
