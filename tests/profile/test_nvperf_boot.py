"""The report reader's start (analysis/profile/nvperf_boot.py): zero pages given back, contents unchanged."""

from __future__ import annotations

import ctypes
import importlib.util
import mmap
import subprocess
import sys

import pytest
from warpwise.analysis.profile import nvperf_boot

PAGE = mmap.PAGESIZE

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, mincore and madvise: Linux")


def _resident_pages(addr: int, size: int) -> int:
    libc = ctypes.CDLL(None)
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    vec = ctypes.create_string_buffer(size // PAGE)
    assert libc.mincore(addr, size, vec) == 0
    return sum(b & 1 for b in vec.raw)


# release_zero_pages gives back nothing while another thread runs (it could write between the check and the
# release), and the pytest process may hold threads from earlier tests: the page checks run in a fresh
# single-threaded interpreter each.
_CHILD = """
import ctypes, mmap, sys
from warpwise.analysis.profile import nvperf_boot
PAGE = mmap.PAGESIZE

def resident(addr, size):
    libc = ctypes.CDLL(None)
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    vec = ctypes.create_string_buffer(size // PAGE)
    assert libc.mincore(addr, size, vec) == 0
    return sum(b & 1 for b in vec.raw)

def region(n):
    m = mmap.mmap(-1, n * PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    buf = (ctypes.c_char * (n * PAGE)).from_buffer(m)
    return m, buf, ctypes.addressof(buf)

if sys.argv[1] == "exact":
    n = 64
    m, buf, addr = region(n)
    for i in range(n):  # every page written (resident): zeros on even pages, one non-zero byte on odd ones
        m[i * PAGE: (i + 1) * PAGE] = bytes(PAGE)
        if i % 2:
            m[i * PAGE + 17] = 0x5A
    m[(n - 1) * PAGE - 1] = 1  # the last byte of page n-2 (even): that page is no longer all zero
    before = bytes(m)
    assert resident(addr, n * PAGE) == n
    freed = nvperf_boot.release_zero_pages([(addr, addr + n * PAGE)])
    zero_pages = sum(1 for i in range(n) if before[i * PAGE: (i + 1) * PAGE] == bytes(PAGE))
    assert zero_pages == n // 2 - 1, zero_pages
    assert freed == zero_pages * PAGE, (freed, zero_pages)
    assert resident(addr, n * PAGE) == n - zero_pages
    assert bytes(m) == before  # a given-back page reads as zeros again
    m[0] = 7  # and can be written again
    assert m[0] == 7
else:
    n = 16
    m, buf, addr = region(n)
    m[3 * PAGE] = 0  # one page resident (written with a zero)
    assert nvperf_boot.release_zero_pages([(addr, addr + n * PAGE)]) == PAGE
    assert resident(addr, n * PAGE) == 0
print("ok")
"""


def _child(case: str) -> None:
    out = subprocess.run([sys.executable, "-c", _CHILD, case], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_release_gives_back_exactly_the_zero_pages_and_keeps_the_bytes() -> None:
    _child("exact")


def test_release_skips_pages_never_touched() -> None:
    _child("untouched")


def test_release_does_nothing_while_another_thread_runs() -> None:
    import threading

    n = 8
    m = mmap.mmap(-1, n * PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    buf = (ctypes.c_char * (n * PAGE)).from_buffer(m)
    addr = ctypes.addressof(buf)
    m[0] = 0  # one zero page resident
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert nvperf_boot.release_zero_pages([(addr, addr + n * PAGE)]) == 0
        assert _resident_pages(addr, n * PAGE) == 1
    finally:
        stop.set()
        t.join()
    del buf
    m.close()


@pytest.mark.skipif(importlib.util.find_spec("ncu_report") is None, reason="ncu-report not installed")
def test_preload_in_a_fresh_process_gives_back_most_of_the_library_bss() -> None:
    code = ("from warpwise.analysis.profile import nvperf_boot as b; freed = b.preload(); r = b.bss_ranges(); "
            "print(freed, sum(h - l for l, h in r), len(r))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    freed, size, n = (int(x) for x in out.stdout.split())
    assert n == 1  # libnvperf_host.so's .bss
    assert size > 64 << 20
    assert freed > 32 << 20  # measured: ~67 MiB of its ~124 MiB .bss are zero-filled by its constructors


@pytest.mark.skipif(importlib.util.find_spec("ncu_report") is None, reason="ncu-report not installed")
def test_worker_starts_without_site_and_sets_it_up_after_the_library() -> None:
    """The worker's interpreter starts with -S (no site-packages set-up: ~2.5 MiB less under the library's
    constructors) and runs site.main() after the preload, so warpwise and ncu_report import as usual."""
    from tests.conftest import example

    cmd = nvperf_boot.worker_command(str(example("stencil", ".ncu-rep")), "--no-sass")
    assert cmd[1:3] == ["-S", "-P"] and cmd[4:6] == ["--library", nvperf_boot.library_path()]
    # without site.main() the same interpreter cannot import warpwise (nor ncu_report): the worker's own call is
    # what makes the read below work
    out = subprocess.run([sys.executable, "-S", "-P", "-c", "import warpwise.analysis.profile.ncu"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "ModuleNotFoundError" in out.stderr
    res = subprocess.run(cmd, capture_output=True, timeout=120)
    assert res.returncode == 0, res.stderr[-500:]
    import pickle

    got = pickle.loads(res.stdout)
    assert len(got) == 1 and got[0].name == "blur_rows" and len(got[0].pcs) > 50
