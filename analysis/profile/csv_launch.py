"""Launch facts from the Details page (``--page details --csv``, one row per metric) or the Raw page
(``--page raw --csv``, one row per launch, one column per metric name, a units row under the header).

Both feed :func:`warpwise.analysis.profile.ncu.launch_from_metrics`, the one mapping from Nsight Compute
metric names to :class:`LaunchConfig`; the Details page's labels are mapped to those metric names here
(labels as ncu 2025.3 prints them in the LaunchStats and Occupancy sections). Values are converted to
base units (bytes, ns) from the unit ncu printed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from warpwise.analysis.profile.csvfile import CsvTable, normalize, number, to_base
from warpwise.analysis.profile.model import LaunchConfig
from warpwise.analysis.profile.ncu import launch_from_metrics

#: Details-page metric label -> Nsight Compute metric name (ncu 2025.3 section files LaunchStats,
#: Occupancy, SpeedOfLight).
DETAILS_METRICS: dict[str, str] = {
    "registers per thread": "launch__registers_per_thread",
    "static shared memory per block": "launch__shared_mem_per_block_static",
    "dynamic shared memory per block": "launch__shared_mem_per_block_dynamic",
    "# sms": "launch__sm_count",
    "waves per sm": "launch__waves_per_multiprocessor",
    "theoretical occupancy": "sm__maximum_warps_per_active_cycle_pct",
    "achieved occupancy": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "theoretical active warps per sm": "sm__maximum_warps_avg_per_active_cycle",
    "achieved active warps per sm": "sm__warps_active.avg.per_cycle_active",
    "block limit registers": "launch__occupancy_limit_registers",
    "block limit shared mem": "launch__occupancy_limit_shared_mem",
    "block limit warps": "launch__occupancy_limit_warps",
    "block limit sm": "launch__occupancy_limit_blocks",
    "block limit barriers": "launch__occupancy_limit_barriers",
    "duration": "gpu__time_duration.sum",
    # SpeedOfLight section ("GPU Speed Of Light Throughput"): the units' % of peak (ncu.THROUGHPUT_METRICS)
    "dram throughput": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "l2 cache throughput": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1/tex cache throughput": "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "compute (sm) throughput": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "memory throughput": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
}

ID = ("ID",)
KERNEL = ("Kernel Name", "Function Name", "Demangled Name", "Mangled Name")
BLOCK = ("Block Size", "launch__block_size")
GRID = ("Grid Size", "launch__grid_size")
CC = ("CC", "Compute Capability")
DEVICE = ("Device Name", "device__attribute_display_name")
METRIC_NAME = ("Metric Name",)
METRIC_UNIT = ("Metric Unit",)
METRIC_VALUE = ("Metric Value",)


@dataclass
class LaunchFacts:
    """One launch of a Details or Raw page: ncu's launch ID, the kernel's title as ncu printed it, its
    launch configuration, the architecture (``sm_90``, from the compute capability) and device name."""

    id: int
    title: str
    launch: LaunchConfig
    arch: str = "sm_unknown"
    device: str = ""
    metrics: dict[str, float] = field(default_factory=dict)


def is_details_table(table: CsvTable) -> bool:
    """Whether ``table`` is a Details page (metric name/value columns)."""
    return table.index(*METRIC_NAME) is not None and table.index(*METRIC_VALUE) is not None


def is_raw_table(table: CsvTable) -> bool:
    """Whether ``table`` is a Raw page (an ID column and metric-name columns such as ``launch__*``)."""
    return table.index(*ID) is not None and any("__" in h for h in table.header)


def _dims(cell: str) -> tuple[int, int, int] | None:
    nums = [int(x) for x in re.findall(r"\d+", cell.replace(",", ""))] + [1, 1, 1]
    return (nums[0], nums[1], nums[2]) if "(" in cell and len(nums) > 3 else None


def _arch(cell: str) -> str:
    m = re.match(r"\s*(\d+)\.(\d+)", cell)
    return f"sm_{m.group(1)}{m.group(2)}" if m else "sm_unknown"


def _finish(facts: LaunchFacts, block: tuple[int, int, int] | None, grid: tuple[int, int, int] | None) -> None:
    facts.launch = launch_from_metrics(facts.metrics.get)
    if block is not None:
        facts.launch.block = block
    if grid is not None:
        facts.launch.grid = grid


def from_details(table: CsvTable) -> list[LaunchFacts]:
    """Launches of a Details page, in ID order."""
    ii, ki, bi, gi, ci = (table.index(*ID), table.index(*KERNEL), table.index(*BLOCK), table.index(*GRID),
                          table.index(*CC))
    ni, ui, vi = table.index(*METRIC_NAME), table.index(*METRIC_UNIT), table.index(*METRIC_VALUE)
    assert ni is not None and vi is not None
    out: dict[int, LaunchFacts] = {}
    dims: dict[int, tuple[tuple[int, int, int] | None, tuple[int, int, int] | None]] = {}
    for row in table.rows:
        lid = int(number(row[ii]) or 0) if ii is not None else 0
        if lid not in out:
            out[lid] = LaunchFacts(id=lid, title=row[ki] if ki is not None else "", launch=LaunchConfig(),
                                   arch=_arch(row[ci]) if ci is not None else "sm_unknown")
            dims[lid] = (_dims(row[bi]) if bi is not None else None, _dims(row[gi]) if gi is not None else None)
        metric = DETAILS_METRICS.get(normalize(row[ni]))
        value = to_base(number(row[vi]), row[ui] if ui is not None else "")
        if metric and value is not None:
            out[lid].metrics.setdefault(metric, value)
    for lid, f in out.items():
        _finish(f, *dims[lid])
    return [out[k] for k in sorted(out)]


def from_raw(table: CsvTable) -> list[LaunchFacts]:
    """Launches of a Raw page (one row each), in ID order; metric columns are read by their names."""
    ii, ki, ci, di = table.index(*ID), table.index(*KERNEL), table.index(*CC), table.index(*DEVICE)
    out: list[LaunchFacts] = []
    for row in table.rows:
        metrics: dict[str, float] = {}
        for k, h in enumerate(table.header):
            if "__" in h:
                v = to_base(number(row[k]), table.unit(k))
                if v is not None:
                    metrics[h.strip()] = v
        arch = _arch(row[ci]) if ci is not None else "sm_unknown"
        major = metrics.get("device__attribute_compute_capability_major")
        if major is not None:
            arch = f"sm_{int(major)}{int(metrics.get('device__attribute_compute_capability_minor', 0))}"
        f = LaunchFacts(id=int(number(row[ii]) or 0) if ii is not None else len(out),
                        title=row[ki] if ki is not None else "", launch=LaunchConfig(), arch=arch,
                        device=row[di].strip() if di is not None else "", metrics=metrics)
        bi, gi = table.index(*BLOCK), table.index(*GRID)
        _finish(f, _dims(row[bi]) if bi is not None else None, _dims(row[gi]) if gi is not None else None)
        out.append(f)
    return sorted(out, key=lambda f: f.id)
