"""Typed settings of the language server, read from workspace/configuration section "warpwise".

A bad value is reported (returned in ``problems``) and replaced by its default (STYLE.md #2). The VS Code
extension contributes the same keys (vscode-client/package.json).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, fields
from typing import Any

SEVERITIES = ("error", "warning", "information", "hint")
LOG_LEVELS = ("error", "warning", "info", "debug")

#: Diagnostic codes that are not optimizer ids (optimizer ids are the codes of advice diagnostics).
HOT_LINE, STALL_CAUSE, DP_LAUNCH, STALE = "hot_line", "stall_cause", "dp_launch", "stale"
#: Codes whose severity is not information unless configured: a finding on a line edited since profiling
#: describes code that is gone, so it is a hint (no squiggle, not in the Problems panel) until re-profiled.
DEFAULT_SEVERITY = {STALE: "hint"}
#: Severity keys of earlier versions -> the code the user sees (kept working, with a deprecation warning).
DEPRECATED_SEVERITY_KEYS = {"hotLine": HOT_LINE, "blamedDef": STALL_CAUSE}


@dataclass
class Settings:
    """Server settings with their defaults.

    min_share: smallest share (0..1) of a kernel's samples a line needs for any diagnostic (a def line's
    share is that of the stalls it causes). min_gain: smallest estimated speedup (×) for advice to be a
    diagnostic (smaller ones stay in the hover). severity: diagnostic code (hot_line, stall_cause or an
    optimizer id, or "default") -> error|warning|information|hint. log_level: the server's log level
    (warning unless asked; trace.server "messages"/"verbose" raise it to info/debug).
    """

    profiles: list[str] = field(default_factory=lambda: ["**/*.ncu-rep", "**/*.source.csv"])
    binaries: list[str] = field(default_factory=lambda: ["**/*.cubin"])
    min_share: float = 0.02
    min_gain: float = 1.02
    max_diagnostics_per_file: int = 20
    severity: dict[str, str] = field(default_factory=dict)
    inlay_hints: bool = True
    ncu_path: str = "ncu"
    profile_command: list[str] = field(default_factory=list)
    profile_output: str = "warpwise.ncu-rep"
    tune_iterations: int = 200
    tune_seed: int = 0
    tune_verify_samples: int = 10000
    log_level: str = "warning"
    trace_server: str = "off"
    # recorded path prefix (the build machine's) -> local folder, tried before suffix matching
    path_map: dict[str, str] = field(default_factory=dict)

    def severity_of(self, code: str) -> str:
        """Configured severity for a diagnostic code: its own key, else ``DEFAULT_SEVERITY`` (``stale``: hint),
        else the ``default`` key, else information."""
        if code in self.severity:
            return self.severity[code]
        return DEFAULT_SEVERITY.get(code) or self.severity.get("default", "information")

    def python_log_level(self) -> int:
        """The logging level the server runs at: the more verbose of log_level and trace.server."""
        level = {"error": logging.ERROR, "warning": logging.WARNING, "info": logging.INFO,
                 "debug": logging.DEBUG}[self.log_level]
        trace = {"off": logging.WARNING, "messages": logging.INFO, "verbose": logging.DEBUG}[self.trace_server]
        return min(level, trace)


# settings key (as the client sends it, nested under "warpwise") -> field name
_KEYS: dict[str, str] = {
    "profiles": "profiles", "binaries": "binaries", "minShare": "min_share", "minGain": "min_gain",
    "maxDiagnosticsPerFile": "max_diagnostics_per_file", "severity": "severity",
    "inlayHints.enabled": "inlay_hints", "ncuPath": "ncu_path", "profile.command": "profile_command",
    "profile.output": "profile_output", "tune.iterations": "tune_iterations", "tune.seed": "tune_seed",
    "tune.verifySamples": "tune_verify_samples", "logLevel": "log_level", "trace.server": "trace_server",
    "pathMap": "path_map",
}
_CHOICES: dict[str, tuple[str, ...]] = {"log_level": LOG_LEVELS, "trace_server": ("off", "messages", "verbose")}


def _get(raw: dict[str, Any], dotted: str) -> Any:
    if dotted in raw:
        return raw[dotted]
    cur: Any = raw
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _valid(name: str, default: Any, v: Any) -> tuple[bool, Any]:
    if isinstance(default, bool):
        return isinstance(v, bool), v
    if isinstance(default, int):
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0, v
    if isinstance(default, float):
        ok = isinstance(v, int | float) and not isinstance(v, bool)
        if name == "min_gain":
            return ok and float(v) >= 1.0, float(v) if ok else v
        return ok and 0.0 <= float(v) <= 1.0, float(v) if ok else v
    if isinstance(default, str):
        return isinstance(v, str) and (name not in _CHOICES or v in _CHOICES[name]), v
    if isinstance(default, list):
        return isinstance(v, list) and all(isinstance(x, str) for x in v), v
    if name == "path_map":
        return isinstance(v, dict) and all(isinstance(a, str) and isinstance(b, str) and a.strip() and b.strip()
                                           for a, b in v.items()), v
    if isinstance(default, dict):
        return isinstance(v, dict) and all(isinstance(x, str) and x in SEVERITIES for x in v.values()), v
    return False, v


def parse_settings(raw: Any) -> tuple[Settings, list[str]]:
    """Settings from the client's JSON (None/missing keys -> defaults) and a list of problems found.

    Deprecated severity keys (``hotLine``, ``blamedDef``) are renamed to the codes shown (``hot_line``,
    ``stall_cause``) with a warning in ``problems``; a key given both ways keeps the new one.
    """
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
        ok, v = _valid(name, default, v)
        if ok:
            setattr(s, name, v)
        else:
            problems.append(f"warpwise.{key}: invalid value {v!r}; using {default!r}")
    for old, new in DEPRECATED_SEVERITY_KEYS.items():
        if old in s.severity:
            value = s.severity.pop(old)
            s.severity.setdefault(new, value)
            problems.append(f"warpwise.severity.{old} is deprecated: use \"{new}\" (the code the diagnostics show)")
    assert set(_KEYS.values()) <= set(types)
    return s, problems
