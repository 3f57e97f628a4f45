"""Move per-line results with the text they belong to across edits (DESIGN.md "Language server").

Results are computed against a *baseline* text (the source embedded in the profile, or the file as it
was when analysed). A line of the baseline maps to the current text when it lies in an unchanged run of
lines; a line that was edited or deleted maps to None (its results are dropped / marked stale).
"""

from __future__ import annotations

import bisect
import difflib
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import overload

from warpwise.analysis.profile.source import code_of_line


def text_hash(text: str) -> str:
    """SHA-1 of the text with normalised line endings (what 'unchanged' means here)."""
    return hashlib.sha1(text.replace("\r\n", "\n").encode("utf-8")).hexdigest()


class LineMap:
    """Maps 1-based baseline lines to 1-based current lines; None where the line changed.

    Built in time linear in the text with C-level list operations: the common head and tail of the two
    texts' code lines are found by comparing slices, only the middle (where the edits are) goes to difflib,
    and the map is kept as matching blocks (``line`` bisects them). ``current_codes``: the current text's
    code lines when the caller has them (:func:`doc_code_lines`), else they are computed from ``current``."""

    def __init__(self, baseline: str, current: str, current_codes: list[str] | None = None) -> None:
        self.identical = baseline == current or (("\r" in baseline or "\r" in current) and
                                                 baseline.replace("\r\n", "\n") == current.replace("\r\n", "\n"))
        self._starts: list[int] = []
        self._blocks: list[tuple[int, int, int]] = []  # (baseline first line, current first line, lines)
        self._ends = (0, 0)  # line counts of the baseline and the current text
        if self.identical:
            return
        # compare code only: a line whose comment or indentation changed keeps its results
        a = _code_lines(baseline)
        b = current_codes if current_codes is not None else _code_lines(current)
        self._ends = (len(a), len(b))
        head = _common_length(a, b, tail=False)
        tail = _common_length(a[head:], b[head:], tail=True)
        blocks = [(1, 1, head)] if head else []
        # difflib indexes its second sequence: give it the shorter middle (usually the baseline's)
        am, bm = a[head:len(a) - tail], b[head:len(b) - tail]
        if am and bm:  # lines only inserted or only deleted (one middle empty) match nothing more: no diff
            swap = len(am) < len(bm)
            sm = difflib.SequenceMatcher(a=bm if swap else am, b=am if swap else bm, autojunk=False)
            for i1, j1, size in sm.get_matching_blocks():
                if size:
                    base0, cur0 = (j1, i1) if swap else (i1, j1)
                    blocks.append((head + base0 + 1, head + cur0 + 1, size))
        if tail:
            blocks.append((len(a) - tail + 1, len(b) - tail + 1, tail))
        blocks.sort()
        self._blocks = blocks
        self._starts = [x[0] for x in blocks]

    def line(self, baseline_line: int) -> int | None:
        """Current line of ``baseline_line`` or None when that line was edited or removed."""
        if self.identical:
            return baseline_line
        k = bisect.bisect_right(self._starts, baseline_line) - 1
        if k < 0:
            return None
        base0, cur0, size = self._blocks[k]
        return cur0 + baseline_line - base0 if baseline_line < base0 + size else None

    def edited_line(self, baseline_line: int) -> int | None:
        """Where an edited baseline line is now: the current line at the same offset in the changed run of
        lines that replaced it (a line edited in place keeps its number relative to its unchanged
        neighbours); None when the line was deleted (the run of current lines is shorter) or is unchanged
        (``line`` answers for those)."""
        if self.identical or self.line(baseline_line) is not None:
            return None
        k = bisect.bisect_right(self._starts, baseline_line) - 1
        if k >= 0:
            base0, cur0, size = self._blocks[k]
            gap_base, gap_cur = base0 + size, cur0 + size
        else:
            gap_base, gap_cur = 1, 1
        if k + 1 < len(self._blocks):
            end_base, end_cur = self._blocks[k + 1][0], self._blocks[k + 1][1]
        else:
            end_base, end_cur = self._ends[0] + 1, self._ends[1] + 1
        if not gap_base <= baseline_line < end_base:
            return None
        offset = baseline_line - gap_base
        return gap_cur + offset if gap_cur + offset < end_cur else None


