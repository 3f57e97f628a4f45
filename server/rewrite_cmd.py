"""``warpwise rewrite threshold|coarsen|aggregate|plan SOURCE.cu --launch LINE ...`` (DESIGN.md rewrites).

Prints the rewritten file to stdout, writes it with ``-o OUT`` (never onto SOURCE itself: refused, exit 2), or
replaces SOURCE with ``--in-place`` (said on stderr). ``plan`` chooses threshold, coarsening
factor and aggregation granularity from a profile of the CDP program (``--profile report.ncu-rep``;
without one, the measured default), prints the choice, why, and the alternatives, and with ``-o``
writes the file rewritten with the choice (``--alternative K``: the K-th alternative instead). Bad input
(missing file, no launch on the line, a transform that does not apply) prints
``warpwise rewrite: <reason>`` on stderr and returns 2.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

from warpwise.analysis.bounded import InputFileError, read_bytes


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of the ``rewrite`` sub-command (server/cli.py registers them)."""
    p.add_argument("transform", choices=["threshold", "coarsen", "aggregate", "plan"],
                   help="a transform, or plan: the profile-guided combination")
    p.add_argument("source", help=".cu file holding the device-side launch")
    p.add_argument("--launch", type=int, required=True, metavar="LINE",
                   help="1-based line on which the device-side launch starts")
    p.add_argument("--granularity", choices=["warp", "block", "multiblock", "grid"], default="block",
                   help="aggregation granularity (aggregate only; default block)")
    p.add_argument("--threshold", type=int, default=None, metavar="N",
                   help="default of WARPWISE_THRESHOLD (threshold) or WARPWISE_AGG_THRESHOLD (aggregate, warp/block)")
    p.add_argument("--factor", type=int, default=None, metavar="N", help="default of WARPWISE_CFACTOR (coarsen)")
    p.add_argument("--group-blocks", type=int, default=None, metavar="N",
                   help="default of WARPWISE_AGG_GRANULARITY, parent blocks per group "
                   "(aggregate --granularity multiblock)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("-o", "--output", default=None, metavar="OUT.cu",
                     help="write here instead of stdout (another file than SOURCE: see --in-place)")
    out.add_argument("--in-place", action="store_true",
                     help="replace SOURCE with the rewritten file (atomically; plan: with the choice)")
    p.add_argument("--profile", action="append", default=[], metavar="REPORT.ncu-rep",
                   help="plan: Nsight Compute report(s) of the CDP program (its parent kernel's launches)")
    p.add_argument("--alternative", type=int, default=0, metavar="K",
                   help="plan -o: apply the K-th alternative (1-based, as listed) instead of the choice")


def run_rewrite(args: argparse.Namespace) -> int:
    """Run the ``rewrite`` sub-command; returns the exit code (0 ok, 2 bad input)."""
    from warpwise.analysis.encoding import decode_source
    from warpwise.analysis.rewrite import RewriteError, apply_edits, rewrite

    src = Path(args.source)
    try:  # bytes as they are: no newline translation, a BOM kept (issue 13: -o turned CRLF into LF)
        st = decode_source(read_bytes(src, "source"), src)
    except InputFileError as e:
        print(f"warpwise rewrite: cannot read {e}", file=sys.stderr)
        return 2
    if st.first_non_utf8 is not None:  # a Latin-1 comment must not block a rewrite: its bytes are kept
        print(f"warpwise rewrite: note: {src} is not UTF-8 (byte {st.first_non_utf8}): edited as a single-byte "
              "encoding, every byte outside the edits kept as it is", file=sys.stderr)
    text = st.text
    if args.transform != "aggregate" and args.granularity != "block":
        print(f"warpwise rewrite: --granularity applies to aggregate only, not {args.transform}", file=sys.stderr)
        return 2
    if getattr(args, "group_blocks", None) is not None and args.granularity != "multiblock":
        print("warpwise rewrite: --group-blocks applies to aggregate --granularity multiblock only", file=sys.stderr)
        return 2
    if args.factor is not None and args.transform != "coarsen":
        print(f"warpwise rewrite: --factor applies to coarsen only, not {args.transform}", file=sys.stderr)
        return 2
    if args.output:
        from warpwise.analysis.output import input_clobbered, output_problem

        if (problem := output_problem(args.output)) is not None:  # a FIFO/device/folder/link: never written
            print(f"warpwise rewrite: -o {problem}", file=sys.stderr)
            return 2
        if _same_file(args.output, src):  # -o never replaces the user's source: that takes --in-place
            print(f"warpwise rewrite: -o {args.output}: is SOURCE itself; -o never overwrites the source: pass "
                  "--in-place to rewrite it in place (or use the editor's code action), or name another file",
                  file=sys.stderr)
            return 2
        # over a report it would lose the profile
        if (hit := input_clobbered(args.output, list(getattr(args, "profile", None) or []))) is not None:
            print(f"warpwise rewrite: -o {args.output}: is the input {hit}; name another file to write",
                  file=sys.stderr)
            return 2
    if getattr(args, "in_place", False):
        from warpwise.analysis.output import output_problem

        if (problem := output_problem(src)) is not None:  # a link is replaced by nothing, as with -o
            print(f"warpwise rewrite: --in-place {problem}", file=sys.stderr)
            return 2
        args.output = str(src)
    if args.transform == "plan":
        return _run_plan(args, src, text, st.encode)
    try:
        edits = rewrite(text, str(src), args.transform, args.launch, granularity=args.granularity,
                        threshold=args.threshold, factor=args.factor,
                        group_blocks=getattr(args, "group_blocks", None))
        result = apply_edits(text, edits)
    except RewriteError as e:
        print(f"warpwise rewrite: {e}", file=sys.stderr)
        return 2
    rc = _write_output(args.output, st.encode(result))
    if rc == 0 and getattr(args, "in_place", False):  # say that the source changed
        print(f"warpwise rewrite: rewrote {src} in place ({len(edits)} edit{'s' if len(edits) != 1 else ''})",
              file=sys.stderr)
    return rc


