"""``warpwise advise``: analyse profiles for CUDA sources and print the report (text, json, sarif)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from warpwise.analysis.pipeline import Analysis, InputError, analyze, discover


def _sources(args_sources: list[str]) -> tuple[list[Path], list[str]]:
    sources: list[Path] = []
    problems: list[str] = []
    for s in args_sources:
        p = Path(s)
        if p.is_dir():
            sources.extend(sorted(x for x in p.rglob("*") if x.suffix in (".cu", ".cuh")))
        elif p.is_file():
            sources.append(p)
        else:
            problems.append(f"{s}: no such file or folder")
    return sources, problems


def _check_file(flag: str, value: str, suffixes: tuple[str, ...] | None = None) -> str | None:
    p = Path(value)
    if not p.exists():
        return f"{flag} {value}: no such file"
    if p.is_dir():
        return f"{flag} {value}: is a folder; pass the file itself"
    if suffixes and p.suffix not in suffixes:
        return f"{flag} {value}: expected a {' or '.join(suffixes)} file"
    return None


def run_advise(args: argparse.Namespace) -> int:
    """Run the advise sub-command; returns the exit code (2 on unusable input, 1 when nothing matched)."""
    if args.top is not None and args.top < 1:
        print("warpwise advise: --top must be at least 1", file=sys.stderr)
        return 2
    given = list(args.profile or [])
    problems = [m for m in (*(_check_file("--profile", g, (".ncu-rep", ".csv")) for g in given),
                            _check_file("--binary", args.binary) if args.binary else None) if m]
    from warpwise.analysis.profile.paths import parse_path_map

    try:
        path_map = parse_path_map(getattr(args, "path_map", None) or [])
    except ValueError as e:
        problems.append(f"--path-map: {e}")
        path_map = []
    sources, src_problems = _sources(args.sources)
    problems += src_problems
    for m in problems:
        print(f"warpwise advise: {m}", file=sys.stderr)
    if problems:
        return 2
    pages: list[Path] = []
    if given:
        # .ncu-rep reports are analysed one by one; all .csv files given are pages of one export
        profiles = [Path(g) for g in given if not g.endswith(".csv")]
        csvs = [Path(g) for g in given if g.endswith(".csv")]
        if csvs:
            profiles.append(csvs[0])
            pages = csvs[1:]
        binaries = [Path(args.binary)] if args.binary else discover([Path(given[0])])[1]
    else:
        profiles, found_bins = discover(sources)
        binaries = [Path(args.binary)] if args.binary else found_bins
        if not profiles:
            print("warpwise advise: no .ncu-rep report found next to "
                  f"{', '.join(map(str, args.sources))} (nor an ncu CSV export <stem>.source.csv); "
                  "pass --profile REPORT.ncu-rep "
                  "(record one with `warpwise profile -o REPORT.ncu-rep -- ./app`)", file=sys.stderr)
            return 2
    analyses: list[Analysis] = []
    for rep in profiles:
        try:
            analyses.append(analyze(rep, binaries, sources, kernel=args.kernel,
                                    pages=pages if rep.suffix == ".csv" else (), path_map=path_map))
        except InputError as e:
            print(f"warpwise advise: {e}", file=sys.stderr)
            return 2
    errors = [err for a in analyses for err in a.errors]
    if args.binary and errors:  # the binary the user named is unusable: say so and stop
        for err in errors:
            print(f"warpwise advise: {err}", file=sys.stderr)
        return 2
    found = [k for a in analyses for k in a.kernels]
    if args.kernel and not found:
        names = sorted({p.name for rep in profiles for p in _profiles_of(rep)})
        print(f"warpwise advise: no kernel matching '{args.kernel}' in {', '.join(map(str, profiles))}; "
              f"kernels there: {', '.join(names)}", file=sys.stderr)
        return 2
    # keep only kernels with samples in the given sources (a kernel without line information — built without
    # -lineinfo, or a CSV export of launch facts only — cannot be placed: keep it, its kernel-level advice still
    # applies and its notes say what it lacks)
    for a in analyses:
        a.kernels = [k for k in a.kernels if any(p is not None for p in k.local.values()) or not k.local]
        a._groups = None
    if found and not any(a.kernels for a in analyses):
        covered = sorted({Path(f).name for k in found for f in k.local})
        print(f"warpwise advise: {', '.join(map(str, profiles))} has no samples in "
              f"{', '.join(map(str, args.sources))}; it covers {', '.join(covered) or 'no source lines'}",
              file=sys.stderr)
        return 2
    if args.format == "json":
        from warpwise.analysis.report import to_json

        json.dump(to_json(analyses), sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif args.format == "html":
        from warpwise.server.findings import group_kernels
        from warpwise.server.profile_view import page_data, render_html

        sys.stdout.write(render_html(page_data(group_kernels(analyses)),
                                     title=f"warpwise · {', '.join(map(str, args.sources))}"))
    elif args.format == "sarif":
        from warpwise.analysis.report import to_sarif

        json.dump(to_sarif(analyses), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        from warpwise.analysis.report import render_text

        sys.stdout.write(render_text(analyses, top=args.top, root=Path.cwd()))
    for err in errors:
        print(f"warpwise advise: {err}", file=sys.stderr)
    return 0


def _profiles_of(rep: Path) -> list[Any]:
    from warpwise.analysis.pipeline import _load_profiles_cached

    try:
        return _load_profiles_cached(rep)
    except Exception:
        return []
