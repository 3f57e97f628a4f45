"""Run a program under Nsight Compute and keep what the analysis needs (the ``warpwise profile`` job).

Needs ``ncu`` and a GPU. Only the standard library is imported here so the command runs on a bare GPU
box where warpwise is installed with ``--no-deps``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from warpwise.analysis.bounded import ToolRunError, env_seconds
from warpwise.analysis.bounded import run as run_bounded

# Sections the analysis reads: per-instruction stall samples (SourceCounters), launch facts
# (LaunchStats, Occupancy), warp-state totals (WarpStateStats), duration (SpeedOfLight).
# Names from `ncu --list-sections`, Nsight Compute 2025.3.
SECTIONS: tuple[str, ...] = ("SourceCounters", "LaunchStats", "Occupancy", "WarpStateStats", "SpeedOfLight")


class ProfileError(RuntimeError):
    """Profiling could not run or produced no report; the message says why and what to do."""


@dataclass
class ProfileResult:
    """Paths written by :func:`profile`: the report and the cubins extracted from the profiled binary."""

    report: Path
    cubins: list[Path]


def find_tool(name: str, explicit: str | None = None) -> str | None:
    """Locate an NVIDIA tool (ncu, cuobjdump, nvdisasm): explicit path, $PATH, CUDA_HOME, PyPI wheels."""
    if explicit:
        return explicit if Path(explicit).exists() or shutil.which(explicit) else None
    found = shutil.which(name)
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and (Path(root) / "bin" / name).exists():
            return str(Path(root) / "bin" / name)
    try:  # PyPI nvidia-cuda-nvdisasm / nvidia-cuda-cuobjdump
        from cuda.pathfinder import find_nvidia_binary_utility

        path = find_nvidia_binary_utility(name)
        return str(path) if path else None
    except Exception:
        return None


def ncu_command(ncu: str, report: Path, command: list[str], extra: list[str] | None = None) -> list[str]:
    """The ncu argument list: all sections the analysis needs, source imported, clocks not locked.

    ``--clock-control none`` keeps the GPU's own clocks (FACTS.md: needed on the shared H200s).
    """
    args = [ncu, "--clock-control", "none", "--import-source", "yes", "--target-processes", "all"]
    for s in SECTIONS:
        args += ["--section", s]
    args += list(extra or [])
    args += ["-f", "-o", str(report.with_suffix("")), *command]
    return args


def extract_cubins(executable: str, dest_dir: Path, stem: str, cuobjdump: str | None = None) -> list[Path]:
    """Extract every ELF cubin held by ``executable`` into ``dest_dir`` as ``<stem>.<arch>[.<n>].cubin``.

    Raises ProfileError if cuobjdump is missing or fails. Returns [] for a binary without device code.
    """
    tool = find_tool("cuobjdump", cuobjdump)
    if tool is None:
        raise ProfileError("cuobjdump not found: install nvidia-cuda-cuobjdump (pip) or put CUDA's bin on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            run = run_bounded([tool, "-xelf", "all", str(Path(executable).resolve())], f"cuobjdump on {executable}",
                              cwd=tmp)
        except ToolRunError as e:
            raise ProfileError(str(e)) from e
        err, txt = run.stderr.decode(errors="replace"), run.stdout.decode(errors="replace")
        if run.returncode != 0 and "does not contain device code" not in err + txt:
            raise ProfileError(f"cuobjdump -xelf failed on {executable}: {err.strip() or txt.strip()}")
        out: list[Path] = []
        files = sorted(Path(tmp).glob("*.cubin"))
        counts: dict[str, int] = {}
        for f in files:
            arch = next((p for p in f.name.split(".") if p.startswith("sm_")), "sm_unknown")
            counts[arch] = counts.get(arch, 0) + 1
        seen: dict[str, int] = {}
        for f in files:
            arch = next((p for p in f.name.split(".") if p.startswith("sm_")), "sm_unknown")
            seen[arch] = seen.get(arch, 0) + 1
            suffix = f".{arch}" if counts[arch] == 1 else f".{arch}.{seen[arch]}"
            target = dest_dir / f"{stem}{suffix}.cubin"
            shutil.copyfile(f, target)
            out.append(target)
        return out


def profile(command: list[str], report: Path, ncu: str | None = None, extra_ncu_args: list[str] | None = None,
            keep_cubins: bool = True) -> ProfileResult:
    """Profile ``command`` under ncu into ``report`` (.ncu-rep) and save its cubins beside it.

    Raises ProfileError when ncu or a GPU is missing, or ncu fails / writes no report.
    """
    if not command:
        raise ProfileError("no command to profile: use `warpwise profile -o R.ncu-rep -- ./app args`")
    tool = find_tool("ncu", ncu)
    if tool is None:
        raise ProfileError("ncu (Nsight Compute) not found on PATH: install Nsight Compute or pass --ncu PATH")
    if find_tool("nvidia-smi") is None and not Path("/dev/nvidiactl").exists():
        raise ProfileError("no NVIDIA GPU found (no nvidia-smi, no /dev/nvidiactl): profiling needs a GPU")
    report = report if report.suffix == ".ncu-rep" else report.with_name(report.name + ".ncu-rep")
    report.parent.mkdir(parents=True, exist_ok=True)
    try:  # the profiled program and ncu: one process group, killed as a whole on timeout
        run = run_bounded(ncu_command(tool, report, command, extra_ncu_args), f"ncu profiling {' '.join(command)}",
                          timeout=env_seconds("WARPWISE_PROFILE_TIMEOUT_S", 3600.0))
    except ToolRunError as e:
        raise ProfileError(str(e)) from e
    log = run.stdout.decode(errors="replace") + run.stderr.decode(errors="replace")
    if run.returncode != 0 or not report.exists():
        tail = "\n".join(log.strip().splitlines()[-15:])
        raise ProfileError(f"ncu failed (exit {run.returncode}) profiling {' '.join(command)}:\n{tail}")
    if "==WARNING== No kernels were profiled" in log:
        raise ProfileError(f"ncu profiled no kernels running {' '.join(command)}")
    cubins: list[Path] = []
    if keep_cubins:
        exe = shutil.which(command[0]) or command[0]
        if Path(exe).exists():
            cubins = extract_cubins(exe, report.parent, report.name.removesuffix(".ncu-rep"))
    return ProfileResult(report=report, cubins=cubins)
