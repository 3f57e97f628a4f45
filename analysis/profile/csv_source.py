"""The Source page of an ncu CSV export (``--page source --print-source sass|cuda|cuda,sass --csv``).

The SASS view has one table per function of the launched module (``"Kernel Name","NAME"`` above it; the
launched kernel first, as on ncu's Source page), one row per instruction: its absolute address, SASS text,
warp samples (all / not issued), executed counts, L2 sectors, and ``stall_<stem>`` / ``stall_<stem> (Not
Issued)`` samples per reason (FACTS.md). The SASS view carries no source line: lines come from the
cubin's line table once the profile is joined to it, or from a CUDA view export (one row per source
line, the same sample columns), which gives per-line numbers without a cubin but no per-PC join.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from warpwise.analysis.arch.stalls import CSV_ALIASES, STALL_REASONS
from warpwise.analysis.profile.csvfile import CsvTable, count, normalize
from warpwise.analysis.profile.model import PCSample

# Column names by ncu version (2025.x labels first, then older labels, then metric names as printed
# with --print-metric-name name).
ADDRESS = ("Address", "# Address", "PC", "Address (PC)")
SASS = ("Source", "SASS", "Instruction")
LINE = ("Line No", "Line", "# Line", "Line Number", "Source Line")
FILE = ("File", "File Name", "File Path", "Source File")
SAMPLES = ("Warp Stall Sampling (All Samples)", "Warp Stall Sampling (All Cycles)", "Sampling Data (All)",
           "smsp__pcsamp_sample_count")
NOT_ISSUED = ("Warp Stall Sampling (Not-issued Samples)", "Warp Stall Sampling (Not-issued Cycles)",
              "Sampling Data (Not Issued)", "smsp__pcsamp_sample_count_not_issued")
COUNTERS: dict[str, tuple[str, ...]] = {
    "inst_executed": ("Instructions Executed", "inst_executed"),
    "thread_inst_executed": ("Thread Instructions Executed", "thread_inst_executed"),
    "predicated_on_thread_inst_executed": ("Predicated-On Thread Instructions Executed",
                                           "thread_inst_executed_true"),
    "divergent_branches": ("Divergent Branches", "smsp__branch_targets_threads_divergent"),
    "l2_sectors": ("L2 Theoretical Sectors Global", "memory_l2_theoretical_sectors_global"),
    "l2_sectors_ideal": ("L2 Theoretical Sectors Global Ideal", "memory_l2_theoretical_sectors_global_ideal"),
    "l2_sectors_local": ("L2 Theoretical Sectors Local", "memory_l2_theoretical_sectors_local"),
}
_STALL_LABEL = re.compile(r"^stall_(\w+?)(\s*\(not issued\))?$", re.I)
_STALL_METRIC = re.compile(r"^smsp__pcsamp_warps_issue_stalled_(\w+?)(_not_issued)?$", re.I)


def stall_columns(table: CsvTable) -> tuple[dict[int, str], dict[int, str], list[str]]:
    """(column -> reason of the all-samples stall columns, column -> reason of the not-issued ones, names of
    stall columns this table of reasons does not know — kept under their own stem and reported)."""
    all_: dict[int, str] = {}
    ni: dict[int, str] = {}
    unknown: list[str] = []
    for i, h in enumerate(table.header):
        name = " ".join(h.split())
        m = _STALL_LABEL.match(name) or _STALL_METRIC.match(name)
        if not m:
            continue
        stem = m.group(1).lower()
        reason = CSV_ALIASES.get(stem) or (stem if stem in STALL_REASONS else None)
        if reason is None:
            unknown.append(name)
            reason = stem
        (ni if m.group(2) else all_)[i] = reason
    return all_, ni, unknown


def function_name(title: str) -> str:
    """The short name of a Source-page title: ``blur_rows(const float *, ...)`` -> ``blur_rows``;
    ``void child<float>(float*)`` -> ``child<float>`` (return type and parameter list dropped)."""
    depth, cut = 0, len(title)
    for i, c in enumerate(title):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "(" and depth == 0:
            cut = i
            break
    head = title[:cut].strip()
    depth, start = 0, 0
    for i, c in enumerate(head):  # the last top-level space separates a return type
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == " " and depth == 0:
            start = i + 1
    return head[start:] or title


@dataclass
class SassFunction:
    """One function table of the SASS view: its title, start address (first row) and instructions.

    ``samples`` are keyed by absolute address; ``offset`` = address - start.
    """

    title: str
    start: int
    samples: list[PCSample] = field(default_factory=list)
    unknown_stalls: list[str] = field(default_factory=list)


@dataclass
class LineRow:
    """One row of the CUDA view: a source line's samples (file may be None when ncu printed none)."""

    file: str | None
    line: int
    samples: int
    not_issued: int
    stalls: dict[str, int]


