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
import os
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
    "memory_l2_theoretical_sectors_local": "l2_sectors_local",
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
        # CUDA's theoretical bandwidth: clock in kHz, bus width in bits, two transfers per clock
        dram_peak_bytes_per_s=2.0 * f("device__attribute_memory_clock_rate") * 1e3
        * f("device__attribute_global_memory_bus_width") / 8.0,
        l1_lsu_wavefronts=f("l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed") / 100.0
        * f("l1tex__cycles_elapsed.sum"),
        elapsed_cycles=f("gpc__cycles_elapsed.max"),
    )


def _launch(action: Any) -> LaunchConfig:
    return launch_from_metrics(lambda name: _scalar(action, name))


def _per_opcode(action: Any) -> dict[str, int]:
    """``sass__inst_executed_per_opcode``: warp-level executed instructions of the launch by opcode without
    modifiers ({"FFMA": n, ...}); every report of the sections warpwise profile collects has it (all 129
    launches of the repository's reports), empty when absent."""
    m = action.metric_by_name("sass__inst_executed_per_opcode")
    if m is None or m.num_instances() == 0 or not m.has_correlation_ids():
        return {}
    ids = m.correlation_ids()
    return {str(ids.as_string(i)): int(m.as_uint64(i)) for i in range(m.num_instances())}


def _profile_of(action: Any, ncu: Any, report: str, index: tuple[int, int], sass: bool = True) -> KernelProfile:
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
    executed = _instanced(action, "inst_executed")

    fp = action.metric_by_name("launch__function_pcs")
    starts_in_order = [int(fp.as_uint64(i)) for i in range(fp.num_instances())] if fp is not None else []
    # The launched kernel is the first listed; other functions get provisional names until a cubin
    # is joined (join.py renames them by their executed opcodes or their SASS).
    names = {s: (mangled if k == 0 else f"{mangled}$fn{k}") for k, s in enumerate(starts_in_order)}
    starts = sorted(starts_in_order)
    per_opcode = _per_opcode(action)
    # The SASS text costs the reader ~72 MiB (ncu-report starts a disassembler on the first sass_by_pc): read
    # it when asked, or when the report has no per-opcode counts for join's SASS-free check to use.
    read_sass = sass or not per_opcode

    by_pc: dict[int, PCSample] = {}
    for pc in sorted(set(samples) | set(executed)):
        k = bisect.bisect_right(starts, pc) - 1
        if k >= 0:
            func, offset = names[starts[k]], pc - starts[k]
        else:
            func, offset = UNATTRIBUTED, pc
        by_pc[pc] = PCSample(function=func, offset=offset, pc=pc, sass="", samples=samples.get(pc, 0),
                             inst_executed=executed.get(pc, 0))
    del samples, executed
    # one metric at a time into the samples (each {PC: value} table freed before the next: the reader's peak)
    for metric, field in _PER_PC_FIELDS.items():
        if field not in ("samples", "inst_executed"):
            for pc, v in _instanced(action, metric).items():
                if (s := by_pc.get(pc)) is not None:
                    setattr(s, field, v)
    for r in STALL_REASONS:  # in this order: the dicts' key order
        for suffix in ("", "_not_issued"):
            for pc, v in _instanced(action, f"smsp__pcsamp_warps_issue_stalled_{r}{suffix}").items():
                if v and (s := by_pc.get(pc)) is not None:
                    (s.stalls_not_issued if suffix else s.stalls)[r] = v
    pcs: dict[tuple[str, int], PCSample] = {}
    for pc, s in by_pc.items():
        s.not_issued = sum(s.stalls_not_issued.values())
        if s.function != UNATTRIBUTED:
            if read_sass:
                s.sass = " ".join(str(action.sass_by_pc(pc) or "").split())
            info = action.source_info(pc)
            if info is not None and info.file_name():
                s.file, s.line = str(info.file_name()), int(info.line())
        # ncu can list a PC more than once only if two functions overlap; keep the first
        pcs.setdefault((s.function, s.offset), s)

    sources: dict[str, str] = {}
    try:
        for path, text in dict(action.source_files()).items():
            sources[str(path)] = str(text)
    except Exception:
        sources = {}
    return KernelProfile(name=name, mangled=mangled, arch=arch, launch=_launch(action), pcs=pcs,
                         report=report, launch_index=index, device=device, source_files=sources,
                         executed_per_opcode=per_opcode)


