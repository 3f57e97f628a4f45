"""Run a program under Nsight Compute and keep what the analysis needs (the ``warpwise profile`` job).

Needs ``ncu`` and a GPU. Only the standard library is imported here so the command runs on a bare GPU
box where warpwise is installed with ``--no-deps``. warpwise is a thin wrapper: the ncu argument list is
built by one pure function (:func:`ncu_command`) from the sections the analysis reads, the user's ncu
options (kernel filter, launch count/skip, sampling interval, NVTX ranges, replay mode, and anything after
``--ncu-args``) and the command; nothing else is added.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from warpwise.analysis.bounded import ToolRunError, env_seconds, run_checked
from warpwise.analysis.bounded import run as run_bounded

# Sections the analysis reads: per-instruction stall samples (SourceCounters), launch facts
# (LaunchStats, Occupancy), warp-state totals (WarpStateStats), duration (SpeedOfLight).
# Names from `ncu --list-sections`, Nsight Compute 2025.3.
SECTIONS: tuple[str, ...] = ("SourceCounters", "LaunchStats", "Occupancy", "WarpStateStats", "SpeedOfLight")

#: ``--warp-sampling-interval`` warpwise recommends for short kernels: 0 = one sample every 2^(5+0) = 32
#: cycles, ncu's finest. ncu's default left a one-block kernel with 9 samples per launch; 0 gave 8–60x more
#: (FACTS.md, measured on the H200; the interval's meaning is ncu's `--warp-sampling-interval` help).
SHORT_KERNEL_SAMPLING_INTERVAL = 0

#: ncu options warpwise sets itself: passing them again would write the report elsewhere or in another format.
_OWNED = ("-o", "--export", "-f", "--force-overwrite", "--csv", "--page", "--import", "--print-source")


class ProfileError(RuntimeError):
    """Profiling could not run or produced no report; the message says why and what to do."""


@dataclass
class NcuOptions:
    """The user's Nsight Compute options (names as in ``ncu --help``, 2025.3).

    ``kernel``: ``-k`` filter (a name, or ncu's ``regex:...``); ``launch_count``/``launch_skip``: ``-c`` /
    ``--launch-skip`` (launches); ``sampling_interval``: ``--warp-sampling-interval`` (0..31, a sample
    every 2^(5+n) cycles); ``nvtx_include``: ``--nvtx-include`` ranges (turns on ``--nvtx``);
    ``replay_mode``: ``--replay-mode`` (kernel, application, range, app-range); ``extra``: passed verbatim
    after warpwise's options (what followed ``--ncu-args``).
    """

    kernel: str | None = None
    launch_count: int | None = None
    launch_skip: int | None = None
    sampling_interval: int | None = None
    nvtx_include: list[str] = field(default_factory=list)
    replay_mode: str | None = None
    extra: list[str] = field(default_factory=list)


@dataclass
class ProfileResult:
    """Paths written by :func:`profile`: the report and the cubins (with device code) saved beside it.

    ``skipped``: binaries that were looked at but hold no device code (e.g. ``python`` itself).
    """

    report: Path
    cubins: list[Path]
    skipped: list[str] = field(default_factory=list)


def find_tool(name: str, explicit: str | None = None) -> str | None:
    """Locate an NVIDIA tool (ncu, cuobjdump, nvdisasm): explicit path, $PATH, CUDA_HOME, PyPI wheels."""
    if explicit:
        return explicit if Path(explicit).exists() or shutil.which(explicit) else None
    found = shutil.which(name)
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and (Path(root) / "bin" / name).exists():
            return str(Path(root) / "bin" / name)
    try:  # PyPI nvidia-cuda-nvdisasm / nvidia-cuda-cuobjdump
        from cuda.pathfinder import find_nvidia_binary_utility

        path = find_nvidia_binary_utility(name)
        return str(path) if path else None
    except Exception:
        return None


def _explicit_tool_problem(tool: str) -> str | None:
    """What is wrong with a tool the user named (a path, or a bare name looked up on $PATH), or None."""
    if os.sep not in tool and (os.altsep is None or os.altsep not in tool):
        if shutil.which(tool):
            return None
        if Path(tool).is_dir():  # a bare name that is a folder here: say so rather than "not on PATH"
            return "is a folder, not the ncu executable (give the path of the ncu executable)"
        return "not found on PATH (give the path of the ncu executable)"
    p = Path(tool)
    if not p.exists():
        return "no such file"
    if p.is_dir():
        inside = p / "ncu"
        return "is a folder; pass the ncu executable" + (f" ({inside})" if inside.is_file() else "")
    if not p.is_file():
        return "not a regular file"
    if not os.access(p, os.X_OK):
        return "not executable (chmod +x, or pass the ncu executable)"
    return None


def _option_name(arg: str) -> str:
    return arg.split("=", 1)[0]


def ncu_command(ncu: str, report: Path, command: list[str], options: NcuOptions | list[str] | None = None) -> list[str]:
    """The ncu argument list (pure): sections the analysis needs, source imported, clocks not locked, the
    user's options, the output report, then the command.

    ``--clock-control none`` keeps the GPU's own clocks (FACTS.md: needed on the shared H200s). A plain
    list for ``options`` is taken as ``NcuOptions(extra=...)``. Raises ProfileError when an option would
    conflict with what warpwise writes (``-o``, ``--export``, ``--csv``, ``--page``...) or a value is out of
    ncu's range.
    """
    opts = options if isinstance(options, NcuOptions) else NcuOptions(extra=list(options or []))
    for a in opts.extra:
        if _option_name(a) in _OWNED:
            raise ProfileError(f"ncu option {a} is set by warpwise (the report goes to -o of `warpwise profile`); "
                               "remove it from --ncu-args")
    if opts.sampling_interval is not None and not 0 <= opts.sampling_interval <= 31:
        raise ProfileError(f"--sampling-interval {opts.sampling_interval}: ncu accepts 0..31")
    for name, v in (("--launch-count", opts.launch_count), ("--launch-skip", opts.launch_skip)):
        if v is not None and v < 0:
            raise ProfileError(f"{name} {v}: must be >= 0")
    args = [ncu, "--clock-control", "none", "--import-source", "yes", "--target-processes", "all"]
    for s in SECTIONS:
        args += ["--section", s]
    if opts.kernel:
        args += ["--kernel-name", opts.kernel]
    if opts.launch_skip is not None:
        args += ["--launch-skip", str(opts.launch_skip)]
    if opts.launch_count is not None:
        args += ["--launch-count", str(opts.launch_count)]
    if opts.sampling_interval is not None:
        args += ["--warp-sampling-interval", str(opts.sampling_interval)]
    if opts.nvtx_include:
        args += ["--nvtx"]
        for r in opts.nvtx_include:
            args += ["--nvtx-include", r]
    if opts.replay_mode:
        args += ["--replay-mode", opts.replay_mode]
    args += list(opts.extra)
    args += ["-f", "-o", str(report.with_suffix("")), *command]
    return args


def split_profile_argv(argv: list[str]) -> tuple[list[str], list[str], list[str]]:
    """Split ``warpwise profile`` arguments into (warpwise options, ncu options, command) (pure).

    Layout: ``[warpwise options] [--ncu-args NCU OPTIONS...] -- COMMAND ARGS...``; without ``--`` the first
    argument that is not an option starts the command only when no ``--ncu-args`` was given.
    """
    if "--" in argv:
        k = argv.index("--")
        head, command = argv[:k], argv[k + 1:]
    else:
        head, command = argv, []
    if "--ncu-args" in head:
        j = head.index("--ncu-args")
        return head[:j], head[j + 1:], command
    return head, [], command


# ---- cubins: only those with device code are kept ----------------------------------------------------

_EM_CUDA = 190


def kernels_in_cubin(data: bytes) -> list[str]:
    """Names of the non-empty ``.text.<function>`` sections of a CUDA ELF (stdlib only), in file order.

    Returns [] for data that is not a 64-bit little-endian CUDA ELF or holds no code.
    """
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return []
    machine = struct.unpack_from("<H", data, 18)[0]
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
    if machine != _EM_CUDA or shentsize < 64 or shoff + shnum * shentsize > len(data) or shstrndx >= shnum:
        return []
    heads = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    str_off, str_size = heads[shstrndx][4], heads[shstrndx][5]
    names = data[str_off:str_off + str_size]
    out = []
    for h in heads:
        end = names.find(b"\0", h[0])
        name = names[h[0]:end if end >= 0 else None].decode("utf-8", "replace")
        if name.startswith(".text.") and h[5] > 0 and h[1] == 1:  # SHT_PROGBITS with bytes
            out.append(name.removeprefix(".text."))
    return out


def kernel_stem(mangled: str) -> str:
    """A file-name-safe short name of a mangled kernel: the identifier of ``_Z<len><name>...`` or the last
    component of a nested ``_ZN...E`` name (Itanium C++ ABI "mangling"), else the sanitized symbol."""
    s = mangled
    if s.startswith("_ZN"):
        i, last = 3, ""
        while i < len(s) and s[i].isdigit():
            m = re.match(r"\d+", s[i:])
            assert m is not None
            n = int(m.group(0))
            i += len(m.group(0))
            last = s[i:i + n]
            i += n
        if last:
            return re.sub(r"[^A-Za-z0-9_]", "_", last)
    m = re.match(r"_Z(\d+)", s)
    if m:
        return re.sub(r"[^A-Za-z0-9_]", "_", s[m.end():m.end() + int(m.group(1))])
    return re.sub(r"[^A-Za-z0-9_]", "_", s)[:64] or "kernel"


def _run(args: list[str], timeout: float | None, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``args`` through :func:`warpwise.analysis.bounded.run` (own process group, the whole group killed on
    timeout or when the tool exits); raises ProfileError with the tool's message."""
    try:
        r = run_bounded(args, f"{Path(args[0]).name} {' '.join(args[1:4])} ...",
                        timeout=timeout if timeout is not None else env_seconds("WARPWISE_PROFILE_TIMEOUT_S", 3600.0),
                        cwd=cwd)
    except ToolRunError as e:
        raise ProfileError(f"{e} (raise --timeout for long programs)") from e
    return subprocess.CompletedProcess(args, r.returncode, r.stdout.decode(errors="replace"),
                                       r.stderr.decode(errors="replace"))


def extract_cubins(executable: str, dest_dir: Path, stem: str, cuobjdump: str | None = None,
                   timeout: float | None = 300) -> list[Path]:
    """Extract the ELF cubins with device code held by ``executable`` into ``dest_dir``.

    Named ``<stem>.<arch>.cubin`` when one cubin has code, else ``<stem>.<kernel>.<arch>.cubin`` by the
    first kernel each holds (``.<n>`` added on a clash). Cubins without any code section are not saved
    (``advise`` would reject them). Raises ProfileError if cuobjdump is missing or fails. Returns [] for a
    binary without device code.
    """
    tool = find_tool("cuobjdump", cuobjdump)
    if tool is None:
        raise ProfileError("cuobjdump not found: install nvidia-cuda-cuobjdump (pip) or put CUDA's bin on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        try:  # the guard every tool call uses: a cuobjdump that leaves a child behind is a tool failure too
            run_checked([tool, "-xelf", "all", str(Path(executable).resolve())], f"cuobjdump -xelf on {executable}",
                        timeout=timeout, cwd=tmp)
        except ToolRunError as e:
            if "does not contain device code" not in str(e) or "misbehaved" in str(e):
                raise ProfileError(str(e)) from e
            return []
        with_code: list[tuple[Path, str, list[str]]] = []
        for f in sorted(Path(tmp).glob("*.cubin")):
            kernels = kernels_in_cubin(f.read_bytes())
            if kernels:
                arch = next((p for p in f.name.split(".") if p.startswith("sm_")), "sm_unknown")
                with_code.append((f, arch, kernels))
        out: list[Path] = []
        for f, arch, kernels in with_code:
            base = f"{stem}.{arch}" if len(with_code) == 1 else f"{stem}.{kernel_stem(kernels[0])}.{arch}"
            target, n = dest_dir / f"{base}.cubin", 1
            while target in out:
                n += 1
                target = dest_dir / f"{base}.{n}.cubin"
            shutil.copyfile(f, target)
            out.append(target)
        return out


def profile(command: list[str], report: Path, ncu: str | None = None,
            extra_ncu_args: NcuOptions | list[str] | None = None, keep_cubins: bool = True,
            binaries: list[str] | None = None, timeout: float | None = None) -> ProfileResult:
    """Profile ``command`` under ncu into ``report`` (.ncu-rep) and save its cubins beside it.

    ``binaries``: further executables/shared libraries to take cubins from (a PyTorch extension's ``.so``;
    default: the command's program). ``timeout``: seconds before ncu and all its children are killed.
    Raises ProfileError when ncu or a GPU is missing, an option conflicts, or ncu fails / writes no report.
    """
    if not command:
        raise ProfileError("no command to profile: use `warpwise profile -o R.ncu-rep -- ./app args`")
    report = report if report.suffix == ".ncu-rep" else report.with_name(report.name + ".ncu-rep")
    ncu_command("ncu", report, command, extra_ncu_args)  # option errors before looking for ncu or a GPU
    if ncu:
        problem = _explicit_tool_problem(ncu)
        if problem is not None:
            raise ProfileError(f"--ncu {ncu}: {problem}")
    tool = find_tool("ncu", ncu)
    if tool is None:
        raise ProfileError("ncu (Nsight Compute) not found on PATH: install Nsight Compute or pass --ncu PATH")
    args = ncu_command(tool, report, command, extra_ncu_args)
    if find_tool("nvidia-smi") is None and not Path("/dev/nvidiactl").exists():
        raise ProfileError("no NVIDIA GPU found (no nvidia-smi, no /dev/nvidiactl): profiling needs a GPU")
    report.parent.mkdir(parents=True, exist_ok=True)
    run = _run(args, timeout)
    log = run.stdout + run.stderr
    if run.returncode != 0 or not report.exists():
        tail = "\n".join(log.strip().splitlines()[-15:])
        raise ProfileError(f"ncu failed (exit {run.returncode}) profiling {' '.join(command)}:\n{tail}")
    if "==WARNING== No kernels were profiled" in log:
        raise ProfileError(f"ncu profiled no kernels running {' '.join(command)} (check the -k/-c/--launch-skip "
                           "filters and that the program launches kernels)")
    cubins: list[Path] = []
    skipped: list[str] = []
    if keep_cubins:
        stem = report.name.removesuffix(".ncu-rep")
        sources = list(binaries or [])
        if not sources:
            exe = shutil.which(command[0]) or command[0]
            sources = [exe] if Path(exe).exists() else []
        for exe in sources:
            got = extract_cubins(exe, report.parent, stem if len(sources) == 1 else f"{stem}.{Path(exe).name}")
            cubins.extend(got)
            if not got:
                skipped.append(exe)
    return ProfileResult(report=report, cubins=cubins, skipped=skipped)
