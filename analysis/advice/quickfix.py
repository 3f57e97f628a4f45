"""Mechanical quick fixes that follow from advice: source edits as plain dataclasses (no LSP types).

Positions are 1-based lines and 1-based UTF-8 byte columns plus 0-based byte offsets, as libclang
reports them; the server converts them to LSP's UTF-16 positions. Sources are parsed host-only with
libclang through :func:`warpwise.analysis.rewrite.parse.parse` (the shim header shipped in
``analysis/rewrite``), so device-side code parses without a CUDA install.

Finders:
- :func:`float_literal_fixes` — a ``double`` literal in a ``float`` expression gets an ``f`` suffix
  (``0.1 * row[i]`` promotes the float operand to double: F2F.F64.F32 + DFMA + F2F.F32.F64 in SASS).
- :func:`unroll_fix` — ``#pragma unroll`` before a hot loop the compiler left rolled.
- :func:`forceinline_fix` — ``__forceinline__`` replacing ``__noinline__`` on a hot device function.
- :func:`fast_math_note` — the ``--use_fast_math`` explanation (a build flag: no source edit).
:func:`fixes_for_advice` picks the finders that implement one piece of advice.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import clang.cindex as ci
from warpwise.analysis.advice.context import demangle_short
from warpwise.analysis.eol import eol_at, with_eol
from warpwise.analysis.rewrite import cursors
from warpwise.analysis.rewrite.model import RewriteError
from warpwise.analysis.rewrite.parse import Parsed, parse, walk

if TYPE_CHECKING:
    from warpwise.analysis.advice.model import Advice

K = ci.CursorKind

#: Unroll factor proposed for a loop whose trip count is not a compile-time constant. nvcc's plain
#: ``#pragma unroll`` unrolls only loops with a constant trip count ("CUDA C++ Programming Guide",
#: #pragma unroll: "If no number is specified after #pragma unroll, the loop is completely unrolled if
#: its trip count is constant, otherwise it is not unrolled at all"), so such loops need an explicit count.
DEFAULT_UNROLL = 4

_ARITH_OPS = {"+", "-", "*", "/", "+=", "-=", "*=", "/=", "<", ">", "<=", ">=", "==", "!="}


class QuickFixError(ValueError):
    """The source cannot be parsed well enough to build a fix (message names the file and line)."""


@dataclass(frozen=True)
class Edit:
    """Replace bytes [start, end) of the UTF-8 source by ``new_text`` (start == end inserts).

    ``line``/``column``: 1-based line and byte column of ``start``; ``end_line``/``end_column`` of ``end``.
    """

    start: int
    end: int
    line: int
    column: int
    end_line: int
    end_column: int
    new_text: str


@dataclass(frozen=True)
class QuickFix:
    """A fix for one place: ``kind`` (float_literal, unroll, forceinline, fast_math), the ``optimizer`` id
    it belongs to, ``title`` (code-action title), ``file``/``line`` (1-based) it targets, its ``edits``
    (empty for explanations) and an ``explanation`` in plain words."""

    kind: str
    optimizer: str
    title: str
    file: str
    line: int
    edits: tuple[Edit, ...] = ()
    explanation: str = ""
    extra: dict[str, str] = field(default_factory=dict)


_local = threading.local()


def _parse(source: str, path: str) -> Parsed:
    """libclang parse of ``source``, remembered for the last 8 (path, text) pairs per thread (every kernel of
    a cubin, and every fix of one advice, asks for the same file; a translation unit is not shared between
    threads)."""
    key = (path, source)
    _PARSED: OrderedDict[tuple[str, str], Parsed] = _local.__dict__.setdefault("parsed", OrderedDict())
    hit = _PARSED.get(key)
    if hit is not None:
        _PARSED.move_to_end(key)
        return hit
    try:
        p = parse(source, path)
    except RewriteError as e:
        raise QuickFixError(str(e)) from e
    _PARSED[key] = p
    while len(_PARSED) > 8:
        _PARSED.popitem(last=False)
    return p


def _edit(p: Parsed, start: int, end: int, new_text: str) -> Edit:
    new_text = with_eol(new_text, eol_at(p.data, start))  # a CRLF file stays CRLF
    line, col = p.line_col(start)
    eline, ecol = p.line_col(end)
    return Edit(start=start, end=end, line=line, column=col, end_line=eline, end_column=ecol, new_text=new_text)


def _device_functions(p: Parsed) -> list[ci.Cursor]:
    return [c for c in _declarations(p.tu.cursor)
            if c.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE) and p.in_main(c) and cursors.is_device_function(c)
            and cursors.body_of(c) is not None]


def _declarations(c: ci.Cursor) -> Iterator[ci.Cursor]:
    """:func:`walk` without descending into compound statements: a function with a body is never declared
    inside one, so the device functions are found without walking every function body."""
    stack = [c]
    while stack:
        cur = stack.pop()
        yield cur
        if cur.kind != K.COMPOUND_STMT:
            stack.extend(reversed(list(cur.get_children())))


def _is_float_expr(c: ci.Cursor) -> bool:
    """Whether an expression has type ``float`` (cv-qualifiers ignored) before implicit conversions."""
    return bool(cursors.strip(c, casts=False).type.get_canonical().kind == ci.TypeKind.FLOAT)


def _is_double_literal(c: ci.Cursor, p: Parsed) -> bool:
    if c.kind != K.FLOATING_LITERAL or c.type.get_canonical().kind != ci.TypeKind.DOUBLE:
        return False
    text = p.ctext(c)
    return bool(text) and text[-1] not in "fFlL"


_FLOAT_OPS = {"+", "-", "*", "/"}


def _floatish(c: ci.Cursor, p: Parsed) -> tuple[bool, bool]:
    """(would be float once its double literals are f-suffixed, has a float-typed leaf) for an expression.

    ``0.125 * (a - 4.0 * b)`` with float a, b is double only through its two literals: both must be fixed
    together, or the conversions stay (F2F.F64.F32 / DFMA / F2F.F32.F64)."""
    c = cursors.strip(c, casts=False)
    if _is_float_expr(c):
        return True, True
    if _is_double_literal(c, p):
        return True, False
    op = cursors.binop(c)
    if op in _FLOAT_OPS and c.kind == K.BINARY_OPERATOR:
        lhs, rhs = cursors.operands(c)
        (a, fa), (b, fb) = _floatish(lhs, p), _floatish(rhs, p)
        return a and b, fa or fb
    if c.kind == K.UNARY_OPERATOR:
        kids = cursors.expr_children(c)
        if len(kids) == 1:
            return _floatish(kids[0], p)
    return False, False


def float_literal_fixes(source: str, path: str, lines: set[int] | None = None) -> list[QuickFix]:
    """``double`` literals that are operands of an arithmetic/comparison operator whose other operand is a
    ``float`` expression — or an expression that is double only because of other double literals, which are
    then fixed too (``0.125 * (a - 4.0 * b)``) — or the right side of a compound assignment to a ``float``,
    inside __device__ / __global__ functions. Each gets an ``f`` suffix inserted right after the literal's
    last byte.

    ``lines``: restrict to these 1-based lines (None = whole file). Raises QuickFixError when libclang
    cannot parse the file.
    """
    p = _parse(source, path)
    out: list[QuickFix] = []
    seen: set[int] = set()
    for fn in _device_functions(p):
        for c in walk(fn):
            op = cursors.binop(c)
            if op is None or op not in _ARITH_OPS:
                continue
            lhs, rhs = cursors.operands(c)
            for lit_side, other in ((lhs, rhs), (rhs, lhs)):
                lit = cursors.strip(lit_side, casts=False)
                if not _is_double_literal(lit, p):
                    continue
                if c.kind == K.COMPOUND_ASSIGNMENT_OPERATOR and lit_side is lhs:
                    continue
                ok, has_float = _floatish(other, p)
                if not (_is_float_expr(other) or (ok and has_float)):
                    continue
                start, end = lit.extent.start.offset, lit.extent.end.offset
                line, _ = p.line_col(start)
                if start in seen or (lines is not None and line not in lines):
                    continue
                seen.add(start)
                text = p.text(start, end)
                out.append(QuickFix(
                    kind="float_literal", optimizer="strength_reduction", title=f"Write {text}f (float literal)",
                    file=path, line=line, edits=(_edit(p, end, end, "f"),),
                    explanation=(f"the double literal {text} at line {line} makes the float operand of "
                                 f"'{op}' convert to double (F2F) and the arithmetic run in FP64: "
                                 f"write {text}f"),
                    extra={"literal": text, "operator": op}))
    out.sort(key=lambda q: q.edits[0].start)
    return out


def combined_literal_fix(fixes: list[QuickFix]) -> QuickFix | None:
    """One quick fix for every double literal of ``fixes`` (all in one file): fixing only some leaves the
    statement in FP64. None for an empty list; the fix itself for a single one."""
    if not fixes:
        return None
    if len(fixes) == 1:
        return fixes[0]
    lits = [q.extra["literal"] for q in fixes]
    names = ", ".join(f"{x}f" for x in lits[:-1]) + f" and {lits[-1]}f"
    lines = sorted({q.line for q in fixes})
    where = f"line {lines[0]}" if len(lines) == 1 else "lines " + ", ".join(map(str, lines))
    return QuickFix(kind="float_literal", optimizer="strength_reduction",
                    title=f"Write {names} (float literals)", file=fixes[0].file, line=fixes[0].line,
                    edits=tuple(e for q in fixes for e in q.edits),
                    explanation=(f"the double literals {', '.join(lits)} at {where} keep the float arithmetic in "
                                 "FP64 (F2F.F64.F32, DFMA/DMUL, F2F.F32.F64): fixing all of them together keeps "
                                 "it in float"),
                    extra={"literal": ", ".join(lits), "operator": fixes[0].extra.get("operator", "")})


_LOOP_KINDS = (K.FOR_STMT, K.WHILE_STMT, K.DO_STMT)


def _loops_covering(p: Parsed, first_line: int, last_line: int) -> list[ci.Cursor]:
    """Loop statements of device functions whose extent spans lines [first_line, last_line]. Only cursors
    spanning those lines are descended into (a loop spanning them lies inside such a cursor), so a long
    function is not walked statement by statement."""
    def spans(c: ci.Cursor) -> bool:
        e = c.extent
        return bool(e.start.line <= first_line and e.end.line >= last_line)

    out = []
    for fn in _device_functions(p):
        if not spans(fn):
            continue
        stack = [fn]
        while stack:
            cur = stack.pop()
            if cur.kind in _LOOP_KINDS:
                out.append(cur)
            stack.extend(ch for ch in cur.get_children() if spans(ch))
    return out


def _constant_trip(loop: ci.Cursor) -> bool:
    """Whether a for loop's condition compares against a literal or a const/constexpr variable."""
    if loop.kind != K.FOR_STMT:
        return False
    for k in loop.get_children():
        op = cursors.binop(k)
        if op in ("<", "<=", ">", ">=", "!="):
            _, rhs = cursors.operands(k)
            r = cursors.strip(rhs)
            if r.kind == K.INTEGER_LITERAL:
                return True
            if r.kind == K.DECL_REF_EXPR and r.referenced is not None and \
                    r.referenced.type.is_const_qualified():
                return True
            return False
    return False


