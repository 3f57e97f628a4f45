"""``warpwise advise``: analyse profiles for CUDA sources and print the report (text, json, sarif)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from warpwise.analysis.confine import set_roots
from warpwise.analysis.pipeline import SOURCE_SUFFIXES, Analysis, InputError, analyze, discover, unique_files


def _special(p: Path) -> str | None:
    """``is a character device, not a regular file`` (FIFO, socket, block device, a symbolic link loop), or
    None for a regular file or folder."""
    import errno
    import stat

    try:
        mode = p.stat().st_mode
    except OSError as e:
        if e.errno == errno.ELOOP:  # Path.exists() says False: "no such file" would hide it
            return "is a symbolic link that loops (too many levels of symbolic links); not read"
        return None
    kinds = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
             (stat.S_ISSOCK, "a socket"))
    kind = next((k for test, k in kinds if test(mode)), None)
    return None if kind is None else f"is {kind}, not a regular file; not read"


def _not_a_source(p: Path) -> str | None:
    """Why a regular file given as SOURCE is an input of another kind (a report, a CSV export, a binary) or
    not a source at all (a suffix not in ``SOURCE_SUFFIXES``, or bytes that are not text), or None."""
    suffix = p.suffix.lower()
    if suffix == ".ncu-rep":
        return f"is an Nsight Compute report, not a CUDA source: pass it as --profile {p}"
    if suffix == ".csv":
        return f"is a CSV file, not a CUDA source: an ncu export goes in --profile {p}"
    head: bytes | None
    try:
        with p.open("rb") as f:
            head = f.read(8192)
    except OSError:
        head = None
    if head is not None and head[:4] == b"\x7fELF":
        return f"is an ELF binary (cubin, executable or library), not a CUDA source: pass it as --binary {p}"
    if suffix not in SOURCE_SUFFIXES:  # README.md, a Makefile: say what it is, not "no report next to it"
        kind = f"a {p.suffix} file" if p.suffix else "a file without an extension"
        return (f"is not a CUDA source ({kind}): SOURCE is a file the kernels were compiled from, "
                f"{', '.join(SOURCE_SUFFIXES[:-1])} (or a Triton kernel's .py)")
    if head is None:
        return None
    from warpwise.analysis.encoding import not_text

    what = not_text(head)  # a report renamed .cu, a sparse or zero-filled file, UTF-16
    return None if what is None else f"is not a CUDA source: {what}"


def _sources(args_sources: list[str]) -> tuple[list[Path], list[str]]:
    sources: list[Path] = []
    problems: list[str] = []
    for s in args_sources:
        p = Path(s)
        if p.is_dir():
            sources.extend(sorted(x for x in p.rglob("*") if x.suffix in (".cu", ".cuh")))
        elif p.is_file():
            why = _not_a_source(p)
            if why is not None:
                problems.append(f"{s}: {why}")
            else:
                sources.append(p)
        elif (why := _special(p)) is not None:
            problems.append(f"{s}: {why}")
        else:
            problems.append(f"{s}: no such file or folder")
    return sources, problems


def _no_report_reasons(args_sources: list[str], sources: list[Path]) -> list[str]:
    """Why discovery found nothing where a user would expect it to: a folder SOURCE with no CUDA files, or a
    ``STEM.ncu-rep`` beside a source that is a folder or special file (discovery takes regular files only)."""
    out: list[str] = []
    for s in args_sources:
        p = Path(s)
        if p.is_dir() and not any(x.parent == p or p in x.parents for x in sources):
            out.append(f"{s}: is a folder with no .cu or .cuh files")
    folders = dict.fromkeys([*(Path(s) for s in args_sources if Path(s).is_dir()), *(p.parent for p in sources)])
    for d in folders:  # a launch-facts page alone is not a profile: say it was seen and what it lacks
        for page in sorted(x for x in d.iterdir() if x.name.endswith((".details.csv", ".raw.csv")) and x.is_file()):
            out.append(f"{page}: an ncu Details/Raw page export holds launch facts only, no source counters "
                       "(per-PC warp samples and stall reasons); export the Source page beside it "
                       f"(`ncu --import R.ncu-rep --page source --print-source sass --csv > {_page_stem(page)}"
                       ".source.csv`)")
    for src in sources:
        cand = src.with_suffix(".ncu-rep")
        if cand.is_dir():
            out.append(f"{cand}: is a folder, not a report")
        elif (why := _special(cand)) is not None:
            out.append(f"{cand}: {why}")
    return out


def _page_stem(page: Path) -> Path:
    """``dir/R`` for ``dir/R.details.csv`` or ``dir/R.raw.csv``."""
    return page.with_name(page.name.removesuffix(".csv").rsplit(".", 1)[0])


def _check_file(flag: str, value: str, suffixes: tuple[str, ...] | None = None) -> str | None:
    p = Path(value)
    if (why := _special(p)) is not None:
        return f"{flag} {value}: {why}"
    if not p.exists():
        return f"{flag} {value}: no such file"
    if p.is_dir():
        return f"{flag} {value}: is a folder; pass the file itself"
    if suffixes and p.suffix not in suffixes:
        return f"{flag} {value}: expected a {' or '.join(suffixes)} file"
    return None


def _check_binary(value: str) -> str | None:
    """_check_file for --binary, and a report, CSV export or CUDA source given there named as such."""
    problem = _check_file("--binary", value)
    if problem is not None:
        return problem
    kinds = {".ncu-rep": ("an Nsight Compute report", "pass it as --profile"),
             ".csv": ("a CSV file", "an ncu export goes in --profile"),
             ".cu": ("a CUDA source", "pass it as SOURCE"), ".cuh": ("a CUDA header", "pass it as SOURCE")}
    kind = kinds.get(Path(value).suffix.lower())
    if kind is None:
        return None
    return f"--binary {value}: is {kind[0]}, not a cubin or executable: {kind[1]} {value}"


def run_advise(args: argparse.Namespace) -> int:
    """Run the advise sub-command; returns the exit code (2 on unusable input, 1 when nothing matched)."""
    if args.top is not None and args.top < 1:
        return _fail(args, ["--top must be at least 1"])
    if getattr(args, "docs_url", None):
        from warpwise.analysis.advice.report import is_absolute_uri

        if not args.docs_url.endswith("/"):  # a base the docs paths are appended to: .../docs -> .../docs/
            args.docs_url += "/"
        if not is_absolute_uri(args.docs_url):
            return _fail(args, [f"--docs-url {args.docs_url}: not an absolute URI (SARIF 2.1.0 §3.49.12 requires "
                                "helpUri to be absolute), e.g. https://github.com/ORG/warpwise/blob/main/"])
    if (bad := _output_problem(getattr(args, "output", None))) is not None:
        args.output = None  # nowhere to write: a SARIF failure log goes to stdout
        return _fail(args, [bad])

    given = list(args.profile or [])
    problems = [m for m in (*(_check_file("--profile", g, (".ncu-rep", ".csv")) for g in given),
                            _check_binary(args.binary) if args.binary else None) if m]
    from warpwise.analysis.profile.paths import parse_path_map

    try:
        path_map = parse_path_map(getattr(args, "path_map", None) or [])
    except ValueError as e:
        problems.append(f"--path-map: {e}")
        path_map = []
    # sources named by a line table or report are read only inside the folders named here (docs/security.md)
    set_roots([*args.sources, *given])
    sources, src_problems = _sources(args.sources)
    problems += src_problems
    if problems:
        return _fail(args, problems)
    pages: list[Path] = []
    if given:
        # .ncu-rep reports are analysed one by one; all .csv files given are pages of one export
        # (one file named twice, `r.ncu-rep` and `./r.ncu-rep`, is one input: its launches count once)
        profiles = unique_files(Path(g) for g in given if not g.endswith(".csv"))
        csvs = unique_files(Path(g) for g in given if g.endswith(".csv"))
        if csvs:
            profiles.append(csvs[0])
            pages = csvs[1:]
        binaries = [Path(args.binary)] if args.binary else discover([Path(given[0])])[1]
    else:
        profiles, found_bins = discover(sources)
        binaries = [Path(args.binary)] if args.binary else found_bins
        if not profiles:
            reasons = _no_report_reasons(args.sources, sources)
            if not sources and reasons and all(r.endswith(": is a folder with no .cu or .cuh files") for r in reasons):
                # nothing to advise on at all: one error (no report could be next to sources that are not there)
                return _fail(args, [f"{r}: nothing to advise on; pass CUDA sources, or the folder holding them and "
                                    "their .ncu-rep report (e.g. `warpwise advise examples/stencil`)" for r in reasons])
            return _fail(args, [*reasons,
                                "no .ncu-rep report found next to "
                                f"{', '.join(map(str, args.sources))} (nor an ncu CSV export STEM.source.csv); "
                                "pass --profile REPORT.ncu-rep "
                                "(record one with `warpwise profile -o REPORT.ncu-rep -- ./app`)"])
    if getattr(args, "output", None):  # after discovery: a report or cubin found beside the source is an input too
        from warpwise.analysis.output import input_clobbered

        inputs: list[str | Path] = [*args.sources, *sources, *profiles, *pages, *binaries]
        if (hit := input_clobbered(args.output, inputs)) is not None:
            output, args.output = args.output, None
            return _fail(args, [f"-o {output}: is the input {hit}; name another file to write"])
    analyses: list[Analysis] = []
    skipped: list[str] = []  # discovered reports that could not be read: warn, keep the others
    for rep in profiles:
        try:
            analyses.append(analyze(rep, binaries, sources, kernel=args.kernel,
                                    pages=pages if rep.suffix == ".csv" else (), path_map=path_map))
        except InputError as e:
            if given:
                return _fail(args, [str(e)])
            skipped.append(str(e))
    if not analyses:
        return _fail(args, skipped)
    errors = skipped + [err for a in analyses for err in a.errors]
    if args.binary and any(str(args.binary) in err for err in errors):  # the binary the user named is unusable
        return _fail(args, errors)
    found = [k for a in analyses for k in a.kernels]
    if args.kernel and not found:
        names = sorted({p.name for rep in profiles for p in _profiles_of(rep)})
        return _fail(args, [f"no kernel matching '{args.kernel}' in {', '.join(map(str, profiles))}; "
                            f"kernels there: {', '.join(names)}"])
    if not found:  # every kernel of every report failed (e.g. the binary does not match any of them)
        return _fail(args, errors or [f"{', '.join(map(str, profiles))}: no kernel could be analysed"])
    if all(k.profile.origin == "csv-launch" for k in found):  # a Details/Raw page without the Source page
        return _fail(args, [_launch_facts_only(profiles, pages)])
    if args.binary and all(k.cubin is None for k in found):
        return _fail(args, [_no_profiled_kernel(Path(args.binary), found, analyses)])
    # keep only kernels with samples in the given sources (a kernel without line information — built without
    # -lineinfo, or a CSV export of launch facts only — cannot be placed: keep it, its kernel-level advice still
    # applies and its notes say what it lacks)
    sampled_nowhere: list[str] = []  # a given report none of whose kernels has samples in the sources
    for a in analyses:
        before = a.kernels
        a.kernels = [k for k in a.kernels if any(p is not None for p in k.local.values()) or not k.local]
        a._groups = None
        if given and before and not a.kernels:
            sampled_nowhere.append(f"{a.report}: left out, it has no samples in {', '.join(args.sources)}; "
                                   f"it covers {_covered(before)}")
    unmatched: list[str] = []
    if not given:  # a report found beside (or one folder below) the sources must be theirs
        unmatched = _drop_foreign_kernels(analyses, sources)
        if not any(a.kernels for a in analyses):
            return _fail(args, [*unmatched, "none of the reports found next to "
                                             f"{', '.join(map(str, args.sources))} profiles a kernel of these "
                                             "sources (file names are matched case-sensitively); pass --profile "
                                             "REPORT.ncu-rep (record one with `warpwise profile -o REPORT.ncu-rep "
                                             "-- ./app`)"])
    if not any(a.kernels for a in analyses):
        return _fail(args, [f"{', '.join(map(str, profiles))} has no samples in "
                            f"{', '.join(map(str, args.sources))}; it covers {_covered(found)}"])
    notes = [*unmatched, *sampled_nowhere, *_drop_repeated_launches(analyses),
             *_uncovered_sources(args.sources, found, given), *_unread_sources(found)]
    if args.format == "json":
        from warpwise.analysis.report import to_json

        obj = to_json(analyses)
        obj["notes"] = notes
        out = json.dumps(obj, indent=1) + "\n"
    elif args.format == "html":
        from warpwise.server.findings import group_kernels
        from warpwise.server.profile_view import page_data, render_html

        out = render_html(page_data(group_kernels(analyses)), title=f"warpwise · {', '.join(map(str, args.sources))}")
    elif args.format == "sarif":
        from warpwise.analysis.report import to_sarif

        out = json.dumps(_with_invocation(to_sarif(analyses, docs_base=args.docs_url or ""), True,
                                          errors + notes), indent=1) + "\n"
    else:
        from warpwise.analysis.report import render_text

        out = "".join(f"note: {n}\n\n" for n in notes) + render_text(analyses, top=args.top, root=Path.cwd())
    if not _emit(args, out):
        return 2
    for err in errors:
        print(f"warpwise advise: {err}", file=sys.stderr)
    if args.format != "text" or getattr(args, "output", None):  # text on stdout already shows them
        for n in notes:
            print(f"warpwise advise: note: {n}", file=sys.stderr)
    return 0


def _drop_repeated_launches(analyses: list[Analysis]) -> list[str]:
    """Drop, in place, each launch already read from an earlier file (KernelProfile.fingerprint: the same
    profile given as ``R.ncu-rep`` and as its CSV export ``R.source.csv``), so it counts once; the first file
    keeps it (a report before the CSV: the given ``.ncu-rep`` files come first). Returns one note per file that
    lost launches, naming it, the kernels and the file they are counted from."""
    first: dict[tuple[object, ...], Path] = {}
    notes: list[str] = []
    for a in analyses:
        keep: list[Any] = []
        repeated: dict[Path, set[str]] = {}
        for k in a.kernels:
            fp = k.profile.fingerprint()
            if fp is not None and fp in first and first[fp] != a.report:
                repeated.setdefault(first[fp], set()).add(k.profile.name)
                continue
            if fp is not None:
                first.setdefault(fp, a.report)
            keep.append(k)
        if repeated:
            a.kernels, a._groups = keep, None
        for where, names in repeated.items():
            notes.append(f"{a.report}: holds the same launches of {', '.join(sorted(names))} as {where} (same "
                         f"kernel, grid, block and warp samples per PC: one profile in two files); counted once, "
                         f"from {where}")
    return notes


def _covered(kernels: list[Any]) -> str:
    """The file names the kernels' samples are recorded in (``stencil.cu``), or ``no source lines``."""
    return ", ".join(sorted({Path(f).name for k in kernels for f in k.local})) or "no source lines"


