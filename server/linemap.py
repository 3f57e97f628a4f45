"""Move per-line results with the text they belong to across edits (DESIGN.md "Language server").

Results are computed against a *baseline* text (the source embedded in the profile, or the file as it
was when analysed). A line of the baseline maps to the current text when it lies in an unchanged run of
lines; a line that was edited or deleted maps to None (its results are dropped / marked stale).
"""

from __future__ import annotations

import difflib
import hashlib
import threading
from collections import OrderedDict

from warpwise.analysis.profile.source import code_of_line


def text_hash(text: str) -> str:
    """SHA-1 of the text with normalised line endings (what 'unchanged' means here)."""
    return hashlib.sha1(text.replace("\r\n", "\n").encode("utf-8")).hexdigest()


class LineMap:
    """Maps 1-based baseline lines to 1-based current lines; None where the line changed."""

    def __init__(self, baseline: str, current: str) -> None:
        self.identical = text_hash(baseline) == text_hash(current)
        self._map: dict[int, int] = {}
        if self.identical:
            return
        # compare code only: a line whose comment or indentation changed keeps its results
        a, b = _code_lines(baseline), _code_lines(current)
        # the common head and tail map one to one; only the middle (where edits are) goes to difflib
        head = 0
        n = min(len(a), len(b))
        while head < n and a[head] == b[head]:
            head += 1
        tail = 0
        while tail < n - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
            tail += 1
        for k in range(head):
            self._map[k + 1] = k + 1
        sm = difflib.SequenceMatcher(a=a[head:len(a) - tail], b=b[head:len(b) - tail], autojunk=False)
        for tag, i1, i2, j1, _j2 in sm.get_opcodes():
            if tag == "equal":
                for k in range(i2 - i1):
                    self._map[head + i1 + k + 1] = head + j1 + k + 1
        for k in range(tail):
            self._map[len(a) - k] = len(b) - k

    def line(self, baseline_line: int) -> int | None:
        """Current line of ``baseline_line`` or None when that line was edited or removed."""
        if self.identical:
            return baseline_line
        return self._map.get(baseline_line)


_code_cache: dict[str, str] = {}


def _code_lines(text: str) -> list[str]:
    """``code_lines`` (analysis/profile/source.py) with each line's result remembered by its text (most
    lines of a document are the same from one version to the next)."""
    out = []
    cache = _code_cache
    if len(cache) > 200_000:
        cache.clear()
    for x in text.replace("\r\n", "\n").split("\n"):
        c = cache.get(x)
        if c is None:
            c = cache[x] = code_of_line(x)
        out.append(c)
    return out


_maps_lock = threading.Lock()
_maps: OrderedDict[tuple[str, str], LineMap] = OrderedDict()


def line_map(baseline: str, current: str) -> LineMap:
    """The LineMap of (``baseline``, ``current``), built once per pair of texts (the last 32 kept): hover,
    inlay hints, code lenses and code actions on one document version share it."""
    key = (baseline, current)
    with _maps_lock:
        hit = _maps.get(key)
        if hit is not None:
            _maps.move_to_end(key)
            return hit
    m = LineMap(baseline, current)
    with _maps_lock:
        _maps[key] = m
        while len(_maps) > 32:
            _maps.popitem(last=False)
    return m