def loop_bound_arguments(source: str, path: str, first_line: int, last_line: int | None = None) -> dict[int, list[str]]:
    """Kernel arguments the trip counts of a loop nest come from: for the innermost loop statement spanning
    source lines [first_line, last_line] and every for loop inside it, the function parameters its condition
    refers to, directly or through the initializers of local variables (``const int r = ksize / 2; ... dy <=
    r`` gives ``ksize``). Returns {loop line: parameter names in source order}, loops without any left out."""
    p = _parse(source, path)
    cands = _loops_covering(p, first_line, last_line if last_line is not None else first_line)
    if not cands:
        return {}
    outer = max(cands, key=lambda c: c.extent.start.offset)

    def params(c: ci.Cursor, depth: int = 0) -> list[str]:
        out: list[str] = []
        for k in walk(c):
            ref = k.referenced if k.kind == K.DECL_REF_EXPR else None
            if ref is None:
                continue
            if ref.kind == K.PARM_DECL:
                out.append(str(ref.spelling))
            elif ref.kind == K.VAR_DECL and depth < 3:
                init = [x for x in ref.get_children() if x.kind.is_expression()]
                for x in init:
                    out += params(x, depth + 1)
        return list(dict.fromkeys(out))

    found: dict[int, list[str]] = {}
    for loop in walk(outer):
        if loop.kind != K.FOR_STMT:
            continue
        kids = list(loop.get_children())
        cond = next((k for k in kids if cursors.binop(k) in ("<", "<=", ">", ">=", "!=")), None)
        names = params(cond) if cond is not None else []
        if names:
            found[loop.extent.start.line] = names
    return found


