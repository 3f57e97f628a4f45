"""Position conversion at the protocol boundary: analysis speaks 1-based lines and UTF-8 byte columns,
LSP speaks 0-based lines and columns in the negotiated position encoding (UTF-16 code units unless
client and server agreed on utf-8 or utf-32). The only place that converts (STYLE.md #7)."""

from __future__ import annotations

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


def units(text: str, encoding: str = UTF16) -> int:
    """Length of ``text`` in the columns of ``encoding``."""
    if encoding == UTF8:
        return len(text.encode("utf-8"))
    if encoding == UTF32:
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def utf8_col_to_units(line_text: str, byte_col: int, encoding: str = UTF16) -> int:
    """Column in ``encoding`` of UTF-8 byte column ``byte_col`` (0-based) of ``line_text``."""
    prefix = line_text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore")
    return units(prefix, encoding)


def units_to_utf8_col(line_text: str, col: int, encoding: str = UTF16) -> int:
    """UTF-8 byte column of column ``col`` (0-based, in ``encoding``) of ``line_text``."""
    if encoding == UTF8:
        return min(col, len(line_text.encode("utf-8")))
    if encoding == UTF32:
        return len(line_text[:col].encode("utf-8"))
    enc = line_text.encode("utf-16-le")[: col * 2]
    return len(enc.decode("utf-16-le", errors="ignore").encode("utf-8"))


def content_extent(line_text: str, encoding: str = UTF16) -> tuple[int, int]:
    """(start, end) columns of the line without leading/trailing white space (whole line if blank)."""
    stripped = line_text.rstrip()
    lead = len(stripped) - len(stripped.lstrip())
    start = units(stripped[:lead], encoding)
    end = units(stripped, encoding)
    return (start, end) if end > start else (0, units(line_text, encoding))
