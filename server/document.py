"""Open documents whose incremental edits cost O(edit), not O(document) (issue 15: editor requests during
edits every 20 ms; issue 13: hovers during a 490 edits/s burst).

pygls 2.1's ``TextDocument`` applies every incremental change by splitting the whole text into lines and
writing each one into a ``StringIO`` in a Python loop (5.7 ms per edit of a 5,000-line file measured on
the event loop, before any warpwise code runs), and its ``lines`` property re-splits the text at every
call. :class:`EditedDocument` keeps the lines as a list, replaces only the lines an edit touches (a list
slice assignment) and joins the text once per version, when it is first asked for. The result is the
text pygls would hold: same line splitting (``str.splitlines``), same conversion of client positions
(pygls's own position codec), same handling of ranges past the end (tests/server/test_document.py
compares both on random edits).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lsprotocol import types as lsp
from pygls.workspace import PositionCodec, TextDocument, Workspace


class EditedDocument(TextDocument):
    """A pygls ``TextDocument`` holding its text as a list of lines (each with its line end)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._line_list: list[str] | None = None  # None until an edit needs it (most documents are only read)
        self._lines_tuple: tuple[str, ...] | None = None
        self._open_ends = 0  # lines of _line_list not ending in "\n" (see plain_lines)

    def _lines_now(self) -> list[str]:
        if self._line_list is None:
            self._line_list = self.source.splitlines(True)
            self._open_ends = _open_ends(self._line_list)
        return self._line_list

    def plain_lines(self) -> list[str] | None:
        """The lines with their line ends when ``\\n`` (or ``\\r\\n``) ends every line but the last, which
        has no line end (so splitting the text at ``\\n`` gives these lines); None otherwise (a lone ``\\r``,
        a form feed or another ``str.splitlines`` boundary in the text). Between versions the lines an edit
        did not touch are the same string objects, so per-line memos keyed by them hit (their hashes are
        cached). The list is the document's own: read it on the event loop, never change it."""
        lines = self._lines_now()
        if self._open_ends == 0 or (self._open_ends == 1 and not lines[-1].endswith("\n")
                                    and lines[-1].splitlines() == [lines[-1]]):
            return lines
        return None

    def _apply_incremental_change(self, change: lsp.TextDocumentContentChangePartial) -> None:
        """Apply one ranged change: the lines from the one before the edit to the one after it are joined,
        edited and split again (a ``\\r`` / ``\\n`` pair the edit brings together becomes one line end, as
        a whole-text split would make it); every other line is kept as it is."""
        lines = self._lines_now()
        sl, sc = _server_position(self._position_codec, lines, change.range.start)
        el, ec = _server_position(self._position_codec, lines, change.range.end)
        if not lines or sl < 0 or sl > el or sl >= len(lines) or el >= len(lines):
            # pygls's own corner cases (empty text, reversed range): its code, on the whole text
            self._source = self.source
            TextDocument._apply_incremental_change(self, change)
            self._line_list = self._lines_tuple = None  # split again from the new text when asked
            return
        lo, hi = max(0, sl - 1), min(len(lines), el + 2)
        middle = "".join(lines[lo:sl]) + lines[sl][:sc] + change.text + lines[el][ec:] + "".join(lines[el + 1:hi])
        new = middle.splitlines(True)
        self._open_ends += _open_ends(new) - _open_ends(lines[lo:hi])
        lines[lo:hi] = new
        self._source = None
        self._lines_tuple = None

    def _apply_full_change(self, change: lsp.TextDocumentContentChangeEvent) -> None:
        super()._apply_full_change(change)
        self._line_list = self._lines_tuple = None

    @property
    def source(self) -> str:
        """The text (joined from the lines once per version)."""
        if self._source is None and getattr(self, "_line_list", None) is not None:
            self._source = "".join(self._line_list or ())
        return super().source

    @property
    def lines(self) -> Sequence[str]:
        """The lines with their line ends (``str.splitlines(True)``, as pygls), split once per version."""
        if self._lines_tuple is None:
            self._lines_tuple = tuple(self._lines_now())
        return self._lines_tuple


def _server_position(codec: PositionCodec, lines: list[str], pos: lsp.Position) -> tuple[int, int]:
    """(line, code point column) of client position ``pos``: pygls's ``position_from_client_units``, whose
    per-character Python loop is skipped on an ASCII line (every encoding counts one unit per character
    there; the result, the clamping of ``pos.character`` included, is the loop's)."""
    n = len(lines)
    target = lines[-1] if n and pos.line >= n else lines[pos.line] if n else ""
    if not target.isascii():
        p = codec.position_from_client_units(lines, pos)
        return p.line, p.character
    if n == 0:
        return 0, 0
    if pos.line >= n:
        return n - 1, len(target)
    line = target.replace("\r\n", "\n")
    if not line:
        return pos.line, 0
    if pos.character > len(line):
        pos.character = len(line) - 1
    return pos.line, max(0, min(pos.character, len(line)))


def _open_ends(lines: list[str]) -> int:
    """How many of ``lines`` do not end in ``\\n``."""
    return sum(1 for x in lines if not x.endswith("\n"))


def _create(ws: Workspace, doc_uri: str, source: str | None = None, version: int | None = None,
            language_id: str | None = None) -> TextDocument:
    return EditedDocument(doc_uri, source=source, version=version, language_id=language_id,
                          sync_kind=ws._sync_kind, position_codec=ws._position_codec)


def install(ws: Workspace) -> None:
    """Make ``ws`` (pygls's workspace, created at ``initialize``) hold its open documents as
    :class:`EditedDocument` from now on."""
    ws._create_text_document = lambda *a, **k: _create(ws, *a, **k)  # type: ignore[method-assign]