def unroll_fix(source: str, path: str, first_line: int, last_line: int | None = None,
               factor: int | None = None) -> QuickFix | None:
    """``#pragma unroll`` for the innermost loop statement of a device function that spans the SASS
    loop's source lines [first_line, last_line]. An existing ``#pragma unroll N`` on the line before is
    replaced; otherwise the pragma is inserted on its own line before the loop, at its indentation. Loops
    with a run-time trip count get ``#pragma unroll DEFAULT_UNROLL`` (plain ``#pragma unroll`` would not
    unroll them); ``factor`` asks for ``#pragma unroll factor`` instead (e.g. twice what the compiler already
    did). None when no loop statement covers the lines.
    """
    p = _parse(source, path)
    last = last_line if last_line is not None else first_line
    cands = _loops_covering(p, first_line, last)
    if not cands:
        return None
    loop = max(cands, key=lambda c: c.extent.start.offset)  # innermost: starts last
    if factor is not None:
        pragma = f"#pragma unroll {factor}"
    else:
        pragma = "#pragma unroll" if _constant_trip(loop) else f"#pragma unroll {DEFAULT_UNROLL}"
    start = loop.extent.start.offset
    line_start = p.data.rfind(b"\n", 0, start) + 1
    indent = p.data[line_start:start].decode("utf-8")
    prev_end = line_start - 1
    prev_start = p.data.rfind(b"\n", 0, max(prev_end, 0)) + 1
    prev = p.data[prev_start:prev_end].decode("utf-8") if prev_end > 0 else ""
    loop_line = loop.extent.start.line
    if prev.strip().startswith("#pragma") and "unroll" in prev:
        old = prev.strip()
        a = prev_start + prev.index(old)
        if old == pragma:
            return None
        edit = _edit(p, a, a + len(old.encode("utf-8")), pragma)
        title = f"Replace '{old}' with '{pragma}'"
    else:
        if not indent.strip() == "":
            indent = ""
        if prev_end > 0 and prev.rstrip("\r").endswith("\\"):
            return None  # the loop is inside a macro body: a line of its own would end the macro
        edit = _edit(p, line_start, line_start, f"{indent}{pragma}\n")
        title = f"Insert '{pragma}' before the loop at line {loop_line}"
    why = ("the loop's trip count is a compile-time constant, so the compiler can unroll it fully"
           if pragma == "#pragma unroll" else
           f"the trip count is only known at run time; unrolling by {DEFAULT_UNROLL} lets the compiler issue "
           f"the loads of {DEFAULT_UNROLL} iterations before their first use")
    return QuickFix(kind="unroll", optimizer="loop_unrolling", title=title, file=path, line=loop_line,
                    edits=(edit,), explanation=f"the loop at line {loop_line} runs rolled in the binary: {why}")


