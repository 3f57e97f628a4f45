"""Profile model: one kernel launch's PC samples and launch facts (DESIGN.md "Profile model").

Sample counts are exactly Nsight Compute's (SourceCounters section). GPA's terms: a sample is *active*
(issued) or a *latency* sample (not issued); T = all samples, L = not-issued samples, A = T - L.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PCSample:
    """Counters of one SASS instruction (one PC) from the SourceCounters section.

    ``function``: mangled name of the function the PC belongs to (a CDP child's PCs keep the child's name).
    ``offset``: bytes from the start of that function's code section; ``pc``: the absolute address ncu
    recorded. ``samples``/``not_issued``: warp samples (all / not issued). ``stalls``: samples per stall
    reason (Nsight Compute's names without prefix); ``stalls_not_issued``: the not-issued part of each.
    ``file``/``line``: the profile's source correlation (compile machine's path; None without line info).
    """

    function: str
    offset: int
    pc: int
    sass: str
    samples: int = 0
    not_issued: int = 0
    stalls: dict[str, int] = field(default_factory=dict)
    stalls_not_issued: dict[str, int] = field(default_factory=dict)
    inst_executed: int = 0
    thread_inst_executed: int = 0
    predicated_on_thread_inst_executed: int = 0
    divergent_branches: int = 0
    l2_sectors: int = 0  # L2 theoretical sectors, global (actual)
    l2_sectors_ideal: int = 0
    l2_sectors_local: int = 0  # L2 theoretical sectors, local memory (register saves, spills, local arrays)
    shared_wavefronts: int = 0  # L1 shared-memory wavefronts (actual; bank conflicts make it exceed the ideal)
    shared_wavefronts_ideal: int = 0
    file: str | None = None
    line: int | None = None

    @property
    def issued(self) -> int:
        """Active (issued) samples: samples - not_issued."""
        return self.samples - self.not_issued


@dataclass
class LaunchConfig:
    """Launch facts from LaunchStats / Occupancy.

    grid/block in CTAs/threads; ``shared_bytes_per_block`` static + dynamic bytes;
    occupancy values are percentages of the SM's maximum warps (0..100) as ncu reports them.
    """

    grid: tuple[int, int, int] = (0, 0, 0)
    block: tuple[int, int, int] = (0, 0, 0)
    registers_per_thread: int = 0
    shared_bytes_per_block: int = 0
    static_shared_bytes_per_block: int = 0
    dynamic_shared_bytes_per_block: int = 0
    sm_count: int = 0
    waves_per_sm: float = 0.0
    theoretical_occupancy: float = 0.0
    achieved_occupancy: float = 0.0
    theoretical_warps_per_sm: float = 0.0
    achieved_warps_per_sm: float = 0.0
    # CTAs per SM allowed by each factor: registers, shared_mem, warps, blocks, barriers
    occupancy_limit: dict[str, float] = field(default_factory=dict)
    duration_ns: float = 0.0
    # SpeedOfLight section: % of peak sustained throughput per unit ("dram", "l2", "l1", "sm", "memory");
    # a unit missing from the report is absent (not 0)
    throughput_pct: dict[str, float] = field(default_factory=dict)
    # PC-sampling interval in SM cycles between samples of one SM sub-partition (smsp__pcsamp_interval_cycles)
    sampling_interval_cycles: float = 0.0
    # Peak DRAM bandwidth in bytes/s: 2 (double data rate) x memory clock x bus width / 8, from the device
    # attributes ncu records (device__attribute_memory_clock_rate, _global_memory_bus_width); 0 when absent
    dram_peak_bytes_per_s: float = 0.0
    # L1 data-pipe LSU wavefronts of the launch, all L1s together: the SpeedOfLight breakdown's
    # l1tex__data_pipe_lsu_wavefronts % of peak x l1tex__cycles_elapsed.sum (peak: one wavefront per cycle per
    # L1); global, local and shared accesses alike. 0 when absent
    l1_lsu_wavefronts: float = 0.0
    # SM clock cycles the launch took: Nsight Compute's "Elapsed Cycles" (gpc__cycles_elapsed.max, the
    # SpeedOfLight section); 0 when absent
    elapsed_cycles: float = 0.0

    @property
    def dram_bytes(self) -> float:
        """Bytes the launch moved to and from DRAM: DRAM throughput % x peak bandwidth x duration (0 when any
        of them is unknown)."""
        return self.throughput_pct.get("dram", 0.0) / 100.0 * self.dram_peak_bytes_per_s * self.duration_ns * 1e-9

    @property
    def threads_per_block(self) -> int:
        """Threads in one CTA."""
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def blocks(self) -> int:
        """CTAs in the grid."""
        return self.grid[0] * self.grid[1] * self.grid[2]


@dataclass
class KernelProfile:
    """One profiled kernel launch.

    ``name``: demangled function name as ncu shows it (``relax``); ``mangled``: the symbol;
    ``arch``: ``sm_90``; ``pcs``: every sampled or executed instruction keyed by (function, offset);
    ``report``: path of the report; ``launch_index``: which launch (range, action) in the report;
    ``origin``: the reader (``ncu-rep``; ``csv`` SASS view; ``csv-lines`` CUDA view only; ``csv-launch``
    launch facts only); ``notes``: what the reader could not give (said to the user);
    ``executed_per_opcode``: the report's warp-level executed instructions of the launch by opcode
    without modifiers (``sass__inst_executed_per_opcode``; empty when not collected), which the join checks a
    binary against; ``profiled_code_sha256``: SHA-256 of each code section of the modules the report carries,
    by function (``ncu.embedded_code``; empty when it carries none).
    """

    name: str
    mangled: str
    arch: str
    launch: LaunchConfig
    pcs: dict[tuple[str, int], PCSample]
    report: str = ""
    launch_index: tuple[int, int] = (0, 0)
    device: str = ""
    source_files: dict[str, str] = field(default_factory=dict)  # embedded source by path (--import-source)
    origin: str = "ncu-rep"
    notes: list[str] = field(default_factory=list)
    executed_per_opcode: dict[str, int] = field(default_factory=dict)
    profiled_code_sha256: dict[str, list[str]] = field(default_factory=dict)

    @property
    def total_samples(self) -> int:
        """T: all warp samples of the launch."""
        return sum(p.samples for p in self.pcs.values())

    @property
    def latency_samples(self) -> int:
        """L: not-issued (latency) samples."""
        return sum(p.not_issued for p in self.pcs.values())

    @property
    def active_samples(self) -> int:
        """A = T - L: issued samples."""
        return self.total_samples - self.latency_samples

    def fingerprint(self) -> tuple[object, ...] | None:
        """What identifies this launch across the files it can be read from (the ``.ncu-rep`` and its CSV
        exports): demangled name, grid and block (CTAs, threads), and the (offset, warp samples, not-issued
        samples) of each sampled instruction of the kernel's own function. Durations are left out (the Details
        page rounds them) and so are samples outside the kernel's function (a CSV export lacks the CDP device
        runtime's). Two launches of one program agreeing on every per-PC sample count by chance is not a case
        to plan for; None when the kernel's function has no samples (nothing to tell launches apart by)."""
        own = tuple(sorted((o, s.samples, s.not_issued) for (f, o), s in self.pcs.items()
                           if f == self.mangled and s.samples))
        if not own:
            return None
        return (self.name, self.launch.grid, self.launch.block, own)

    def functions(self) -> list[str]:
        """Names of the functions whose PCs appear (the kernel first)."""
        names = sorted({f for f, _ in self.pcs}, key=lambda n: (n != self.mangled, n))
        return names
