"""A source file's bytes as text for a rewrite, and the rewritten text back as bytes in the file's own
encoding (issue 13 item 3: edits keep the file's bytes).

UTF-8 files (a BOM kept as U+FEFF) are decoded as UTF-8. A file that is not valid UTF-8 — a CUDA
engineer's Latin-1 or Windows-1252 comment — is decoded byte for byte as ISO-8859-1 (every byte one code
point U+0000–U+00FF), so the rewrite sees the same ASCII code nvcc sees, and encoding the result back the
same way returns every byte outside the edits exactly as it was, whatever single-byte encoding the file
really uses. Text that warpwise inserts is ASCII apart from ``§`` in its comments (in ISO-8859-1 too);
any other character outside ISO-8859-1 becomes an ASCII spelling. Files that are not text (a NUL byte:
an Nsight Compute report, a cubin) and UTF-16 files are refused with what they look like.
Standard library only.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path

from warpwise.analysis.bounded import InputFileError

#: ASCII spellings of the non-Latin-1 characters generated text may hold (others: NFKD, else "?").
_ASCII = {"\u2014": "--", "\u2013": "-", "\u2192": "->", "\u2190": "<-", "\u2264": "<=", "\u2265": ">=",
          "\u2260": "!=", "\u2248": "~", "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'}

#: File signatures of the binary inputs a user may pass where a source is expected.
_MAGIC = ((b"NVR\x00", "an Nsight Compute report (.ncu-rep)"), (b"\x7fELF", "an ELF binary (a cubin or executable)"))


@dataclass(frozen=True)
class SourceText:
    """A source file decoded for editing.

    ``text``: the file as text (no newline translation); ``encoding``: ``"utf-8"`` or ``"latin-1"``
    (a file that is not UTF-8, kept byte for byte); ``first_non_utf8``: byte offset of the first byte
    that is not UTF-8 (None for UTF-8 files)."""

    text: str
    encoding: str
    first_non_utf8: int | None = None

    def encode(self, text: str) -> bytes:
        """``text`` (this file's text after edits) as bytes in the file's encoding: outside the edits,
        the file's own bytes. Characters of inserted text that ISO-8859-1 lacks are written in ASCII."""
        if self.encoding == "utf-8":
            return text.encode("utf-8")
        try:
            return text.encode("latin-1")
        except UnicodeEncodeError:
            return "".join(c if ord(c) < 256 else _ascii(c) for c in text).encode("latin-1")


def _ascii(c: str) -> str:
    if c in _ASCII:
        return _ASCII[c]
    plain = unicodedata.normalize("NFKD", c).encode("ascii", "ignore").decode("ascii")
    return plain or "?"


def not_text(data: bytes) -> str | None:
    """What ``data`` (a file's bytes, or its first few KiB) is when it is no source text — ``"UTF-16 text
    (byte-order mark at byte 0)"``, ``"an Nsight Compute report (.ncu-rep) (a NUL byte at byte 3)"``,
    ``"binary data (a NUL byte at byte N)"`` — else None. A C/C++ source never holds a NUL byte."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16 text (byte-order mark at byte 0)"
    nul = data.find(b"\x00")
    if nul < 0:
        return None
    what = next((w for magic, w in _MAGIC if data.startswith(magic)), "binary data")
    return f"{what} (a NUL byte at byte {nul})"


def decode_source(data: bytes, path: str | Path) -> SourceText:
    """``data`` (the bytes of source ``path``) as a :class:`SourceText`.

    Raises:
        InputFileError: naming ``path``, when the bytes are not text (:func:`not_text`: UTF-16/32, or a NUL
            byte, with what the file looks like: a report, an ELF binary).
    """
    what = not_text(data)
    if what is not None and what.startswith("UTF-16"):
        raise InputFileError(f"{path}: {what}; nvcc and warpwise read UTF-8 or single-byte sources: save it as UTF-8")
    if what is not None:
        raise InputFileError(f"{path}: not a source file: {what}")
    try:
        return SourceText(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError as e:
        return SourceText(data.decode("latin-1"), "latin-1", e.start)