def load_profiles(path: str | Path, timeout: float | None = None, sass: bool = True) -> list[KernelProfile]:
    """Every kernel launch in the report at ``path`` with PC samples, in report order.

    ``sass``: read each attributed PC's SASS text (``PCSample.sass``). False leaves it empty wherever the
    report has per-opcode executed counts (the join checks the binary against those and then fills
    the text from the binary); the reader then peaks at ~140 MiB instead of ~215 MiB (ncu-report's
    disassembler is never started; docs/benchmarks.md "Fourth pass, memory"). Callers that use the SASS of
    an unjoined profile (the DP rewrite plan) keep the default.

    The file must be a regular file within the report size limit (:mod:`warpwise.analysis.bounded`).
    The ncu-report library (C++) reads the whole file and can loop or crash on a corrupt one, so it runs
    in a worker process (:func:`warpwise.analysis.profile.nvperf_boot.worker_command`, which loads the library
    before anything else and gives back the zero pages its constructors touch) with a time limit of ``timeout``
    seconds (default ``WARPWISE_REPORT_TIMEOUT_S``, 300 s) and an address-space limit
    (``WARPWISE_REPORT_MEMORY_BYTES``, default 16 GiB); the worker's process group is killed on expiry.
    It costs one interpreter start per load (docs/benchmarks.md "Hostile inputs"), and gives the ~125 MiB
    the native reader takes back to the system when the worker exits; ``WARPWISE_NCU_INPROCESS=1`` reads in
    this process instead.

    Raises ProfileLoadError when the file is missing, not a regular file, too large, is not a readable
    Nsight Compute report, holds no launch with PC samples (no SourceCounters section), or the loader
    timed out or crashed (the message names the file).
    """
    import pickle

    from warpwise.analysis.bounded import InputFileError, ToolRunError, check_regular, describe_status, report_timeout
    from warpwise.analysis.bounded import run as run_bounded
    from warpwise.analysis.profile.nvperf_boot import worker_command

    p = Path(path)
    if os.environ.get("WARPWISE_NCU_INPROCESS", "") not in ("", "0"):  # no worker: debugging, profiling
        return load_profiles_in_process(p, sass=sass)
    try:
        size = check_regular(p, "report")
    except InputFileError as e:
        raise ProfileLoadError(str(e)) from e
    if size == 0:
        raise ProfileLoadError(f"{p}: empty file, not an Nsight Compute report")
    limit_s = report_timeout() if timeout is None else timeout
    try:
        res = run_bounded(worker_command(str(p), *([] if sass else [_NO_SASS])), f"loading report {p}",
                          timeout=limit_s)
    except ToolRunError as e:
        if e.timed_out:
            raise ProfileLoadError(f"{p}: the Nsight Compute report library did not finish reading it within "
                                   f"{limit_s:g} s (corrupt or very large report; WARPWISE_REPORT_TIMEOUT_S "
                                   "raises the limit)") from e
        raise ProfileLoadError(str(e)) from e
    if res.returncode == 0:
        try:
            got = pickle.loads(res.stdout)
        except Exception as e:
            raise ProfileLoadError(f"{p}: the report loader's output was unreadable ({e})") from e
        if isinstance(got, list):
            _add_module_code(p, got)  # here, not in the worker: its peak is the process tree's
            return got
    lines = res.stderr.decode("utf-8", errors="replace").strip().splitlines()
    msg = [ln.removeprefix(_WORKER_ERROR) for ln in lines if ln.startswith(_WORKER_ERROR)]
    if msg:
        raise ProfileLoadError(msg[-1])
    tail = " | ".join(lines[-3:]) if lines else "no message"
    raise ProfileLoadError(f"{p}: the Nsight Compute report library {describe_status(res.returncode)} while "
                           f"reading it (corrupt report?): {tail}")


#: The last report :func:`fill_sass` read: (path, mtime ns, size) -> launch index -> {PC: SASS text}.
_SASS_READ: dict[tuple[str, int, int], dict[tuple[int, int], dict[int, str]]] = {}


def fill_sass(profile: KernelProfile) -> int:
    """Fill the empty ``PCSample.sass`` of an ncu-rep ``profile`` read with ``sass=False`` from its report (a
    second read, with the SASS text): for a launch no binary was found for, the report is the only SASS there
    is (hover and the profile view show it). Returns how many PCs got a text; 0 when the report cannot be
    read again (the profile is left as it is).
    """
    if profile.origin != "ncu-rep" or not profile.report or all(s.sass for s in profile.pcs.values()
                                                                 if s.function != UNATTRIBUTED):
        return 0
    try:
        st = os.stat(profile.report)
        key = (str(profile.report), st.st_mtime_ns, st.st_size)
        by_launch = _SASS_READ.get(key)
        if by_launch is None:  # one read for every launch of the report (a wrong binary asks for each)
            by_launch = {kp.launch_index: {s.pc: s.sass for s in kp.pcs.values() if s.sass}
                         for kp in load_profiles(profile.report, sass=True)}
            _SASS_READ.clear()
            _SASS_READ[key] = by_launch
    except (OSError, ProfileLoadError):
        return 0
    texts = by_launch.get(profile.launch_index)
    if not texts:
        return 0
    n = 0
    for s in profile.pcs.values():
        if not s.sass and (t := texts.get(s.pc)):
            s.sass, n = t, n + 1
    return n


_WORKER_ERROR = "warpwise-report-error: "
_NO_SASS = "--no-sass"


#: Bounds on what :func:`embedded_code` parses, so a crafted report full of ELF headers cannot make it slow: a
#: report holds one image per profiled module (a few), each with a few sections per kernel.
MAX_EMBEDDED_IMAGES = 256
MAX_EMBEDDED_SECTIONS = 16384
MAX_EMBEDDED_BYTES = 256 << 20


