"""The benchmark pairs' Nsight Compute reports, committed xz-compressed (``orig.ncu-rep.xz``, about a tenth of
the plain size), as a path to the plain report that warpwise reads.

``pair_report(pair_dir)`` returns ``pair_dir/orig.ncu-rep`` when that plain file is there (a report just
written by ``gpu_collect.sh`` on the GPU box), else the plain report of ``pair_dir/orig.ncu-rep.xz``
decompressed once into ``<cache>/warpwise-bench/reports/<sha256 of the .xz>/orig.ncu-rep`` (``<cache>``:
``$XDG_CACHE_HOME`` or ``~/.cache``). The file keeps the name ``orig.ncu-rep`` because warpwise's outputs
(and the tests reading them) show a report's file name. Decompression writes a temporary file in the same
folder and renames it into place (``os.replace``), so a reader never sees a partial report and two processes
unpacking the same report at once both end with the complete file; a report already unpacked is reused.

Stdlib only (gpu_collect.sh's box runs it without warpwise installed).

    python3 bench/advice/reports.py compress FILE.ncu-rep ...    writes FILE.ncu-rep.xz, removes FILE.ncu-rep
"""

from __future__ import annotations

import hashlib
import lzma
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

REPORT = "orig.ncu-rep"  # a pair's report, plain (fresh from the profiler) or with ".xz" (committed)
_CHUNK = 1 << 20  # bytes per read while hashing and decompressing
PRESET = 6  # xz's default: raytrace_virtual's 3.7 MB report -> 94 KB (preset 9 the same, 9e 4% smaller, 3x slower)


def cache_root() -> Path:
    """Folder of the unpacked reports: ``$XDG_CACHE_HOME/warpwise-bench/reports`` (``~/.cache`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "warpwise-bench" / "reports"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def unpacked(xz: Path, name: str = REPORT) -> Path:
    """Path of the plain content of the xz file ``xz``, named ``name``, in :func:`cache_root`'s folder for
    the sha256 of ``xz`` (decompressed on first use, reused after).

    Raises OSError when ``xz`` cannot be read or the cache folder not written, lzma.LZMAError when ``xz``
    is not a valid xz stream (nothing is left in the cache then)."""
    folder = cache_root() / _sha256(xz)
    out = folder / name
    if out.is_file():
        return out
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=folder)
    try:
        with os.fdopen(fd, "wb") as dst, lzma.open(xz) as src:
            while chunk := src.read(_CHUNK):
                dst.write(chunk)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out


def pair_report(pair_dir: Path) -> Path | None:
    """The plain report of a benchmark pair folder: ``orig.ncu-rep`` itself when present, else the unpacked
    ``orig.ncu-rep.xz`` (:func:`unpacked`); None when the folder has neither. Errors as :func:`unpacked`."""
    plain = pair_dir / REPORT
    if plain.is_file():
        return plain
    xz = pair_dir / (REPORT + ".xz")
    return unpacked(xz) if xz.is_file() else None


def has_report(pair_dir: Path) -> bool:
    """Whether ``pair_dir`` holds a report in either form (no decompression)."""
    return (pair_dir / REPORT).is_file() or (pair_dir / (REPORT + ".xz")).is_file()


def compress(report: Path) -> Path:
    """Write ``report`` + ``.xz`` (xz :data:`PRESET`) through a temporary file
    and remove the plain ``report``; returns the .xz path. Raises OSError on a read or write failure."""
    xz = report.with_name(report.name + ".xz")
    fd, tmp = tempfile.mkstemp(prefix=f".{xz.name}.", suffix=".part", dir=report.parent)
    try:
        with report.open("rb") as src, os.fdopen(fd, "wb") as raw, \
                lzma.open(raw, "wb", preset=PRESET) as dst:
            while chunk := src.read(_CHUNK):
                dst.write(chunk)
        os.replace(tmp, xz)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    report.unlink()
    return xz


def main(argv: Sequence[str]) -> int:
    if len(argv) < 2 or argv[0] != "compress":
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    for f in argv[1:]:
        xz = compress(Path(f))
        print(f"{f} -> {xz} ({xz.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
