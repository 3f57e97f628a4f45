"""Stdlib-only helpers of gpu_collect.sh (runs on the GPU box, where warpwise is not installed).

``python3 ncu_times.py meta PAIR_DIR``   prints the pair's kernel, kind, orig flags and fix flags (one per line)
``python3 ncu_times.py summarize LOGDIR OUT.json ROUNDS NAME...``   parses the timing CSVs of those pairs and
merges their entries into OUT.json (entries of other pairs already there are kept).

Per round r, ``LOGDIR/timing.r<r>.csv`` is the stdout of one
``ncu --clock-control none --target-processes all --metrics gpu__time_duration.sum --csv -k regex:^(k1|k2...)``
session that ran every program in turn (lines not starting with a quote are skipped), and
``LOGDIR/pids.r<r>.txt`` says which process was which: ``<pair> <variant> <pid>`` per line.
"""

from __future__ import annotations

import csv
import json
import statistics
import sys
from pathlib import Path

# Nsight Compute's unit names for gpu__time_duration.sum, to microseconds
_TO_US = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3, "second": 1e6, "s": 1e6}


def pair_meta(pair_dir: Path) -> dict[str, object]:
    """Read ``pair_dir/pair.json``; raises ValueError naming the file when a field is missing or wrong."""
    path = pair_dir / "pair.json"
    try:
        meta = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: {e}") from e
    for key in ("kernel", "kind", "what"):
        if not isinstance(meta.get(key), str):
            raise ValueError(f"{path}: '{key}' must be a string")
    if meta["kind"] not in ("pair", "nothing_to_gain"):
        raise ValueError(f"{path}: kind must be 'pair' or 'nothing_to_gain', not {meta['kind']!r}")
    if meta["kind"] == "pair" and not isinstance(meta.get("optimizer"), str):
        raise ValueError(f"{path}: a pair names the optimizer its fix corresponds to")
    for key in ("nvcc_flags", "fix_nvcc_flags"):
        if not all(isinstance(f, str) for f in meta.get(key, [])):
            raise ValueError(f"{path}: '{key}' must be a list of strings")
    return meta


def duration_rows(csv_text: str, source: str = "<csv>") -> list[tuple[str, str, float]]:
    """(process id, kernel name, duration in µs) of every gpu__time_duration.sum row of an ncu --csv
    output, in launch order. Raises ValueError (naming ``source``) for an unknown unit."""
    lines = [line for line in csv_text.splitlines() if line.startswith('"')]
    out: list[tuple[str, str, float]] = []
    for row in csv.DictReader(lines):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        unit = row.get("Metric Unit", "")
        if unit not in _TO_US:
            raise ValueError(f"{source}: unknown unit {unit!r} for gpu__time_duration.sum")
        value = float(row["Metric Value"].replace(",", "")) * _TO_US[unit]
        out.append((row.get("Process ID", ""), row.get("Kernel Name", ""), value))
    return out


def launch_durations_us(csv_text: str, source: str = "<csv>") -> list[float]:
    """Every gpu__time_duration.sum duration of an ncu --csv output, in launch order, in microseconds.

    Raises ValueError (naming ``source``) for an unknown unit or when there is no such row.
    """
    out = [d for _, _, d in duration_rows(csv_text, source)]
    if not out:
        raise ValueError(f"{source}: no gpu__time_duration.sum row (did the program or ncu fail?)")
    return out


def _is_kernel(name: str, kernel: str) -> bool:
    """Whether ncu's kernel name ``name`` (``k``, ``k(int, float *)``, ``k<...>``, or a template
    instantiation printed with its return type, ``void k<8, 32>(...)``) is the function ``kernel``."""
    if name.startswith("void ") and not kernel.startswith("void "):
        name = name[len("void "):]  # ncu's demangled names of template instances carry the return type
    return name == kernel or name.startswith((kernel + "(", kernel + "<"))


def split_round(csv_text: str, pids_text: str, kernels: dict[str, str], source: str = "<csv>"
                ) -> dict[tuple[str, str], list[float]]:
    """Launch durations (µs) per (pair, variant) of one round's ncu session.

    ``pids_text``: ``<pair> <variant> <pid>`` lines; ``kernels``: pair -> kernel name. A row whose process
    is not listed is given to the pair owning its kernel name, variant by order of appearance (the runner
    starts orig before fix), so a lost pid line does not lose the timing.
    """
    by_pid: dict[str, tuple[str, str]] = {}
    for line in pids_text.splitlines():
        parts = line.split()
        if len(parts) == 3:
            by_pid[parts[2]] = (parts[0], parts[1])
    out: dict[tuple[str, str], list[float]] = {}
    seen: dict[str, list[str]] = {}  # pair -> pids in order of appearance
    for pid, name, us in duration_rows(csv_text, source):
        if pid in by_pid:
            key = by_pid[pid]
            if key[0] not in kernels or not _is_kernel(name, kernels[key[0]]):
                continue  # another kernel of that program (the -k regex matches prefixes: k_helper for k)
        else:
            pair = next((p for p, k in kernels.items() if _is_kernel(name, k)), None)
            if pair is None:
                continue
            order = seen.setdefault(pair, [])
            if pid not in order:
                order.append(pid)
            key = (pair, "orig" if order.index(pid) == 0 else "fix")
        out.setdefault(key, []).append(us)
    return out


