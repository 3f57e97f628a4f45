"""Dependency classification of blame edges (GPA §4 last paragraph, Fig. 5; DESIGN.md step 5).

Memory dependency -> global / local / constant memory by the def's opcode. Constant loads (LDC) stall
their users on the *short* scoreboard on sm_90 (see prune.opcode_rule), so a short_scoreboard edge from
an LDC is classified constant_memory too. Execution dependency -> write-after-read (the dependency flows through a
read barrier: the def still reads a register the use overwrites), shared memory (LDS/STS/ATOMS/LDSM def),
else arithmetic. Self-kept samples: ``self`` for dependency reasons with no surviving source; the
non-dependency reasons keep their GPA class as category (instruction_fetch, memory_throttle, pipe_busy,
other).
"""

from __future__ import annotations

from functools import lru_cache

from warpwise.analysis.arch.latency import latency_class
from warpwise.analysis.arch.stalls import (
    EXECUTION_DEPENDENCY,
    INSTRUCTION_FETCH,
    MEMORY_DEPENDENCY,
    MEMORY_THROTTLE,
    PIPE_BUSY,
    SYNCHRONIZATION,
    is_blamed,
    stall_class,
)


@lru_cache(maxsize=16384)
def classify_edge(reason: str, def_opcode: str, war: bool, def_is_call: bool = False) -> str:
    """Category (one of blame.model.CATEGORIES) of a def→use edge for stall ``reason``."""
    cls = stall_class(reason)
    if def_is_call:
        return "other"
    k = latency_class(def_opcode)
    if cls == MEMORY_DEPENDENCY:
        return {"local": "local_memory", "constant": "constant_memory", "shared": "shared_memory"}.get(
            k, "global_memory")
    if cls == EXECUTION_DEPENDENCY:
        if war:
            return "write_after_read"
        # constant loads wait on the short scoreboard but are memory dependencies in GPA's classes
        return {"shared": "shared_memory", "constant": "constant_memory"}.get(k, "arithmetic")
    if cls == SYNCHRONIZATION:
        return "synchronization"
    return "other"


def classify_self(reason: str) -> str:
    """Category of samples an instruction keeps itself."""
    if is_blamed(reason):
        return "self"
    return {INSTRUCTION_FETCH: "instruction_fetch", MEMORY_THROTTLE: "memory_throttle",
            PIPE_BUSY: "pipe_busy"}.get(stall_class(reason), "other")