def _unread_sources(found: list[Any]) -> list[str]:
    """One note per local source of the analysed kernels that is not read (over the source size limit,
    ``WARPWISE_MAX_SOURCE_BYTES``, default 64 MiB): its line text then comes from the report's embedded copy,
    or is missing, and without the note nothing would say so; and one per source that is not UTF-8
    (:func:`_not_utf8`)."""
    from warpwise.analysis.bounded import InputFileError, check_regular

    notes: list[str] = []
    seen: set[Path] = set()
    for k in found:
        for recorded, here in k.local.items():
            if here is None or Path(here) in seen:
                continue
            seen.add(Path(here))
            try:
                check_regular(here, "source")
            except InputFileError as e:
                embedded = recorded in k.profile.source_files
                notes.append(f"{e}: not read; " + ("the source the report embeds is shown instead (the "
                                                    "profiled version)" if embedded else
                                                    "its lines are shown without their text"))
                continue
            if (why := _not_utf8(Path(here))) is not None:
                notes.append(why)
    return notes


def _not_utf8(path: Path) -> str | None:
    """A note for a source that is not UTF-8 — read, as docs/security.md says, one code point per byte
    (ISO-8859-1, analysis/encoding.decode_source) — naming the line of its first such byte; None for UTF-8 (or
    a file outside the roots, or unreadable: other notes cover those)."""
    from warpwise.analysis.bounded import InputFileError, read_bytes
    from warpwise.analysis.confine import inside
    from warpwise.analysis.encoding import decode_source

    if not inside(path):
        return None
    try:
        data = read_bytes(path.resolve(), "source")
        text = decode_source(data, path)
    except InputFileError:
        return None
    if text.first_non_utf8 is None:
        return None
    at = text.first_non_utf8
    line = data.count(b"\n", 0, at) + 1
    return (f"{path}: not UTF-8 (byte 0x{data[at]:02x} on line {line} is the first that is not): read one code "
            "point per byte (ISO-8859-1), so its non-ASCII characters may be shown wrong; save it as UTF-8 to "
            "see them as written")


