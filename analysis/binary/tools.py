"""Locating and running the NVIDIA binary utilities (nvdisasm, cuobjdump) from the PyPI wheels.

``WARPWISE_NVDISASM`` / ``WARPWISE_CUOBJDUMP`` name an explicit tool path (tests, odd installs)."""

from __future__ import annotations

import os
import shutil
from functools import cache

from warpwise.analysis.bounded import ToolRunError, run_checked

from .errors import ToolError


def find_tool(name: str) -> str:
    """Path of NVIDIA binary utility ``name`` (``"nvdisasm"``, ``"cuobjdump"``).

    Looks in the PyPI wheels first (``nvidia-cuda-nvdisasm`` / ``nvidia-cuda-cuobjdump`` via
    ``cuda.pathfinder.find_nvidia_binary_utility``), then on ``$PATH``.

    Raises:
        ToolError: the tool is in neither place.
    """
    explicit = os.environ.get(f"WARPWISE_{name.upper()}")
    return explicit if explicit else _find_installed(name)


@cache
def _find_installed(name: str) -> str:
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


def run_tool(args: list[str], what: str, cwd: str | None = None, timeout: float | None = None) -> str:
    """Run ``args`` (an argument list, never a shell string) and return its stdout as text.

    Runs through :func:`warpwise.analysis.bounded.run_checked`: own process group, killed as a whole after
    ``timeout`` seconds (default ``WARPWISE_TOOL_TIMEOUT_S``, 120 s) or as soon as the tool exits.
    ``what`` names the input in error messages (``"nvdisasm on /x/k.cubin"``).

    Raises:
        ToolError: the process could not start, timed out, crashed, exited nonzero (stderr is quoted), or
            exited leaving processes of its own running (``ToolResult.left_behind``).
    """
    try:
        proc = run_checked(args, what, cwd=cwd, timeout=timeout)
    except ToolRunError as e:
        raise ToolError(str(e)) from e
    return proc.stdout.decode("utf-8", errors="replace")
