"""Comparing the profiled source with the file on disk: what counts as "the same code".

A profile stays valid for a file whose comments or white space changed; any change to code makes the
lines it touches stale. One definition, used by the CLI's stale-source note and the editor's line map.
"""

from __future__ import annotations


def code_of_line(line: str) -> str:
    """``line`` without a trailing ``//`` comment and without white space (string literals kept as-is)."""
    out: list[str] = []
    quote, i = "", 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                out.append(line[i:i + 2])
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif line.startswith("//", i):
            break
        out.append(c)
        i += 1
    return "".join("".join(out).split())


def code_lines(text: str) -> list[str]:
    """Per-line code of ``text`` (line endings normalised: ``\r\r\n`` — sources from other platforms — and
    ``\r\n`` count as one line end; a leading UTF-8 BOM, which is no code, dropped), for line-by-line
    comparison."""
    text = text.removeprefix("\ufeff")
    return [code_of_line(x) for x in text.replace("\r\r\n", "\n").replace("\r\n", "\n").split("\n")]


def same_code(a: str, b: str) -> bool:
    """Whether two versions of a file differ at most in ``//`` comments and white space (line by line)."""
    return code_lines(a) == code_lines(b)