def summarize_pair(rounds: list[dict[tuple[str, str], list[float]]], name: str, kind: str) -> dict[str, object]:
    """Timing entry of one pair from every round's ``split_round`` result.

    Per program run the launch durations are summed (a program may launch different sizes); the achieved
    speedup (of the fix, or of a nothing-to-gain kernel's probe fix.cu) is the median over rounds of
    orig-run / fix-run, spread the min and max of those ratios.
    Raises ValueError when a round has no launch of a variant.
    """
    if not rounds:
        raise ValueError("no timing round ran")
    # a nothing-to-gain kernel may carry a probe (fix.cu: its top advice applied) to show the advice does not pay
    probe = kind == "nothing_to_gain" and any(timing.get((name, "fix")) for timing in rounds)
    variants = ["orig"] if kind == "nothing_to_gain" and not probe else ["orig", "fix"]
    per: dict[str, list[list[float]]] = {}
    for v in variants:
        per[v] = []
        for r, timing in enumerate(rounds, 1):
            if not timing.get((name, v)):
                raise ValueError(f"round {r}: no timed launch of {name}/{v} (build, run or ncu failed?)")
            per[v].append(timing[(name, v)])
    entry: dict[str, object] = {"kind": kind, "rounds": len(per["orig"])}
    for v in variants:
        runs = [sum(r) for r in per[v]]
        entry[f"{v}_us"] = per[v]
        entry[f"run_{v}_us"] = runs
        entry[f"median_{v}_us"] = statistics.median(runs) if runs else None
        entry[f"launches_{v}"] = len(per[v][0]) if per[v] else 0
    if "fix" in variants:
        ratios = [o / f for o, f in zip(entry["run_orig_us"], entry["run_fix_us"], strict=True)]  # type: ignore[call-overload]
        entry["ratios"] = ratios
        entry["achieved"] = statistics.median(ratios) if ratios else None
        entry["spread"] = [min(ratios), max(ratios)] if ratios else None
    return entry


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "meta":
        meta = pair_meta(Path(argv[1]))
        flags = list(meta.get("nvcc_flags", []))  # type: ignore[call-overload]
        print(meta["kernel"])
        print(meta["kind"])
        print(" ".join(flags))
        print(" ".join(flags + list(meta.get("fix_nvcc_flags", []))))  # type: ignore[call-overload]
        return 0
    if len(argv) >= 4 and argv[0] == "summarize":
        logdir, out, n_rounds, names = Path(argv[1]), Path(argv[2]), int(argv[3]), argv[4:]
        table = json.loads(out.read_text()) if out.exists() else {}
        pairs = table.setdefault("pairs", {})
        pairs_dir = out.parent / "pairs"  # OUT.json sits beside the set's pairs/ folder
        metas = {n: pair_meta(pairs_dir / n) for n in names}
        kernels = {n: str(m["kernel"]) for n, m in metas.items()}
        rounds = []
        for r in range(1, n_rounds + 1):
            csv_path, pids_path = logdir / f"timing.r{r}.csv", logdir / f"pids.r{r}.txt"
            csv_text = csv_path.read_text(errors="replace") if csv_path.exists() else ""
            pids_text = pids_path.read_text() if pids_path.exists() else ""
            rounds.append(split_round(csv_text, pids_text, kernels, str(csv_path)))
        if n_rounds == 0:  # a profiles-only run (ROUNDS=0) keeps the timings already there
            print("no timing rounds: timings left as they were")
            return 0
        failed = 0
        for name in names:
            kind = str(metas[name]["kind"])
            try:
                pairs[name] = summarize_pair(rounds, name, kind)
            except ValueError as e:
                print(f"{name}: {e}", file=sys.stderr)
                pairs[name] = {"kind": kind, "error": str(e)}
                failed += 1
        table["pairs"] = dict(sorted(pairs.items()))
        out.write_text(json.dumps(table, indent=1) + "\n")
        print(f"{'pair':24s} {'orig us/run':>12s} {'fix us/run':>11s} {'achieved':>9s} {'spread':>15s}")
        for name in names:
            ent = pairs[name]
            if "error" in ent:
                print(f"{name:24s} ERROR {ent['error'][:60]}")
                continue
            mo, mf = ent.get("median_orig_us"), ent.get("median_fix_us")
            ach, sp = ent.get("achieved"), ent.get("spread")
            tail = f"{mf:11.1f} {ach:8.3f}x  {sp[0]:.3f}-{sp[1]:.3f}" if mf else f"{'-':>11s}"
            print(f"{name:24s} {mo:12.1f} {tail}")
        return 1 if failed else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