def forceinline_fix(source: str, path: str, function: str) -> QuickFix | None:
    """``__forceinline__`` for the __device__ function named ``function`` (plain name, e.g. ``damp``):
    replaces its ``__noinline__``, or is inserted after ``__device__``. None when the definition is not
    found or already force-inlined."""
    p = _parse(source, path)
    for fn in _device_functions(p):
        if fn.spelling != function:
            continue
        start = p.data.rfind(b"\n", 0, fn.extent.start.offset) + 1
        name_at = fn.location.offset
        head = p.data[start:name_at].decode("utf-8")
        line = p.line_col(fn.extent.start.offset)[0]
        if "__forceinline__" in head:
            return None
        if "__noinline__" in head:
            a = start + len(head[: head.index("__noinline__")].encode("utf-8"))
            edit = _edit(p, a, a + len("__noinline__"), "__forceinline__")
            title = f"Replace __noinline__ with __forceinline__ on {function}"
        elif "__device__" in head:
            a = start + len(head[: head.index("__device__") + len("__device__")].encode("utf-8"))
            edit = _edit(p, a, a, " __forceinline__")
            title = f"Mark {function} __forceinline__"
        else:
            continue
        return QuickFix(kind="forceinline", optimizer="function_inlining", title=title, file=path, line=line,
                        edits=(edit,),
                        explanation=(f"{function} is called as a real function (CALL/RET, arguments and saved "
                                     f"registers through the ABI); inlining it removes the call overhead and lets "
                                     f"the compiler schedule its code together with the caller's"))
    return None


