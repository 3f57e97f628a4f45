"""Blame model: stalls of a *use* instruction apportioned to the *def* instructions that caused them (GPA §4).

Offsets are section offsets (the JSON contract's ``pc``). Sample values are floats because apportioning
(GPA eq. 1) splits integer samples; they sum back to the profile's integers per reason (conservation).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Categories of a blame edge (GPA §4 "dependency classification" + DESIGN.md).
CATEGORIES: tuple[str, ...] = (
    "global_memory", "local_memory", "constant_memory",   # memory dependency, by the def's opcode
    "shared_memory", "arithmetic", "write_after_read",    # execution dependency
    "synchronization", "instruction_fetch", "memory_throttle", "pipe_busy", "other",
    "self",                                               # no surviving source: kept by the use itself
)


@dataclass(slots=True)
class BlameEdge:
    """Stall and latency samples of ``use`` blamed on ``def_``.

    ``function``: mangled name of the function both belong to. ``def_offset`` is None for a
    self-attributed edge (no def survived pruning, or a reason that has no def such as not_selected).
    ``reason``: Nsight Compute stall reason (long_scoreboard, wait, ...). ``stall_samples``: samples of
    that reason apportioned to this edge; ``latency_samples``: the not-issued part of them.
    ``distance``: instructions on the longest def→use path considered (0 for self).
    ``section``: ELF section of both instructions (offsets are unique per section; a ``__noinline__``
    function's PCs, which Nsight Compute files under the kernel's name, keep their own ``function``).
    ``operands``: registers the dependency flows through (``R2``, ``P0``, ``SB0`` = scoreboard barrier 0).
    ``path_cycles``: issue cycles (sum of control-code stall counts) on the shortest def→use path.
    """

    function: str
    def_offset: int | None
    use_offset: int
    reason: str
    category: str
    stall_samples: float
    latency_samples: float
    distance: int = 0
    section: str = ""
    operands: tuple[str, ...] = ()
    path_cycles: int = 0


@dataclass
class BlameGraph:
    """All blame edges of one kernel launch plus quality metrics.

    ``coverage_before``/``coverage_after``: share (0..1) of stalled instructions (weighted by stall
    samples) that have exactly one candidate def before/after pruning (GPA Fig. 7, single-dependency
    coverage). ``stats`` (written by ``blame.attribute.attribute``): ``dependency_samples`` (stall samples of
    dependency reasons), ``apportioned_samples`` / ``self_samples`` (their part blamed on defs / kept),
    ``unresolved_samples`` (samples at PCs with no instruction in the program, kept by themselves),
    ``cut_opcode`` / ``cut_barrier`` / ``cut_dominator`` / ``cut_latency`` (edges cut per rule and reason).
    """

    kernel: str
    edges: list[BlameEdge] = field(default_factory=list)
    coverage_before: float = 0.0
    coverage_after: float = 0.0
    stats: dict[str, float] = field(default_factory=dict)

    def blamed_on(self, function: str, def_offset: int) -> list[BlameEdge]:
        """Edges whose def is the instruction at ``def_offset`` of ``function``."""
        return [e for e in self.edges if e.function == function and e.def_offset == def_offset]

    def stalls_of(self, function: str, use_offset: int) -> list[BlameEdge]:
        """Edges whose use is the instruction at ``use_offset`` of ``function``."""
        return [e for e in self.edges if e.function == function and e.use_offset == use_offset]
