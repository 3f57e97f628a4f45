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

from .cursors import is_device_function
from .model import RewriteError

SHIM = Path(__file__).with_name("cuda_shim.h")
_ARGS = ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib", "-nostdinc", "-std=c++17",
         "-Wno-unknown-cuda-version", "-include", str(SHIM)]
_SYS_INCLUDE = re.compile(rb"^[ \t]*#[ \t]*include[ \t]*<[^>\n]*>", re.M)
# Errors that a name missing from the shim causes (the system headers are not read): in host-only code
# they say nothing about the device-side launches (a host `std::vector<int> v;` gives these, then
# follow-on parse errors in the same declaration).
_LOOKUP = re.compile(r"use of undeclared identifier|unknown type name|no (template|type|member) named|"
                     r"expected namespace name|undeclared identifier")
_index: ci.Index | None = None


@dataclass(frozen=True)
class ClangError:
    """An error/fatal libclang diagnostic located in the main file: byte offset, 1-based line and byte
    column, clang's message."""

    offset: int
    line: int
    column: int
    message: str

    @property
    def lookup(self) -> bool:
        """True for a name-lookup error (a name the shim or an unread system header would declare)."""
        return _LOOKUP.search(self.message) is not None


@dataclass
class Parsed:
    """A parsed translation unit with its UTF-8 source bytes and the main file's name."""

    tu: ci.TranslationUnit
    data: bytes
    path: str
    errors: list[ClangError]  # error/fatal diagnostics located in the main file, in source order

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
        # only the user's file: the shim or a user header may not parse without the real CUDA headers
        if d.severity >= ci.Diagnostic.Error and d.location.file is not None and d.location.file.name == name:
            errors.append(ClangError(d.location.offset, d.location.line, d.location.column, d.spelling))
    return Parsed(tu=tu, data=data, path=name, errors=sorted(errors, key=lambda e: e.offset))


def blocking_errors(p: Parsed) -> list[ClangError]:
    """The errors of ``p`` that make its AST untrustworthy for the rewrites, in source order.

    All errors count except those in a host-only declaration (not ``__global__``/``__device__``) that
    also has a name-lookup error: a host ``std::vector`` or thrust call fails to resolve because
    system headers are not read, and clang's recovery adds follow-on errors there; such code holds no
    device-side launch. A syntax error in host code alone (no lookup error) still counts.
    """
    if not p.errors:
        return []
    decls = [(int(c.extent.start.offset), int(c.extent.end.offset), c) for c in p.top_level()]
    tolerated: set[int] = set()
    for s, e, c in decls:
        mine = [err for err in p.errors if s <= err.offset < e]
        if mine and any(err.lookup for err in mine) and not is_device_function(c):
            tolerated.update(err.offset for err in mine)
    return [err for err in p.errors if err.offset not in tolerated]


def require_parses(p: Parsed) -> None:
    """Raise RewriteError ``file:line:col: clang's message`` for the first blocking error (see
    blocking_errors); a broken AST would hide launches or misplace edits."""
    errs = blocking_errors(p)
    if not errs:
        return
    e = errs[0]
    more = f" (and {len(errs) - 1} more error{'s' if len(errs) > 2 else ''})" if len(errs) > 1 else ""
    hint = (" (warpwise parses with a small CUDA shim header instead of the CUDA headers: if this name is "
            "a CUDA API or intrinsic, the shim lacks it)") if e.lookup else ""
    raise RewriteError(f"{p.path}:{e.line}:{e.column}: the file does not parse: {e.message}{hint}{more}")


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
