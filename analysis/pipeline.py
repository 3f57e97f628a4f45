"""The main job's data flow (DESIGN.md "Data flow"): report + binary + sources -> per-kernel analysis.

Every stage is a pure function of its inputs; loaded reports and binaries are cached by content hash so
the language server can re-run the pipeline after edits without re-reading unchanged files.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from warpwise.analysis.binary.model import Cubin
from warpwise.analysis.bounded import InputFileError, open_regular, read_bytes
from warpwise.analysis.confine import read_source
from warpwise.analysis.gcpause import freeze_built, heap_frozen
from warpwise.analysis.profile.join import MismatchError, join
from warpwise.analysis.profile.lines import LineStats, line_stats
from warpwise.analysis.profile.model import KernelProfile
from warpwise.analysis.profile.ncu import ProfileLoadError, fill_sass, load_profiles
from warpwise.analysis.profile.paths import normalize as normalize_path
from warpwise.analysis.profile.paths import resolve as resolve_path
from warpwise.analysis.profile.paths import translated
from warpwise.analysis.profile.source import same_code

log = logging.getLogger("warpwise")

PROFILE_SUFFIXES = (".ncu-rep", ".csv")  # .csv: ncu CSV exports (analysis/profile/csv_load.py)
BINARY_SUFFIXES = (".cubin",)
# what ``advise`` takes as SOURCE: CUDA sources and headers, the C/C++ kinds the rewrite parser reads (CUDA code
# compiled with ``nvcc -x cu``) and Triton's .py (its cubins' line tables record the Python file, docs/cli.md)
SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh", ".inl", ".py")


class InputError(Exception):
    """Inputs for an analysis are missing or unusable; the message says which file and why."""


@dataclass
class KernelAnalysis:
    """Everything known about one profiled kernel launch.

    ``lines``: hot lines (recorded paths); ``local``: recorded source path -> local file (None when no
    local file matched); ``blame``/``advice``: present once a matching cubin was found; ``notes``:
    limitations the user should know (no binary, -G build, unattributed samples...).
    """

    profile: KernelProfile
    cubin: Cubin | None
    lines: list[LineStats]
    local: dict[str, Path | None] = field(default_factory=dict)
    blame: Any = None
    advice: list[Any] = field(default_factory=list)
    program: Any = None
    advice_report: Any = None
    notes: list[str] = field(default_factory=list)
    # (recorded file, line) of a hot line in an inlined helper -> its call sites (profile.inlining)
    inlined: dict[tuple[str, int], list[Any]] = field(default_factory=dict)
    # (recorded file, line) of a call line -> inclusive samples (its own + those inlined through it)
    inclusive: dict[tuple[str, int], int] = field(default_factory=dict)
    # recorded paths that matched several local files equally (also in notes): say so where users look
    ambiguous_paths: list[str] = field(default_factory=list)
    _sections: Any = field(default=None, repr=False)

    def instruction(self, function: str, offset: int, section: str = "") -> tuple[Any, Any, str | None, int | None]:
        """(Instruction or None, PCSample or None, recorded file, line) at ``offset`` of ``function``.

        ``function`` may be a device function inside a kernel's section (blame edges name it; profile
        PCs are keyed by the section's owner), so the lookup goes through ``section`` when given.
        """
        owner = section.removeprefix(".text.") if section else function
        s = self.profile.pcs.get((owner, offset)) or self.profile.pcs.get((function, offset))
        ins = None
        if self.cubin is not None:
            from warpwise.analysis.profile.join import sections

            secs = self._sections if self._sections is not None else sections(self.cubin)
            self._sections = secs
            sec = secs.get(owner) or secs.get(function)
            ins = sec.by_offset.get(offset) if sec else None
        file = s.file if s is not None else None
        line = s.line if s is not None else None
        if file is None and ins is not None and ins.loc is not None:
            file, line = ins.loc.file, ins.loc.line
        return ins, s, file, line

    @property
    def cubin_has_lines(self) -> bool:
        """Whether the binary has any line information (-lineinfo or -G)."""
        if self.cubin is None:
            return False
        return any(i.loc is not None for f in self.cubin.functions.values() for i in f.instructions)

    def local_path(self, recorded: str | None) -> str | None:
        """Local path for a recorded path (the recorded one when none matched)."""
        if recorded is None:
            return None
        p = self.local.get(recorded) or self.local.get(normalize_path(recorded))
        return str(p) if p is not None else recorded


@dataclass
class KernelGroup:
    """One kernel over all its launches in a report: what the CLI ranks and the editor shows.

    ``launches``: the per-launch analyses in report order; ``lines``: line stats summed over the launches
    (recorded paths; a line's share of the summed T is never above 100%); ``advice_report``: one ranking
    over the launches (analysis/advice/launches: S = Σ t_i / Σ (t_i / S_i), t_i the launch's duration);
    ``notes``: the launches' notes, each once.
    """

    mangled: str
    name: str
    launches: list[KernelAnalysis]
    lines: list[LineStats]
    advice_report: Any = None
    notes: list[str] = field(default_factory=list)

    @property
    def first(self) -> KernelAnalysis:
        """The first launch (launch facts, cubin, local path map shared by all launches of the report)."""
        return self.launches[0]

    @property
    def advice(self) -> list[Any]:
        """The kernel-level ranked advice (empty without a binary)."""
        return list(self.advice_report.advice) if self.advice_report is not None else []

    @property
    def total_samples(self) -> int:
        """T summed over the launches."""
        return sum(k.profile.total_samples for k in self.launches)

    @property
    def latency_samples(self) -> int:
        """L summed over the launches."""
        return sum(k.profile.latency_samples for k in self.launches)

    @property
    def duration_ns(self) -> float:
        """Summed duration of the launches (ns; 0 when the report has none)."""
        return sum(k.profile.launch.duration_ns for k in self.launches)


def entry_line(profile: KernelProfile, cubin: Cubin | None) -> tuple[str, int] | None:
    """The kernel's signature line (recorded file, 1-based line): where its first instruction (the prologue at
    offset 0: stack pointer and parameter set-up) maps, when that is the lowest line of the kernel's own code in
    that file and the body has later lines; None when the kernel is written on one line or nothing maps. From the
    cubin's line table, else from the profile's per-PC lines."""
    placed: list[tuple[int, str, int]] = []
    fn = None if cubin is None else next(
        (f for f in cubin.functions.values() if f.section.removeprefix(".text.") == profile.mangled
         and f.name == profile.mangled), None)
    if fn is not None:
        placed = [(i.offset, i.loc.file, i.loc.line) for i in fn.instructions if i.loc is not None]
    else:
        placed = [(s.offset, s.file, s.line) for s in profile.pcs.values()
                  if s.function == profile.mangled and s.file and s.line is not None]
    if not placed:
        return None
    _, file, line = min(placed)
    same = [ln for _, f, ln in placed if f == file]
    if min(same) != line or max(same) == line:
        return None
    return file, line


def mark_entry_line(lines: Sequence[LineStats], profile: KernelProfile, cubin: Cubin | None) -> None:
    """Set ``entry`` on the kernel's signature line (:func:`entry_line`) among ``lines``, in place."""
    at = entry_line(profile, cubin)
    for ls in lines:
        ls.entry = at is not None and (ls.file, ls.line) == at


def merge_lines(kernels: Sequence[KernelAnalysis]) -> list[LineStats]:
    """Line stats of several launches summed per (file, line), hottest first (the one place launches'
    lines are merged)."""
    by: dict[tuple[str, int], LineStats] = {}
    for ka in kernels:
        for ls in ka.lines:
            cur = by.get((ls.file, ls.line))
            if cur is None:
                cur = by[(ls.file, ls.line)] = LineStats(ls.file, ls.line)
            cur.samples += ls.samples
            cur.latency_samples += ls.latency_samples
            for r, v in ls.stalls.items():
                cur.stalls[r] = cur.stalls.get(r, 0) + v
            cur.pcs.extend(pc for pc in ls.pcs if pc not in cur.pcs)
            cur.entry = cur.entry or ls.entry
    return sorted(by.values(), key=lambda st: (-st.samples, st.file, st.line))


def group_kernels(kernels: Sequence[KernelAnalysis]) -> list[KernelGroup]:
    """Group launches by kernel (mangled name), in order of first appearance, with one combined ranking."""
    from warpwise.analysis.advice.advise import merge_launch_notes
    from warpwise.analysis.advice.launches import combine

    order: dict[str, list[KernelAnalysis]] = {}
    for ka in kernels:
        order.setdefault(ka.profile.mangled, []).append(ka)
    out = []
    for mangled, kas in order.items():
        reps = [(k.profile, k.advice_report) for k in kas if k.advice_report is not None]
        # each note once; the launches' "only N warp samples" notes as one naming them (advise.merge_launch_notes)
        notes = merge_launch_notes([(k.profile.launch_index, k.notes,
                                     k.advice_report.few_samples if k.advice_report is not None else None)
                                    for k in kas])
        g = KernelGroup(mangled=mangled, name=kas[0].profile.name, launches=kas,
                        lines=kas[0].lines if len(kas) == 1 else merge_lines(kas),
                        advice_report=combine(reps) if reps else None, notes=notes)
        if len(kas) > 1:
            g.notes.insert(0, f"{len(kas)} launches of {g.name}: warp samples and lines are summed over them; "
                              "advice is ranked once, each launch weighted by its duration (S = sum t_i / sum t_i/S_i)")
        out.append(g)
    return out


@dataclass
class Analysis:
    """Result of analysing one report: its kernel launches, the launches grouped per kernel, and the
    per-file problems met on the way."""

    report: Path
    kernels: list[KernelAnalysis]
    errors: list[str] = field(default_factory=list)
    _groups: list[KernelGroup] | None = field(default=None, repr=False)

    @property
    def groups(self) -> list[KernelGroup]:
        """One :class:`KernelGroup` per kernel of the report (launches merged), computed once."""
        if self._groups is None:
            self._groups = group_kernels(self.kernels)
        return self._groups


_cache_lock = threading.Lock()
_profile_cache: dict[str, list[KernelProfile]] = {}
_binary_cache: dict[str, list[Cubin]] = {}


def content_hash(path: Path, kind: str = "report") -> str:
    """SHA-1 of a file's bytes (cache key; also used to tell whether a source changed).

    Only a regular file within the ``kind`` size limit is read (:mod:`warpwise.analysis.bounded`).

    Raises:
        InputFileError: not a regular file, too large or unreadable (the message names the file).
    """
    h = hashlib.sha1()
    with os.fdopen(open_regular(path, kind), "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _load_profiles_cached(path: Path, pages: Sequence[Path] = ()) -> list[KernelProfile]:
    import copy

    from warpwise.analysis.profile.csv_load import companions, is_csv, load_csv_profiles

    files = [path, *pages, *(companions(path) if is_csv(path) and not pages else [])]
    # content_hash first: it refuses loops, FIFOs and devices with a clear message
    digests = [content_hash(f) for f in files]  # before resolve(): a symlink loop must fail with a clear message
    key = ";".join(f"{f.resolve()}:{d}" for f, d in zip(files, digests, strict=True))
    with _cache_lock:
        hit = _profile_cache.get(key)
    if hit is None:
        hit = load_csv_profiles(files) if is_csv(path) else load_profiles(path, sass=False)
        with _cache_lock:
            _profile_cache[key] = hit
    return copy.deepcopy(hit)  # join() renames in place


def _load_binary_cached(path: Path) -> list[Cubin]:
    from warpwise.analysis.binary.load import load_binary

    digest = content_hash(path, "binary")
    key = f"{path.resolve()}:{digest}"
    with _cache_lock:
        hit = _binary_cache.get(key)
    if hit is None:
        hit = load_binary(str(path))
        with _cache_lock:
            _binary_cache[key] = hit
    return hit


def executables_in(folder: Path) -> list[Path]:
    """ELF executables and shared libraries directly in ``folder`` (candidates that may hold cubins)."""
    out: list[Path] = []
    if not folder.is_dir():
        return out
    for f in sorted(folder.iterdir()):
        if not f.is_file() or f.suffix in (".cubin", ".o", ".a", ".ptx") or not (
                os.access(f, os.X_OK) or ".so" in f.suffixes):
            continue
        try:
            if read_bytes(f, "binary", head=4) == b"\x7fELF":
                out.append(f)
        except InputFileError:
            continue
    return out


def prefer_reports(paths: Iterable[Path]) -> list[Path]:
    """``paths`` without the CSV exports ``<stem>.source.csv`` whose report ``<stem>.ncu-rep`` is in the same
    folder (the report has more: samples outside the module, embedded sources), order kept."""
    paths = list(paths)
    reports = {(p.parent, p.name.removesuffix(".ncu-rep")) for p in paths if p.suffix == ".ncu-rep"}
    return [p for p in paths if not (p.name.endswith(".source.csv")
                                     and (p.parent, p.name.removesuffix(".source.csv")) in reports)]


def discover(paths: Iterable[Path]) -> tuple[list[Path], list[Path]]:
    """Profiles and binaries next to the given sources/folders: in the folder itself, and one level down only
    where the folder has none of that kind (a ``profiles/`` or ``build/`` folder beside the source; a folder of
    examples) — so an ``old/`` copy of a report beside the current one is not read too, nor paired with the
    current build's cubin.

    Profiles are ``*.ncu-rep`` reports and ncu CSV exports named ``<stem>.source.csv`` (their
    ``<stem>.details.csv``/``<stem>.raw.csv`` pages are read with them); a report beats the CSV of the same stem.
    Binaries are the ``.cubin`` files there; a folder without any contributes its ELF executables and
    shared libraries instead (their cubins are extracted with cuobjdump)."""
    profiles: list[Path] = []
    binaries: list[Path] = []
    seen: set[Path] = set()

    def found_in(d: Path) -> tuple[list[Path], list[Path]]:
        files = sorted(f for f in d.iterdir() if not f.is_dir())  # a folder named x.ncu-rep is no input
        profs = prefer_reports(f for f in files if f.suffix == ".ncu-rep" or f.name.endswith(".source.csv"))
        cubins = [f for f in files if f.suffix in BINARY_SUFFIXES]
        return list(profs), cubins or executables_in(d)

    for p in paths:
        folder = p if p.is_dir() else p.parent
        if not folder.is_dir() or folder in seen:
            continue
        seen.add(folder)
        profs, bins = found_in(folder)
        if not profs or not bins:
            for d in sorted(x for x in folder.iterdir() if x.is_dir()):
                sub_profs, sub_bins = found_in(d)
                if not profs:
                    profiles.extend(sub_profs)
                if not bins:
                    binaries.extend(sub_bins)
        profiles.extend(profs)
        binaries.extend(bins)
    # a folder's sub-folder may also be the folder of one of its sources (``a/x.cuh`` and ``a/g/g.cu``): the
    # files found both ways are one input each, or every launch would count twice
    return unique_files(profiles), unique_files(binaries)


def unique_files(files: Iterable[Path]) -> list[Path]:
    """``files`` without repeats of one file (compared by resolved path: ``a/g/../g/r.ncu-rep`` is ``a/g/r.ncu-rep``),
    first occurrence kept, order kept. A path that cannot be resolved (a symlink loop: RuntimeError before
    Python 3.13, OSError after) is its own key, so the reader that opens it reports it by name."""
    seen: set[Path] = set()
    out: list[Path] = []
    for f in files:
        try:
            key = f.resolve()
        except (OSError, RuntimeError):
            key = f.absolute()
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def _pick_cubin(profile: KernelProfile, cubins: Sequence[Cubin]) -> tuple[Cubin | None, list[str]]:
    """The cubin holding the profiled kernel for the profiled architecture, with reasons for rejects."""
    problems: list[str] = []
    for c in cubins:
        if profile.mangled not in {f.section.removeprefix(".text.") for f in c.functions.values()}:
            continue
        if c.arch != profile.arch:
            problems.append(f"{c.path} holds {profile.name} but for {c.arch}, the profile ran on {profile.arch}")
            continue
        return c, problems
    return None, problems


def recorded_paths(profile: KernelProfile, cubin: Cubin | None) -> set[str]:
    """Every source path the profile and the cubin's line table record: the kernel's file, headers, and
    the files of inlined helpers and their call sites (inline chains)."""
    files = {s.file for s in profile.pcs.values() if s.file}
    if cubin is not None:
        for f in cubin.functions.values():
            for ins in f.instructions:
                if ins.loc is not None:
                    files.add(ins.loc.file)
                files.update(c.file for c in ins.inline_chain)
    return files


HEADER_SUFFIXES = (".cuh", ".h", ".hpp", ".hh", ".inl")


def nearby_headers(sources: Sequence[Path]) -> list[Path]:
    """Header files in the folders of ``sources`` and their parents (``#include "x.cuh"``/``"../x.cuh"``), not
    already among them: a hot header maps to its local copy without being named on the command line."""
    given = {p.resolve() for p in sources}
    out: list[Path] = []
    for folder in dict.fromkeys(d for p in sources for d in (p.parent, p.parent.parent)):
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for f in entries[:2000]:
            if f.suffix in HEADER_SUFFIXES and f.is_file() and f.resolve() not in given:
                given.add(f.resolve())
                out.append(f)
    return out


def map_sources(profile: KernelProfile, cubin: Cubin | None, sources: Sequence[Path],
                path_map: Sequence[tuple[str, str]] = ()) -> tuple[dict[str, Path | None], list[str]]:
    """Recorded path (as recorded, and normalized) -> local file, and the notes on ambiguous ones
    (paths.resolve: suffix, then the report's embedded text, then nearest to the report)."""
    local: dict[str, Path | None] = {}
    notes: list[str] = []
    candidates = list(sources) + nearby_headers(sources)
    embedded = {normalize_path(k): v for k, v in profile.source_files.items()}
    report = Path(profile.report) if profile.report else None
    for r in sorted(recorded_paths(profile, cubin)):
        n = normalize_path(r)
        if n in local:
            local[r] = local[n]
            continue
        m = resolve_path(r, candidates, embedded.get(n), report, path_map)
        local[r] = local[n] = m.local
        if m.note and m.note not in notes:
            notes.append(m.note)
    # a header beside the sources' folders (../include/x.cuh): where the mapped files put it (paths.translated)
    mapped = [(k, v) for k, v in local.items() if v is not None]
    for n in sorted({normalize_path(k) for k, v in local.items() if v is None}):
        extra = translated(n, mapped)
        if extra:
            local[n] = resolve_path(n, candidates + extra, embedded.get(n), report, path_map).local
    for r in list(local):
        if local[r] is None:
            local[r] = local.get(normalize_path(r))
    return local, notes


def analyze_kernel(profile: KernelProfile, cubins: Sequence[Cubin], sources: Sequence[Path],
                   path_map: Sequence[tuple[str, str]] = (), launches: int | None = None,
                   programs: dict[int, Any] | None = None) -> KernelAnalysis:
    """Join, blame and advise one kernel launch. Raises MismatchError when the binary does not match.

    ``path_map``: (recorded prefix, local prefix) rules (paths.parse_path_map) tried before suffix matching;
    ``launches``: launches of this kernel in the report (kernel_merge needs it); ``programs``: a cache of
    program structures by ``id(cubin)`` shared by the launches of one report.
    """
    from warpwise.analysis.profile import csv_load
    from warpwise.analysis.profile.ncu import UNATTRIBUTED

    if profile.origin == "csv":  # the CSV has no mangled name: it comes from the cubin that matches the SASS
        csv_load.name_from_cubin(profile, cubins)
    cubin, problems = _pick_cubin(profile, cubins) if profile.origin in ("ncu-rep", "csv") else (None, [])
    notes = [*profile.notes, *problems]
    if cubin is not None:
        join(profile, cubin)
        if profile.origin == "csv":
            csv_load.lines_from_cubin(profile, cubin)
        elif profile.pcs and all(s.line is None for s in profile.pcs.values()) and \
                csv_load.lines_from_cubin(profile, cubin):
            # a report whose source correlation is missing (a damaged report: issue 13's mutation run) still
            # has the cubin's line table, ncu's own source of that correlation
            notes.append(f"{Path(profile.report).name} records no source line for any sampled PC: lines are "
                         f"taken from the line table of {Path(cubin.path).name}")
        if cubin.debug_build:
            notes.append(f"{cubin.path} is a -G (debug) build: its SASS is unoptimized, so this advice "
                         "does not describe a release build. Profile a -lineinfo -O3 build instead.")
    elif profile.origin == "csv":
        notes.append(f"no cubin matching the SASS of {profile.name} was found: a CSV's SASS view has no source "
                     "lines, so nothing can be placed on lines, and blame and advice need the binary (--binary, "
                     "or keep the .cubin next to the export)")
    elif profile.origin == "ncu-rep":
        fill_sass(profile)  # read without SASS text (join checks a binary without it): the report's, shown instead
        looked = (f"none of the {len(cubins)} cubin{'s' if len(cubins) != 1 else ''} given or found "
                  f"({', '.join(Path(c.path).name for c in cubins[:3])}{', ...' if len(cubins) > 3 else ''}) holds "
                  f"{profile.name} ({profile.arch})" if cubins else
                  f"no cubin for {profile.name} ({profile.arch}) was found")
        notes.append(f"{looked}: showing sampled lines only; blame and advice need the binary the report was "
                     "profiled from (--binary, or keep the .cubin next to the report)")
    if cubin is not None and not any(i.loc is not None for f in cubin.functions.values() for i in f.instructions):
        from warpwise.analysis.profile.join import lines_from_profile

        with_lines, n = lines_from_profile(profile, cubin)
        if n:  # the report's own lines (the profiled build had -lineinfo): advice is placed on them too
            cubin = with_lines
            notes.append(f"no line table in {Path(cubin.path).name} (built without -lineinfo, or stripped): lines "
                         f"come from {Path(profile.report).name}, whose PCs Nsight Compute correlated with the "
                         "profiled build's line table; inlined call sites are not known")
        else:
            notes.append(f"no line information in {Path(cubin.path).name}: it was built without -lineinfo, so hot "
                         "lines and line-level advice cannot be placed on the source; kernel-level advice is shown. "
                         "Rebuild with `nvcc -lineinfo` and profile again")
    lines = line_stats(profile)
    mark_entry_line(lines, profile, cubin)
    local, ambiguous = map_sources(profile, cubin, sources, path_map)
    ka = KernelAnalysis(profile=profile, cubin=cubin, lines=lines, local=local, notes=notes + ambiguous,
                        ambiguous_paths=ambiguous)
    unattributed = sum(s.samples for s in profile.pcs.values() if s.function == UNATTRIBUTED)
    no_line = sum(s.samples for s in profile.pcs.values() if s.function != UNATTRIBUTED and s.line is None)
    if unattributed or no_line:
        T = max(1, profile.total_samples)
        parts = []
        if unattributed:
            parts.append(f"{unattributed:,} ({unattributed / T:.1%}) in code outside this module (e.g. the CDP "
                         "device runtime)")
        if no_line:
            parts.append(f"{no_line:,} ({no_line / T:.1%}) on instructions without line information")
        ka.notes.append("samples not on any source line: " + "; ".join(parts) +
                        ". They count in the kernel's total.")
    checked: set[Path] = set()
    for recorded, here in local.items():
        embedded = profile.source_files.get(recorded)
        if here is None or here in checked or embedded is None:
            continue
        checked.add(here)
        disk = read_source(here, errors="replace")
        if disk is not None and not same_code(disk, embedded):
            ka.notes.append(f"{here} differs from the source that was profiled: line numbers and text here are "
                            "those of the profiled version (the editor maps them onto your edits)")
    if cubin is not None:
        from warpwise.analysis.profile.inlining import inline_sites

        ka.inlined, ka.inclusive = inline_sites(profile, cubin)
        _blame_and_advise(ka, launches, programs)
    return ka


def _blame_and_advise(ka: KernelAnalysis, launches: int | None = None, programs: dict[int, Any] | None = None) -> None:
    """Build the program structure, run the blamer (GPA §4) and the optimizers (GPA §5).

    A failure in a stage becomes a note on the kernel (and is logged) so the sampled-lines view still
    reaches the user; later stages are skipped.
    """
    try:
        from warpwise.analysis.advice import evaluate
        from warpwise.analysis.blame.attribute import attribute
        from warpwise.analysis.program.build import build_program
    except Exception as e:  # a broken install must not hide the sampled lines
        ka.notes.append(f"blame and advice are unavailable: {e}")
        return
    assert ka.cubin is not None
    stage = "program structure"
    try:
        cache = programs if programs is not None else {}
        ka.program = cache.get(id(ka.cubin))
        if ka.program is None:
            ka.program = cache[id(ka.cubin)] = build_program(ka.cubin)
        stage = "blame"
        ka.blame = attribute(ka.program, ka.profile, ka.profile.arch)
        freeze_built()  # the program and blame stay alive to the analysis's end: out of full collections
        stage = "advice"
        report = evaluate(ka.profile, ka.program, ka.blame, ka.profile.arch, launches=launches)
    except Exception as e:
        log.exception("%s failed for %s", stage, ka.profile.name)
        ka.notes.append(f"{stage} failed for {ka.profile.name}: {e}")
        return
    ka.advice_report = report
    ka.advice = list(report.advice)
    # the pipeline already states these two facts (with exact counts) before any advice runs
    said = ("the binary is a -G debug build", "samples lie in code outside the binary's functions")
    ka.notes.extend(n for n in report.notes if n not in ka.notes and not any(p in n for p in said))


def analyze(report: Path, binaries: Sequence[Path], sources: Sequence[Path], kernel: str | None = None,
            pages: Sequence[Path] = (), path_map: Sequence[tuple[str, str]] = ()) -> Analysis:
    """Analyse every kernel launch of ``report`` against ``binaries`` (.cubin / executables).

    ``report`` is a ``.ncu-rep`` or an ncu CSV export; ``pages``: the other CSV pages of the same export
    (default for ``<stem>.source.csv``: ``<stem>.details.csv``/``.raw.csv`` beside it). Raises InputError
    for an unreadable report. Per-kernel problems (no binary, mismatch) become notes or entries of
    ``errors`` so one bad kernel does not hide the others. ``path_map``: see analyze_kernel. Results are
    kept in the persistent cache (:mod:`warpwise.analysis.cache`), keyed by the contents of all inputs.
    """
    from warpwise.analysis import cache
    from warpwise.analysis.profile.csv_load import companions, is_csv

    key = None
    if cache.enabled():
        files = [report, *pages, *(companions(report) if is_csv(report) and not pages else [])]
        try:
            # cached analyses hold the paths as given (the report prints them): key on those and the cwd too
            given = [str(p) for p in (*files, *binaries, *sources)]
            key = cache.make_key("analysis", [*files, *binaries, *sources],
                                 [f"kernel={kernel}", f"path_map={sorted(path_map)}", f"cwd={os.getcwd()}",
                                  *given])
        except Exception:  # an unreadable input: the uncached path reports it with the file named
            key = None
    hit = cache.load(key) if key else None
    if isinstance(hit, Analysis):
        return hit
    result = _analyze(report, binaries, sources, kernel, pages, path_map)
    if key and not result.errors:  # per-file problems may be transient (a binary being rewritten)
        cache.store(key, result)
    return result


def _analyze(report: Path, binaries: Sequence[Path], sources: Sequence[Path], kernel: str | None,
             pages: Sequence[Path], path_map: Sequence[tuple[str, str]]) -> Analysis:
    from warpwise.analysis.profile.csvfile import CsvError

    try:
        profiles = _load_profiles_cached(report, pages)
    except (ProfileLoadError, CsvError, InputFileError) as e:
        raise InputError(str(e)) from e
    cubins: list[Cubin] = []
    errors: list[str] = []
    for b in binaries:
        try:
            cubins.extend(_load_binary_cached(b))
        except Exception as e:  # BinaryError and friends: keep going with the others
            errors.append(f"{b}: {e}" if str(b) not in str(e) else str(e))
    out: list[KernelAnalysis] = []
    counts: dict[str, int] = {}
    for p in profiles:
        counts[p.mangled] = counts.get(p.mangled, 0) + 1
    programs: dict[int, Any] = {}
    with heap_frozen():  # the profiles, cubins, programs and blame live until the analysis returns
        for p in profiles:
            if kernel and kernel not in p.name and kernel not in p.mangled:
                continue
            try:
                out.append(analyze_kernel(p, cubins, sources, path_map, launches=counts[p.mangled],
                                          programs=programs))
            except MismatchError as e:
                errors.append(str(e))
    return Analysis(report=report, kernels=out, errors=errors)


def covers(analysis: Analysis, source: Path) -> bool:
    """Whether any kernel of ``analysis`` has samples on a line of the local file ``source``."""
    src = source.resolve()
    return any(p is not None and p.resolve() == src for k in analysis.kernels for p in k.local.values())