def _common_length(a: list[str], b: list[str], tail: bool) -> int:
    """Length of the longest common prefix (suffix when ``tail``) of ``a`` and ``b`` (binary search over
    slice comparisons: O(n log n) element compares, all in C)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        same = a[len(a) - mid:] == b[len(b) - mid:] if tail else a[:mid] == b[:mid]
        if same:
            lo = mid
        else:
            hi = mid - 1
    return lo


_code_cache: dict[str, str] = {}


def _misses(codes: list[str | None]) -> list[int]:
    """Indices of the None entries (list.index scans in C: a new version misses only its edited lines)."""
    out: list[int] = []
    k = -1
    while True:
        try:
            k = codes.index(None, k + 1)
        except ValueError:
            return out
        out.append(k)


def _code_lines(text: str) -> list[str]:
    """``code_lines`` (analysis/profile/source.py) with each line's result remembered by its text (most
    lines of a document are the same from one version to the next)."""
    cache = _code_cache
    if len(cache) > 200_000:
        cache.clear()
    lines = text.replace("\r\n", "\n").split("\n") if "\r" in text else text_lines(text)
    codes: list[str | None] = list(map(cache.get, lines))
    for k in _misses(codes):
        codes[k] = cache[lines[k]] = code_of_line(lines[k])
    return codes  # type: ignore[return-value]


class PlainLines(Sequence[str]):
    """A text's lines as ``text.split("\\n")`` gives them, read from a snapshot of an open document's plain
    lines (server/document.py ``plain_lines``: each ends in ``\\n`` but the last) without splitting the
    text: a request on a new version of a 5,000-line file reads one line or a few, not all of them."""

    __slots__ = ("_lines", "_n")

    def __init__(self, plain: Sequence[str]) -> None:
        self._lines = tuple(plain)  # the document's list changes with its next edit: a snapshot (pointers)
        self._n = len(self._lines) + (1 if not self._lines or self._lines[-1].endswith("\n") else 0)

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, k: int) -> str: ...

    @overload
    def __getitem__(self, k: slice) -> list[str]: ...

    def __getitem__(self, k: int | slice) -> str | list[str]:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(self._n))]
        if k < 0:
            k += self._n
        if not 0 <= k < self._n:
            raise IndexError(k)
        if k == len(self._lines):
            return ""  # after the last line end
        x = self._lines[k]
        return x[:-1] if x.endswith("\n") else x


_split: dict[str, Sequence[str]] = {}


def text_lines(text: str, plain: Sequence[str] | None = None) -> Sequence[str]:
    """``text.split("\\n")``, once per text (the last 8 kept; keyed by content: a string's hash is computed
    once per object, and an edit undone finds its text again): the requests on one document version share
    it. With ``plain`` (the document's plain lines of this text, on the event loop) the lines are read from
    them instead (:class:`PlainLines`). Shared: callers must not change it."""
    hit = _split.get(text)
    if hit is not None:
        return hit
    lines: Sequence[str] = PlainLines(plain) if plain is not None else text.split("\n")
    while len(_split) >= 8:
        _split.pop(next(iter(_split)))  # the oldest (one list freed at a time)
    _split[text] = lines
    return lines


_code_by_line: dict[str, str] = {}


def doc_code_lines(lines: list[str]) -> list[str]:
    """:func:`_code_lines` of the text made of ``lines`` — each ending in ``\\n`` or ``\\r\\n`` except the
    last, which has no line end (server/document.py ``plain_lines``) — remembered per line object: a new
    version of an open document shares every untouched line object with the previous one, so only the
    edited lines are looked at (5,000 lines: 0.1 ms instead of splitting and hashing the whole text)."""
    cache = _code_by_line
    if len(cache) > 200_000:
        cache.clear()
    codes: list[str | None] = list(map(cache.get, lines))
    for k in _misses(codes):
        x = lines[k]
        body = x[:-2] if x.endswith("\r\n") else x[:-1] if x.endswith("\n") else x
        codes[k] = cache[x] = code_of_line(body)
    if not lines or lines[-1].endswith("\n"):
        codes.append("")  # the empty line after the last line end (what str.split gives)
    return codes  # type: ignore[return-value]


_maps_lock = threading.Lock()
_maps: OrderedDict[tuple[str, str], LineMap] = OrderedDict()


def line_map(baseline: str, current: str, current_lines: list[str] | None = None) -> LineMap:
    """The LineMap of (``baseline``, ``current``), built once per pair of texts (the last 32 kept): hover,
    inlay hints, code lenses and code actions on one document version share it, and an edit undone (or a
    line typed and deleted again) finds its map again. ``current_lines``: the document's plain lines of
    ``current`` (server/document.py), read on the event loop only."""
    key = (baseline, current)
    with _maps_lock:
        hit = _maps.get(key)
        if hit is not None:
            _maps.move_to_end(key)
            return hit
    codes = None
    if current_lines is not None:
        codes = doc_code_lines(current_lines)
        text_lines(current, current_lines)  # this version's lines for the requests, without a split
    m = LineMap(baseline, current, codes)
    with _maps_lock:
        _maps[key] = m
        _maps.move_to_end(key)
        while len(_maps) > 32:
            _maps.popitem(last=False)
    return m
