"""Compile every DP rewrite and quick fix of every example on its CRLF / BOM / mixed / tab / non-ASCII /
continued-macro variants with nvcc (no GPU needed), and check each is byte-identical outside its edits.

    python bench/hostile/compile_variants.py [--jobs 2] [--limit N] [--nvcc nvcc]

Prints one line per failure and a summary ``compiled N, failed F, refused R``; exit 1 when anything failed.
Each variant is compiled as the user would build a CDP program: ``nvcc -rdc=true -arch=sm_90 -c``
(docs/benchmarks.md "Hostile inputs").
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from tests.hostile.variants import (  # noqa: E402
    Variant,
    apply_byte_edits,
    apply_variant,
    check_edits,
    quickfix_jobs,
    rewrite_jobs,
    shift_line,
)

VARIANTS = (
    Variant(eol="crlf"),
    Variant(eol="crlf", bom=True),
    Variant(eol="mixed", macro=True),
    Variant(eol="crlf", bom=True, tabs=True, non_ascii=True, macro=True),
    Variant(eol="lf", tabs=True, non_ascii=True),
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="compile at most N variants (a quick check)")
    ap.add_argument("--nvcc", default="nvcc")
    args = ap.parse_args()
    from warpwise.analysis.rewrite import RewriteError, rewrite

    work: list[tuple[str, Path, str]] = []  # (name, original, rewritten variant text)
    failures: list[str] = []
    refused = 0
    for path, transform, line in rewrite_jobs():
        original = path.read_text()
        try:
            lf = apply_byte_edits(original, rewrite(original, str(path), transform, line))
        except RewriteError:
            refused += 1
            continue
        for v in VARIANTS:
            name = f"{path.stem}:{transform}:{line}:{v.name()}"
            variant = apply_variant(original, v)
            try:
                out = check_edits(original, variant, v, rewrite(variant, str(path), transform,
                                                                shift_line(line, v, original)), lf)
            except (AssertionError, RewriteError) as e:
                failures.append(f"{name}: {type(e).__name__}: {e}")
                continue
            work.append((name, path, out))
    for path, fix, fn in quickfix_jobs():
        original = path.read_text()
        lf_edits = fn(original, str(path), Variant())
        if not lf_edits:
            continue
        lf = apply_byte_edits(original, lf_edits)
        for v in VARIANTS:
            name = f"{path.stem}:{fix}:{v.name()}"
            variant = apply_variant(original, v)
            try:
                out = check_edits(original, variant, v, fn(variant, str(path), v), lf)
            except AssertionError as e:
                failures.append(f"{name}: AssertionError: {e}")
                continue
            work.append((name, path, out))
    checked = len(work)
    if args.limit is not None:
        work = work[:: max(1, len(work) // max(1, args.limit))][: args.limit]  # spread over all jobs

    def compile_one(item: tuple[str, Path, str]) -> str | None:
        name, path, text = item
        with tempfile.TemporaryDirectory(prefix="ww-variant-") as d:
            src = Path(d) / path.name
            src.write_bytes(text.encode("utf-8"))
            cmd = [args.nvcc, "-rdc=true", "-arch=sm_90", "-std=c++17", "-I", str(path.parent), "-c", str(src),
                   "-o", str(Path(d) / "x.o")]
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            except subprocess.TimeoutExpired:
                return f"{name}: nvcc timed out"
            if r.returncode != 0:
                return f"{name}: nvcc failed: {' | '.join(r.stderr.strip().splitlines()[:4])}"
        return None

    t = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        failures += [f for f in pool.map(compile_one, work) if f]
    for f in failures:
        print("FAIL", f)
    print(f"checked {checked} rewritten variants byte by byte, compiled {len(work)}, failed {len(failures)}, "
          f"refused {refused} rewrites (also refused on the LF original), {time.monotonic() - t:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
