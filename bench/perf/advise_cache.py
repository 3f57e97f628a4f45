"""`warpwise advise` cold vs warm (persistent cache) and its memory, side by side in one run.

For each bundled example, in fresh processes (``--repeat`` of each): *cold* = an empty cache directory,
*warm* = the same inputs again (the analysis is loaded from the cache). Times are CPU seconds of the
process and its children (the report reader, nvdisasm); memory is the advise process's own peak RSS
(VmHWM) and the largest child's (the report reader runs in a child so its native memory is given back).
Checks that warm output equals cold output byte for byte. Goals (issue 15): warm ≤ 0.5× cold; RSS of
advise ≤ 150 MiB.

    .venv/bin/python bench/perf/advise_cache.py [--repeat 3] [--examples stencil gather ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAMES = ("stencil", "gather", "intdiv", "noinline", "cdp")

_PROBE = r"""
import atexit, json, resource, sys, time
def report():
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    me = resource.getrusage(resource.RUSAGE_SELF)
    hwm = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) // 1024
    sys.stderr.write('PROBE ' + json.dumps({'cpu': me.ru_utime + me.ru_stime + ch.ru_utime + ch.ru_stime,
                     'rss_self': hwm, 'rss_child': ch.ru_maxrss // 1024}) + '\n')
atexit.register(report)
from warpwise.server.cli import main
sys.exit(main(sys.argv[1:]))
"""


def run(example: str, cache: Path) -> tuple[dict[str, float], str]:
    """One fresh ``advise --format json`` process: (probe numbers, stdout)."""
    env = dict(os.environ, WARPWISE_CACHE_DIR=str(cache))
    env.pop("WARPWISE_NO_CACHE", None)
    p = subprocess.run([sys.executable, "-c", _PROBE, "advise", str(ROOT / "examples" / example), "--format", "json"],
                       capture_output=True, text=True, env=env, timeout=600, check=True)
    probe = next(line for line in p.stderr.splitlines() if line.startswith("PROBE "))
    return json.loads(probe[6:]), p.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--examples", nargs="+", default=list(NAMES), choices=NAMES)
    args = ap.parse_args(argv)
    print("| example | cold CPU (s) min / median | warm CPU (s) min / median | warm / cold (medians) "
          "| advise peak RSS (MiB) cold / warm | report-reader child peak RSS (MiB) | warm output = cold |\n"
          "|---|---:|---:|---:|---:|---:|---|")
    for ex in args.examples:
        cold, warm, same = [], [], True
        for _ in range(args.repeat):
            d = Path(tempfile.mkdtemp(prefix="warpwise-bench-cache-"))
            try:
                c, out_c = run(ex, d)
                w, out_w = run(ex, d)
            finally:
                shutil.rmtree(d, ignore_errors=True)
            cold.append(c)
            warm.append(w)
            same = same and out_c == out_w
        mc, mw = statistics.median(r["cpu"] for r in cold), statistics.median(r["cpu"] for r in warm)
        print(f"| {ex} | {min(r['cpu'] for r in cold):.2f} / {mc:.2f} | {min(r['cpu'] for r in warm):.2f} / "
              f"{mw:.2f} | {mw / mc:.2f}× | {max(r['rss_self'] for r in cold)} / {max(r['rss_self'] for r in warm)} "
              f"| {max(r['rss_child'] for r in cold)} | {'yes' if same else 'NO'} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
