"""Start of the report-reader worker: load ncu-report's ``libnvperf_host.so`` first and give back the zero pages
its static constructors wrote, then read the report (:func:`warpwise.analysis.profile.ncu._worker_main`).

Why (docs/benchmarks.md, issue 15 "Fifth pass, advice stage and memory"): the first ``action_by_idx`` of
ncu-report dlopens ``libnvperf_host.so``, whose ELF constructors (``call_init``) ``memset`` about 118 MiB of
its own ``.bss`` in 2,783,808-byte pieces (found with a gdb breakpoint on ``memset``; 86% of the reader's page
faults, ``perf record -e page-faults``). That memory is already zero, but writing it makes it resident: the
worker's peak RSS was ~26 MiB of imports + 118 MiB + what reading adds (141-155 MiB), of which only ~38 MiB
of the ``.bss`` holds non-zero bytes afterwards. This module is imported before anything else in the worker
(stdlib only), so the library loads on top of a bare interpreter (~11 MiB), and then every resident page of
the library's ``.bss`` mapping that is entirely zero is returned with ``madvise(MADV_DONTNEED)``: for a
private anonymous mapping the kernel gives a fresh zero page on the next touch, so the library reads the same
bytes it would have read (Linux ``madvise(2)``). That is done only while the process has one thread (nothing
else can write between the check and the release; ``/proc/self/status`` Threads), only on the anonymous
mapping directly after the library's last writable file mapping (its ``.bss``), and not at all when the
library, ``/proc``, ``mincore`` or ``madvise`` is missing: the read then goes on as before.
"""

from __future__ import annotations

import ctypes
import itertools
import mmap
import os
import sys

#: Linux ``MADV_DONTNEED`` (asm-generic/mman-common.h).
MADV_DONTNEED = 4

LIBRARY = "libnvperf_host.so"


def _threads() -> int:
    """Threads of this process (``/proc/self/status``), 0 when unknown."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def bss_ranges(name: str = LIBRARY) -> list[tuple[int, int]]:
    """(start, end) addresses of the anonymous ``rw-p`` mapping that directly follows the last writable
    file mapping of the shared object whose file name is ``name`` (its ``.bss`` beyond the file's last page),
    from ``/proc/self/maps``; [] when there is none."""
    try:
        with open("/proc/self/maps") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    out: list[tuple[int, int]] = []
    for line, nxt in itertools.pairwise(lines):
        p, q = line.split(), nxt.split()
        if len(p) >= 6 and os.path.basename(p[5]) == name and p[1] == "rw-p" and len(q) == 5 \
                and q[1] == "rw-p" and q[4] == "0" and q[0].split("-")[0] == p[0].split("-")[1]:
            lo, hi = (int(x, 16) for x in q[0].split("-"))
            out.append((lo, hi))
    return out


def release_zero_pages(ranges: list[tuple[int, int]]) -> int:
    """Give back every resident page in ``ranges`` whose bytes are all zero (``madvise(MADV_DONTNEED)``, runs
    of consecutive pages at once); returns the bytes given back. Does nothing when another thread runs."""
    if not ranges or _threads() != 1:
        return 0
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        madvise, mincore = libc.madvise, libc.mincore
    except (OSError, AttributeError):
        return 0
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    page = mmap.PAGESIZE
    zero = bytes(page)
    freed = 0
    for lo, hi in ranges:
        n = (hi - lo) // page
        resident = ctypes.create_string_buffer(n)
        if mincore(lo, hi - lo, resident) != 0:
            continue
        flags = resident.raw
        start = -1
        for i in range(n + 1):
            addr = lo + i * page
            is_zero = i < n and flags[i] & 1 and ctypes.string_at(addr, page) == zero
            if is_zero and start < 0:
                start = addr
            elif not is_zero and start >= 0:
                if madvise(start, addr - start, MADV_DONTNEED) == 0:
                    freed += addr - start
                start = -1
    return freed


def library_path() -> str | None:
    """Path of ncu-report's ``libnvperf_host.so`` beside the ``ncu_report`` package (found with
    ``importlib.util.find_spec``, which does not import the package), or None when it is not there."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("ncu_report")
    except (ImportError, ValueError):
        return None
    for d in list(spec.submodule_search_locations or []) if spec else []:
        lib = os.path.join(d, LIBRARY)
        if os.path.isfile(lib):
            return lib
    return None


def preload(lib: str | None = None) -> int:
    """Load ncu-report's ``libnvperf_host.so`` (``lib``, default :func:`library_path`) and give back the zero
    pages its constructors made resident; returns the bytes given back (0 when the library is not there or
    cannot be loaded: ncu-report then loads it itself, as before)."""
    lib = lib if lib is not None else library_path()
    if lib is None:
        return 0
    try:
        ctypes.CDLL(lib)
    except OSError:
        return 0
    return release_zero_pages(bss_ranges())


_LIBRARY_FLAG = "--library"


def worker_command(report: str, *args: str) -> list[str]:
    """Argument list that starts the report-reader worker on ``report`` (``args`` go on to
    :func:`warpwise.analysis.profile.ncu._worker_main`): ``python -S -P`` this file, with the library's path.

    ``-S`` (no ``site`` at start-up) keeps the interpreter at ~9 instead of ~11.5 MiB while the library's
    constructors write their ~110 MiB, the process tree's peak (docs/benchmarks.md, issue 15 "Sixth pass,
    memory"); :func:`main` runs ``site.main()`` after the preload, so the rest of the worker sees the usual
    ``sys.path`` (virtual environment, editable install). ``-P``: the file's folder is not put on ``sys.path``.
    The library path is found here, where ``site`` has run (without it the worker could not find the package).
    """
    lib = library_path()
    return [sys.executable, "-S", "-P", os.path.abspath(__file__), *([_LIBRARY_FLAG, lib] if lib else []), report,
            *args]


def main(argv: list[str]) -> int:
    """Worker entry (:func:`worker_command`, or ``python -m warpwise.analysis.profile.nvperf_boot REPORT
    [--no-sass]``): :func:`preload`, ``site.main()`` when the interpreter started without ``site`` (``-S``),
    then :func:`warpwise.analysis.profile.ncu._worker_main` on the remaining arguments."""
    lib = None
    if argv[:1] == [_LIBRARY_FLAG] and len(argv) > 1:
        lib, argv = argv[1], argv[2:]
    preload(lib)
    if sys.flags.no_site:
        import site

        site.main()  # documented for -S: the sys.path set-up skipped at start-up, done now
    from warpwise.analysis.profile.ncu import _worker_main

    return _worker_main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
