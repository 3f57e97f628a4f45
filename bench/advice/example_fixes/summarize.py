"""Summary of bench/advice/gpu_example_fixes.sh (stdlib only: it runs on the GPU box).

``python3 summarize.py LOGDIR VARIANTS.txt ROUNDS OUTDIR`` reads, per round r, ``LOGDIR/timing.r<r>.csv`` (one
ncu --csv session over every program), ``LOGDIR/pids.r<r>.txt`` (``<example> <variant> <pid>`` per program)
and ``LOGDIR/<example>.<variant>.r<r>.out`` (the program's own check line), and writes OUTDIR/summary.json
and prints a table: per variant the median launch duration (µs), the achieved speedup over its example's
``orig`` (median over rounds of the per-round ratio orig/variant; spread = min-max of those ratios) and the
program's check line (its numerical error against the host reference, PASS/FAIL).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from ncu_times import split_round


def variants(path: Path) -> list[tuple[str, str, str, str]]:
    """(example, variant, kernel, optimizer) per line of a variants.txt (comments and blanks skipped)."""
    out = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if parts and not parts[0].startswith("#"):
            out.append((parts[0], parts[1], parts[2], parts[3]))
    return out


def round_durations(csv_text: str, pids_text: str, kernel_of: dict[tuple[str, str], str],
                    source: str) -> dict[tuple[str, str], float]:
    """Summed duration (µs) of each program's launches of its kernel in one round.

    The launches are split by ``ncu_times.split_round`` (one reading of the ncu CSV for every benchmark):
    keyed by the ``<example> <variant> <pid>`` lines, an example's kernel taken from ``kernel_of``; a row of a
    process without a pid line is kept only when split_round's order rule names a listed variant.
    """
    kernels = {ex: k for (ex, _), k in kernel_of.items()}
    split = split_round(csv_text, pids_text, kernels, source)
    return {key: sum(us) for key, us in split.items() if key in kernel_of}


def main(argv: list[str]) -> int:
    logdir, vpath, rounds, outdir = Path(argv[0]), Path(argv[1]), int(argv[2]), Path(argv[3])
    table = variants(vpath)
    kernel_of = {(e, v): k for e, v, k, _ in table}
    per_round = []
    for r in range(1, rounds + 1):
        csv_path, pids_path = logdir / f"timing.r{r}.csv", logdir / f"pids.r{r}.txt"
        per_round.append(round_durations(csv_path.read_text(errors="replace") if csv_path.exists() else "",
                                         pids_path.read_text() if pids_path.exists() else "", kernel_of, str(csv_path)))
    rows = []
    for ex, v, k, opt in table:
        runs = [t.get((ex, v)) for t in per_round]
        ratios = [t[(ex, "orig")] / t[(ex, v)] for t in per_round if (ex, v) in t and (ex, "orig") in t]
        checks = []
        for r in range(1, rounds + 1):
            out = logdir / f"{ex}.{v}.r{r}.out"
            lines = out.read_text(errors="replace").strip().splitlines() if out.exists() else []
            checks.append(lines[-1] if lines else "")
        got = [x for x in runs if x is not None]
        rows.append({"example": ex, "variant": v, "kernel": k, "optimizer": opt, "rounds": len(got), "run_us": runs,
                     "median_us": statistics.median(got) if got else None, "ratios": ratios,
                     "achieved": statistics.median(ratios) if ratios else None,
                     "spread": [min(ratios), max(ratios)] if ratios else None, "check": sorted(set(checks))})
    (outdir / "summary.json").write_text(json.dumps(rows, indent=1) + "\n")
    print(f"{'example':9s} {'variant':24s} {'optimizer':30s} {'median us':>10s} {'achieved':>9s} {'spread':>13s}"
          "  check")
    for row in rows:
        med = f"{row['median_us']:10.1f}" if row["median_us"] else f"{'-':>10s}"
        ach = f"{row['achieved']:8.3f}x" if row["achieved"] else f"{'-':>9s}"
        sp = f"{row['spread'][0]:.3f}-{row['spread'][1]:.3f}" if row["spread"] else "-"
        print(f"{row['example']:9s} {row['variant']:24s} {row['optimizer']:30s} {med} {ach} {sp:>13s}  "
              f"{' | '.join(row['check'])}")
    return 0 if all(r["rounds"] == rounds for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