def _defined_kernels(sources: list[Path]) -> tuple[set[str], list[str]]:
    """Names of the ``__global__`` functions the given sources define, and one reason per source read by the text
    fallback. Each source is parsed by the rewrites' libclang parse (analysis/rewrite/parse.py, kernel.
    global_functions: the compiler's names, ``tk`` for ``__global__ void __launch_bounds__(256) tk(``). A source
    libclang cannot parse, or parses with errors that make its AST untrustworthy (parse.blocking_errors), is read
    by a text scan instead: every identifier followed by ``(`` in the declaration head after ``__global__`` (a
    superset, ``__launch_bounds__`` included), and the reason says so."""
    import re

    from warpwise.analysis.confine import read_source

    names: set[str] = set()
    fallback: list[str] = []
    head = re.compile(r"__global__\b([^;{}]*)")
    call = re.compile(r"\b([A-Za-z_]\w*)\s*(?:<[^;{}()]*>\s*)?\(")
    for src in sources:
        text = read_source(src, errors="replace") or ""
        if "__global__" not in text:
            continue
        why = None
        try:
            from warpwise.analysis.rewrite.kernel import global_functions
            from warpwise.analysis.rewrite.parse import parse, parse_failure

            p = parse(text, str(src))
            why = parse_failure(p)
            if why is None:
                names |= global_functions(p)
                continue
        except Exception as e:  # libclang missing (ImportError, LibclangError) or failing (RewriteError): the scan
            why = f"libclang could not parse {src}: {e}"
        fallback.append(f"kernel names of {src.name} read by a text scan ({why})")
        for h in head.findall(text):
            names.update(call.findall(h))
    return names, fallback


