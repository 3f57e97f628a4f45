"""`warpwise advise` cold vs warm (persistent cache) and its memory, side by side in one run.

For each bundled example, in fresh processes (``--repeat`` of each): *cold* = an empty cache directory,
*warm* = the same inputs again (the analysis is loaded from the cache). Times are CPU seconds of the
process and its children (the report reader, nvdisasm); memory is the advise process's own peak RSS
(VmHWM), the largest child's (the report reader runs in a child so its native memory is given back) and
the process tree's (the sum over the process and its children alive at one moment, sampled every 5 ms).
Checks that warm output equals cold output byte for byte. Goals (issue 15): warm ≤ 0.5× cold; RSS of
advise ≤ 150 MiB.

``--baseline DIR`` runs every measurement also with another warpwise (``DIR/warpwise``, e.g. ``git archive
<commit> | tar -x -C DIR/warpwise``) on ``PYTHONPATH``, alternating with this tree, and checks that both give
the same cold output; ``--gnu-time`` adds one cold run of each under GNU ``/usr/bin/time`` (its "Maximum
resident set size": the largest single process of the tree, as ``getrusage`` sees it). The column "advise
while reading" is the advise process's own RSS while the report-reader child is alive.

    .venv/bin/python bench/perf/advise_cache.py [--repeat 3] [--examples stencil gather ...] [--reader-steps]
        [--baseline DIR] [--gnu-time]
"""

from __future__ import annotations

import argparse
import json
import os
import re
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


def _is_reader(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmd = fh.read()
            return b"warpwise.analysis.profile.ncu" in cmd or b"nvperf_boot" in cmd  # -m, or the -S file path
    except OSError:
        return False


def run(example: str, cache: Path, pythonpath: str | None = None) -> tuple[dict[str, float], str]:
    """One fresh ``advise --format json`` process: (probe numbers, stdout). ``rss_tree``: peak of the summed
    RSS of the process and all its children alive at the same moment (sampled every 5 ms, MiB);
    ``rss_parent_reading``: the advise process's peak RSS while the report reader runs (MiB).
    ``pythonpath``: a folder holding another ``warpwise`` to run instead of this tree's."""
    env = dict(os.environ, WARPWISE_CACHE_DIR=str(cache))
    env.pop("WARPWISE_NO_CACHE", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([sys.executable, "-c", _PROBE, "advise", str(ROOT / "examples" / example), "--format",
                              "json"], stdout=out, stderr=err, env=env)
        tree_peak = parent_reading = 0
        t_end = time.monotonic() + 600
        while p.poll() is None:
            pids = _tree(p.pid)
            rss = {q: _rss_kib(q) for q in pids}
            tree_peak = max(tree_peak, sum(rss.values()))
            if any(_is_reader(q) for q in pids[1:]):
                parent_reading = max(parent_reading, rss[p.pid])
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
    got["rss_parent_reading"] = parent_reading // 1024
    return got, stdout


def gnu_time(example: str, cache: Path, pythonpath: str | None = None) -> int:
    """GNU time's maximum resident set size (MiB) of one cold ``advise --format json`` (the largest process of
    the tree); 0 when /usr/bin/time is missing."""
    if not Path("/usr/bin/time").exists():
        return 0
    env = dict(os.environ, WARPWISE_CACHE_DIR=str(cache))
    env.pop("WARPWISE_NO_CACHE", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    res = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-m", "warpwise.server.cli", "advise",
                          str(ROOT / "examples" / example), "--format", "json"], capture_output=True, text=True,
                         env=env, timeout=600)
    if res.returncode != 0:
        raise SystemExit(f"advise {example} under /usr/bin/time failed ({res.returncode}): {res.stderr[-500:]}")
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", res.stderr)
    return int(m.group(1)) // 1024 if m else 0


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
a.metric_by_name('inst_executed')
for i in range(m.num_instances()):
    a.source_info(int(pcs.as_uint64(i)))
out.append(('metrics + source_info of every sampled PC', st()))
o = a.metric_by_name('sass__inst_executed_per_opcode')
if o is not None:
    ids = o.correlation_ids(); {ids.as_string(i): o.as_uint64(i) for i in range(o.num_instances())}
out.append(('per-opcode executed counts', st()))
dict(a.source_files()); out.append(('source_files', st()))
a.sass_by_pc(pc); out.append(('first sass_by_pc (advise no longer calls it)', st()))
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
    ap.add_argument("--baseline", type=Path, default=None,
                    help="a folder holding another warpwise (DIR/warpwise) measured side by side")
    ap.add_argument("--gnu-time", action="store_true", help="also one cold run each under GNU /usr/bin/time -v")
    args = ap.parse_args(argv)
    codes: list[tuple[str, str | None]] = [("this tree", None)]
    if args.baseline is not None:
        if not (args.baseline / "warpwise").is_dir():
            raise SystemExit(f"--baseline {args.baseline}: no warpwise folder in it")
        codes = [("baseline", str(args.baseline.resolve())), ("this tree", None)]
    print("| code | example | cold CPU (s) min / median | warm CPU (s) min / median | warm / cold (medians) "
          "| advise peak RSS (MiB) cold / warm | advise while reading (MiB) | report-reader child peak RSS (MiB) "
          "| process tree peak RSS (MiB) cold / warm | GNU time max RSS (MiB) | warm output = cold "
          "| output = baseline |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for ex in args.examples:
        cold: dict[str, list[dict[str, float]]] = {c: [] for c, _ in codes}
        warm: dict[str, list[dict[str, float]]] = {c: [] for c, _ in codes}
        same = dict.fromkeys(cold, True)
        outputs: dict[str, str] = {}
        gt: dict[str, int] = {}
        for _ in range(args.repeat):
            for code, pp in codes:  # alternated, so machine load hits both alike
                d = Path(tempfile.mkdtemp(prefix="warpwise-bench-cache-"))
                try:
                    c, out_c = run(ex, d, pp)
                    w, out_w = run(ex, d, pp)
                finally:
                    shutil.rmtree(d, ignore_errors=True)
                cold[code].append(c)
                warm[code].append(w)
                same[code] = same[code] and out_c == out_w
                outputs.setdefault(code, out_c)
        if args.gnu_time:
            for code, pp in codes:
                d = Path(tempfile.mkdtemp(prefix="warpwise-bench-cache-"))
                try:
                    gt[code] = gnu_time(ex, d, pp)
                finally:
                    shutil.rmtree(d, ignore_errors=True)
        for code, _pp in codes:
            cr, wr = cold[code], warm[code]
            mc, mw = statistics.median(r["cpu"] for r in cr), statistics.median(r["cpu"] for r in wr)
            vs = "-" if len(codes) == 1 else ("yes" if outputs[code] == outputs[codes[0][0]] else "NO")
            print(f"| {code} | {ex} | {min(r['cpu'] for r in cr):.2f} / {mc:.2f} | {min(r['cpu'] for r in wr):.2f} / "
                  f"{mw:.2f} | {mw / mc:.2f}× | {max(r['rss_self'] for r in cr)} / {max(r['rss_self'] for r in wr)} "
                  f"| {max(r['rss_parent_reading'] for r in cr)} | {max(r['rss_child'] for r in cr)} "
                  f"| {max(r['rss_tree'] for r in cr)} / {max(r['rss_tree'] for r in wr)} "
                  f"| {gt.get(code, '-') if args.gnu_time else '-'} | {'yes' if same[code] else 'NO'} | {vs} |",
                  flush=True)
    if args.reader_steps:
        reader_steps(args.examples[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
