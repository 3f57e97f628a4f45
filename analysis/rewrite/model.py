"""Plain result types of the dynamic-parallelism rewrites (no LSP types).

Positions are UTF-8 byte offsets into the source (0-based) and 1-based lines / byte columns, as
libclang reports them; the server converts them to LSP UTF-16 positions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Transform = Literal["threshold", "coarsen", "aggregate"]
TRANSFORMS: tuple[Transform, ...] = ("threshold", "coarsen", "aggregate")
GRANULARITIES: tuple[str, ...] = ("warp", "block", "multiblock", "grid")


class RewriteError(Exception):
    """A rewrite cannot be applied (bad input, unparsable file, or a refused transform).

    The message names the file and line and says why.
    """


@dataclass(frozen=True)
class Span:
    """An expression's source text and UTF-8 byte extent [start, end)."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class TextEdit:
    """Replace bytes [start, end) of the UTF-8 source by ``new_text``.

    ``line``/``column`` (1-based, column in bytes) locate ``start``; ``end_line``/``end_column`` ``end``.
    """

    start: int
    end: int
    new_text: str
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class Launch:
    """One device-side kernel launch ``child<<<grid, block, shmem, stream>>>(args);``.

    ``start``/``end``: byte extent of the whole launch statement (including ``;``); ``line``/``column``
    its 1-based start. ``thread_count`` is the child-thread-count expression recovered from the grid
    expression by the ceil-division patterns of CGO'22 Fig. 4 (None when no pattern matched) and
    ``thread_count_pattern`` names the pattern. ``refusals`` maps each transform that does not apply
    to the reason; ``transforms`` lists the ones that do.
    """

    line: int
    column: int
    start: int
    end: int
    parent: str
    child: str
    grid: Span
    block: Span
    shared: Span | None
    stream: Span | None
    args: list[Span]
    thread_count: str | None
    thread_count_pattern: str | None
    in_loop: bool
    refusals: dict[str, str] = field(default_factory=dict)

    @property
    def transforms(self) -> list[str]:
        """Names of the transforms that apply to this launch, in pass order."""
        return [t for t in TRANSFORMS if t not in self.refusals]


@dataclass(frozen=True)
class LaunchDiagnostic:
    """A finding about a device-side launch: 1-based ``line``, byte columns [column, end_column)
    on that line (1-based, end exclusive), a message and a stable code."""

    line: int
    column: int
    end_column: int
    message: str
    code: str