def _same_file(output: str, src: Path) -> bool:
    """Whether ``output`` names ``src`` (the same path once resolved, or the same inode)."""
    try:
        return Path(output).resolve() == src.resolve() or Path(output).samefile(src)
    except OSError:
        return False


def _write_output(output: str | None, data: bytes) -> int:
    """Write ``data`` (the rewritten file in the source's encoding) to ``output`` (stdout when None), with
    no newline translation: the file is byte-identical to the source outside the edited ranges. Returns
    the exit code."""
    if output:
        from warpwise.analysis.output import write_atomically

        try:
            write_atomically(output, data)
        except OSError as e:
            print(f"warpwise rewrite: cannot write {output}: {e.strerror or e}", file=sys.stderr)
            return 2
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    return 0


def _run_plan(args: argparse.Namespace, src: Path, text: str, encode: Callable[[str], bytes]) -> int:
    from warpwise.analysis.profile.ncu import load_profiles
    from warpwise.analysis.rewrite import RewriteError, apply_edits
    from warpwise.analysis.rewrite.plan import plan_edits, plan_launch

    given = list(getattr(args, "profile", None) or [])
    reports, notes = (given, []) if given else _reports_beside(src)
    if args.output:
        from warpwise.analysis.output import input_clobbered

        if (hit := input_clobbered(args.output, list(reports))) is not None:
            print(f"warpwise rewrite: -o {args.output}: is the input {hit}; name another file to write",
                  file=sys.stderr)
            return 2
    profiles = []
    for rep in reports:
        try:
            profiles += load_profiles(rep)
        except Exception as e:  # a bad report is the user's input: name it
            if given:
                print(f"warpwise rewrite: cannot read profile {rep}: {e}", file=sys.stderr)
                return 2
            notes.append(f"the report found beside the source, {rep}, cannot be read ({e}): not used")
    try:
        plan = plan_launch(text, str(src), args.launch, profiles or None)
        k = getattr(args, "alternative", 0) or 0
        if k < 0 or k > len(plan.alternatives):
            print(f"warpwise rewrite: --alternative {k}: there are {len(plan.alternatives)} alternatives",
                  file=sys.stderr)
            return 2
        if given and profiles and plan.facts is None and (
                m := re.match(r"the profile holds no launch of the parent `([^`]+)`", plan.reasons[0] if plan.reasons
                              else "")):
            # a report of another program: refused, as advise refuses a report with no samples in the sources
            kernels = ", ".join(sorted({kp.name.split("(")[0].split("<")[0].strip() for kp in profiles}))
            print(f"warpwise rewrite: {', '.join(reports)} has no launch of `{m.group(1)}`, the parent of "
                  f"{src}:{args.launch}; it covers {kernels or 'no kernel'}", file=sys.stderr)
            return 2
        choice = plan.alternatives[k - 1] if k else plan.choice
        result = apply_edits(text, plan_edits(text, str(src), args.launch, choice)) if args.output else None
    except RewriteError as e:
        print(f"warpwise rewrite: {e}", file=sys.stderr)
        return 2
    out = sys.stdout
    print(f"{src}:{args.launch}: {'profile-guided' if plan.facts else 'default'}: {plan.choice.label}", file=out)
    for n in notes:
        print(f"  - {n}", file=out)
    for r in plan.reasons:
        print(f"  - {r}", file=out)
    print("  alternatives:", file=out)
    for i, a in enumerate(plan.alternatives, 1):
        print(f"    {i}. {a.label}", file=out)
    if args.output and result is not None:
        from warpwise.analysis.output import write_atomically

        try:  # bytes as they are, like the other transforms' -o
            write_atomically(args.output, encode(result))
        except OSError as e:
            print(f"warpwise rewrite: cannot write {args.output}: {e.strerror or e}", file=sys.stderr)
            return 2
        print(f"wrote {args.output}{' in place' if getattr(args, 'in_place', False) else ''} ({choice.label})",
              file=out)
    return 0


def _reports_beside(src: Path) -> tuple[list[str], list[str]]:
    """The Nsight Compute reports found beside ``src`` the way ``advise`` finds them (pipeline.discover), and
    notes saying which are used: a CSV export alone cannot serve (it holds no samples of the device runtime,
    which the plan weighs)."""
    from warpwise.analysis.pipeline import discover

    found, _ = discover([src])
    reports = [str(r) for r in found if r.suffix == ".ncu-rep"]
    notes = [f"using the report found beside the source: {', '.join(reports)} (--profile names another)"] \
        if reports else []
    notes += [f"{c} is an ncu CSV export: the plan needs the .ncu-rep report (device-runtime samples); not used"
              for c in found if c.suffix == ".csv"]
    return reports, notes


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (``python -m warpwise.server.rewrite_cmd``) until cli.py wires the sub-command."""
    p = argparse.ArgumentParser(prog="warpwise rewrite", description="dynamic-parallelism source rewrites")
    add_arguments(p)
    return run_rewrite(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
