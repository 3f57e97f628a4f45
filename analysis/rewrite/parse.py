"""Host-only libclang parse of a .cu file with the shim header shipped in this package.

FACTS.md (libclang): a host-only parse (``-x cuda --cuda-host-only -nocudainc -nocudalib -nostdinc``)
with a shim that defines the CUDA keywords, dim3, the builtin index variables and
``__cudaPushCallConfiguration`` parses device-side launches; a device-only parse rejects them.
System ``#include <...>`` lines are blanked (same byte length, so offsets do not move) because the
libclang wheel ships no resource or standard headers; the shim declares the C and CUDA runtime
functions that CUDA programs commonly call.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import clang.cindex as ci

from .model import RewriteError

SHIM = Path(__file__).with_name("cuda_shim.h")
_ARGS = ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib", "-nostdinc", "-std=c++17",
         "-Wno-unknown-cuda-version", "-include", str(SHIM)]
_SYS_INCLUDE = re.compile(rb"^[ \t]*#[ \t]*include[ \t]*<[^>\n]*>", re.M)
_index: ci.Index | None = None


@dataclass
class Parsed:
    """A parsed translation unit with its UTF-8 source bytes and the main file's name."""

    tu: ci.TranslationUnit
    data: bytes
    path: str
    errors: list[tuple[int, str]]  # (byte offset, message) of error diagnostics in the main file

    def text(self, start: int, end: int) -> str:
        """Source text of bytes [start, end)."""
        return self.data[start:end].decode("utf-8")

    def ctext(self, c: ci.Cursor) -> str:
        """Source text of a cursor's extent."""
        return self.text(c.extent.start.offset, c.extent.end.offset)

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and 1-based byte column of a byte offset."""
        line = self.data.count(b"\n", 0, offset) + 1
        col = offset - (self.data.rfind(b"\n", 0, offset) + 1) + 1
        return line, col

    def in_main(self, c: ci.Cursor) -> bool:
        """True when the cursor lies in the parsed file (not the shim)."""
        f = c.location.file
        return f is not None and f.name == self.path

    def top_level(self) -> Iterator[ci.Cursor]:
        """Top-level declarations of the main file (namespaces are entered)."""
        stack = [self.tu.cursor]
        while stack:
            cur = stack.pop()
            kids = [k for k in cur.get_children() if self.in_main(k)]
            for k in reversed(kids):
                if k.kind == ci.CursorKind.NAMESPACE:
                    stack.append(k)
            for k in kids:
                if k.kind != ci.CursorKind.NAMESPACE:
                    yield k


def _blank_system_includes(data: bytes) -> bytes:
    return _SYS_INCLUDE.sub(lambda m: b" " * len(m.group(0)), data)


def parse(source: str, path: str) -> Parsed:
    """Parse CUDA ``source`` (the text of ``path``) host-only.

    Raises RewriteError when libclang cannot build a translation unit at all. Error diagnostics are
    returned in ``Parsed.errors``; callers decide whether they matter for the code they rewrite.
    """
    global _index
    if _index is None:
        _index = ci.Index.create()
    data = source.encode("utf-8")
    name = str(path)
    try:
        tu = _index.parse(name, args=_ARGS, unsaved_files=[(name, _blank_system_includes(data).decode("utf-8"))],
                          options=ci.TranslationUnit.PARSE_INCOMPLETE)
    except ci.TranslationUnitLoadError as e:
        raise RewriteError(f"{name}: libclang could not parse the file: {e}") from e
    errors = []
    for d in tu.diagnostics:
        if d.severity >= ci.Diagnostic.Error and d.location.file is not None and d.location.file.name == name:
            errors.append((d.location.offset, d.spelling))
    return Parsed(tu=tu, data=data, path=name, errors=errors)


def walk(c: ci.Cursor) -> Iterator[ci.Cursor]:
    """Pre-order walk of a cursor's subtree (the cursor included)."""
    stack = [c]
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(reversed(list(cur.get_children())))


def walk_with_parents(c: ci.Cursor, parents: tuple[ci.Cursor, ...] = ()) -> Iterator[
        tuple[ci.Cursor, tuple[ci.Cursor, ...]]]:
    """Pre-order walk yielding (cursor, ancestors from the root down)."""
    stack: list[tuple[ci.Cursor, tuple[ci.Cursor, ...]]] = [(c, parents)]
    while stack:
        cur, ps = stack.pop()
        yield cur, ps
        kids = list(cur.get_children())
        for k in reversed(kids):
            stack.append((k, (*ps, cur)))
