"""The ``warpwise`` command line (DESIGN.md "Command-line contract").

Sub-commands import their machinery lazily so ``warpwise profile`` runs where only the standard
library is installed (a bare GPU box).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path


def _cmd_profile(args: argparse.Namespace) -> int:
    from warpwise.analysis.profile.collect import ProfileError, profile

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    try:
        res = profile(command, Path(args.output), ncu=args.ncu)
    except ProfileError as e:
        print(f"warpwise profile: {e}", file=sys.stderr)
        return 2
    print(f"report: {res.report}")
    for c in res.cubins:
        print(f"cubin:  {c}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every sub-command."""
    p = argparse.ArgumentParser(prog="warpwise", description="CUDA performance advisor")
    sub = p.add_subparsers(dest="cmd", required=True)

    adv = sub.add_parser("advise", help="analyse a profile and print advice for CUDA sources")
    adv.add_argument("sources", nargs="+", help=".cu/.cuh files (or an example folder)")
    adv.add_argument("--profile", help=".ncu-rep report (default: found next to SOURCE)")
    adv.add_argument("--binary", help=".cubin, or executable/shared library holding cubins")
    adv.add_argument("--format", choices=["text", "json", "sarif", "html"], default="text")
    adv.add_argument("--top", type=int, default=10, help="hot lines / advice per kernel (>= 1)")
    adv.add_argument("--kernel", help="only kernels whose name contains this")

    sub.add_parser("lsp", help="language server on stdio")

    rw = sub.add_parser("rewrite", help="dynamic-parallelism rewrite of a device-side launch")
    from warpwise.server.rewrite_cmd import add_arguments as add_rewrite_arguments

    add_rewrite_arguments(rw)

    tune = sub.add_parser("tune", help="search a faster SASS schedule for a kernel on the GPU (SIP)")
    from warpwise.server.tune_cmd import add_arguments as add_tune_arguments

    add_tune_arguments(tune)

    prof = sub.add_parser("profile", help="run COMMAND under Nsight Compute (needs a GPU)")
    prof.add_argument("-o", "--output", default="warpwise.ncu-rep")
    prof.add_argument("--ncu", help="path of ncu")
    prof.add_argument("command", nargs=argparse.REMAINDER)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``warpwise`` console script; returns the exit code.

    A closed output pipe (``warpwise advise ... | head``) ends the command quietly, as Unix tools do.
    """
    try:
        return _run(argv)
    except BrokenPipeError:
        import os

        # stdout is gone: point it at devnull so the interpreter's final flush does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a tool killed by a closed pipe


def _run(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.cmd == "profile":
        return _cmd_profile(args)
    if args.cmd == "advise":
        from warpwise.server.advise_cmd import run_advise

        return run_advise(args)
    if args.cmd == "rewrite":
        from warpwise.server.rewrite_cmd import run_rewrite

        return run_rewrite(args)
    if args.cmd == "tune":
        from warpwise.server.tune_cmd import run_tune

        return run_tune(args)
    if args.cmd == "lsp":
        from warpwise.server.lsp import serve

        serve()
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
