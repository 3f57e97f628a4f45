"""Stall-reason names and their GPA classes — the one mapping table (DESIGN.md "Profile model").

Names are Nsight Compute's ``smsp__pcsamp_warps_issue_stalled_<reason>`` suffixes (ncu 2025.3, Kernel
Profiling Guide "Warp Stall Reasons"). GPA's classes (GPA §2/§4): stalls of the *dependency* classes
(memory, execution, synchronization) are caused by an earlier instruction and get blamed on it; the
others are kept by the stalled instruction itself.
"""

from __future__ import annotations

MEMORY_DEPENDENCY = "memory_dependency"
EXECUTION_DEPENDENCY = "execution_dependency"
SYNCHRONIZATION = "synchronization"
INSTRUCTION_FETCH = "instruction_fetch"
MEMORY_THROTTLE = "memory_throttle"
PIPE_BUSY = "pipe_busy"
NOT_SELECTED = "not_selected"
ACTIVE = "active"
OTHER = "other"

#: Nsight Compute stall reason -> GPA class (DESIGN.md "Profile model"; GPA §2 Fig. 1 / §4).
STALL_CLASS: dict[str, str] = {
    "long_scoreboard": MEMORY_DEPENDENCY,       # L1TEX: global, local, texture, surface
    "wait": EXECUTION_DEPENDENCY,               # fixed-latency dependency (control-code stall count)
    "short_scoreboard": EXECUTION_DEPENDENCY,   # MIO: shared memory, special functions, some conversions
    "barrier": SYNCHRONIZATION,                 # BAR.SYNC / __syncthreads
    "membar": SYNCHRONIZATION,                  # MEMBAR / fences
    "warpgroup_arrive": SYNCHRONIZATION,        # sm_90 warpgroup arrive/wait
    "no_instructions": INSTRUCTION_FETCH,
    "branch_resolving": INSTRUCTION_FETCH,
    "imc_miss": INSTRUCTION_FETCH,              # immediate constant cache miss (treated as fetch, GPA §2)
    "lg_throttle": MEMORY_THROTTLE,
    "mio_throttle": MEMORY_THROTTLE,
    "tex_throttle": MEMORY_THROTTLE,
    "drain": MEMORY_THROTTLE,
    "math_pipe_throttle": PIPE_BUSY,
    "dispatch_stall": PIPE_BUSY,
    "not_selected": NOT_SELECTED,
    "selected": ACTIVE,
    "sleeping": OTHER,
    "misc": OTHER,
}

STALL_REASONS: tuple[str, ...] = tuple(sorted(STALL_CLASS))

#: Classes whose stalls are blamed on a def instruction (GPA §4: "memory dependency, synchronization, and
#: execution dependency stalls are caused by the source instructions").
BLAMED_CLASSES: frozenset[str] = frozenset({MEMORY_DEPENDENCY, EXECUTION_DEPENDENCY, SYNCHRONIZATION})

#: ncu CSV source-page column stems (``stall_<stem>``) -> reason names.
CSV_ALIASES: dict[str, str] = {
    "barrier": "barrier", "branch_resolving": "branch_resolving", "dispatch": "dispatch_stall",
    "drain": "drain", "imc": "imc_miss", "lg": "lg_throttle", "long_sb": "long_scoreboard",
    "math": "math_pipe_throttle", "membar": "membar", "mio": "mio_throttle", "misc": "misc",
    "no_inst": "no_instructions", "not_selected": "not_selected", "selected": "selected",
    "short_sb": "short_scoreboard", "sleep": "sleeping", "tex": "tex_throttle", "wait": "wait",
    "warpgroup_arrive": "warpgroup_arrive",
}


def stall_class(reason: str) -> str:
    """GPA class of Nsight Compute stall ``reason`` (``other`` for names this table does not know)."""
    return STALL_CLASS.get(reason, OTHER)


def is_blamed(reason: str) -> bool:
    """Whether stalls of ``reason`` are attributed to a def instruction (dependency classes)."""
    return stall_class(reason) in BLAMED_CLASSES
