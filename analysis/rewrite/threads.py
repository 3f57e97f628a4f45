"""Child-thread-count recovery from a launch's grid expression (CGO'22 §III-D, Fig. 4).

Programmers compute the grid dimension as a ceiling division of the needed thread count N by the
block size b. Fig. 4 lists the usual forms: (a) ``(N-1)/b + 1``, (b) ``(N+b-1)/b``,
(c) ``N/b + (N%b == 0 ? 0 : 1)``, (d) ``ceil((float)N/b)``, (e) ``ceil(N/(float)b)``, (f) ``dim3(...)``
whose arguments are any of these; each may be written inline or split across statements. The
heuristic of the paper: find the division, take its left operand, drop constant additions and
subtractions (and the divisor itself), and call the rest N. A wrong guess only changes whether the
child is serialised, never the program's result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import clang.cindex as ci

from .cursors import K, binop, callee_name, expr_children, is_cast, is_literal, operands, strip
from .parse import Parsed, walk

_CEIL = {"ceil", "ceilf", "ceill"}
_ATOMS = {K.DECL_REF_EXPR, K.MEMBER_REF_EXPR, K.ARRAY_SUBSCRIPT_EXPR, K.CALL_EXPR, K.PAREN_EXPR,
          K.INTEGER_LITERAL, K.FLOATING_LITERAL, K.UNEXPOSED_EXPR}


@dataclass(frozen=True)
class ThreadCount:
    """Recovered child thread count: expression text, pattern name, and (when N is one contiguous
    piece of the launch's own grid expression) its byte extent so the caller can replace it by a
    variable that is evaluated once."""

    text: str
    pattern: str
    span: tuple[int, int] | None


def _norm(s: str) -> str:
    s = re.sub(r"\s+", "", s)
    while s.startswith("(") and s.endswith(")") and _balanced(s[1:-1]):
        s = s[1:-1]
    return s


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


class _Recover:
    def __init__(self, p: Parsed, func: ci.Cursor, launch_offset: int, grid_extent: tuple[int, int]):
        self.p = p
        self.func = func
        self.launch_offset = launch_offset
        self.grid_extent = grid_extent
        self.split = False

    # -- variable tracing (expressions split across statements) ------------------------------
    def _value_of(self, ref: ci.Cursor) -> ci.Cursor | None:
        decl = ref.referenced
        if decl is None or decl.kind != K.VAR_DECL:
            return None
        fs, fe = self.func.extent.start.offset, self.func.extent.end.offset
        ds = decl.extent.start.offset
        if not (fs <= ds < self.launch_offset) or decl.location.file is None \
                or decl.location.file.name != self.p.path:
            return None
        value: ci.Cursor | None = None
        kids = expr_children(decl)
        if kids:
            value = kids[-1]
        for c in walk(self.func):  # a later plain assignment `var = expr;` before the launch wins
            if c.extent.start.offset >= self.launch_offset or c.extent.start.offset < ds:
                continue
            op = binop(c)
            if op is None:
                continue
            lhs, rhs = operands(c)
            lhs = strip(lhs)
            if lhs.kind == K.DECL_REF_EXPR and lhs.referenced is not None and lhs.referenced == decl:
                if op != "=":
                    return None
                value = rhs
        _ = fe
        return value

    # -- the patterns ------------------------------------------------------------------------
    def count(self, c: ci.Cursor, depth: int = 0) -> ThreadCount | None:
        if depth > 8:
            return None
        c = strip(c, casts=False)
        # implicit/explicit dim3 conversion of a scalar: dim3(x) → x; dim3(x, y, z) → pattern (f)
        if c.type.spelling == "dim3" and c.kind in (K.CALL_EXPR, K.CXX_FUNCTIONAL_CAST_EXPR,
                                                     K.UNEXPOSED_EXPR):
            args = [a for a in expr_children(c) if a.extent.start.offset != a.extent.end.offset]
            if c.kind == K.CXX_FUNCTIONAL_CAST_EXPR and len(args) == 1 and args[0].type.spelling == "dim3":
                return self.count(args[0], depth + 1)
            if len(args) == 1 and args[0].type.spelling != "dim3":
                return self.count(args[0], depth + 1)
            if len(args) > 1 and all(a.type.spelling != "dim3" for a in args):
                return self._dim3(args, depth)
            if len(args) == 1:
                return self.count(args[0], depth + 1)
            return None
        if c.kind == K.DECL_REF_EXPR:
            v = self._value_of(c)
            if v is None:
                return None
            self.split = True
            r = self.count(v, depth + 1)
            if r is None:
                return None
            return ThreadCount(r.text, r.pattern.split(" (")[0] + " (split across statements)", None)
        if c.kind in (K.CSTYLE_CAST_EXPR, K.CXX_STATIC_CAST_EXPR, K.CXX_FUNCTIONAL_CAST_EXPR):
            kids = expr_children(c)
            return self.count(kids[0], depth + 1) if len(kids) == 1 else None
        if c.kind == K.CALL_EXPR and callee_name(c) in _CEIL:
            args = expr_children(c)
            arg = strip(args[-1], casts=False) if args else None
            if arg is not None and binop(arg) == "/":
                lhs, rhs = operands(arg)
                pat = "ceil((float)N/b)" if is_cast(lhs) else "ceil(N/(float)b)" if is_cast(rhs) else "ceil(N/b)"
                return self._division(arg, pat)
            return None
        if c.kind == K.CONDITIONAL_OPERATOR:
            kids = expr_children(c)
            for branch in kids[1:]:
                r = self.count(branch, depth + 1)
                if r is not None:
                    return ThreadCount(r.text, "N%b ? N/b+1 : N/b", r.span)
            return None
        op = binop(c)
        if op == "/":
            return self._division(c, None)
        if op == "+":
            lhs, rhs = operands(c)
            ls = strip(lhs)
            if binop(ls) == "/" or (ls.kind == K.CALL_EXPR and callee_name(ls) in _CEIL):
                r = self.count(lhs, depth + 1)
                if r is None:
                    return None
                pat = "(N-1)/b+1" if is_literal(rhs) else "N/b+(N%b==0?0:1)"
                return ThreadCount(r.text, pat, r.span)
        return None

    def _dim3(self, args: list[ci.Cursor], depth: int) -> ThreadCount | None:
        parts: list[str] = []
        for a in args:
            sa = strip(a)
            if sa.kind == K.INTEGER_LITERAL and self.p.ctext(sa).strip() in ("1", "1u", "1U"):
                continue
            r = self.count(a, depth + 1)
            if r is None:
                return None
            parts.append(r.text)
        if not parts:
            return None
        if len(parts) == 1:
            return ThreadCount(parts[0], "dim3(...)", None)
        return ThreadCount(" * ".join(f"({t})" for t in parts), "dim3(...)", None)

    def _division(self, div: ci.Cursor, pattern: str | None) -> ThreadCount | None:
        lhs, rhs = operands(div)
        divisor = _norm(self.p.ctext(strip(rhs)))
        terms: list[tuple[int, ci.Cursor]] = []
        self._flatten(lhs, 1, terms)
        kept: list[tuple[int, ci.Cursor]] = []
        dropped_divisor = dropped_const = False
        for sign, t in terms:
            if is_literal(t):
                dropped_const = dropped_const or sign > 0
            elif sign > 0 and _norm(self.p.ctext(t)) == divisor:
                dropped_divisor = True
            else:
                kept.append((sign, t))
        if not kept:
            return None
        if pattern is None:
            pattern = "(N+b-1)/b" if dropped_divisor or dropped_const else "N/b"
        pieces = []
        for i, (sign, t) in enumerate(kept):
            txt = self.p.ctext(t)
            if t.kind not in _ATOMS and binop(t) not in ("*", "/", "%"):
                txt = f"({txt})"
            pieces.append(("-" if sign < 0 else "") + txt if i == 0 else (" - " if sign < 0 else " + ") + txt)
        text = "".join(pieces)
        span = None
        if len(kept) == 1 and kept[0][0] > 0:
            t = kept[0][1]
            s, e = t.extent.start.offset, t.extent.end.offset
            if self.grid_extent[0] <= s and e <= self.grid_extent[1] and not self.split:
                span = (s, e)
        return ThreadCount(text, pattern, span)

    def _flatten(self, c: ci.Cursor, sign: int, out: list[tuple[int, ci.Cursor]]) -> None:
        s = strip(c)
        op = binop(s)
        if op in ("+", "-"):
            lhs, rhs = operands(s)
            self._flatten(lhs, sign, out)
            self._flatten(rhs, sign if op == "+" else -sign, out)
        else:
            out.append((sign, s))


def _visible(p: Parsed, func: ci.Cursor, launch_offset: int, text_cursor_refs: list[ci.Cursor]) -> bool:
    """True when every local variable the expression names is in scope at the launch."""
    scopes: dict[int, tuple[int, int]] = {}
    stack: list[tuple[ci.Cursor, tuple[int, int]]] = [(func, (func.extent.start.offset, func.extent.end.offset))]
    while stack:
        cur, scope = stack.pop()
        if cur.kind == K.VAR_DECL:
            scopes[cur.hash] = scope
        inner = scope
        if cur.kind in (K.COMPOUND_STMT, K.FOR_STMT, K.IF_STMT, K.WHILE_STMT, K.CXX_FOR_RANGE_STMT):
            inner = (cur.extent.start.offset, cur.extent.end.offset)
        for k in cur.get_children():
            stack.append((k, inner))
    for r in text_cursor_refs:
        d = r.referenced
        if d is None:
            continue
        if d.kind == K.VAR_DECL and d.hash in scopes:
            s, e = scopes[d.hash]
            if not (s <= launch_offset < e) or d.extent.start.offset > launch_offset:
                return False
    return True


def recover_thread_count(p: Parsed, func: ci.Cursor, launch_offset: int, grid: ci.Cursor) -> ThreadCount | None:
    """Recover N, the number of child threads the parent needs, from the launch's grid expression.

    ``func``: the parent function; ``launch_offset``: byte offset of the launch; ``grid``: the first
    configuration argument of the launch. Returns None when no Fig. 4 pattern matches or when the
    expression names a variable that is not in scope at the launch.
    """
    g = (grid.extent.start.offset, grid.extent.end.offset)
    r = _Recover(p, func, launch_offset, g).count(grid)
    if r is None:
        return None
    # the recovered text must be valid at the launch: check the variables it names
    refs: list[ci.Cursor] = []
    for c in walk(func):
        if c.kind == K.DECL_REF_EXPR and r.text and p.ctext(c) and c.extent.start.offset < launch_offset:
            refs.append(c)
    names = set(re.findall(r"[A-Za-z_]\w*", r.text))
    refs = [c for c in refs if c.spelling in names]
    if not _visible(p, func, launch_offset, refs):
        return None
    return r