def _drop_foreign_kernels(analyses: list[Analysis], sources: list[Path]) -> list[str]:
    """Keep, of the kernels of discovered reports, those that belong to ``sources``: a kernel whose samples map
    to their lines, or — without line information (a CSV export's SASS view, a build without -lineinfo) — whose
    name is a ``__global__`` function the sources define. Drops the others in place and returns one message per
    report that lost kernels, naming the file and why (a report one folder down may belong to another program)."""
    if all(any(p is not None for p in k.local.values()) for a in analyses for k in a.kernels):
        return []  # every kernel is placed by its lines: no names needed (and no parse)
    defined, fallback = _defined_kernels(sources)
    out: list[str] = []
    for a in analyses:
        keep: list[Any] = []
        drop: list[Any] = []
        for k in a.kernels:
            base = k.profile.name.split("<", 1)[0].split("(", 1)[0].rsplit("::", 1)[-1]
            placed = any(p is not None for p in k.local.values())
            (keep if placed or base in defined else drop).append(k)
        if drop:
            names = ", ".join(sorted({k.profile.name for k in drop}))
            srcs = ", ".join(sorted({p.name for p in sources})) or "the sources"
            scan = f" ({'; '.join(fallback)})" if fallback else ""
            out.append(f"{a.report}: not used for {names}: no sample maps to a line of {srcs} (the report has no "
                       f"line information for it) and no kernel of that name is defined there{scan}; pass the "
                       "report with --profile to use it anyway")
        a.kernels = keep
        a._groups = None
    return out


