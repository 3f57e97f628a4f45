"""Editor side of SASS schedule tuning (SIP): find tune manifests, offer "use the tuned schedule" at
launch sites, and run ``warpwise tune`` for the Tune-schedule command.

Tuning needs a GPU and can crash a CUDA context, so it runs in a child process that the user can
cancel; the server only reads its output.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from warpwise.analysis import confine
from warpwise.analysis.bounded import InputFileError, read_bytes

MANIFEST_FORMAT_PREFIX = "warpwise-tune/"
DRY_RUN_DEVICE = "dry-run (no GPU)"  # DryRunEvaluator.describe(); marks dry runs written before "dry_run"

# Harness files: <anything>.harness.json anywhere, or any .json inside a folder named harness/harnesses
# (docs/tuning.md "The harness"). Globs for the workspace scan; is_harness_file() is the rule itself.
HARNESS_GLOBS = ("**/*.harness.json", "**/harness/*.json", "**/harnesses/*.json")
HARNESS_FOLDERS = ("harness", "harnesses")


@dataclass(frozen=True)
class TunedKernel:
    """An accepted tuning result: kernel (mangled), tuned cubin path, speedup (×), samples verified and
    the tuned cubin's SHA-256 as the manifest records it (checked again before a code action is offered)."""

    kernel: str
    cubin: Path
    manifest: Path
    speedup: float
    verified_samples: int
    sha256: str = ""


_MANGLED = re.compile(r"[A-Za-z_$][A-Za-z0-9_$.]*")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def cubin_sha256(path: Path) -> str | None:
    """SHA-256 (hex) of the regular file ``path`` within the binary size limit, None when unreadable."""
    try:
        return hashlib.sha256(read_bytes(path, "binary")).hexdigest()
    except InputFileError:
        return None


def is_dry_run(m: dict[str, Any]) -> bool:
    """Whether manifest ``m`` comes from ``warpwise tune --dry-run`` (nothing was measured): its
    ``dry_run`` flag or option, or (manifests written before the flag existed) the stand-in device."""
    opts, dev = m.get("options"), m.get("device")
    opt_flag = isinstance(opts, dict) and bool(opts.get("dry_run"))
    stand_in = isinstance(dev, dict) and dev.get("device") == DRY_RUN_DEVICE
    return bool(m.get("dry_run")) or opt_flag or stand_in


def read_manifest(path: Path, roots: Sequence[Path] | None = None) -> TunedKernel | None:
    """The accepted result a manifest describes, or None: not a manifest (or not a regular file within
    the manifest size limit), a dry run, not verified, not faster, a kernel name that is not a mangled
    name, a tuned-cubin name with control characters, a cubin that does not resolve (symlinks followed)
    inside ``roots`` (the workspace folders; default :func:`warpwise.analysis.confine.roots`), or a
    cubin whose SHA-256 differs from the manifest's."""
    try:
        m = json.loads(read_bytes(path, "manifest"))
    except (InputFileError, ValueError):
        return None
    if not isinstance(m, dict) or not str(m.get("format", "")).startswith(MANIFEST_FORMAT_PREFIX):
        return None
    if is_dry_run(m):
        return None
    ver, entry = _dict(m.get("verification")), _dict(m.get("tuned_cubin"))
    speed = _dict(m.get("side_by_side")).get("speedup")
    tuned = entry.get("file")
    samples = ver.get("samples") or 0
    if not ver.get("passed") or not isinstance(speed, int | float) or not 1.0 < speed < float("inf"):
        return None
    if not isinstance(samples, int):
        return None
    if not isinstance(tuned, str) or not tuned or any(ord(c) < 0x20 or ord(c) == 0x7F for c in tuned):
        return None
    if m.get("accepted") is False or m.get("result", "tuned") != "tuned":
        return None
    kernel = m.get("kernel")
    if not isinstance(kernel, str) or not _MANGLED.fullmatch(kernel):
        return None
    want = str(entry.get("sha256", "")).lower()
    if not _SHA256.fullmatch(want):
        return None
    cubin = path.parent / tuned
    try:
        real = cubin.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    allowed = [Path(r).resolve() for r in (roots if roots is not None else confine.roots())]
    if not any(real.is_relative_to(r) for r in allowed):
        return None
    if cubin_sha256(real) != want:
        return None
    return TunedKernel(kernel=kernel, cubin=real, manifest=path, speedup=float(speed),
                       verified_samples=samples, sha256=want)


def _dict(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def verified_cubin(t: TunedKernel) -> Path | None:
    """``t``'s cubin when its bytes still hash to the manifest's SHA-256 (checked before any code action
    that would make a build load it), else None."""
    return t.cubin if t.sha256 and cubin_sha256(t.cubin) == t.sha256 else None


def find_tuned(manifests: list[Path], roots: Sequence[Path] | None = None) -> dict[str, TunedKernel]:
    """Accepted results by kernel (mangled) of the manifests that :func:`read_manifest` accepts with
    ``roots``; the fastest wins when a kernel was tuned twice."""
    out: dict[str, TunedKernel] = {}
    for p in manifests:
        t = read_manifest(p, roots)
        if t is not None and (t.kernel not in out or t.speedup > out[t.kernel].speedup):
            out[t.kernel] = t
    return out


def launch_cubin_path(cubin: Path) -> str:
    """Path of the tuned cubin as written into the launch rewrite: absolute. The helper passes it to
    cuModuleLoad, which resolves a relative path against the program's working directory at run time,
    not against the source file; an absolute path works from any directory (move the cubin, rerun the
    action: it updates the path)."""
    return str(cubin.resolve())


def tune_command(python: str, binary: Path, kernel: str, harness: Path, outdir: Path, settings: Any) -> list[str]:
    """Argument list of the ``warpwise tune`` child process (never a shell string). ``python`` runs it unless
    the environment names another interpreter in ``WARPWISE_TUNE_PYTHON`` (one with cuda-python, say); the
    child ends itself if the server dies without killing it (``--exit-with-parent``)."""
    python = os.environ.get("WARPWISE_TUNE_PYTHON") or python
    return [python, "-m", "warpwise.server.cli", "tune", str(binary), "--kernel", kernel, "--harness", str(harness),
            "--iterations", str(settings.tune_iterations), "--seed", str(settings.tune_seed),
            "--verify-samples", str(settings.tune_verify_samples), "-o", str(outdir), "--no-progress",
            "--exit-with-parent"]


def is_harness_file(path: Path) -> bool:
    """The naming rule for harness files: ``*.harness.json``, or any ``*.json`` directly inside a folder
    named ``harness`` or ``harnesses``."""
    return path.name.endswith(".harness.json") or (path.suffix == ".json" and path.parent.name in HARNESS_FOLDERS)


def find_harness(candidates: list[Path], kernel: str) -> Path | None:
    """The first of ``candidates`` that follows the harness naming rule (:func:`is_harness_file`) and
    whose ``kernel`` names ``kernel`` (mangled or its plain name)."""
    from warpwise.analysis.schedule.use_tuned import source_name

    plain = source_name(kernel)
    for p in candidates:
        if not is_harness_file(p):
            continue
        try:
            h = json.loads(read_bytes(p, "manifest"))
        except (InputFileError, ValueError):
            continue
        k = str(h.get("kernel", "")) if isinstance(h, dict) else ""
        if k in (kernel, plain):
            return p
    return None
