"""`warpwise advise` cold vs warm (persistent cache) and its memory, side by side in one run.

For each bundled example, in fresh processes (``--repeat`` of each): *cold* = an empty cache directory,
*warm* = the same inputs again (the analysis is loaded from the cache). Times are CPU seconds of the
process and its children (the report reader, nvdisasm); memory is the advise process's own peak RSS
(VmHWM), the largest child's (the report reader runs in a child so its native memory is given back) and
the process tree's (the sum over the process and its children alive at one moment, sampled every 5 ms).
Checks that warm output equals cold output byte for byte. Goals (issue 15): warm ≤ 0.5× cold; RSS of
advise ≤ 150 MiB.

    .venv/bin/python bench/perf/advise_cache.py [--repeat 3] [--examples stencil gather ...] [--reader-steps]
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
import time
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


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux /proc/<pid>/task/<tid>/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for t in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{t}/children") as fh:
                    todo.extend(int(c) for c in fh.read().split())
        except OSError:
            pass
    return out


def run(example: str, cache: Path) -> tuple[dict[str, float], str]:
    """One fresh ``advise --format json`` process: (probe numbers, stdout). ``rss_tree``: peak of the summed
    RSS of the process and all its children alive at the same moment (sampled every 5 ms, MiB)."""
    env = dict(os.environ, WARPWISE_CACHE_DIR=str(cache))
    env.pop("WARPWISE_NO_CACHE", None)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([sys.executable, "-c", _PROBE, "advise", str(ROOT / "examples" / example), "--format",
                              "json"], stdout=out, stderr=err, env=env)
        tree_peak = 0
        t_end = time.monotonic() + 600
        while p.poll() is None:
            tree_peak = max(tree_peak, sum(_rss_kib(q) for q in _tree(p.pid)))
            if time.monotonic() > t_end:
                p.kill()
                raise SystemExit(f"advise {example} took more than 600 s")
            time.sleep(0.005)
        if p.returncode != 0:
            raise SystemExit(f"advise {example} failed ({p.returncode})")
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    probe = next(line for line in stderr.splitlines() if line.startswith("PROBE "))
    got = json.loads(probe[6:])
    got["rss_tree"] = tree_peak // 1024
    return got, stdout


# What the report-reader child holds after each ncu-report call it makes (RSS and its anonymous part, MiB),
# and the size of the largest anonymous mapping (libnvperf_host.so's .bss, mapped on the first action).
_READER_STEPS = r"""
import json, sys
def st():
    d = {}
    for ln in open('/proc/self/status'):
        k, _, v = ln.partition(':')
        if k in ('VmRSS', 'RssAnon', 'VmHWM'):
            d[k] = int(v.split()[0]) // 1024
    return d
out = [('python + ncu_report import', None)]
import ncu_report
out[0] = (out[0][0], st())
r = ncu_report.load_report(sys.argv[1]); out.append(('load_report', st()))
a = r.range_by_idx(0).action_by_idx(0); out.append(('first action_by_idx', st()))
m = a.metric_by_name('smsp__pcsamp_sample_count'); pcs = m.correlation_ids()
pc = int(pcs.as_uint64(m.num_instances() - 1))
a.metric_by_name('inst_executed'); a.source_info(pc); out.append(('metrics + source_info', st()))
a.sass_by_pc(pc); out.append(('first sass_by_pc', st()))
dict(a.source_files()); out.append(('source_files', st()))
big = 0
for ln in open('/proc/self/maps'):
    f = ln.split()
    if len(f) == 5 and f[1].startswith('rw'):
        lo, hi = (int(x, 16) for x in f[0].split('-'))
        big = max(big, (hi - lo) >> 20)
print(json.dumps({'steps': out, 'largest_anonymous_mapping_mib': big}))
"""


def reader_steps(example: str) -> None:
    """Print the report reader's RSS after each ncu-report call on ``example``'s report (one fresh process)."""
    rep = next((ROOT / "examples" / example).glob("*.ncu-rep"))
    out = subprocess.run([sys.executable, "-c", _READER_STEPS, str(rep)], capture_output=True, text=True,
                         timeout=300, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"\n{example} report reader, step by step (largest anonymous mapping "
          f"{got['largest_anonymous_mapping_mib']} MiB):\n\n| after | RSS (MiB) | of it anonymous (MiB) |\n"
          "|---|---:|---:|")
    for name, d in got["steps"]:
        print(f"| {name} | {d['VmRSS']} | {d['RssAnon']} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--examples", nargs="+", default=list(NAMES), choices=NAMES)
    ap.add_argument("--reader-steps", action="store_true",
                    help="also print the report reader's RSS after each ncu-report call (first example)")
    args = ap.parse_args(argv)
    print("| example | cold CPU (s) min / median | warm CPU (s) min / median | warm / cold (medians) "
          "| advise peak RSS (MiB) cold / warm | report-reader child peak RSS (MiB) "
          "| process tree peak RSS (MiB) cold / warm | warm output = cold |\n"
          "|---|---:|---:|---:|---:|---:|---:|---|")
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
              f"| {max(r['rss_child'] for r in cold)} | {max(r['rss_tree'] for r in cold)} / "
              f"{max(r['rss_tree'] for r in warm)} | {'yes' if same else 'NO'} |", flush=True)
    if args.reader_steps:
        reader_steps(args.examples[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