def _uncovered_sources(named: list[str], found: list[Any], given: list[str]) -> list[str]:
    """One note per SOURCE file named on the command line that no analysed kernel's lines map to (a folder's
    files are not listed: a folder holds files that were not profiled). Without the note such a source
    would just be missing from the output."""
    from warpwise.analysis.pipeline import discover

    covered = {Path(v).resolve() for k in found for v in k.local.values() if v is not None}
    notes = []
    for s in named:
        p = Path(s)
        if not p.is_file() or p.resolve() in covered:
            continue
        if given:
            reports = sorted(set(given))
            where = "given"
        else:
            reports = [str(r) for r in discover([p])[0]]
            where = "found beside it"
        if reports:
            why = (f"the report{'s' if len(reports) > 1 else ''} {where} ({', '.join(reports)}) "
                   f"record{'' if len(reports) > 1 else 's'} no line of it")
        else:
            why = "no report was found beside it"
        notes.append(f"{s}: left out, no profiled kernel covers it ({why}); pass its report with --profile, "
                     "or record one with `warpwise profile`")
    return notes


def _output_problem(output: str | None) -> str | None:
    """Why ``-o OUTPUT`` cannot be written (checked before the analysis), or None."""
    if not output:
        return None
    from warpwise.analysis.output import output_problem

    problem = output_problem(output)
    return f"-o {problem}" if problem is not None else None