def fast_math_note(path: str, line: int, callee: str = "") -> QuickFix:
    """The ``--use_fast_math`` explanation for a hot precise math routine (no edit: it is a build flag)."""
    what = f" ({callee})" if callee else ""
    return QuickFix(
        kind="fast_math", optimizer="fast_math", title="Explain --use_fast_math", file=path, line=line,
        explanation=(f"the code at line {line} spends its time in a precise CUDA math routine{what}. "
                     "nvcc --use_fast_math (= -ftz=true -prec-div=false -prec-sqrt=false -fmad=true) replaces "
                     "precise float division, sqrt and the sin/cos/exp/log family by their fast hardware "
                     "approximations (MUFU), at reduced accuracy and with denormals flushed to zero. To keep "
                     "the rest of the file precise, use the intrinsics only where the precision is not needed: "
                     "__fdividef(x, y), __frcp_rn(x), __expf(x), __sinf(x), __logf(x)."))


def fixes_for_advice(advice: Advice, source_of: Callable[[str], str | None]) -> list[QuickFix]:
    """The quick fixes that implement ``advice``, found in the sources it points at.

    ``source_of(recorded path)`` returns the file's text (None when unavailable). strength_reduction:
    f-suffix edits on its hotspot and scope lines; loop_unrolling: the pragma for each of its loops (none for
    the full unrolling of a run-time trip count);
    function_inlining: ``__forceinline__`` for each callee; fast_math: the flag explanation at its scope.
    Files libclang cannot parse give no fixes.
    """
    out: list[QuickFix] = []
    try:
        if advice.optimizer == "strength_reduction":
            lines: dict[str, set[int]] = {}
            for h in advice.hotspots:
                for loc in (h.def_, h.use):
                    if loc is not None and loc.file and loc.line:
                        lines.setdefault(loc.file, set()).add(loc.line)
            if advice.scope.file and advice.scope.line:
                lines.setdefault(advice.scope.file, set()).add(advice.scope.line)
            for file, nums in lines.items():
                src = source_of(file)
                if src is not None:
                    q = combined_literal_fix(float_literal_fixes(src, file, nums))
                    if q is not None:
                        out.append(q)
        elif advice.optimizer == "loop_unrolling" and not advice.params.get("full_unroll_trip"):
            # (full unrolling of a run-time trip count needs the count made a compile-time constant: a change of
            # the kernel's signature or types that no pragma edit makes, so no quick fix is offered for it)
            for r in advice.regions or []:
                s = r.scope
                src = source_of(s.file) if s.file else None
                if src is not None and s.line is not None:
                    factor = advice.params.get(f"unroll_factor@{s.file}:{s.line}")
                    q = unroll_fix(src, s.file or "", s.line, s.end_line, factor=factor)
                    if q is not None and q not in out:
                        out.append(q)
        elif advice.optimizer == "function_inlining":
            for r in advice.regions or []:
                s = r.scope
                src = source_of(s.file) if s.file else None
                if src is not None and s.function:
                    q = forceinline_fix(src, s.file or "", demangle_short(s.function))
                    if q is not None:
                        out.append(q)
        elif advice.optimizer == "fast_math" and advice.scope.file and advice.scope.line:
            from warpwise.analysis.advice.context import is_math_routine

            callee = next((h.use.function.rsplit("$", 1)[-1] for h in advice.hotspots
                           if is_math_routine(h.use.function)), "")
            if not callee:  # inlined precise math: the hint names the slow-path routine when there is one
                named = re.search(r"__cuda_sm\w+", advice.hint)
                callee = named.group(0) if named else ""
            out.append(fast_math_note(advice.scope.file, advice.scope.line, callee))
    except QuickFixError:
        return out
    return out