def _address(cell: str) -> int | None:
    s = cell.strip().replace(",", "")
    try:
        v = int(s, 16) if s.lower().startswith("0x") else int(s)
    except ValueError:
        return None
    return v if v >= 0 else None


def is_sass_table(table: CsvTable) -> bool:
    """Whether ``table`` is a SASS-view table (an address column and a sample column)."""
    return table.index(*ADDRESS) is not None and table.index(*SAMPLES) is not None


def is_source_text_table(table: CsvTable) -> bool:
    """Whether ``table`` is a CUDA view without any counter (ncu 2025.3's ``--print-source cuda`` prints only
    line numbers and text)."""
    return table.index(*ADDRESS) is None and table.index(*LINE) is not None and table.index(*SAMPLES) is None


def is_cuda_table(table: CsvTable) -> bool:
    """Whether ``table`` is a CUDA-view table (a line column and a sample column, no address)."""
    return table.index(*ADDRESS) is None and table.index(*LINE) is not None and table.index(*SAMPLES) is not None


def _counts(table: CsvTable, row: list[str], all_: dict[int, str], ni: dict[int, str]) -> tuple[
        int, int, dict[str, int], dict[str, int]]:
    stalls = {r: v for i, r in all_.items() if (v := count(row[i]))}
    stalls_ni = {r: v for i, r in ni.items() if (v := count(row[i]))}
    si, ti = table.index(*SAMPLES), table.index(*NOT_ISSUED)
    samples = (count(row[si]) if si is not None else None) or 0
    if ni:
        not_issued = sum(stalls_ni.values())  # what the .ncu-rep reader counts (exact per reason)
    else:
        not_issued = (count(row[ti]) if ti is not None else None) or 0
    return samples, not_issued, stalls, stalls_ni


def sass_function(table: CsvTable) -> SassFunction:
    """The instructions of one SASS-view table, or of one (function, file) table of the CUDA,SASS view.

    In the CUDA,SASS view a source-line row (line number, aggregated counts) precedes the rows of its
    instructions: those get the table's file and that line — ncu's own source correlation. Source-line rows
    and ``...`` rows are not instructions; missing cells count 0 samples, as ncu's own totals do. ``start``
    is the first address (SASS view: the function's start) or the lowest (CUDA,SASS view, ordered by line).
    """
    ai = table.index(*ADDRESS)
    assert ai is not None
    li = table.index(*LINE)
    si = table.index(*SASS, after=ai) if li is not None and li < ai else table.index(*SASS)
    all_, ni, unknown = stall_columns(table)
    fn = SassFunction(title=table.title[1] if table.title else "", start=-1, unknown_stalls=unknown)
    line: int | None = None
    for row in table.rows:
        if li is not None and (n := count(row[li])) is not None:
            line = n
            continue
        pc = _address(row[ai])
        if pc is None:
            continue
        if fn.start < 0 or (li is not None and pc < fn.start):
            fn.start = pc
        samples, not_issued, stalls, stalls_ni = _counts(table, row, all_, ni)
        s = PCSample(function="", offset=pc - fn.start, pc=pc, sass=" ".join(row[si].split()) if si is not None else "",
                     samples=samples, not_issued=not_issued, stalls=stalls, stalls_not_issued=stalls_ni)
        if li is not None and line is not None and table.file:
            s.file, s.line = table.file, line
        for attr, names in COUNTERS.items():
            k = table.index(*names)
            if k is not None:
                setattr(s, attr, count(row[k]) or 0)
        fn.samples.append(s)
    return fn


def cuda_lines(table: CsvTable, default_file: str | None = None) -> list[LineRow]:
    """The source lines of one CUDA-view table (rows with a line number; others skipped)."""
    li, fi = table.index(*LINE), table.index(*FILE)
    assert li is not None
    all_, ni, _ = stall_columns(table)
    out = []
    for row in table.rows:
        line = count(row[li])
        if line is None:
            continue
        samples, not_issued, stalls, _stalls_ni = _counts(table, row, all_, ni)
        file = (row[fi].strip() or default_file) if fi is not None else default_file
        out.append(LineRow(file=file, line=line, samples=samples, not_issued=not_issued, stalls=stalls))
    return out


def column_names(table: CsvTable) -> set[str]:
    """Normalized column names of ``table`` (for tests and version checks)."""
    return {normalize(h) for h in table.header}
