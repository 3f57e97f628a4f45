"""What bench/dp/gpu.sh profiles and runs, and in which order (standard library only: it runs on the GPU box).

  python3 bench/dp/schedule.py profiles PREV_RAW SPREAD PROFILE_RE   # example parent input skips (or ?)
  python3 bench/dp/schedule.py groups BUILDS_TSV PREV_RAW NGPU ORDER   # example input gpu est_s

Profiles (issue 14: a window of the first launches of a multi-round program holds only its first rounds
— sssp's first six rounds held 12 of its child launches): a program whose parent kernel is launched once
per round is profiled at SPREAD launches spread evenly over one run, a systematic sample of its R host
launches: launch indices floor(i * R / SPREAD), i = 0..SPREAD-1 (one ncu process per launch, ``-c 1``).
R is the round count the program printed in a previous run (``rounds=`` / ``levels=`` of its RESULT
line in PREV_RAW); where there is none, ``?``: gpu.sh profiles launch 0 first and reads R from the
program's own output. Programs with one parent launch per run (B-tree, quadtree, histo) are profiled
whole, as before, and are not listed. PROFILE_RE selects ``example@input`` keys; the order is the
issue's priority (SSSP, whose window was wrong, first), small inputs first within a program.

Groups: every build of one ``example@input`` runs on one GPU in one go (side by side); groups are
ordered by ORDER (comma-separated regexes over ``example@input``; unmatched groups last) and carry an
estimated cost in seconds (the previous run's wall time of the group's builds, from PREV_RAW; a build
it did not time counts as the mean of that group's no-CDP and CDP builds; a group it did not run at all
counts as the same program's large group, twice), so gpu.sh starts a group only when it can finish before its deadline.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sweep import INPUTS, PROFILE

ORDER = ("sssp", "mst", "bfs", "color")  # multi-round programs, in the priority


def previous(raw: Path) -> dict[tuple[str, str], tuple[str, float | None]]:
    """(build, input) -> (RESULT line or status, wall seconds) of a previous run's raw.tsv (empty if absent)."""
    out: dict[tuple[str, str], tuple[str, float | None]] = {}
    if not raw.is_file():
        return out
    for ln in raw.read_text().splitlines():
        p = ln.split("\t")
        if len(p) < 2:
            continue
        res = p[3] if len(p) > 3 else p[2] if len(p) > 2 else ""
        # a run without a result (build failed, skipped, timed out) says nothing about its cost
        wall = float(p[4]) / 1000 if len(p) > 4 and p[4].strip().isdigit() and res.startswith("RESULT") else None
        out[(p[0], p[1])] = (res, wall)
    return out


def rounds(prev: dict[tuple[str, str], tuple[str, float | None]], ex: str, inp: str) -> int | None:
    """Host launches of the parent per run printed by the original (rounds= or levels=), else None."""
    line = prev.get((f"{ex}__original", inp), ("", None))[0]
    m = re.search(r"\b(?:rounds|levels)=(\d+)", line)
    return int(m.group(1)) if m and "PASS" in line else None


def spread(r: int, k: int) -> list[int]:
    """Launch indices of a systematic sample of ``k`` of ``r`` launches: floor(i * r / k), distinct."""
    k = min(k, r)
    return [i * r // k for i in range(k)]


def profile_jobs(prev_raw: Path, k: int, select: str) -> list[str]:
    lines = []
    prev = previous(prev_raw)
    for ex in ORDER:
        parent = PROFILE[ex][0]
        for inp in reversed(INPUTS):  # the cheap inputs first: a cut at the time limit leaves the costly
            if not re.search(select, f"{ex}@{inp}"):
                continue
            r = rounds(prev, ex, inp)
            skips = ",".join(map(str, spread(r, k))) if r else "?"
            lines.append(f"{ex}\t{parent}\t{inp}\t{skips}")
    return lines


def groups(builds_tsv: Path, prev_raw: Path, ngpu: int, order: str) -> list[str]:
    prev = previous(prev_raw)
    rows = [ln.rstrip("\n").split("\t") for ln in builds_tsv.read_text().splitlines() if ln.strip()]
    members: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        for inp in r[3].split(","):
            members.setdefault((r[0].split("__")[0], inp), []).append(r[0])

    def est(ex: str, inp: str, depth: int = 0) -> float:
        walls = [prev.get((b, inp), ("", None))[1] for b in members[(ex, inp)]]
        if all(w is None for w in walls) and depth == 0 and (ex, "large") in members and inp != "large":
            return 2 * est(ex, "large", 1)
        # a build not timed: the mean of the no-CDP and CDP runs (a threshold build launches fewer grids than CDP)
        known = [w for w in (prev.get((f"{ex}__{b}", inp), ("", None))[1] for b in ("nocdp", "original")) if w]
        stand_in = sum(known) / len(known) if known else 1.0
        return sum(w if w is not None else stand_in for w in walls)

    pats = [p for p in order.split(",") if p]

    def rank(g: tuple[str, str]) -> int:
        key = f"{g[0]}@{g[1]}"
        return next((i for i, p in enumerate(pats) if re.search(p, key)), len(pats))

    load = [0.0] * ngpu
    out = []
    for g in sorted(members, key=rank):  # stable: the manifest's order within one rank
        i = min(range(ngpu), key=lambda j: load[j])
        c = est(*g)
        load[i] += c
        out.append(f"{g[0]}\t{g[1]}\t{i}\t{c:.1f}")
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["profiles"] and len(argv) == 4:
        print("\n".join(profile_jobs(Path(argv[1]), int(argv[2]), argv[3])))
        return 0
    if argv[:1] == ["groups"] and len(argv) == 5:
        print("\n".join(groups(Path(argv[1]), Path(argv[2]), int(argv[3]), argv[4])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
