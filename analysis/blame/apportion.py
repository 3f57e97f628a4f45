"""Apportioning a stalled instruction's samples over its surviving dependency sources (GPA eq. 1).

GPA eq. 1: S_i = (R_path_i × R_issue_i) / Σ_k∈incoming(j) (R_path_k × R_issue_k) × S_j, where R_issue_i is
proportional to the def's issued samples ("the more the issued samples, the more stalls are blamed") and
R_path_i to the inverse of the longest def→use path in instructions ("the longer the path, the less
stalls"). GPA's released code further multiplies by the def's inverse efficiency where the profile has
it; warpwise uses: memory — L2 sectors actual / ideal (≥ 1 for uncoalesced accesses); divergence —
1 / thread efficiency = 32·inst_executed / thread_inst_executed (≥ 1 for divergent code).
When no def has issued samples, executed instruction counts stand in for them, then equal weights.
"""

from __future__ import annotations

from dataclasses import dataclass

from warpwise.analysis.profile.model import PCSample


@dataclass(frozen=True, slots=True)
class Source:
    """One surviving source: ``issued`` samples (or a stand-in), ``path`` = longest path (instructions),
    ``efficiency`` multiplier (≥ 1 means inefficient, gets more blame)."""

    issued: float
    path: int
    efficiency: float = 1.0


def efficiency_weight(pc: PCSample | None, warp_size: int = 32) -> float:
    """Inverse memory efficiency × inverse thread efficiency of a def (1.0 when the profile lacks them)."""
    if pc is None:
        return 1.0
    w = 1.0
    if pc.l2_sectors > 0 and pc.l2_sectors_ideal > 0:
        w *= max(1.0, pc.l2_sectors / pc.l2_sectors_ideal)
    if pc.inst_executed > 0 and pc.thread_inst_executed > 0:
        w *= max(1.0, warp_size * pc.inst_executed / pc.thread_inst_executed)
    return w


def apportion(sources: list[Source]) -> list[float]:
    """Shares (summing to 1.0) of each source by GPA eq. 1 with efficiency weights. Empty in, empty out."""
    if not sources:
        return []
    weights = [s.issued * s.efficiency / max(1, s.path) for s in sources]
    total = sum(weights)
    if total <= 0:
        weights = [s.efficiency / max(1, s.path) for s in sources]
        total = sum(weights)
    return [w / total for w in weights]
