"""Read Nsight Compute reports (``.ncu-rep``) into :class:`KernelProfile` through the ``ncu-report`` package.

Per-instruction metrics (SourceCounters section) are instanced: instance i's correlation id is the
absolute PC (FACTS.md, checked against ncu's own Source page). Function boundaries come from
``launch__function_pcs`` (start PC of every function of the launched module that ncu correlates; the
launched kernel is listed first, as on ncu's Source page). PCs outside every function — e.g. the CDP
device runtime's internal code in a parent's report — have no SASS and no source; they are kept under
:data:`UNATTRIBUTED` so the kernel's sample total stays exactly the profile's.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from warpwise.analysis.profile.model import KernelProfile, LaunchConfig, PCSample

#: Function name for sampled PCs that lie in no function of the module (no SASS, no source).
UNATTRIBUTED = "<unattributed>"

#: Stall reasons, Nsight Compute's metric suffixes (smsp__pcsamp_warps_issue_stalled_<reason>), 2025.3.
STALL_REASONS: tuple[str, ...] = (
    "barrier", "branch_resolving", "dispatch_stall", "drain", "imc_miss", "lg_throttle", "long_scoreboard",
    "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instructions", "not_selected", "selected",
    "short_scoreboard", "sleeping", "tex_throttle", "wait", "warpgroup_arrive",
)

_PER_PC_FIELDS: dict[str, str] = {
    "smsp__pcsamp_sample_count": "samples",
    "inst_executed": "inst_executed",
    "thread_inst_executed": "thread_inst_executed",
    "thread_inst_executed_true": "predicated_on_thread_inst_executed",
    "smsp__branch_targets_threads_divergent": "divergent_branches",
    "memory_l2_theoretical_sectors_global": "l2_sectors",
    "memory_l2_theoretical_sectors_global_ideal": "l2_sectors_ideal",
    "memory_l1_wavefronts_shared": "shared_wavefronts",
    "memory_l1_wavefronts_shared_ideal": "shared_wavefronts_ideal",
}


class ProfileLoadError(Exception):
    """A report cannot be read: the message names the file and what is wrong."""


def _import_ncu_report() -> Any:
    try:
        import ncu_report
    except ImportError as e:  # pragma: no cover - dependency of the package
        raise ProfileLoadError("the ncu-report package is not installed (pip install ncu-report)") from e
    return ncu_report


def _scalar(action: Any, name: str) -> float | None:
    m = action.metric_by_name(name)
    if m is None:
        return None
    try:
        if m.num_instances() > 0:
            return float(m.as_double(0))
        v = m.value()
        return float(v) if isinstance(v, int | float) else None
    except Exception:
        return None


def _instanced(action: Any, name: str) -> dict[int, int]:
    """Instanced metric as {absolute PC: value}."""
    m = action.metric_by_name(name)
    if m is None or m.num_instances() == 0 or not m.has_correlation_ids():
        return {}
    ids = m.correlation_ids()
    return {int(ids.as_uint64(i)): int(m.as_uint64(i)) for i in range(m.num_instances())}


#: SpeedOfLight section metrics (Nsight Compute 2025.3 "GPU Speed Of Light Throughput"): % of peak per unit.
THROUGHPUT_METRICS: dict[str, str] = {
    "dram": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "l2": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1": "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "sm": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "memory": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
}


def launch_from_metrics(get: Callable[[str], float | None]) -> LaunchConfig:
    """Launch facts from Nsight Compute metric values by metric name (``get`` returns None when absent).

    One mapping for every reader: the report's metrics, or the same names in a ``--page raw`` CSV export.
    """
    def i(name: str) -> int:
        return int(get(name) or 0)

    def f(name: str) -> float:
        return float(get(name) or 0.0)

    static, dynamic = i("launch__shared_mem_per_block_static"), i("launch__shared_mem_per_block_dynamic")
    limits = {k: f(f"launch__occupancy_limit_{k}") for k in ("registers", "shared_mem", "warps", "blocks", "barriers")}
    return LaunchConfig(
        grid=(i("launch__grid_dim_x"), i("launch__grid_dim_y"), i("launch__grid_dim_z")),
        block=(i("launch__block_dim_x"), i("launch__block_dim_y"), i("launch__block_dim_z")),
        registers_per_thread=i("launch__registers_per_thread"),
        shared_bytes_per_block=static + dynamic,
        static_shared_bytes_per_block=static,
        dynamic_shared_bytes_per_block=dynamic,
        sm_count=i("launch__sm_count") or i("device__attribute_multiprocessor_count"),
        waves_per_sm=f("launch__waves_per_multiprocessor"),
        theoretical_occupancy=f("sm__maximum_warps_per_active_cycle_pct"),
        achieved_occupancy=f("sm__warps_active.avg.pct_of_peak_sustained_active"),
        theoretical_warps_per_sm=f("sm__maximum_warps_avg_per_active_cycle"),
        achieved_warps_per_sm=f("sm__warps_active.avg.per_cycle_active"),
        occupancy_limit=limits,
        duration_ns=f("gpu__time_duration.sum"),
        throughput_pct={u: v for u, m in THROUGHPUT_METRICS.items() if (v := get(m)) is not None},
        sampling_interval_cycles=f("smsp__pcsamp_interval_cycles"),
    )


def _launch(action: Any) -> LaunchConfig:
    return launch_from_metrics(lambda name: _scalar(action, name))


def _profile_of(action: Any, ncu: Any, report: str, index: tuple[int, int]) -> KernelProfile:
    mangled = action.name(action.NameBase_MANGLED) or action.name()
    name = action.name(action.NameBase_FUNCTION) or action.name()
    major = _scalar(action, "device__attribute_compute_capability_major")
    minor = _scalar(action, "device__attribute_compute_capability_minor")
    arch = f"sm_{int(major)}{int(minor or 0)}" if major is not None else "sm_unknown"
    device = ""
    dm = action.metric_by_name("device__attribute_display_name")
    if dm is not None:
        try:
            device = str(dm.as_string(0) if dm.num_instances() else dm.value())
        except Exception:
            device = ""

    if not action.name():
        raise ProfileLoadError(f"{report}: a kernel launch in the report has no name: the file is truncated or "
                               "corrupt (re-copy it from the GPU machine)")
    samples = _instanced(action, "smsp__pcsamp_sample_count")
    if not samples:
        raise ProfileLoadError(
            f"{report}: kernel {name} has no PC samples: profile with `--section SourceCounters` "
            "(warpwise profile does)")
    per_field = {field: _instanced(action, metric) for metric, field in _PER_PC_FIELDS.items()}
    stalls = {r: _instanced(action, f"smsp__pcsamp_warps_issue_stalled_{r}") for r in STALL_REASONS}
    stalls_ni = {r: _instanced(action, f"smsp__pcsamp_warps_issue_stalled_{r}_not_issued") for r in STALL_REASONS}

    fp = action.metric_by_name("launch__function_pcs")
    starts_in_order = [int(fp.as_uint64(i)) for i in range(fp.num_instances())] if fp is not None else []
    # The launched kernel is the first listed; other functions get provisional names until a cubin
    # is joined (join.py renames them by matching their SASS).
    names = {s: (mangled if k == 0 else f"{mangled}$fn{k}") for k, s in enumerate(starts_in_order)}
    starts = sorted(starts_in_order)

    all_pcs = set(samples) | set(per_field["inst_executed"])
    pcs: dict[tuple[str, int], PCSample] = {}
    for pc in sorted(all_pcs):
        k = bisect.bisect_right(starts, pc) - 1
        if k >= 0:
            func, offset = names[starts[k]], pc - starts[k]
        else:
            func, offset = UNATTRIBUTED, pc
        s = PCSample(function=func, offset=offset, pc=pc, sass="")
        s.samples = samples.get(pc, 0)
        for field, values in per_field.items():
            if field != "samples":
                setattr(s, field, values.get(pc, 0))
        s.stalls = {r: v for r in STALL_REASONS if (v := stalls[r].get(pc, 0))}
        s.stalls_not_issued = {r: v for r in STALL_REASONS if (v := stalls_ni[r].get(pc, 0))}
        s.not_issued = sum(s.stalls_not_issued.values())
        if func != UNATTRIBUTED:
            s.sass = " ".join(str(action.sass_by_pc(pc) or "").split())
            info = action.source_info(pc)
            if info is not None and info.file_name():
                s.file, s.line = str(info.file_name()), int(info.line())
        # ncu can list a PC more than once only if two functions overlap; keep the first
        pcs.setdefault((func, offset), s)

    sources: dict[str, str] = {}
    try:
        for path, text in dict(action.source_files()).items():
            sources[str(path)] = str(text)
    except Exception:
        sources = {}
    return KernelProfile(name=name, mangled=mangled, arch=arch, launch=_launch(action), pcs=pcs,
                         report=report, launch_index=index, device=device, source_files=sources)


def load_profiles(path: str | Path) -> list[KernelProfile]:
    """Every kernel launch in the report at ``path`` with PC samples, in report order.

    Raises ProfileLoadError when the file is missing, is not a readable Nsight Compute report, or
    holds no launch with PC samples (no SourceCounters section).
    """
    p = Path(path)
    if not p.is_file():
        raise ProfileLoadError(f"{p}: no such report file")
    with p.open("rb") as fh:
        head = fh.read(16)
    if not head:
        raise ProfileLoadError(f"{p}: empty file, not an Nsight Compute report")
    ncu = _import_ncu_report()
    try:
        report = ncu.load_report(str(p))
    except Exception as e:
        raise ProfileLoadError(f"{p}: not a readable Nsight Compute report ({e})") from e
    if report is None:
        raise ProfileLoadError(f"{p}: not a readable Nsight Compute report")
    out: list[KernelProfile] = []
    errors: list[str] = []
    try:
        n_ranges = report.num_ranges()
    except Exception as e:
        raise ProfileLoadError(f"{p}: corrupt Nsight Compute report ({e})") from e
    for r in range(n_ranges):
        rng = report.range_by_idx(r)
        for a in range(rng.num_actions()):
            try:
                out.append(_profile_of(rng.action_by_idx(a), ncu, str(p), (r, a)))
            except ProfileLoadError as e:
                errors.append(str(e))
    if not out:
        raise ProfileLoadError(errors[0] if errors else
                               f"{p}: no kernel launch could be read: the file is corrupt, truncated, or not an "
                               "Nsight Compute report")
    return out
