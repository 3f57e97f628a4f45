"""Compile every DP rewrite and quick fix of every example on its CRLF / BOM / mixed / tab / non-ASCII /
Latin-1 / trailing-space / continued-macro variants with nvcc (no GPU needed), and check each is
byte-identical outside its edits.

    python bench/hostile/compile_variants.py [--jobs 2] [--limit N] [--nvcc nvcc] [--variants NAME ...]

``--variants``: only the variants of these names (``crlf-latin1-macro``; default all). A Latin-1 variant's
file is written in ISO-8859-1 and decoded as the rewrite CLI decodes it (analysis/encoding.py).

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
    base_text,
    check_edits,
    quickfix_jobs,
    rewrite_jobs,
    shift_line,
    variant_bytes,
    variant_text,
)

VARIANTS = (
    Variant(eol="crlf"),
    Variant(eol="crlf", bom=True),
    Variant(eol="mixed", macro=True),
    Variant(eol="crlf", bom=True, tabs=True, non_ascii=True, macro=True),
    Variant(eol="lf", tabs=True, non_ascii=True),
    Variant(eol="crlf", latin1=True, macro=True),
    Variant(eol="mixed", latin1=True, tabs=True, trail=True),
    Variant(eol="mixed", bom=True, non_ascii=True, macro=True, trail=True),
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="compile at most N variants (a quick check)")
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--variants", nargs="*", default=None, metavar="NAME", help="only these variants")
    args = ap.parse_args()
    variants = [v for v in VARIANTS if args.variants is None or v.name() in args.variants]
    if not variants:
        ap.error(f"no variant named {args.variants}; known: {', '.join(v.name() for v in VARIANTS)}")
    from warpwise.analysis.rewrite import RewriteError, rewrite

    work: list[tuple[str, Path, bytes]] = []  # (name, original, rewritten variant's bytes)
    failures: list[str] = []
    refused = 0
    lf_of: dict[tuple[str, str, int], str] = {}  # the rewrite of the LF text a variant starts from
    for path, transform, line in rewrite_jobs():
        for v in variants:
            name = f"{path.stem}:{transform}:{line}:{v.name()}"
            original = base_text(path.read_text(), v)  # a Latin-1 file holds no UTF-8 dashes
            try:
                if (original, transform, line) not in lf_of:
                    lf_of[original, transform, line] = apply_byte_edits(original, rewrite(original, str(path),
                                                                                         transform, line))
                lf = lf_of[original, transform, line]
            except RewriteError:
                refused += 1
                break
            variant = variant_text(apply_variant(original, v), v)
            try:
                out = check_edits(original, variant, v, rewrite(variant, str(path), transform,
                                                                shift_line(line, v, original)), lf)
            except (AssertionError, RewriteError) as e:
                failures.append(f"{name}: {type(e).__name__}: {e}")
                continue
            work.append((name, path, variant_bytes(out, v)))
    for path, fix, fn in quickfix_jobs():
        for v in variants:
            original = base_text(path.read_text(), v)
            lf_edits = fn(original, str(path), Variant())
            if not lf_edits:
                break
            lf = apply_byte_edits(original, lf_edits)
            name = f"{path.stem}:{fix}:{v.name()}"
            variant = variant_text(apply_variant(original, v), v)
            try:
                out = check_edits(original, variant, v, fn(variant, str(path), v), lf)
            except AssertionError as e:
                failures.append(f"{name}: AssertionError: {e}")
                continue
            work.append((name, path, variant_bytes(out, v)))
    checked = len(work)
    if args.limit is not None:
        work = work[:: max(1, len(work) // max(1, args.limit))][: args.limit]  # spread over all jobs

    def compile_one(item: tuple[str, Path, bytes]) -> str | None:
        name, path, data = item
        with tempfile.TemporaryDirectory(prefix="ww-variant-") as d:
            src = Path(d) / path.name
            src.write_bytes(data)
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
