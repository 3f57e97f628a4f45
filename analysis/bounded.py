"""Bounded input: files are opened only when they are regular files within a size limit, and external
programs (nvdisasm, cuobjdump, nvcc, ncu, the report-loader worker) run in their own process group with a
time limit, the whole group killed on expiry, cancellation or server exit (docs/security.md).

Every reader of an input file and every tool runner goes through this module, so the rules are stated
once: a FIFO, a device (``/dev/zero``, ``/dev/stdin``), a folder or a symlink loop named ``*.ncu-rep`` or
``*.cubin`` is refused with a message naming the file, never opened for reading; a file larger than its
kind's limit is refused before any byte is read. Files are opened ``O_NONBLOCK`` and checked with
``fstat`` on the open descriptor, so swapping the file for a FIFO between the check and the open does not
block either.

Limits (bytes) and time limits (seconds) have defaults per kind and can be changed with environment
variables ``WARPWISE_MAX_<KIND>_BYTES`` (``REPORT``, ``BINARY``, ``MANIFEST``, ``HARNESS``, ``SOURCE``, ``CSV``) and
``WARPWISE_TOOL_TIMEOUT_S`` / ``WARPWISE_REPORT_TIMEOUT_S``.
"""

from __future__ import annotations

import os
import selectors
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MiB = 1 << 20

#: Default size limits per input kind (bytes). Reports: the largest the H200 runs wrote were ~1 MiB per
#: profiled launch; 1 GiB leaves room for thousands of launches while refusing the 3 GiB file that took
#: 8.4 GB RSS and > 300 s (issue 13). Binaries: cubins and executables with fatbins.
DEFAULT_LIMITS: dict[str, int] = {
    "report": 1024 * MiB,
    "binary": 1024 * MiB,
    "manifest": 16 * MiB,
    "harness": 16 * MiB,
    "source": 64 * MiB,
    "csv": 512 * MiB,  # an ncu CSV export: a source page of a big kernel is a few MiB
}

#: Default time limits (seconds): one nvdisasm/cuobjdump run, one report load in the worker process.
DEFAULT_TOOL_TIMEOUT_S = 120.0
DEFAULT_REPORT_TIMEOUT_S = 300.0


class InputFileError(Exception):
    """An input file was refused or could not be read; the message names the file and why."""


