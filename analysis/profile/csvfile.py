"""Generic reading of Nsight Compute CSV exports (``ncu --import R.ncu-rep --page ... --csv``).

What real exports look like (FACTS.md, and the examples' own exports): numbers are quoted and carry
grouping separators (``"213,515"``, ``"441,726.92"``); ``--page raw`` puts a units row under the header;
a live ``ncu --csv`` run prints ``==PROF==``/``==WARNING==`` lines (and the program's own output) before
and between the tables; ``n/a`` or ``-`` stands for a value ncu has not got; the set and order of columns
changes between ncu versions and between kernels of one export. So: every column is looked up by name
(with the aliases older versions used), the units row is consumed, separators are stripped, lines that
are not CSV records are skipped and reported, and missing values stay missing (None), never 0.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from warpwise.analysis import bounded

#: Largest CSV export read (bytes): a source page of a big kernel is a few MiB (the "csv" kind of bounded).
MAX_CSV_BYTES = bounded.DEFAULT_LIMITS["csv"]

_TOOL_LINE = re.compile(r"^==(PROF|WARNING|ERROR|INFO)==")
_MISSING = {"", "n/a", "N/A", "-", "--", "nan", "NaN"}
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


class CsvError(Exception):
    """A CSV export cannot be read: the message names the file, the line and what is wrong."""


@dataclass
class CsvTable:
    """One table of an export: its header, the units row when there is one, and its data rows.

    ``title``: the ``("Kernel Name"|"Function Name", NAME)`` line above a source-page table (None for other
    pages); ``file``: the ``"File Path"``/``"File Name"`` line above a CUDA-view table (it holds for the
    tables after it until the next one); ``first_line``: 1-based line of the header in the file; ``rows``
    keep the raw cell strings.
    """

    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    units: list[str] | None = None
    title: tuple[str, str] | None = None
    first_line: int = 0
    file: str | None = None

    def index(self, *names: str, after: int = -1) -> int | None:
        """Index of the first column after ``after`` whose normalized name equals one of ``names`` (aliases,
        in order). ``after`` tells apart repeated names (the CUDA,SASS view has two ``Source`` columns)."""
        norm = [normalize(h) for h in self.header]
        for n in names:
            k = normalize(n)
            for i in range(after + 1, len(norm)):
                if norm[i] == k:
                    return i
        return None

    def unit(self, col: int) -> str:
        """The unit of column ``col`` ('' without a units row)."""
        return self.units[col] if self.units is not None and col < len(self.units) else ""


@dataclass
class CsvExport:
    """All tables of one CSV file plus the lines that were not part of any table (tool messages, program
    output), as ``(line number, text)``."""

    path: Path
    tables: list[CsvTable]
    skipped: list[tuple[int, str]] = field(default_factory=list)

    def warnings(self) -> list[str]:
        """ncu's own ``==WARNING==``/``==ERROR==`` lines, for the user."""
        return [t for _, t in self.skipped if t.startswith(("==WARNING==", "==ERROR=="))]


def normalize(name: str) -> str:
    """Column name for comparison: case folded, white space collapsed."""
    return " ".join(name.split()).casefold()


def number(cell: str | None) -> float | None:
    """The number in an ncu CSV cell, or None when the cell holds none (``n/a``, ``-``, empty, text).

    Grouping separators are stripped (``"213,515"`` -> 213515, ``"441,726.92"`` -> 441726.92; ncu prints
    ``,`` for grouping and ``.`` for the decimal point in the C locale it uses for CSV), as are thin/no-break
    spaces used as separators; a trailing ``%`` is dropped.
    """
    if cell is None:
        return None
    s = cell.strip()
    if s in _MISSING:
        return None
    if s.endswith(")") and " (" in s:  # `--print-metric-instances values`: "2,309 (32; 32; ...)" -> the total
        s = s.split(" (", 1)[0]
    s = s.replace(",", "").replace("\u202f", "").replace("\u00a0", "").replace(" ", "").removesuffix("%")
    if not _NUMBER.match(s):
        return None
    v = float(s)
    return v if math.isfinite(v) else None  # "1e999": no counter ncu prints overflows a double


def count(cell: str | None) -> int | None:
    """:func:`integer` for a counter column (samples, instructions, line numbers): a negative value is no
    count, so it is missing (None) like any other cell that holds none."""
    v = integer(cell)
    return None if v is None or v < 0 else v


def integer(cell: str | None) -> int | None:
    """:func:`number` as an int (None when missing); fractional counts are rounded to the nearest."""
    v = number(cell)
    return None if v is None else round(v)


_SCALE = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
_TIME_NS = {"ns": 1.0, "nsecond": 1.0, "nsec": 1.0, "us": 1e3, "usecond": 1e3, "usec": 1e3, "ms": 1e6,
            "msecond": 1e6, "msec": 1e6, "s": 1e9, "second": 1e9, "sec": 1e9}


