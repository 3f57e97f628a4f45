"""A kernel prepared for tuning: its SASS, where its offsets live in the file, and its legal-move model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .model import MOVABLE_GLOBAL, KernelModel, Move, apply_move
from .patch import Layout, layout, permute, text_hash
from .sass import KernelCode, load_kernel


@dataclass
class Target:
    """One kernel of one cubin: ``data`` (original bytes), ``code``, ``layout`` and ``model``."""

    data: bytes
    code: KernelCode
    layout: Layout
    model: KernelModel

    @property
    def identity(self) -> list[int]:
        """The original order."""
        return list(range(len(self.code.instructions)))

    def build(self, order: Sequence[int]) -> bytes:
        """Cubin bytes with the kernel's instructions in ``order`` (see :func:`.patch.permute`)."""
        return permute(self.data, self.layout, order)

    def key(self, order: Sequence[int]) -> str:
        """Cache key of a schedule: SHA-256 of its ``.text`` words."""
        return text_hash(self.build(order), self.layout)

    def replay(self, moves: Sequence[Move]) -> list[int]:
        """The order reached by applying ``moves`` to the original order, each checked for legality.

        Raises:
            ValueError: a move is illegal at its step (message names the rule).
        """
        order = self.identity
        for k, m in enumerate(moves):
            v = self.model.legal(order, m)
            if not v.ok:
                raise ValueError(f"move {k} {m.to_json()} is illegal: {v.rule}: {v.reason}")
            order = apply_move(order, m)
        return order


def load_target(data: bytes, kernel: str, path: str = "<memory>", movable: frozenset[str] = MOVABLE_GLOBAL) -> Target:
    """Prepare ``kernel`` of cubin bytes ``data`` for tuning.

    Raises:
        ScheduleError: bad cubin, unknown kernel, malformed offset attributes.
        ToolError: nvdisasm missing or failed.
    """
    code = load_kernel(data, kernel, path)
    lay = layout(data, code.kernel, path)
    return Target(data, code, lay, KernelModel(code.instructions, code.leaders, lay.pinned, movable, code.arch))
