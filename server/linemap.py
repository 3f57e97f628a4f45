"""Move per-line results with the text they belong to across edits (DESIGN.md "Language server").

Results are computed against a *baseline* text (the source embedded in the profile, or the file as it
was when analysed). A line of the baseline maps to the current text when it lies in an unchanged run of
lines; a line that was edited or deleted maps to None (its results are dropped / marked stale).
"""

from __future__ import annotations

import difflib
import hashlib

from warpwise.analysis.profile.source import code_lines


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
        a, b = code_lines(baseline), code_lines(current)
        sm = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
        for tag, i1, i2, j1, _j2 in sm.get_opcodes():
            if tag == "equal":
                for k in range(i2 - i1):
                    self._map[i1 + k + 1] = j1 + k + 1

    def line(self, baseline_line: int) -> int | None:
        """Current line of ``baseline_line`` or None when that line was edited or removed."""
        if self.identical:
            return baseline_line
        return self._map.get(baseline_line)
