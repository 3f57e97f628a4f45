"""Editor side of SASS schedule tuning (SIP): find tune manifests, offer "use the tuned schedule" at
launch sites, and run ``warpwise tune`` for the Tune-schedule command.

Tuning needs a GPU and can crash a CUDA context, so it runs in a child process that the user can
cancel; the server only reads its output.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MANIFEST_FORMAT_PREFIX = "warpwise-tune/"


@dataclass(frozen=True)
class TunedKernel:
    """An accepted tuning result: kernel (mangled), tuned cubin path, speedup (×) and samples verified."""

    kernel: str
    cubin: Path
    manifest: Path
    speedup: float
    verified_samples: int


def read_manifest(path: Path) -> TunedKernel | None:
    """The accepted result a manifest describes, or None (not a manifest, not verified, not faster,
    or its tuned cubin is missing)."""
    try:
        m = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(m, dict) or not str(m.get("format", "")).startswith(MANIFEST_FORMAT_PREFIX):
        return None
    ver = m.get("verification") or {}
    speed = (m.get("side_by_side") or {}).get("speedup")
    tuned = (m.get("tuned_cubin") or {}).get("file")
    if not ver.get("passed") or not isinstance(speed, int | float) or speed <= 1.0 or not tuned:
        return None
    if m.get("accepted") is False or m.get("result", "tuned") != "tuned":
        return None
    cubin = path.parent / tuned
    if not cubin.is_file():
        return None
    return TunedKernel(kernel=str(m.get("kernel")), cubin=cubin, manifest=path, speedup=float(speed),
                       verified_samples=int(ver.get("samples") or 0))


def find_tuned(manifests: list[Path]) -> dict[str, TunedKernel]:
    """Accepted results by kernel (mangled); the fastest wins when a kernel was tuned twice."""
    out: dict[str, TunedKernel] = {}
    for p in manifests:
        t = read_manifest(p)
        if t is not None and (t.kernel not in out or t.speedup > out[t.kernel].speedup):
            out[t.kernel] = t
    return out


def relative_cubin(cubin: Path, source: Path) -> str:
    """Path of the tuned cubin as written into the source: relative to the source's folder when possible."""
    try:
        return os.path.relpath(cubin, source.parent)
    except ValueError:
        return str(cubin)


def tune_command(python: str, binary: Path, kernel: str, harness: Path, outdir: Path, settings: Any) -> list[str]:
    """Argument list of the ``warpwise tune`` child process (never a shell string)."""
    return [python, "-m", "warpwise.server.cli", "tune", str(binary), "--kernel", kernel, "--harness", str(harness),
            "--iterations", str(settings.tune_iterations), "--seed", str(settings.tune_seed),
            "--verify-samples", str(settings.tune_verify_samples), "-o", str(outdir), "--no-progress"]


def find_harness(candidates: list[Path], kernel: str) -> Path | None:
    """A harness JSON whose ``kernel`` names ``kernel`` (mangled or its plain name)."""
    from warpwise.analysis.schedule.use_tuned import source_name

    plain = source_name(kernel)
    for p in candidates:
        try:
            h = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        k = str(h.get("kernel", "")) if isinstance(h, dict) else ""
        if k in (kernel, plain):
            return p
    return None
