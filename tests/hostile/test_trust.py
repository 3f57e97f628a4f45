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


def test_line_map_is_shared_per_document_text() -> None:
    from warpwise.server.linemap import line_map

    base = "a\nb\n"
    a = line_map(base, "a\nx\nb\n")
    assert line_map(base, "a\nx\nb\n") is a  # one diff per text (hover, inlay and lens of one version share it)
    b = line_map(base, "a\nb\n")
    assert b is not a and a.line(2) == 3 and b.line(2) == 2
