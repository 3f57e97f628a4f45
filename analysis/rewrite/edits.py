"""Text edits on UTF-8 byte offsets, and the pieces every transform inserts (prelude, macros)."""

from __future__ import annotations

import re

from warpwise.analysis.eol import eol_at, with_eol

from .model import RewriteError, TextEdit
from .parse import Parsed

# [[maybe_unused]]: a program that never calls ww_launch_error_count() gets no nvcc warning #177
# ("declared but never referenced"); nvcc 13 accepts it silently with -std=c++11 to c++20.
PRELUDE = """\
#ifndef WARPWISE_PRELUDE
#define WARPWISE_PRELUDE 1
/* warpwise prelude (warpwise dynamic-parallelism rewrite): device-side launch failures are counted here,
   because a failed device-side launch (e.g. past the device runtime's pending-launch limit) is
   otherwise silent. The host reads the count with ww_launch_error_count(). */
static __device__ unsigned int ww_launch_errors = 0;
static unsigned int ww_host_launch_errors = 0;
#define WARPWISE_COUNT_LAUNCH_ERROR(err) \\
  do { if ((err) != cudaSuccess) atomicAdd(&ww_launch_errors, 1u); } while (0)
[[maybe_unused]] static inline unsigned int ww_launch_error_count(void) {
  unsigned int n = 0;
  cudaMemcpyFromSymbol(&n, ww_launch_errors, sizeof n);
  return n + ww_host_launch_errors;
}
#endif
"""


def make_edit(p: Parsed, start: int, end: int, new_text: str) -> TextEdit:
    """A TextEdit with line/column filled in from the parsed source; bare ``\\n`` in ``new_text`` become
    the line ending at ``start`` (:func:`eol_at`)."""
    line, col = p.line_col(start)
    eline, ecol = p.line_col(end)
    new_text = with_eol(new_text, eol_at(p.data, start))
    return TextEdit(start=start, end=end, new_text=new_text, line=line, column=col, end_line=eline, end_column=ecol)


_COMMENT_OR_STRING = re.compile(rb'//[^\n]*|/\*.*?(?:\*/|\Z)|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', re.S)


def comment_spans(data: bytes) -> list[tuple[int, int]]:
    """Byte ranges ``[start, end)`` of the comments in ``data`` (strings and character literals are
    skipped so a ``"//"`` inside one is no comment). A ``//`` comment ends before its newline."""
    return [(m.start(), m.end()) for m in _COMMENT_OR_STRING.finditer(data) if m.group(0)[:1] == b"/"]


def apply_edits(source: str, edits: list[TextEdit]) -> str:
    """Apply non-overlapping edits (byte offsets into the UTF-8 encoding of ``source``).

    Edits at the same insertion point are applied in list order. Raises RewriteError when two edits
    overlap or an offset lies outside the source.
    """
    data = source.encode("utf-8")
    order = sorted(range(len(edits)), key=lambda i: (edits[i].start, edits[i].end, i))
    out: list[bytes] = []
    pos = 0
    for i in order:
        e = edits[i]
        if e.start < pos or e.end < e.start or e.end > len(data):
            raise RewriteError(f"edit at byte {e.start}..{e.end} overlaps another edit or lies outside the source")
        out.append(data[pos:e.start])
        out.append(e.new_text.encode("utf-8"))
        pos = e.end
    out.append(data[pos:])
    return b"".join(out).decode("utf-8")


def header_offset(p: Parsed) -> int:
    """Where file-level additions go: after the last top-of-file preprocessor line (``#include``,
    ``#define`` with its continuation lines, ...) that precedes the first declaration, else 0."""
    first_decl = min((c.extent.start.offset for c in p.top_level()), default=len(p.data))
    spans = comment_spans(p.data)
    masked = bytearray(p.data)
    for a, b in spans:  # comments blanked (newlines kept): a '#' inside one is no directive
        masked[a:b] = bytes(c if c in b"\r\n" else 32 for c in p.data[a:b])
    pos = best = 0
    lines = bytes(masked).split(b"\n")
    i = 0
    while i < len(lines) and pos < first_decl:
        ln = lines[i]
        start = pos
        is_pp = ln.lstrip().startswith(b"#")
        # continuation lines of a macro: '\' before LF or CRLF (issue 13: '\' + CRLF was missed)
        while ln.rstrip(b"\r").endswith(b"\\") and i + 1 < len(lines):
            pos += len(ln) + 1
            i += 1
            ln = lines[i]
        pos += len(ln) + 1
        i += 1
        if is_pp and start < first_decl:
            best = min(pos, len(p.data))
    for a, b in spans:  # a directive ending inside a multi-line comment: go past the comment's line
        if a < best < b:
            nl = p.data.find(b"\n", b)
            best = len(p.data) if nl < 0 else nl + 1
    return best


def macro_block(p: Parsed, name: str, value: str, comment: str) -> str:
    """``#ifndef NAME / #define NAME value / #endif`` unless the file already defines NAME."""
    if re.search(rb"#\s*define\s+" + name.encode() + rb"\b", p.data):
        return ""
    return f"#ifndef {name}\n#define {name} {value} /* {comment} */\n#endif\n"


def prelude(p: Parsed) -> str:
    """The error-counter prelude unless the file already has it."""
    return "" if re.search(rb"#\s*define\s+WARPWISE_PRELUDE\b", p.data) else PRELUDE


def fresh(p: Parsed, base: str, extra: str = "") -> str:
    """``base``, or ``base_2``, ``base_3``, ... so that the name is not used in the file (or ``extra``)."""
    name, i = base, 2
    while re.search(rb"\b" + name.encode() + rb"\b", p.data) or re.search(r"\b" + name + r"\b", extra):
        name = f"{base}_{i}"
        i += 1
    return name


def fresh_in(text: str, base: str) -> str:
    """``base``, or ``base_2``, ... so that the name does not occur in ``text`` (a function's own text:
    names local to a generated function only have to differ from the code copied into it)."""
    name, i = base, 2
    while re.search(r"\b" + name + r"\b", text):
        name = f"{base}_{i}"
        i += 1
    return name


def indent_of(p: Parsed, offset: int) -> str:
    """Leading whitespace of the line holding ``offset``."""
    ls = p.data.rfind(b"\n", 0, offset) + 1
    m = re.match(rb"[ \t]*", p.data[ls:offset])
    return m.group(0).decode() if m else ""


def substitute(p: Parsed, start: int, end: int, repl: list[tuple[int, int, str]]) -> str:
    """Text of bytes [start, end) with the (s, e, text) replacements (inside it, not overlapping)."""
    out, pos = [], start
    for s, e, t in sorted(repl):
        if s < pos or e > end:
            continue
        out.append(p.text(pos, s))
        out.append(t)
        pos = e
    out.append(p.text(pos, end))
    return "".join(out)
