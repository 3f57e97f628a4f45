"""What a device-side launch costs, for the launch line in the editor (dynamic parallelism, CDP2).

In a profile of the parent kernel Nsight Compute files the child kernels' PCs and the device runtime's code
under the parent (FACTS.md: samples of child PCs appear in the parent's report, many without a source line).
The launch line itself holds almost no samples, so its share says 0.0%; its real cost is the samples of the
children it launches plus those of the device runtime, and the number of launches against the device
runtime's pending-launch limit (2,048 by default; launches past it are dropped silently unless checked).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from warpwise.server.findings import EditorKernel

#: The device runtime's default cudaLimitDevRuntimePendingLaunchCount (CUDA Programming Guide, CDP).
DEFAULT_PENDING_LIMIT = 2048
_SET_LIMIT = re.compile(r"cudaLimitDevRuntimePendingLaunchCount\s*,\s*(\d+)")


@dataclass
class LaunchCost:
    """The cost of one device-side launch line of a kernel group.

    ``line``: 1-based baseline line in the file; ``children``: child kernel (short name) -> samples on its
    PCs in the parent's profile; ``runtime``: samples in device-runtime code (no function of the binary, or
    ``__cuda*`` runtime functions); ``total``: the parent's T (all launches of the group); ``launches``:
    threads that executed the launch call (one child grid each), None when the profile lacks the count.
    """

    kernel: EditorKernel
    line: int
    children: dict[str, int] = field(default_factory=dict)
    runtime: int = 0
    total: int = 0
    launches: int | None = None

    @property
    def share(self) -> float:
        """(child + runtime samples) / T."""
        return (sum(self.children.values()) + self.runtime) / max(1, self.total)


def pending_limit(text: str) -> tuple[int, int | None]:
    """(limit, 1-based line that sets it) from a ``cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount,
    N)`` in ``text``; (2048, None) when the program keeps the default."""
    m = _SET_LIMIT.search(text)
    if m is None:
        return DEFAULT_PENDING_LIMIT, None
    return int(m.group(1)), text.count("\n", 0, m.start()) + 1


def launch_costs(g: EditorKernel, path: Path, baseline: str) -> list[LaunchCost]:
    """Costs of the group's device-side launch lines that lie in ``path`` (baseline lines).

    Launch sites are the analysis' (advice.filters.device_launch_lines: CALLs to the CDP2 launch entry);
    a launch line whose text names a child (``child<<<``) is charged that child's samples, else all children.
    """
    from warpwise.analysis.advice.context import demangle_short, is_runtime_function, is_user_function
    from warpwise.analysis.advice.filters import device_launch_lines
    from warpwise.analysis.profile.ncu import UNATTRIBUTED

    texts = baseline.split("\n")
    out: list[LaunchCost] = []
    for ka in g.launches:
        if ka.program is None:
            continue
        locs = device_launch_lines(SimpleNamespace(program=ka.program, profile=ka.profile))
        # threads that reached each launch line (its instructions' largest thread-instruction count): one
        # child grid per thread; the CALL itself often has no counters of its own in the report
        per_line: dict[int, int] = {}
        for pc in ka.profile.pcs.values():
            if pc.function == ka.profile.mangled and pc.line is not None:
                per_line[pc.line] = max(per_line.get(pc.line, 0), pc.thread_inst_executed)
        children: dict[str, int] = {}
        runtime = 0
        for s in ka.profile.pcs.values():
            if s.function == UNATTRIBUTED or is_runtime_function(s.function):
                runtime += s.samples
            elif s.function != ka.profile.mangled and is_user_function(s.function):
                name = demangle_short(s.function)
                children[name] = children.get(name, 0) + s.samples
        for loc in locs:
            local = ka.local.get(loc.file)
            if local is None or local.resolve() != path.resolve():
                continue
            text = texts[loc.line - 1] if 0 < loc.line <= len(texts) else ""
            named = {c: v for c, v in children.items() if re.search(rf"\b{re.escape(c)}\s*<<<", text)}
            cost = next((c for c in out if c.line == loc.line), None)
            if cost is None:
                cost = LaunchCost(kernel=g, line=loc.line, total=g.total_samples)
                out.append(cost)
            for c, v in (named or children).items():
                cost.children[c] = cost.children.get(c, 0) + v
            cost.runtime += runtime
            if per_line.get(loc.line):
                cost.launches = (cost.launches or 0) + per_line[loc.line]
    return out
