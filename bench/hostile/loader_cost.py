"""Cost of loading reports in the bounded worker process vs in this process (issue 13 item 1).

    python bench/hostile/loader_cost.py [--repeat 3]

For each example report: median wall time of ``load_profiles`` (worker process: interpreter start,
ncu-report import, load, pickle) and of ``load_profiles_in_process`` with ncu-report already imported.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from warpwise.analysis.profile.ncu import load_profiles, load_profiles_in_process

ROOT = Path(__file__).resolve().parent.parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    t = time.perf_counter()
    load_profiles_in_process(ROOT / "examples/stencil/stencil.ncu-rep")
    print(f"first in-process load (imports ncu-report): {time.perf_counter() - t:.3f} s")
    print(f"{'report':22s} {'KiB':>6s} {'worker s':>9s} {'in-process s':>13s} {'ratio':>6s}")
    for rep in sorted((ROOT / "examples").glob("*/*.ncu-rep")):
        w, i = [], []
        for _ in range(args.repeat):
            t = time.perf_counter()
            load_profiles(rep)
            w.append(time.perf_counter() - t)
            t = time.perf_counter()
            load_profiles_in_process(rep)
            i.append(time.perf_counter() - t)
        mw, mi = statistics.median(w), statistics.median(i)
        print(f"{rep.name:22s} {rep.stat().st_size // 1024:6d} {mw:9.3f} {mi:13.3f} {mw / mi:6.1f}")


if __name__ == "__main__":
    main()