def _emit(args: argparse.Namespace, out: str) -> bool:
    """``out`` on stdout, or written atomically to ``-o FILE`` (analysis/output.py); False (after a message
    naming the file) when it cannot be written."""
    output = getattr(args, "output", None)
    if not output:
        sys.stdout.write(out)
        return True
    from warpwise.analysis.output import write_atomically

    try:
        write_atomically(output, out.encode("utf-8"))
    except OSError as e:
        print(f"warpwise advise: -o {output}: cannot write: {e.strerror or e}", file=sys.stderr)
        return False
    return True


def _launch_facts_only(profiles: list[Path], pages: list[Path]) -> str:
    """Why a CSV export of launch facts only (ncu's Details or Raw page, no Source page) gives no advice: the
    per-line advice needs the Source page's per-PC warp samples and stall reasons (ncu's SourceCounters)."""
    files = ", ".join(map(str, [*profiles, *pages]))
    return (f"{files}: an ncu Details/Raw page export holds launch facts only, no source counters (per-PC warp "
            "samples and stall reasons), so there is nothing to place on source lines and no advice; export the "
            "Source page too (`ncu --import R.ncu-rep --page source --print-source sass --csv > R.source.csv`) "
            "and pass both with --profile, or pass the report itself (--profile R.ncu-rep)")


def _no_profiled_kernel(binary: Path, found: list[Any], analyses: list[Analysis]) -> str:
    """Why ``binary`` (named with --binary) is no use: it holds none of the profiled kernels."""
    profiled = ", ".join(sorted({k.profile.name for k in found}))
    reports = ", ".join(str(a.report) for a in analyses)
    return (f"{binary} holds none of the kernels profiled in {reports} ({profiled}); pass the binary that was "
            "profiled (the same build of the program)")


def _fail(args: argparse.Namespace, messages: list[str]) -> int:
    """Print ``messages`` on stderr and return 2; with --format sarif also print a SARIF log whose
    invocation says ``executionSuccessful: false`` with one toolExecutionNotification per message, so a
    CI job reading only the SARIF sees the failure too (SARIF 2.1.0 §3.20.14, §3.20.21)."""
    for m in messages:
        print(f"warpwise advise: {m}", file=sys.stderr)
    if getattr(args, "format", None) == "sarif":
        from warpwise.analysis.report import to_sarif

        _emit(args, json.dumps(_with_invocation(to_sarif([]), False, messages), indent=1) + "\n")
    return 2


def _with_invocation(log: dict[str, Any], ok: bool, messages: list[str]) -> dict[str, Any]:
    """``log`` (a SARIF 2.1.0 log) with an ``invocations`` entry on its run: success flag and one
    notification per message (level error on failure, warning otherwise)."""
    level = "warning" if ok else "error"
    inv: dict[str, Any] = {"executionSuccessful": ok}
    if messages:
        inv["toolExecutionNotifications"] = [{"level": level, "message": {"text": m}} for m in messages]
    for run in log.get("runs", []):
        run["invocations"] = [inv]
    return log


def _profiles_of(rep: Path) -> list[Any]:
    from warpwise.analysis.pipeline import _load_profiles_cached

    try:
        return _load_profiles_cached(rep)
    except Exception:
        return []
