"""``warpwise advise``: analyse profiles for CUDA sources and print the report (text, json, sarif)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

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


def run_advise(args: argparse.Namespace) -> int:
    """Run the advise sub-command; returns the exit code (2 on unusable input)."""
    sources, problems = _sources(args.sources)
    for m in problems:
        print(f"warpwise advise: {m}", file=sys.stderr)
    if problems and not sources:
        return 2
    if args.profile:
        profiles = [Path(args.profile)]
        binaries = [Path(args.binary)] if args.binary else discover([Path(args.profile)])[1]
    else:
        profiles, found_bins = discover(sources)
        binaries = [Path(args.binary)] if args.binary else found_bins
        if not profiles:
            print("warpwise advise: no .ncu-rep report found next to "
                  f"{', '.join(map(str, args.sources))}; pass --profile REPORT.ncu-rep "
                  "(record one with `warpwise profile -o REPORT.ncu-rep -- ./app`)", file=sys.stderr)
            return 2
    analyses: list[Analysis] = []
    for rep in profiles:
        try:
            analyses.append(analyze(rep, binaries, sources, kernel=args.kernel))
        except InputError as e:
            print(f"warpwise advise: {e}", file=sys.stderr)
            return 2
    # keep only kernels with samples in the given sources (all kernels when none map)
    for a in analyses:
        mine = [k for k in a.kernels if any(p is not None for p in k.local.values())]
        a.kernels = mine or a.kernels
    if args.format == "json":
        from warpwise.analysis.report import to_json

        json.dump(to_json(analyses), sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif args.format == "sarif":
        from warpwise.analysis.report import to_sarif

        json.dump(to_sarif(analyses), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        from warpwise.analysis.report import render_text

        sys.stdout.write(render_text(analyses, top=args.top, root=Path.cwd()))
    errors = [err for a in analyses for err in a.errors]
    for err in errors:
        print(f"warpwise advise: {err}", file=sys.stderr)
    return 1 if errors and not any(a.kernels for a in analyses) else 0
