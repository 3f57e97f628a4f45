"""The optimizer registry: every optimizer id of the CLI contract (DESIGN.md) with its entry.

GPA's paper lists 11 optimizers (Table 2); its released code adds more. Ids are stable: an id never
changes meaning, new optimizers add new ids.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from warpwise.analysis.advice.model import Advice, Family, Skipped

if TYPE_CHECKING:
    from warpwise.analysis.advice.context import KernelView

#: The contract's ids, GPA's paper first (Table 2 order), then the rest of GPA's released set.
PAPER_IDS: tuple[str, ...] = (
    "register_reuse", "strength_reduction", "function_split", "fast_math", "warp_balance",
    "memory_transaction_reduction", "loop_unrolling", "code_reordering", "function_inlining",
    "block_increase", "thread_increase",
)
RELEASED_IDS: tuple[str, ...] = (
    "loop_no_unroll", "kernel_merge", "shared_memory_coalesce", "global_memory_coalesce",
    "divergence_reduction", "branch_elimination", "async_copy", "indirect_address_elimination",
    "occupancy_increase", "occupancy_decrease", "block_decrease", "sm_balance", "register_increase",
)
#: Optimizers of warpwise's own, for patterns GPA has no optimizer for.
WARPWISE_IDS: tuple[str, ...] = ("atomic_privatization",)
OPTIMIZER_IDS: tuple[str, ...] = PAPER_IDS + RELEASED_IDS + WARPWISE_IDS

Runner = Callable[["KernelView"], "Advice | Skipped"]


@dataclass(frozen=True)
class Optimizer:
    """One registered optimizer.

    ``id``: contract id; ``title``: short name; ``family``: stall_elimination (GPA eq. 2),
    latency_hiding (eqs. 4–5) or parallel (eqs. 6–10); ``detects``: one sentence on the matched pattern;
    ``fix``: the typical fix (SARIF rule help); ``run``: the matcher + estimator for one kernel.
    """

    id: str
    title: str
    family: Family
    detects: str
    fix: str
    run: Runner

    @property
    def in_paper(self) -> bool:
        """Whether GPA's paper (Table 2) lists it."""
        return self.id in PAPER_IDS


REGISTRY: dict[str, Optimizer] = {}


def register(id: str, title: str, family: Family, detects: str, fix: str) -> Callable[[Runner], Runner]:
    """Decorator registering ``run`` under ``id``. Raises ValueError for an id outside the contract or
    registered twice."""

    def deco(run: Runner) -> Runner:
        if id not in OPTIMIZER_IDS:
            raise ValueError(f"optimizer id {id!r} is not in the CLI contract")
        if id in REGISTRY:
            raise ValueError(f"optimizer id {id!r} registered twice")
        REGISTRY[id] = Optimizer(id=id, title=title, family=family, detects=detects, fix=fix, run=run)
        return run

    return deco


def optimizers() -> list[Optimizer]:
    """All registered optimizers in contract order (imports the optimizer modules on first use)."""
    from warpwise.analysis.advice import atomics, code, latency, parallel  # noqa: F401  (registration side effect)

    return [REGISTRY[i] for i in OPTIMIZER_IDS if i in REGISTRY]