def to_base(value: float | None, unit: str) -> float | None:
    """``value`` in ``unit`` converted to ncu's base unit: bytes for ``Kbyte``/``Mbyte``/``Gbyte`` (decimal
    prefixes, as ncu prints them: a 32 KiB carveout shows as 32.77 Kbyte), nanoseconds for times
    (``usecond``, ``ms``...). Other units (cycle, %, register/thread, ...) are returned unchanged."""
    if value is None:
        return None
    u = unit.strip().split("/")[0].casefold()
    if u in _TIME_NS:
        return value * _TIME_NS[u]
    m = re.fullmatch(r"([kmgt]?)(byte|b)", u)
    if m:
        return value * _SCALE[m.group(1)]
    return value


def read_text(path: Path) -> str:
    """The text of a CSV export (UTF-8, BOM allowed), read through the bounded opener: a regular file within
    the CSV limit (:data:`MAX_CSV_BYTES`, ``WARPWISE_MAX_CSV_BYTES``), so a FIFO or a device is refused,
    never opened for reading. Raises CsvError for a missing, special or huge file."""
    try:
        data = bounded.read_bytes(path, "csv")
    except bounded.InputFileError as e:
        raise CsvError(str(e)) from e
    return data.decode("utf-8-sig", errors="replace")


def _records(text: str) -> Iterable[tuple[int, str]]:
    """(line number, physical line) of the text, CR/CRLF endings normalized."""
    yield from enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1)


def _is_units_row(row: Sequence[str], header: Sequence[str]) -> bool:
    """A units row (right under the header) has the header's width and no number in any cell: ncu
    leaves the identifier columns empty and names a unit (``byte``, ``cycle``, ``%``...) or nothing."""
    return len(row) == len(header) and all(number(c) is None for c in row)


def parse(text: str, path: Path) -> CsvExport:
    """Split an export into tables. A table starts at a header row (a record whose cells are all text),
    optionally preceded by a ``"Kernel Name","NAME"`` title row; the units row right under a header is
    consumed; shorter records are padded with empty (missing) cells.

    Lines that do not start with a quote (``==PROF==`` lines, the program's output) are skipped and kept
    in ``skipped``. Raises CsvError when no table is found.
    """
    tables: list[CsvTable] = []
    skipped: list[tuple[int, str]] = []
    cur: CsvTable | None = None
    title: tuple[str, str] | None = None
    file: str | None = None
    units_pending = False
    last = short_at = 0  # the last physical line; the last line whose row was short of its header (see below)
    for n, line in _records(text):
        last = n
        if not line.strip():
            continue
        if _TOOL_LINE.match(line) or not line.lstrip().startswith('"'):
            skipped.append((n, line))
            continue
        try:
            row = next(csv.reader(io.StringIO(line)))
        except (csv.Error, StopIteration):
            skipped.append((n, line))
            continue
        while row and not row[-1].strip():
            row.pop()  # ncu ends some records with a trailing comma; short records leave columns out
        if not row:
            continue
        if len(row) == 2 and normalize(row[0]) in ("kernel name", "function name"):
            title, cur, units_pending = (row[0], row[1]), None, False
            continue
        if len(row) == 2 and normalize(row[0]) in ("file path", "file name"):
            file, cur, units_pending = row[1], None, False
            continue
        if cur is not None and len(row) <= len(cur.header) and not (
                len(row) == len(cur.header) and row == cur.header):
            if len(row) < len(cur.header) or line.count('"') % 2 == 1:
                short_at = n
            row += [""] * (len(cur.header) - len(row))
            if units_pending and _is_units_row(row, cur.header):
                cur.units = row
                units_pending = False
                continue
            if any(number(c) is not None for c in row) or units_pending is False:
                cur.rows.append(row)
                units_pending = False
                continue
        if cur is not None and any(number(c) is not None for c in row[len(cur.header):]):
            # numbers past the header's last column: the header (or the row) was cut or edited, so the cells
            # no longer line up with their column names; reading on would put values under the wrong names.
            # (ncu does not escape quotes in source text, so a source row can split into extra cells, but
            # those hold code, not a bare number: such rows are skipped as before.)
            raise CsvError(f"{path}: line {n} has {len(row)} cells but the table's header (line "
                           f"{cur.first_line}) names {len(cur.header)} columns; the file is cut or edited")
        if all(number(c) is None for c in row) and any(c.strip() for c in row):
            cur = CsvTable(header=row, title=title, first_line=n, file=file)
            tables.append(cur)
            title, units_pending = None, True
            continue
        skipped.append((n, line))
    # ncu ends every export with a newline: a last record without one that is also short of the header's
    # columns (or inside an open quote) is a file cut in the middle of a row, whose missing rows would
    # silently lower every sample count
    tail = text.replace("\r\n", "\n").replace("\r", "\n")
    if tables and not tail.endswith("\n") and short_at == last:
        raise CsvError(f"{path}: the file ends in the middle of line {last} (a row shorter than its table's "
                       "header, without a final newline): the export is cut; export it again")
    if not tables:
        raise CsvError(f"{path}: no CSV table found (expected the output of `ncu --import R.ncu-rep --page source "
                       "--print-source sass --csv` or `--page details|raw --csv`)")
    return CsvExport(path=path, tables=tables, skipped=skipped)


def read(path: str | Path) -> CsvExport:
    """Read and split the export at ``path`` (see :func:`parse`). Raises CsvError."""
    p = Path(path)
    return parse(read_text(p), p)
