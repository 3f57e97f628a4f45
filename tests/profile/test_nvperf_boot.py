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


def test_release_gives_back_exactly_the_zero_pages_and_keeps_the_bytes() -> None:
    n = 64
    m = mmap.mmap(-1, n * PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    buf = (ctypes.c_char * (n * PAGE)).from_buffer(m)
    addr = ctypes.addressof(buf)
    for i in range(n):  # every page written (resident): zeros on even pages, one non-zero byte on odd ones
        m[i * PAGE: (i + 1) * PAGE] = bytes(PAGE)
        if i % 2:
            m[i * PAGE + 17] = 0x5A
    m[(n - 1) * PAGE - 1] = 1  # the last byte of page n-2 (even): that page is no longer all zero
    before = bytes(m)
    assert _resident_pages(addr, n * PAGE) == n
    freed = nvperf_boot.release_zero_pages([(addr, addr + n * PAGE)])
    zero_pages = sum(1 for i in range(n) if before[i * PAGE: (i + 1) * PAGE] == bytes(PAGE))
    assert zero_pages == n // 2 - 1
    assert freed == zero_pages * PAGE
    assert _resident_pages(addr, n * PAGE) == n - zero_pages
    assert bytes(m) == before  # a given-back page reads as zeros again
    m[0] = 7  # and can be written again
    assert m[0] == 7
    del buf
    m.close()


def test_release_skips_pages_never_touched() -> None:
    n = 16
    m = mmap.mmap(-1, n * PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    buf = (ctypes.c_char * (n * PAGE)).from_buffer(m)
    addr = ctypes.addressof(buf)
    m[3 * PAGE] = 0  # one page resident (written with a zero)
    assert nvperf_boot.release_zero_pages([(addr, addr + n * PAGE)]) == PAGE
    assert _resident_pages(addr, n * PAGE) == 0
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
