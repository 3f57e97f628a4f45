"""ncu CSV exports -> :class:`KernelProfile` (issue 12 item 1), the same model the ``.ncu-rep`` reader fills.

Inputs (any subset, each file's kind sniffed from its header, not its name):

- the Source page, SASS view (``--page source --print-source sass --csv``): per-PC samples, stall reasons
  and executed counts — the part blame and advice need;
- the Source page, CUDA,SASS view (``--print-source cuda,sass``): the same per PC, each under ncu's source
  line (so lines are known without a cubin); alone or beside the SASS view (then it only adds the lines);
- a CUDA view with counters (older ncu; 2025.3 prints source text only, refused with that reason): per-line
  samples only, no PC join;
- the Details page (``--page details --csv``) or the Raw page (``--page raw --csv``): launch facts.

Naming: ``<stem>.source.csv`` beside a source is found with ``<stem>.details.csv`` / ``<stem>.raw.csv``
(:func:`companions`). What a CSV cannot give is said in ``KernelProfile.notes``: no mangled name (it is
recovered from the cubin by SASS agreement: :func:`name_from_cubin`), no source lines in the SASS view
(taken from the cubin's line table: :func:`lines_from_cubin`), no embedded source, and no samples of
code outside the module's functions (ncu's Source page does not list them).
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from pathlib import Path

from warpwise.analysis.binary.model import Cubin
from warpwise.analysis.profile import csv_launch, csv_source
from warpwise.analysis.profile.csvfile import CsvError, CsvExport, read
from warpwise.analysis.profile.model import KernelProfile, LaunchConfig, PCSample

#: File-name endings of the pages warpwise discovers beside a source (``<stem>.<page>.csv``).
PAGE_SUFFIXES = (".source.csv", ".details.csv", ".raw.csv")

#: Function key of CUDA-view rows (one pseudo-instruction per source line: there are no PCs).
CUDA_VIEW = "<cuda view>"


def is_csv(path: Path) -> bool:
    """Whether ``path`` names a CSV export."""
    return path.suffix.lower() == ".csv"


def companions(path: Path) -> list[Path]:
    """The other pages of the same export beside ``path``: for ``x.source.csv``, ``x.details.csv`` and
    ``x.raw.csv`` when they exist (the naming ``docs/cli.md`` documents)."""
    name = path.name
    for suf in PAGE_SUFFIXES:
        if name.endswith(suf):
            stem = name[: -len(suf)]
            return [path.with_name(stem + s) for s in PAGE_SUFFIXES if s != suf and path.with_name(stem + s).is_file()]
    return []


def _merge_by_function(tables: list[csv_source.SassFunction]) -> list[csv_source.SassFunction]:
    """One function per title from the CUDA,SASS view's (function, file) tables, first-seen order; its start
    is its lowest address (the view is ordered by source line) and offsets are recomputed from it. (Several
    launches of one kernel in one CUDA,SASS export cannot be told apart and merge.)"""
    out: dict[str, csv_source.SassFunction] = {}
    for t in tables:
        f = out.setdefault(t.title, csv_source.SassFunction(title=t.title, start=t.start))
        f.start = min(f.start, t.start) if f.start >= 0 else t.start
        f.samples.extend(t.samples)
        f.unknown_stalls = sorted(set(f.unknown_stalls) | set(t.unknown_stalls))
    for f in out.values():
        f.samples.sort(key=lambda s: s.pc)
        for s in f.samples:
            s.offset = s.pc - f.start
    return list(out.values())


def _is_mangled(title: str) -> bool:
    """Whether a title is a symbol as printed with ``--print-kernel-base mangled`` (``_Z9blur_rowsPKfPfii``)."""
    return title.startswith("_Z") and " " not in title and "(" not in title


def _key(title: str) -> str:
    """A title's short name, the same for ncu's demangled and mangled spellings of one kernel."""
    from warpwise.analysis.profile.collect import kernel_stem

    return kernel_stem(title) if _is_mangled(title) else csv_source.function_name(title).split("<")[0]


def _same_kernel(a: str, b: str) -> bool:
    return a == b or _key(a) == _key(b)


def _group(functions: list[csv_source.SassFunction], launches: list[csv_launch.LaunchFacts]) -> list[
        list[csv_source.SassFunction]]:
    """Split the Source page's function tables into launches: a table whose title is the next launched
    kernel's (Details/Raw order) starts a launch; without launch pages only a repeat of the first kernel's
    title does (the others are functions of its module: CDP children, device-runtime code)."""
    groups: list[list[csv_source.SassFunction]] = []
    titles = [f.title for f in launches]
    k = 0
    for fn in functions:
        nxt = k < len(titles) and _same_kernel(fn.title, titles[k])
        starts = not groups or (nxt if titles else _same_kernel(fn.title, groups[0][0].title))
        if nxt:
            k += 1
        if starts:
            groups.append([fn])
        else:
            groups[-1].append(fn)
    return groups


def _profile(funcs: list[csv_source.SassFunction], facts: csv_launch.LaunchFacts | None, report: str,
             index: int) -> KernelProfile:
    kernel = funcs[0]
    name = _key(kernel.title) if _is_mangled(kernel.title) else csv_source.function_name(kernel.title)
    mangled = kernel.title if _is_mangled(kernel.title) else name
    pcs: dict[tuple[str, int], PCSample] = {}
    for k, fn in enumerate(funcs):
        key = mangled if k == 0 else (fn.title if _is_mangled(fn.title) else csv_source.function_name(fn.title)) \
            or f"{name}$fn{k}"
        for s in fn.samples:
            s.function = key
            pcs.setdefault((key, s.offset), s)
    notes = []
    unknown = sorted({u for f in funcs for u in f.unknown_stalls})
    if unknown:
        notes.append(f"{report}: stall columns warpwise does not know are kept under their own names: "
                     f"{', '.join(unknown)}")
    return KernelProfile(name=name, mangled=mangled, arch=facts.arch if facts else "sm_unknown",
                         launch=facts.launch if facts else LaunchConfig(), pcs=pcs, report=report,
                         launch_index=(0, index), device=facts.device if facts else "", notes=notes, origin="csv")


def load_csv_profiles(paths: Sequence[str | Path]) -> list[KernelProfile]:
    """Every kernel launch in the CSV exports ``paths`` (pages of one report), in launch order.

    ``paths[0]`` names the report in messages. Each profile's ``report`` is the file its warp samples come
    from: the first file holding a Source page table (``x.source.csv`` when ``x.details.csv`` was given and the
    Source page beside it read as its companion), else ``paths[0]``. Raises CsvError when a file is unreadable,
    holds no ncu table, or no file holds a Source page nor launch facts.
    """
    exports: list[CsvExport] = [read(p) for p in paths]
    report = str(paths[0])
    sampled = next((str(e.path) for e in exports for t in e.tables
                    if csv_source.is_sass_table(t) or csv_source.is_cuda_table(t)), report)
    functions: list[csv_source.SassFunction] = []
    by_line: list[csv_source.SassFunction] = []  # CUDA,SASS view: one table per (function, file)
    lines: list[csv_source.LineRow] = []
    launches: list[csv_launch.LaunchFacts] = []
    warnings: list[str] = []
    text_only = False
    for e in exports:
        warnings += [f"{e.path}: {w}" for w in e.warnings()]
        for t in e.tables:
            if csv_source.is_sass_table(t):
                if not (t.title and t.title[1].strip()):  # ncu prints one above every table: a cut/edited file
                    raise CsvError(f"{e.path}: the Source page table at line {t.first_line} has no "
                                   '"Kernel Name" line above it, so its kernel is unknown')
                (by_line if t.index(*csv_source.LINE) is not None else functions).append(csv_source.sass_function(t))
            elif csv_source.is_cuda_table(t):
                lines += csv_source.cuda_lines(t)
            elif csv_launch.is_details_table(t):
                launches += csv_launch.from_details(t)
            elif csv_launch.is_raw_table(t):
                launches += csv_launch.from_raw(t)
            elif csv_source.is_source_text_table(t):
                text_only = True
    if by_line:
        merged = _merge_by_function(by_line)
        if functions:  # the SASS view has the counts; the CUDA,SASS view adds ncu's line of each PC
            where = {s.pc: (s.file, s.line) for f in merged for s in f.samples if s.line is not None}
            for f in functions:
                for s in f.samples:
                    s.file, s.line = where.get(s.pc, (s.file, s.line))
        else:
            functions = merged
    if text_only and not functions and not lines and not launches:
        raise CsvError(f"{report}: a CUDA-view export holds only source text, no samples (ncu prints no counters "
                       "with --print-source cuda): export `--page source --print-source sass --csv` (or cuda,sass)")
    untitled = next((f for f in launches if not f.title.strip()), None)
    if untitled is not None:
        raise CsvError(f"{report}: the Details/Raw page row of launch ID {untitled.id} has no Kernel Name, so the "
                       "launch cannot be matched to its kernel")
    launches = _unique(launches)
    skipped = sum(len(e.skipped) for e in exports)
    common = []
    if skipped:
        common.append(f"{skipped} line(s) of the CSV export(s) are not ncu table rows (==PROF== messages, program "
                      "output) and were skipped" + (": " + "; ".join(warnings[:3]) if warnings else ""))
    if not functions and not lines and not launches:
        raise CsvError(f"{report}: neither a Source page nor a Details/Raw page found in {len(exports)} CSV file(s)")
    out: list[KernelProfile] = []
    if functions:
        for i, group in enumerate(_group(functions, launches)):
            facts = next((f for f in launches if f.title == group[0].title), None) or \
                next((f for f in launches if _same_kernel(f.title, group[0].title)), None)
            if facts is not None:
                launches.remove(facts)
            p = _profile(group, facts, sampled, i)
            if facts is None:
                p.notes.append("no Details/Raw page with this launch: launch facts (grid, block, registers, "
                               "occupancy) are unknown and the advice that needs them is skipped "
                               f"(export `ncu --import R.ncu-rep --page details --csv > {_stem(report)}.details.csv`)")
            p.notes.append("CSV export: no samples of code outside the module's functions are listed (the "
                           ".ncu-rep keeps them), and the report's embedded sources are not in it, so local "
                           "files are matched by path only")
            out.append(p)
    elif lines:
        facts = launches.pop(0) if launches else None
        p = KernelProfile(name=csv_source.function_name(facts.title) if facts else Path(report).stem,
                          mangled="", arch=facts.arch if facts else "sm_unknown",
                          launch=facts.launch if facts else LaunchConfig(), pcs={}, report=sampled,
                          origin="csv-lines")
        for k, r in enumerate(lines):
            p.pcs[(CUDA_VIEW, k)] = PCSample(function=CUDA_VIEW, offset=k, pc=k, sass="", samples=r.samples,
                                             not_issued=r.not_issued, stalls=r.stalls, file=r.file, line=r.line)
        p.notes.append("CSV export with the CUDA view only: per-line samples are shown, but without the SASS view "
                       "(`--print-source sass`) there is no PC join, so no blame and no advice")
        out.append(p)
    for f in launches:  # launch facts without any Source page table
        p = KernelProfile(name=csv_source.function_name(f.title), mangled="", arch=f.arch, launch=f.launch, pcs={},
                          report=report, launch_index=(0, f.id), device=f.device, origin="csv-launch")
        p.notes.append("CSV export without the Source page: launch facts only. PC samples and stall reasons come "
                       "from `ncu --import R.ncu-rep --page source --print-source sass --csv`")
        out.append(p)
    for p in out:
        p.notes[:0] = common
    return out


def _stem(report: str) -> str:
    name = Path(report).name
    for suf in PAGE_SUFFIXES:
        name = name.removesuffix(suf)
    return name.removesuffix(".csv")


def _unique(launches: list[csv_launch.LaunchFacts]) -> list[csv_launch.LaunchFacts]:
    """Launches by ID: a Details and a Raw page of the same launches merge (Raw values win: unrounded)."""
    by_id: dict[int, csv_launch.LaunchFacts] = {}
    for f in launches:
        old = by_id.get(f.id)
        if old is None:
            by_id[f.id] = f
            continue
        old.metrics.update(f.metrics)
        old.launch = f.launch if f.metrics else old.launch
        old.device = old.device or f.device
    return [by_id[k] for k in sorted(by_id)]


def name_from_cubin(profile: KernelProfile, cubins: Sequence[Cubin]) -> Cubin | None:
    """Give a CSV profile its kernel's mangled name from the cubin whose code section agrees with the
    sampled SASS (the CSV has only the demangled title). The kernel function's keys are renamed in place.

    Candidates are sections whose mangled name contains the short name; among them the best SASS
    agreement (join's measure) wins. Returns the cubin, or None when no section agrees on >= 95%.
    """
    from warpwise.analysis.profile.join import _agreement, sections

    for c in cubins:  # a mangled title (--print-kernel-base mangled) names the section itself
        if profile.arch in ("sm_unknown", c.arch) and profile.mangled in sections(c):
            if profile.arch == "sm_unknown":
                profile.arch = c.arch
            return c
    kernel_pcs = [s for s in profile.pcs.values() if s.function == profile.mangled]
    base = profile.name.split("<")[0].split("::")[-1]
    best: tuple[float, Cubin, str] | None = None
    for c in cubins:
        if profile.arch not in ("sm_unknown", c.arch):
            continue
        for sec_name, sec in sections(c).items():
            if base and base not in sec_name:
                continue
            m, n = _agreement(kernel_pcs, sec)
            score = m / n if n else 0.0
            if best is None or score > best[0]:
                best = (score, c, sec_name)
    if best is None or best[0] < 0.95:
        return None
    _, cubin, mangled = best
    old = profile.mangled
    profile.mangled = mangled
    if profile.arch == "sm_unknown":
        profile.arch = cubin.arch
    profile.pcs = {((mangled if f == old else f), o): s for (f, o), s in profile.pcs.items()}
    for s in profile.pcs.values():
        if s.function == old:
            s.function = mangled
    return cubin


def lines_from_cubin(profile: KernelProfile, cubin: Cubin) -> int:
    """Fill each joined PC's file/line from the cubin's line table (the SASS view has none); returns the
    number of PCs given a line. Only PCs without a line are touched."""
    from warpwise.analysis.profile.join import sections

    secs = sections(cubin)
    n = 0
    for s in profile.pcs.values():
        if s.line is not None:
            continue
        sec = secs.get(s.function)
        ins = sec.by_offset.get(s.offset) if sec else None
        if ins is not None and ins.loc is not None:
            # ncu records the path normalized (`/usr/local/cuda/bin/../targets` -> `/usr/local/cuda/targets`)
            f = ins.loc.file
            s.file, s.line = (posixpath.normpath(f) if "\\" not in f else f), ins.loc.line
            n += 1
    return n
