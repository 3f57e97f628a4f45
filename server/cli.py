"""The ``warpwise`` command line (DESIGN.md "Command-line contract").

Sub-commands import their machinery lazily so ``warpwise profile`` runs where only the standard
library is installed (a bare GPU box).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

#: Where `warpwise profile` writes its report when -o is not given (relative to the current folder).
DEFAULT_REPORT = "warpwise.ncu-rep"


def _cmd_profile(args: argparse.Namespace) -> int:
    from warpwise.analysis.profile.collect import (
        SHORT_KERNEL_SAMPLING_INTERVAL,
        NcuOptions,
        ProfileError,
        profile,
    )

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if args.short_kernels and args.sampling_interval is not None:
        print("warpwise profile: --short-kernels sets --sampling-interval "
              f"{SHORT_KERNEL_SAMPLING_INTERVAL}; give one of them", file=sys.stderr)
        return 2
    interval = SHORT_KERNEL_SAMPLING_INTERVAL if args.short_kernels else args.sampling_interval
    opts = NcuOptions(kernel=args.kernel, launch_count=args.launch_count, launch_skip=args.launch_skip,
                      sampling_interval=interval,
                      nvtx_include=list(args.nvtx_include or []), replay_mode=args.replay_mode,
                      extra=list(getattr(args, "ncu_args", []) or []))
    from warpwise.analysis.output import report_output_problem

    if (problem := report_output_problem(args.output)) is not None:  # ncu would write into a FIFO/device
        print(f"warpwise profile: -o {problem}", file=sys.stderr)
        return 2
    try:
        res = profile(command, Path(args.output), ncu=args.ncu, extra_ncu_args=opts, keep_cubins=not args.no_cubins,
                      binaries=list(args.binary or []), timeout=args.timeout or None)
    except ProfileError as e:
        print(f"warpwise profile: {e}", file=sys.stderr)
        return 2
    print(f"report: {res.report}")
    for c in res.cubins:
        print(f"cubin:  {c}")
    for b in res.skipped:
        print(f"note:   {b} holds no device code (no cubin saved); name the library that holds the kernels "
              "with --binary (docs/cli.md)")
    return 0


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("warpwise")
    except Exception:  # running from a source tree that was never installed
        return "unknown (not installed)"


class _VersionAction(argparse.Action):
    """``--version``: print ``warpwise VERSION`` and exit 0. The version is looked up only when the flag is given:
    ``importlib.metadata`` and its distribution scan cost ~4 MiB of RSS and ~10 ms in every other command."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str = "show program's version number and exit") -> None:
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        print(f"warpwise {_version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every sub-command."""
    p = argparse.ArgumentParser(prog="warpwise", description="CUDA performance advisor")
    p.add_argument("--version", action=_VersionAction)
    sub = p.add_subparsers(dest="cmd", required=True)

    adv = sub.add_parser("advise", help="analyse a profile and print advice for CUDA sources")
    adv.add_argument("sources", nargs="+", help=".cu/.cuh files (or an example folder)")
    adv.add_argument("--profile", action="append",
                     help=".ncu-rep report, or an ncu CSV export (repeat for its pages: x.source.csv, x.details.csv); "
                          "default: found next to SOURCE")
    adv.add_argument("--binary", help=".cubin, or executable/shared library holding cubins")
    adv.add_argument("--format", choices=["text", "json", "sarif", "html"], default="text")
    adv.add_argument("--top", type=int, default=10, help="hot lines / advice per kernel (>= 1)")
    adv.add_argument("--docs-url", metavar="URL",
                     help="SARIF: absolute URL of warpwise's documentation (ending in /) for the rules' helpUri "
                          "(URL + docs/optimizers.md#ID); without it the rules have no helpUri")
    adv.add_argument("-o", "--output", metavar="FILE",
                     help="write the report to FILE (atomically: complete or not at all) instead of stdout")
    adv.add_argument("--kernel", help="only kernels whose name contains this")
    adv.add_argument("--path-map", action="append", metavar="OLD=NEW", default=[],
                     help="map a recorded source path prefix (the build machine's) to a local folder; "
                          "repeatable, tried before suffix matching")

    sub.add_parser("lsp", help="language server on stdio")

    rw = sub.add_parser("rewrite", help="dynamic-parallelism rewrite of a device-side launch")
    from warpwise.server.rewrite_cmd import add_arguments as add_rewrite_arguments

    add_rewrite_arguments(rw)

    tune = sub.add_parser("tune", help="search a faster SASS schedule for a kernel on the GPU (SIP)")
    from warpwise.server.tune_cmd import add_arguments as add_tune_arguments

    add_tune_arguments(tune)

    prof = sub.add_parser(
        "profile", help="run COMMAND under Nsight Compute (needs a GPU)",
        usage="warpwise profile [-o REPORT.ncu-rep] [options] [--ncu-args NCU_OPTION...] -- COMMAND ARGS...",
        description="Runs COMMAND under ncu with the sections warpwise reads, writes REPORT.ncu-rep and saves "
                    "the cubins (with device code) of the program beside it. Options after --ncu-args, up to "
                    "--, go to ncu verbatim (see docs/cli.md).")
    prof.add_argument("-o", "--output", default=DEFAULT_REPORT, metavar="REPORT.ncu-rep",
                      help=f"report to write (default: {DEFAULT_REPORT} in the current folder; .ncu-rep is "
                           "appended when the name lacks it); the program's cubins are saved beside it")
    prof.add_argument("--ncu", help="path of ncu")
    prof.add_argument("-k", "--kernel", help="ncu --kernel-name: profile only kernels with this name "
                                             "(or regex:PATTERN)")
    prof.add_argument("-c", "--launch-count", type=int, help="ncu --launch-count: profile N launches")
    prof.add_argument("--launch-skip", type=int, help="ncu --launch-skip: skip the first N launches that match")
    prof.add_argument("--sampling-interval", type=int, metavar="N",
                      help="ncu --warp-sampling-interval N (0..31: a sample every 2^(5+N) cycles)")
    prof.add_argument("--short-kernels", action="store_true",
                      help="use the sampling interval warpwise recommends for short kernels (0: every 32 cycles)")
    prof.add_argument("--nvtx-include", action="append", metavar="RANGE",
                      help="ncu --nvtx --nvtx-include RANGE (repeatable)")
    prof.add_argument("--replay-mode", choices=["kernel", "application", "range", "app-range"],
                      help="ncu --replay-mode")
    prof.add_argument("--binary", action="append", metavar="FILE",
                      help="take cubins from this executable/shared library (repeatable; default: COMMAND's "
                           "program), e.g. a PyTorch extension's .so")
    prof.add_argument("--no-cubins", action="store_true", help="save no cubins")
    prof.add_argument("--timeout", type=float, default=0, help="seconds before ncu and the program are killed "
                                                                "(0: none)")
    prof.add_argument("command", nargs=argparse.REMAINDER)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``warpwise`` console script; returns the exit code.

    A closed output pipe (``warpwise advise ... | head``) ends the command quietly, as Unix tools do; Ctrl-C
    ends it with 130 and a short message, and an output that cannot be written (a full disk, a closed stdout)
    with 1 and the reason — never a traceback.
    """
    import os

    try:
        if sys.stdout is None:  # started with stdout closed (>&-)
            print("warpwise: standard output is closed", file=sys.stderr)
            return 1
        rc = _run(argv)
        from warpwise.server import interrupt

        if interrupt.interrupted():  # Ctrl-C that a callee swallowed: the command still ends as interrupted
            interrupt.say()
            return 130
        interrupt.finish()  # advise/rewrite: a Ctrl-C from here to the process's end gives the message and 130
        return rc
    except BrokenPipeError:
        # stdout is gone: point it at devnull so the interpreter's final flush does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a tool killed by a closed pipe
    except KeyboardInterrupt:
        from warpwise.server import interrupt

        interrupt.say()
        return 130  # 128 + SIGINT
    except OSError as e:
        if e.filename is not None:
            raise  # an input error the commands did not catch: keep its traceback for a bug report
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except OSError:
            pass
        print(f"warpwise: cannot write the output: {e.strerror or e}", file=sys.stderr)
        return 1


def _run(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ncu_args: list[str] = []
    if argv and argv[0] == "profile":
        # `--ncu-args ... --` belongs to ncu: split it off before argparse sees it
        from warpwise.analysis.profile.collect import split_profile_argv

        own, ncu_args, command = split_profile_argv(argv[1:])
        argv = ["profile", *own, *(["--", *command] if command else [])]
    args = build_parser().parse_args(argv)
    args.ncu_args = ncu_args
    if args.cmd == "profile":
        return _cmd_profile(args)
    if args.cmd in ("advise", "rewrite"):
        from warpwise.server import interrupt

        interrupt.install()  # Ctrl-C ends them even when it lands inside a libclang callback
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
