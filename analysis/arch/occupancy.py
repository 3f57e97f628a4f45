"""Residency of a launch on one SM, from the launch facts and the architecture's per-SM limits.

The CUDA Occupancy Calculator's rules (CUDA C++ Programming Guide, "Technical Specifications per Compute
Capability" and the occupancy section of the Best Practices Guide): an SM holds as many CTAs as the
tightest of these allows

- warps:      max warps per SM / warps per CTA
- blocks:     max CTAs per SM
- registers:  register file / (registers per warp, rounded up to the allocation unit, × warps per CTA)
- shared_mem: shared memory per SM / shared memory per CTA (only when the CTA uses shared memory)

Nsight Compute reports the same limits (``launch__occupancy_limit_*``) and often several equal ones (e.g.
shared memory, barriers and block count all 32 for a 16-thread CTA that uses no shared memory: FACTS.md). A
factor limits residency here only when the kernel uses that resource, and every factor equal to the
minimum is a limiter (ties are kept, never broken by order). Where the report has a limit for a factor the
kernel uses, the report's value is taken (it includes the driver's reserved shared memory per CTA).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from warpwise.analysis.arch.model import ArchFacts

#: Factor names as Nsight Compute spells them (launch__occupancy_limit_<factor>).
FACTORS = ("warps", "blocks", "registers", "shared_mem")


@dataclass(frozen=True)
class Residency:
    """How a launch sits on the GPU.

    ``limits``: CTAs per SM each factor allows (only factors the kernel uses); ``limiters``: the factors
    equal to the minimum (several when tied); ``ctas_per_sm``: resident CTAs per SM when the grid is large
    enough; ``warps_per_cta``; ``warps_per_sm``: resident warps per SM at that residency; ``grid_ctas``:
    CTAs in the grid; ``sm_count``; ``lane_efficiency``: threads per CTA / (warps per CTA × warp size), the
    share of SIMT lanes a CTA's warps use (0.5 for a 4×4 CTA); ``slots``: CTAs the whole GPU holds at once
    (sm_count × ctas_per_sm).
    """

    limits: dict[str, int]
    limiters: tuple[str, ...]
    ctas_per_sm: int
    warps_per_cta: int
    warps_per_sm: int
    grid_ctas: int
    sm_count: int
    lane_efficiency: float
    max_warps_per_sm: int
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def slots(self) -> int:
        """CTAs resident on the whole GPU at once (one full wave)."""
        return self.sm_count * self.ctas_per_sm

    @property
    def fills_gpu(self) -> bool:
        """Whether the grid has at least one full wave of CTAs: only then do per-SM residency limits matter."""
        return self.grid_ctas >= self.slots

    @property
    def first_wave_ctas_per_sm(self) -> int:
        """CTAs on each busy SM in the launch's first wave: min(⌈grid CTAs / SMs⌉, resident CTAs per SM), at
        least 1 (the launch floor grows with it: arch.roofline.launch_floor_ns)."""
        if self.sm_count <= 0:
            return 1
        return max(1, min(-(-self.grid_ctas // self.sm_count), self.ctas_per_sm))

    @property
    def active_sms(self) -> int:
        """SMs that get at least one CTA."""
        return min(self.sm_count, self.grid_ctas)

    @property
    def resident_warps_per_sm(self) -> float:
        """Warps per busy SM while the grid runs: the residency limit for a full wave, else the grid's CTAs
        spread over the SMs that get any (the average, in warps)."""
        if self.fills_gpu or self.active_sms == 0:
            return float(self.warps_per_sm)
        return self.grid_ctas / self.active_sms * self.warps_per_cta


def residency(arch: ArchFacts, threads_per_cta: int, grid_ctas: int, sm_count: int, registers_per_thread: int,
              shared_bytes_per_cta: int, reported: dict[str, float] | None = None) -> Residency:
    """Residency of a launch of ``grid_ctas`` CTAs of ``threads_per_cta`` threads on ``sm_count`` SMs.

    ``registers_per_thread`` and ``shared_bytes_per_cta`` (bytes, static + dynamic) as the report gives
    them (0 = unknown / unused); ``reported``: Nsight Compute's ``launch__occupancy_limit_*`` values by
    factor, used for registers and shared memory when present. Raises ValueError for a CTA of no threads.
    """
    if threads_per_cta <= 0:
        raise ValueError(f"a CTA of {threads_per_cta} threads")
    ws = arch.warp_size
    wpc = math.ceil(threads_per_cta / ws)
    rep = {k: int(v) for k, v in (reported or {}).items() if v and v > 0}
    limits: dict[str, int] = {"warps": arch.max_warps_per_sm // wpc, "blocks": arch.max_ctas_per_sm}
    if registers_per_thread > 0:
        unit = arch.register_alloc_unit
        per_warp = math.ceil(registers_per_thread * ws / unit) * unit
        limits["registers"] = rep.get("registers", (arch.registers_per_sm // per_warp) // wpc)
    if shared_bytes_per_cta > 0:
        limits["shared_mem"] = rep.get("shared_mem", arch.shared_memory_per_sm // shared_bytes_per_cta)
    low = min(limits.values())
    limiters = tuple(k for k in FACTORS if limits.get(k) == low)
    return Residency(limits=limits, limiters=limiters, ctas_per_sm=max(0, low), warps_per_cta=wpc,
                     warps_per_sm=max(0, low) * wpc, grid_ctas=grid_ctas, sm_count=sm_count,
                     lane_efficiency=threads_per_cta / (wpc * ws), max_warps_per_sm=arch.max_warps_per_sm,
                     sources={"rules": "CUDA Occupancy Calculator (CUDA C++ Best Practices Guide, Occupancy)"})