def embedded_code(path: str | Path) -> dict[str, list[str]]:
    """SHA-256 (hex) of each code section of the CUDA ELF images the report at ``path`` carries (the profiled
    modules, which Nsight Compute stores for its Source page), by the section's function (``.text.<name>``
    without the prefix); a function in several modules lists each. ncu-report gives no access to them, so
    they are found by the ELF magic in the report's bytes and parsed with pyelftools (at most
    MAX_EMBEDDED_IMAGES images of at most MAX_EMBEDDED_SECTIONS sections and MAX_EMBEDDED_BYTES each); {} when
    none is there or none parses (the join then checks without them)."""
    import hashlib
    import io
    import mmap
    import struct

    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    out: dict[str, list[str]] = {}
    try:
        with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            at = data.find(b"\x7fELF\x02\x01")  # ELF64, little-endian: CUDA's
            images = 0
            while at >= 0 and at + 64 <= len(data) and images < MAX_EMBEDDED_IMAGES:
                shoff = struct.unpack_from("<Q", data, at + 0x28)[0]
                shentsize, shnum = struct.unpack_from("<HH", data, at + 0x3A)
                end = at + shoff + shentsize * shnum
                if shentsize == 64 and 0 < shnum <= MAX_EMBEDDED_SECTIONS and at < end <= len(data) and \
                        end - at <= MAX_EMBEDDED_BYTES:
                    images += 1
                    try:
                        elf = ELFFile(io.BytesIO(data[at:end]))
                        for sec in elf.iter_sections():
                            if sec.name.startswith(".text.") and sec["sh_type"] == "SHT_PROGBITS":
                                digest = hashlib.sha256(sec.data()).hexdigest()
                                out.setdefault(sec.name.removeprefix(".text."), []).append(digest)
                    except (ELFError, ValueError, struct.error, KeyError):
                        pass
                at = data.find(b"\x7fELF\x02\x01", at + 4)
    except (OSError, ValueError):
        return {}
    return out


def _add_module_code(path: Path, profiles: list[KernelProfile]) -> None:
    code = embedded_code(path)
    for kp in profiles:
        kp.profiled_code_sha256 = code


def load_profiles_in_process(path: str | Path, sass: bool = True, module_code: bool = True) -> list[KernelProfile]:
    """:func:`load_profiles` without the worker process (what the worker runs; no time limit).
    ``module_code``: also find the report's copies of the profiled modules (:func:`embedded_code`); the worker
    leaves that to its parent (pyelftools and the report's bytes would add ~8 MiB to its peak).

    Raises ProfileLoadError as :func:`load_profiles` does.
    """
    p = Path(path)
    from warpwise.analysis.bounded import InputFileError, check_regular

    try:
        check_regular(p, "report")
    except InputFileError as e:
        raise ProfileLoadError(str(e)) from e
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
        for r in range(n_ranges):
            rng = report.range_by_idx(r)
            for a in range(rng.num_actions()):
                try:
                    out.append(_profile_of(rng.action_by_idx(a), ncu, str(p), (r, a), sass))
                except ProfileLoadError as e:
                    errors.append(str(e))
                except Exception as e:  # the library's objects on corrupt data: say which launch
                    errors.append(f"{p}: kernel launch {r}/{a} is unreadable ({type(e).__name__}: {e})")
    except ProfileLoadError:
        raise
    except Exception as e:
        raise ProfileLoadError(f"{p}: corrupt Nsight Compute report ({type(e).__name__}: {e})") from e
    del report  # release the native report before returning (only plain Python objects are kept)
    if module_code:
        _add_module_code(p, out)
    if not out:
        raise ProfileLoadError(errors[0] if errors else
                               f"{p}: no kernel launch could be read: the file is corrupt, truncated, or not an "
                               "Nsight Compute report")
    return out


def _worker_main(argv: list[str]) -> int:
    """Worker entry: load ``argv[0]`` (without SASS text when ``--no-sass`` follows) and write the pickled
    profiles to stdout (errors on stderr)."""
    import os
    import pickle
    import sys

    try:
        import resource

        cap = int(os.environ.get("WARPWISE_REPORT_MEMORY_BYTES", str(16 << 30)))
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (ImportError, ValueError, OSError):
        pass
    try:
        profiles = load_profiles_in_process(argv[0], sass=_NO_SASS not in argv[1:], module_code=False)
    except ProfileLoadError as e:
        print(_WORKER_ERROR + " ".join(str(e).split()), file=sys.stderr)
        return 2
    except MemoryError:
        print(f"{_WORKER_ERROR}{argv[0]}: reading the report needs more memory than the "
              "WARPWISE_REPORT_MEMORY_BYTES limit", file=sys.stderr)
        return 2
    pickle.dump(profiles, sys.stdout.buffer, protocol=pickle.HIGHEST_PROTOCOL)  # streamed: no copy in memory
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(_worker_main(sys.argv[1:]))
