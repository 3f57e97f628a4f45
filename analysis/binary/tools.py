"""Locating and running the NVIDIA binary utilities (nvdisasm, cuobjdump) from the PyPI wheels."""

from __future__ import annotations

import shutil
import subprocess
from functools import cache
from pathlib import Path

from .errors import ToolError


@cache
def find_tool(name: str) -> str:
    """Path of NVIDIA binary utility ``name`` (``"nvdisasm"``, ``"cuobjdump"``).

    Looks in the PyPI wheels first (``nvidia-cuda-nvdisasm`` / ``nvidia-cuda-cuobjdump`` via
    ``cuda.pathfinder.find_nvidia_binary_utility``), then on ``$PATH``.

    Raises:
        ToolError: the tool is in neither place.
    """
    try:
        from cuda.pathfinder import find_nvidia_binary_utility

        found = find_nvidia_binary_utility(name)
        if found:
            return str(found)
    except Exception:  # pathfinder absent or broken: fall back to PATH
        pass
    path = shutil.which(name)
    if path:
        return path
    raise ToolError(
        f"{name} not found: install the PyPI package nvidia-cuda-{name} or put a CUDA toolkit's {name} on PATH"
    )


def run_tool(args: list[str], what: str, cwd: str | None = None, timeout: float = 600.0) -> str:
    """Run ``args`` (an argument list, never a shell string) and return its stdout as text.

    ``what`` names the input in error messages (``"nvdisasm on /x/k.cubin"``).

    Raises:
        ToolError: the process could not start, timed out, or exited nonzero (stderr is quoted).
    """
    try:
        proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ToolError(f"{what}: could not run {Path(args[0]).name}: {e}") from e
    if proc.returncode != 0:
        msg = (proc.stderr or proc.stdout).strip().splitlines()
        tail = " | ".join(msg[-5:]) if msg else "no message"
        raise ToolError(f"{what}: {Path(args[0]).name} exited with status {proc.returncode}: {tail}")
    return proc.stdout
