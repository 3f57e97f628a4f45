"""The profile-guided choice on the DP benchmark, computed here from the ncu reports that bench/dp/gpu.sh
took of the CDP originals, and looked up in the sweep that the same run timed.

  python bench/dp/plan_eval.py RESULTS_DIR [--profiles DIR ...]

RESULTS_DIR: an unpacked dp.tar.gz (results.json, profiles/). A report example@input.ncu-rep is taken
from RESULTS_DIR/profiles, else from the --profiles folders in order (gpu.sh profiles the xl inputs;
the large/small reports of the same kernels are committed under bench/dp/results_h200/profiles, the
default); where a folder holds one report per sampled launch (``example@input.l<k>.ncu-rep``: gpu.sh
profiles multi-round programs at launches spread over the run) the plan reads them together.
Writes RESULTS_DIR/plans.json: per benchmark@input the plan (choice, reasons), the build that
holds it, its time, the default choice (no profile) and its time, the profile facts (all DpFacts fields)
and the launch context, so bench/dp/plan_loo.py can re-run the rule without the reports. Needs warpwise
(libclang, the ncu report reader).
"""

from __future__ import annotations

import argparse
import atexit
import dataclasses
import json
import lzma
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sweep import EXAMPLES, INPUTS, NO_LAUNCH, build_name  # noqa: E402
from warpwise.analysis.rewrite import find_launches  # noqa: E402
from warpwise.analysis.rewrite.plan import Choice, Plan, dp_facts, launch_context, plan_launch  # noqa: E402

COMMITTED_PROFILES = ROOT / "bench" / "dp" / "results_h200" / "profiles"


def build_of(choice: Choice) -> str:
    """The sweep build holding ``choice`` (factor 1 is the coarsened copy with WARPWISE_CFACTOR=1 there;
    the threshold 2^31 - 1 is the no-CDP build; threshold 0 is aggregation only)."""
    if choice.threshold >= NO_LAUNCH:
        return "nocdp"
    if choice.threshold == 0:
        return build_name("agg", choice.granularity, None, None)
    if choice.granularity is None:
        return build_name("tc", None, choice.threshold, choice.factor)
    return build_name("tca", choice.granularity, choice.threshold, choice.factor)


def lookup(plan: Plan, times: dict[tuple[str, str], float], key: str) -> tuple[str, float | None, str | None]:
    """(build, time, note) of ``plan`` on ``key`` (example@input). When the choice runs every profiled child
    grid in its parent thread (Plan.all_serial) and its own build has no time (skipped at the deadline),
    the no-CDP build's time stands in, with a note: on that input both take the serial branch for every
    child (the child grids are all below the threshold; the two builds' SASS differ only in the
    threshold constant)."""
    b = build_of(plan.choice)
    t = times.get((key, b))
    if t is None and plan.all_serial and (key, "nocdp") in times:
        return b, times[(key, "nocdp")], f"{b} not timed in this run: the no-CDP time stands in (same serial path)"
    return b, t, None


def reports_for(results_dir: Path, extra: list[Path], key: str) -> list[Path]:
    """The ncu reports of ``key`` (example@input), from the first folder that holds any: RESULTS_DIR/profiles,
    then ``extra`` in order. A folder holds either one report ``key.ncu-rep`` (a window of consecutive
    launches, or the whole run of a single-launch program) or one report per sampled launch,
    ``key.l<k>.ncu-rep`` (gpu.sh: launches spread over the run, bench/dp/schedule.py); the plan reads all of
    them together, unless the set is not the one gpu.sh planned (profile_jobs.txt beside the folder: a
    sample cut short by the time limit). Reports may be xz-compressed (``.ncu-rep.xz``, a tenth of the
    size: the working tree must stay small enough to travel to the GPU machine); those are unpacked into
    a temporary folder."""
    for d in [results_dir / "profiles", *extra]:
        spread = sorted(d.glob(f"{key}.l*.ncu-rep")) or sorted(d.glob(f"{key}.l*.ncu-rep.xz"))
        spread.sort(key=lambda p: int(p.name[len(key) + 2:].split(".")[0]))  # by launch index
        want = planned(d.parent / "profile_jobs.txt").get(key)
        if spread and want is not None and [int(p.name[len(key) + 2:].split(".")[0]) for p in spread] != want:
            spread = []  # a sample cut short by gpu.sh's time limit leans to the early launches: not used
        found = spread or [p for p in (d / f"{key}.ncu-rep", d / f"{key}.ncu-rep.xz") if p.exists()][:1]
        if found:
            return [unpack_report(p) if p.suffix == ".xz" else p for p in found]
    return []


def planned(jobs: Path) -> dict[str, list[int]]:
    """example@input -> the launch indices gpu.sh set out to profile (its profile_jobs.txt, written by
    bench/dp/schedule.py); a program whose round count was not known beforehand (``?``) is left out."""
    out: dict[str, list[int]] = {}
    if jobs.is_file():
        for ln in jobs.read_text().splitlines():
            p = ln.split("\t")
            if len(p) == 4 and p[3] != "?":
                out[f"{p[0]}@{p[2]}"] = [int(x) for x in p[3].split(",")]
    return out