class ToolRunError(Exception):
    """An external program could not start, timed out, was cancelled, or was killed by a signal.

    ``timed_out`` / ``cancelled`` say which; the message names the program and what it worked on."""

    def __init__(self, message: str, *, timed_out: bool = False, cancelled: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out
        self.cancelled = cancelled


def limit(kind: str) -> int:
    """Size limit in bytes for input ``kind`` (a key of :data:`DEFAULT_LIMITS`; others get the source limit)."""
    env = os.environ.get(f"WARPWISE_MAX_{kind.upper()}_BYTES")
    if env:
        try:
            return max(0, int(env))
        except ValueError:
            pass
    return DEFAULT_LIMITS.get(kind, DEFAULT_LIMITS["source"])


def env_seconds(name: str, default: float) -> float:
    """Seconds from environment variable ``name`` (a positive number), else ``default``."""
    try:
        v = float(os.environ.get(name, ""))
        return v if v > 0 else default
    except ValueError:
        return default


def tool_timeout() -> float:
    """Time limit (seconds) of one tool run (``WARPWISE_TOOL_TIMEOUT_S``, default 120)."""
    return env_seconds("WARPWISE_TOOL_TIMEOUT_S", DEFAULT_TOOL_TIMEOUT_S)


def report_timeout() -> float:
    """Time limit (seconds) of one report load (``WARPWISE_REPORT_TIMEOUT_S``, default 300)."""
    return env_seconds("WARPWISE_REPORT_TIMEOUT_S", DEFAULT_REPORT_TIMEOUT_S)


def _label(kind: str) -> str:
    return "CSV" if kind == "csv" else kind


def what_kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is when it is not a regular file, for messages: ``"a folder"``,
    ``"a FIFO (named pipe)"``, ``"a symbolic link"`` (an ``lstat`` mode), a device, a socket."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _size(n: int) -> str:
    """``n`` bytes for a message: MiB with one decimal, or bytes below 1 MiB (a lowered limit reads "0.0 MiB")."""
    return f"{n / MiB:,.1f} MiB" if n >= MiB else f"{n:,} bytes"


def _check(path: str, st: os.stat_result, kind: str, max_bytes: int | None) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise InputFileError(f"{path}: is {what_kind(st.st_mode)}, not a regular {_label(kind)} file; not read")
    cap = limit(kind) if max_bytes is None else max_bytes
    if st.st_size > cap:
        env = f"WARPWISE_MAX_{kind.upper()}_BYTES"
        raise InputFileError(f"{path}: {_size(st.st_size)} is larger than the {_label(kind)} limit of "
                             f"{_size(cap)} (raise it with {env})")


def check_regular(path: str | Path, kind: str, max_bytes: int | None = None) -> int:
    """Size in bytes of ``path`` after checking that it (symlinks followed) is a regular file within the
    ``kind`` limit. Does not open the file.

    Raises:
        InputFileError: missing, a symlink loop, a folder/FIFO/device/socket, or over the limit.
    """
    p = str(path)
    try:
        st = os.stat(p)
    except FileNotFoundError as e:
        raise InputFileError(f"{p}: no such {_label(kind)} file") from e
    except OSError as e:
        raise InputFileError(f"{p}: cannot read: {e.strerror or e}") from e
    _check(p, st, kind, max_bytes)
    return st.st_size


def open_regular(path: str | Path, kind: str, max_bytes: int | None = None) -> int:
    """A read-only descriptor of ``path``, opened non-blocking and checked with ``fstat`` to be a regular
    file within the ``kind`` limit (the caller closes it; blocking mode is restored).

    Raises:
        InputFileError: see :func:`check_regular`.
    """
    p = str(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(p, flags)
    except FileNotFoundError as e:
        raise InputFileError(f"{p}: no such {_label(kind)} file") from e
    except OSError as e:
        raise InputFileError(f"{p}: cannot read: {e.strerror or e}") from e
    try:
        _check(p, os.fstat(fd), kind, max_bytes)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: str | Path, kind: str, max_bytes: int | None = None, head: int | None = None) -> bytes:
    """The bytes of regular file ``path`` (only the first ``head`` bytes when given), within the ``kind``
    limit. A file that grows past the limit while being read is refused too.

    Raises:
        InputFileError: see :func:`check_regular`; or a read error.
    """
    fd = open_regular(path, kind, max_bytes)
    cap = limit(kind) if max_bytes is None else max_bytes
    want = cap + 1 if head is None else head
    try:
        with os.fdopen(fd, "rb", closefd=True) as f:
            data = f.read(want)
    except OSError as e:
        raise InputFileError(f"{path}: cannot read: {e.strerror or e}") from e
    if head is None and len(data) > cap:
        raise InputFileError(f"{path}: grew past the {_label(kind)} limit of {_size(cap)} while being read")
    return data


def read_text(path: str | Path, kind: str = "source", max_bytes: int | None = None, errors: str = "strict") -> str:
    """UTF-8 text of regular file ``path`` (bytes kept: no newline translation, a BOM stays as U+FEFF);
    ``errors="replace"``: bytes that are not UTF-8 become U+FFFD instead of an error.

    Raises:
        InputFileError: see :func:`read_bytes`, or the file is not UTF-8 (``errors="strict"``).
    """
    data = read_bytes(path, kind, max_bytes)
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as e:
        raise InputFileError(f"{path}: not UTF-8 text (byte {e.start})") from e


# ---- external programs -------------------------------------------------------------------------------
_live: set[int] = set()  # process-group ids of running tools, killed by kill_all() on server exit
_live_lock = threading.Lock()
_closed = threading.Event()  # set by kill_all(final=True): the process is ending, start no more tools


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_group(pgid: int) -> None:
    """SIGKILL process group ``pgid`` (a child started with ``start_new_session=True``); no error when it
    has already ended."""
    _killpg(pgid)


def track_group(pgid: int) -> None:
    """Register process group ``pgid`` started elsewhere (e.g. the editor's tuner, an asyncio child started
    with ``start_new_session=True``) so that :func:`kill_all` ends it too."""
    with _live_lock:
        _live.add(pgid)


def untrack_group(pgid: int) -> None:
    """Forget process group ``pgid`` (it has ended and been reaped)."""
    with _live_lock:
        _live.discard(pgid)


def kill_all(final: bool = False) -> int:
    """Kill every tool process group this process started and that still runs; returns how many.
    ``final`` (shutdown, exit, Ctrl-C): the process is ending, so :func:`run` starts no tool after this (a
    worker thread still busy would otherwise start one that outlives the process)."""
    with _live_lock:
        if final:
            _closed.set()
        groups = list(_live)
    for g in groups:
        _killpg(g)
    return len(groups)


@dataclass
class ToolResult:
    """A finished program: exit status (negative: killed by that signal), stdout and stderr bytes, and
    ``left_behind``: how many processes of its own (its process group) still ran when it exited — killed with
    the group, so whatever they were doing for it is lost (0 where ``/proc`` cannot be read)."""

    returncode: int
    stdout: bytes
    stderr: bytes
    left_behind: int = 0


def run(args: Sequence[str], what: str, *, timeout: float | None = None, cwd: str | None = None,
        cancel: threading.Event | None = None, max_output: int = 1 << 30) -> ToolResult:
    """Run ``args`` (an argument list, never a shell string) in a new session (its own process group) and
    collect its output, with a time limit of ``timeout`` seconds (default :func:`tool_timeout`).

    The whole group is killed (SIGKILL) when the time runs out, when ``cancel`` is set, when the output
    passes ``max_output`` bytes, and as soon as the direct child exits — so a child it left behind holding
    stdout cannot keep us waiting; how many it left is ``ToolResult.left_behind`` (the caller decides whether
    a tool that does so can be trusted). ``what`` names the program and its input in messages
    (``"nvdisasm on /x/k.cubin"``).

    Raises:
        ToolRunError: could not start, timed out, cancelled, or printed more than ``max_output`` bytes.
    """
    limit_s = tool_timeout() if timeout is None else timeout
    name = Path(args[0]).name if args else "?"
    if _closed.is_set():
        raise ToolRunError(f"{what}: not started: warpwise is shutting down")
    try:
        proc = subprocess.Popen(list(args), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as e:
        raise ToolRunError(f"{what}: could not run {name}: {e.strerror or e}") from e
    pgid = proc.pid  # start_new_session: the child leads its own group
    with _live_lock:
        _live.add(pgid)
        late = _closed.is_set()  # kill_all(final=True) ran between the check above and the start
    if late:
        _killpg(pgid)
        proc.wait()
        with _live_lock:
            _live.discard(pgid)
        raise ToolRunError(f"{what}: stopped at start: warpwise is shutting down")
    out: dict[int, list[bytes]] = {}
    total = 0
    left = 0
    reason = ""
    deadline = time.monotonic() + limit_s
    sel = selectors.DefaultSelector()
    try:
        assert proc.stdout is not None and proc.stderr is not None
        for f in (proc.stdout, proc.stderr):
            os.set_blocking(f.fileno(), False)
            sel.register(f, selectors.EVENT_READ)
            out[f.fileno()] = []
        exited = False
        while sel.get_map():
            now = time.monotonic()
            if now >= deadline:
                reason = "timeout"
                break
            if cancel is not None and cancel.is_set():
                reason = "cancelled"
                break
            for key, _ in sel.select(timeout=min(0.1, deadline - now)):
                try:
                    chunk = os.read(key.fd, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                out[key.fd].append(chunk)
                total += len(chunk)
            if total > max_output:
                reason = "output"
                break
            if not exited and _exited(proc.pid):
                exited = True
                left = _others_in_group(pgid, proc.pid)
                _killpg(pgid)  # leftovers of the group hold our pipes open: end them now
        if not reason and not exited:  # both pipes closed: the tool is exiting (give it a moment) or hides
            end = min(deadline, time.monotonic() + 0.5)
            while not (exited := _exited(proc.pid)) and time.monotonic() < end:
                time.sleep(0.005)
            if exited:
                left = _others_in_group(pgid, proc.pid)
    finally:
        sel.close()
        _killpg(pgid)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not fail this way
            pass
        with _live_lock:
            _live.discard(pgid)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    if reason == "timeout":
        raise ToolRunError(f"{what}: {name} did not finish within {limit_s:g} s and was stopped "
                           "(the file may be corrupt; raise WARPWISE_TOOL_TIMEOUT_S for very large inputs)",
                           timed_out=True)
    if reason == "cancelled":
        raise ToolRunError(f"{what}: {name} was cancelled", cancelled=True)
    if reason == "output":
        raise ToolRunError(f"{what}: {name} printed more than {max_output / MiB:,.0f} MiB and was stopped")
    chunks = list(out.values())  # registered in order: stdout, stderr
    return ToolResult(proc.returncode, b"".join(chunks[0]), b"".join(chunks[1]), left)


def _others_in_group(pgid: int, leader: int) -> int:
    """How many processes other than ``leader`` are in process group ``pgid`` (``/proc/PID/stat`` field 5,
    Linux proc(5)); 0 where ``/proc`` cannot be listed."""
    try:
        pids = [int(e) for e in os.listdir("/proc") if e.isdigit() and int(e) != leader]
    except OSError:
        return 0
    n = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat_line = f.read()
        except OSError:  # ended meanwhile
            continue
        fields = stat_line[stat_line.rfind(b")") + 2:].split()  # after "(comm)", which may hold spaces
        if len(fields) > 2 and fields[2] == str(pgid).encode():
            n += 1
    return n


def _exited(pid: int) -> bool:
    """Whether child ``pid`` has exited, without reaping it (so its pid, our group id, stays reserved)."""
    try:
        res = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return res is not None


def run_checked(args: Sequence[str], what: str, *, timeout: float | None = None, cwd: str | None = None) -> ToolResult:
    """:func:`run`, and a tool that did not do its job cleanly is an error: the one guard every NVIDIA tool
    call goes through (nvdisasm and cuobjdump in analysis/binary, cuobjdump in ``warpwise profile``).

    Raises:
        ToolRunError: as :func:`run`; or the tool exited leaving processes of its own running
            (``ToolResult.left_behind``: they were killed, so its output may be unfinished), or exited nonzero
            or was killed (the last 5 lines of its stderr, else stdout, are quoted). ``what`` starts the message.
    """
    proc = run(args, what, cwd=cwd, timeout=timeout)
    name = Path(args[0]).name
    if proc.left_behind:  # its output may be what the killed leftovers had not finished: not a file's fault
        n = proc.left_behind
        raise ToolRunError(f"{what}: {name} misbehaved: it {describe_status(proc.returncode)} but left {n} "
                           f"process{'es' if n > 1 else ''} of its own running (killed); its output is not used")
    if proc.returncode != 0:
        msg = (proc.stderr or proc.stdout).decode("utf-8", errors="replace").strip().splitlines()
        tail = " | ".join(msg[-5:]) if msg else "no message"
        raise ToolRunError(f"{what}: {name} {describe_status(proc.returncode)}: {tail}")
    return proc


def describe_status(returncode: int) -> str:
    """``"exited with status 3"`` or ``"was killed by SIGSEGV"`` for a return code of :func:`run`."""
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"
