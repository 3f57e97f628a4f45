"""Typed settings of the language server, read from workspace/configuration section "warpwise".

A bad value is reported (returned in ``problems``) and replaced by its default (STYLE.md #2). The VS Code
extension contributes the same keys (vscode-client/package.json).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

SEVERITIES = ("error", "warning", "information", "hint")


@dataclass
class Settings:
    """Server settings with their defaults.

    min_share: smallest share (0..1) of a kernel's samples for a line to get a diagnostic.
    severity: optimizer id (or "hotLine") -> error|warning|information|hint.
    """

    profiles: list[str] = field(default_factory=lambda: ["**/*.ncu-rep", "**/*.source.csv"])
    binaries: list[str] = field(default_factory=lambda: ["**/*.cubin"])
    min_share: float = 0.02
    max_diagnostics_per_file: int = 20
    severity: dict[str, str] = field(default_factory=dict)
    inlay_hints: bool = True
    ncu_path: str = "ncu"
    profile_command: list[str] = field(default_factory=list)
    profile_output: str = "warpwise.ncu-rep"
    tune_iterations: int = 200
    tune_seed: int = 0
    tune_verify_samples: int = 10000
    # recorded path prefix (the build machine's) -> local folder, tried before suffix matching
    path_map: dict[str, str] = field(default_factory=dict)

    def severity_of(self, key: str) -> str:
        """Configured severity for an optimizer id or "hotLine" (default information)."""
        return self.severity.get(key, self.severity.get("default", "information"))


# settings key (as the client sends it, nested under "warpwise") -> field name
_KEYS: dict[str, str] = {
    "profiles": "profiles", "binaries": "binaries", "minShare": "min_share",
    "maxDiagnosticsPerFile": "max_diagnostics_per_file", "severity": "severity",
    "inlayHints.enabled": "inlay_hints", "ncuPath": "ncu_path", "profile.command": "profile_command",
    "profile.output": "profile_output", "tune.iterations": "tune_iterations", "tune.seed": "tune_seed",
    "tune.verifySamples": "tune_verify_samples", "pathMap": "path_map",
}


def _get(raw: dict[str, Any], dotted: str) -> Any:
    if dotted in raw:
        return raw[dotted]
    cur: Any = raw
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def parse_settings(raw: Any) -> tuple[Settings, list[str]]:
    """Settings from the client's JSON (None/missing keys -> defaults) and a list of problems found."""
    s = Settings()
    problems: list[str] = []
    if not isinstance(raw, dict):
        return s, ([] if raw is None else [f"warpwise settings must be an object, got {type(raw).__name__}"])
    types = {f.name: f for f in fields(Settings)}
    for key, name in _KEYS.items():
        v = _get(raw, key)
        if v is None:
            continue
        default = getattr(s, name)
        ok = False
        if isinstance(default, bool):
            ok = isinstance(v, bool)
        elif isinstance(default, int):
            ok = isinstance(v, int) and not isinstance(v, bool) and v >= 0
        elif isinstance(default, float):
            ok = isinstance(v, int | float) and not isinstance(v, bool) and 0.0 <= float(v) <= 1.0
            v = float(v) if ok else v
        elif isinstance(default, str):
            ok = isinstance(v, str)
        elif isinstance(default, list):
            ok = isinstance(v, list) and all(isinstance(x, str) for x in v)
        elif name == "path_map":
            ok = isinstance(v, dict) and all(isinstance(a, str) and isinstance(b, str) and a.strip() and b.strip()
                                             for a, b in v.items())
        elif isinstance(default, dict):
            ok = isinstance(v, dict) and all(isinstance(x, str) and x in SEVERITIES for x in v.values())
        if ok:
            setattr(s, name, v)
        else:
            problems.append(f"warpwise.{key}: invalid value {v!r}; using {default!r}")
    assert set(_KEYS.values()) <= set(types)
    return s, problems