_UNPACKED = Path(tempfile.mkdtemp(prefix="warpwise-dp-reports-"))
_ORIGIN: dict[Path, Path] = {}  # unpacked report -> the committed .xz it came from
atexit.register(shutil.rmtree, _UNPACKED, True)


def unpack_report(packed: Path) -> Path:
    """``name.ncu-rep.xz`` decompressed to ``name.ncu-rep`` in a temporary folder removed at exit."""
    out = _UNPACKED / packed.name.removesuffix(".xz")
    _ORIGIN[out] = packed.resolve()
    if not out.exists():
        with lzma.open(packed) as src, out.open("wb") as dst:
            shutil.copyfileobj(src, dst)
    return out


def evaluate(results_dir: Path, extra: list[Path]) -> dict[str, dict[str, object]]:
    """Plans and their sweep times per ``example@input``."""
    from warpwise.analysis.profile.ncu import load_profiles

    data = json.loads((results_dir / "results.json").read_text())
    times = {(f"{r['example']}@{r['input']}", str(r["variant"])): float(r["time_ms"]) for r in data["rows"]
             if r["ok"] and r["time_ms"] is not None}
    out: dict[str, dict[str, object]] = {}
    for ex, child in EXAMPLES.items():
        path = ROOT / "examples" / "dp" / ex / f"{ex}.cu"
        rel = f"examples/dp/{ex}/{ex}.cu"
        source = path.read_text()
        (la,) = [x for x in find_launches(source, rel) if x.child == child]
        ctx = launch_context(source, rel, la.line)
        for inp in INPUTS:
            reps = reports_for(results_dir, extra, f"{ex}@{inp}")
            origins = [_ORIGIN.get(r, r) for r in reps]
            shown = [str(o.relative_to(ROOT) if o.is_relative_to(ROOT) else o) for o in origins]
            entry: dict[str, object] = {"reports": shown,
                                        "context": {"parent": ctx.parent, "recursive": ctx.recursive,
                                                    "allowed": sorted(ctx.allowed), "grid_ok": ctx.grid_ok,
                                                    "child_block": ctx.child_block, "in_loop": ctx.in_loop}}
            profiles = [kp for r in reps for kp in load_profiles(r)] if reps else None
            plan = plan_launch(source, rel, la.line, profiles)
            default = plan_launch(source, rel, la.line, None)
            for key, p in (("plan", plan), ("default", default)):
                b, t, note = lookup(p, times, f"{ex}@{inp}")
                entry[key] = {"choice": p.choice.label, "build": b, "time_ms": t, "note": note,
                              "reasons": p.reasons, "profile_guided": p.facts is not None}
            f = dp_facts(profiles, ctx.parent, recursive=ctx.recursive) if profiles else None
            if f is not None:
                entry["dp_facts"] = dataclasses.asdict(f)
                entry["facts"] = {"child_launches": f.child_launches, "child_threads": f.child_threads,
                                  "mean_child_threads": round(f.mean_child_threads, 1),
                                  "mean_launched_threads": round(f.child_threads_launched / f.child_launches, 1)
                                  if f.child_launches else None,
                                  "parent_threads": f.parent_threads, "runtime_share": round(f.runtime_share, 3),
                                  "parent_share": round(f.parent_share, 3), "samples": f.samples}
            out[f"{ex}@{inp}"] = entry
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path, help="unpacked dp.tar.gz of bench/dp/gpu.sh")
    ap.add_argument("--profiles", type=Path, action="append", default=None,
                    help=f"more folders of example@input.ncu-rep (default: {COMMITTED_PROFILES.relative_to(ROOT)})")
    a = ap.parse_args(argv)
    plans = evaluate(a.results, a.profiles if a.profiles is not None else [COMMITTED_PROFILES])
    (a.results / "plans.json").write_text(json.dumps(plans, indent=1) + "\n")
    print("| benchmark | child launches (profiled parent launches) | mean useful / launched child threads | "
          "device-runtime share of samples | profile-guided choice |")
    print("|---|---:|---:|---:|---|")
    for k, e in plans.items():
        f = e.get("facts")
        if isinstance(f, dict):
            print(f"| {k} | {f['child_launches']} | {f['mean_child_threads']} / {f['mean_launched_threads']} | "
                  f"{100 * f['runtime_share']:.0f}% | {e['plan']['choice']} |")  # type: ignore[index]
    print()
    for k, e in plans.items():
        p, d = e["plan"], e["default"]
        print(f"{k:18s} {p['choice']:55s} {p['build']:28s} {p['time_ms']}  default {d['build']} {d['time_ms']}")  # type: ignore[index]
    return 0


if __name__ == "__main__":
    sys.exit(main())
