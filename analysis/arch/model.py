"""Per-architecture facts (DESIGN.md "arch/"): one :class:`ArchFacts` per SM version.

Every number carries its source in :attr:`ArchFacts.sources` (field name -> citation). Citations:
``CUDA-CPG`` = CUDA C++ Programming Guide, "Compute Capabilities" / "Technical Specifications per
Compute Capability" table (CUDA 13.0 edition); ``GPA`` = Zhou et al., CGO 2021; ``H200-bench`` =
bench/latency/latency_h200.json (bench/latency/latency.cu, H200, driver 580.159.04, nvcc 13.0,
measured 2026-11-30); ``FACTS`` = /work/shared/FACTS.md (checked on these machines).
"""

from __future__ import annotations

from dataclasses import dataclass, field


class UnknownArchError(KeyError):
    """The architecture string names no SM version warpwise has facts for."""

    def __str__(self) -> str:  # KeyError quotes its argument; show the message plainly
        return str(self.args[0]) if self.args else "unknown architecture"


@dataclass(frozen=True)
class ArchFacts:
    """Hardware facts of one SM architecture.

    ``sm``: e.g. 90 for sm_90. ``schedulers_per_sm``: warp schedulers (SM sub-partitions) per SM.
    ``max_warps_per_sm``/``max_ctas_per_sm``/``max_threads_per_sm``: residency limits.
    ``max_threads_per_block``: the most threads one CTA may have (a launch limit, not a residency one).
    ``registers_per_sm``: 32-bit registers per SM; ``max_registers_per_thread``; ``register_alloc_unit``:
    registers allocated per warp in units of this many (per warp). ``shared_memory_per_sm``: bytes of
    shared memory per SM (the carve-out maximum); ``max_shared_memory_per_block``: bytes with opt-in.
    ``named_barriers``: CTA barriers (bar.sync ids) per CTA. ``scoreboard_barriers``: dependency
    barriers per warp (SB0..SB5) the control codes name. ``warp_size``: threads per warp.
    ``default_sm_count``: SMs of the reference product named in ``product`` (a profile's own SM count
    takes precedence). ``param_base``: constant-bank offset of the first kernel parameter.
    ``sfu_results_per_sm_cycle``: thread results per clock per SM of the special-function unit (MUFU).
    ``async_copy``: whether the SM copies global to shared memory asynchronously in hardware (``cp.async``,
    SASS ``LDGSTS``: compute capability 8.0 and higher; on older ones ``cuda::memcpy_async`` is a synchronous
    copy through registers).
    ``cache_line_bytes``: bytes of an L1/L2 cache line (four 32-byte sectors); a warp request of one
    coalesced access per thread that moves fewer bytes uses part of a line. ``widest_access_bytes``: the widest
    global load or store per thread (LDG/STG.128).
    """

    sm: int
    name: str
    product: str
    schedulers_per_sm: int
    max_warps_per_sm: int
    max_ctas_per_sm: int
    max_threads_per_sm: int
    registers_per_sm: int
    max_registers_per_thread: int
    register_alloc_unit: int
    shared_memory_per_sm: int
    max_shared_memory_per_block: int
    named_barriers: int
    scoreboard_barriers: int
    warp_size: int
    default_sm_count: int
    param_base: int | None
    #: results per clock per SM of the SFU (MUFU: reciprocal, reciprocal square root, log2, exp2, sine, cosine)
    sfu_results_per_sm_cycle: int = 16
    #: hardware global-to-shared asynchronous copy (cp.async / LDGSTS), compute capability >= 8.0
    async_copy: bool = False
    #: bytes per L1/L2 cache line (four 32-byte sectors)
    cache_line_bytes: int = 128
    #: bytes of the widest global load/store one thread can issue (128-bit: LDG.E.128, STG.E.128)
    widest_access_bytes: int = 16
    #: threads one CTA may have at most (1024 on every compute capability from 2.0 on)
    max_threads_per_block: int = 1024
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def arch(self) -> str:
        """``sm_XX`` spelling."""
        return f"sm_{self.sm}"

    @property
    def max_warps_per_scheduler(self) -> int:
        """Warps a scheduler can hold: max warps per SM / schedulers per SM."""
        return self.max_warps_per_sm // self.schedulers_per_sm

    def source(self, fact: str) -> str:
        """Citation of ``fact`` (a field name). Raises KeyError if the fact has no recorded source."""
        return self.sources[fact]
