"""Small helpers over libclang expression cursors: stripping implicit nodes, operators, literals."""

from __future__ import annotations

import clang.cindex as ci

K = ci.CursorKind
#: Statements that loop (for, while, do, range-for).
LOOPS = frozenset({K.FOR_STMT, K.WHILE_STMT, K.DO_STMT, K.CXX_FOR_RANGE_STMT})
_TRANSPARENT = {K.UNEXPOSED_EXPR, K.PAREN_EXPR}
_CASTS = {K.CSTYLE_CAST_EXPR, K.CXX_STATIC_CAST_EXPR, K.CXX_FUNCTIONAL_CAST_EXPR}
LITERALS = {K.INTEGER_LITERAL, K.FLOATING_LITERAL}
LAUNCH_CONFIG = ("__cudaPushCallConfiguration", "cudaConfigureCall")


def expr_children(c: ci.Cursor) -> list[ci.Cursor]:
    """Children that are expressions (drops TYPE_REF, TEMPLATE_REF, ...)."""
    return [k for k in c.get_children() if k.kind.is_expression()]


def strip(c: ci.Cursor, casts: bool = True) -> ci.Cursor:
    """Remove parentheses, implicit conversions and (with ``casts``) explicit scalar casts."""
    while True:
        kids = expr_children(c)
        if c.kind in _TRANSPARENT and len(kids) == 1:
            c = kids[0]
        elif casts and c.kind in _CASTS and len(kids) == 1 and c.type.spelling != "dim3":
            c = kids[0]
        else:
            return c


def is_cast(c: ci.Cursor) -> bool:
    """True for a (possibly parenthesised) explicit cast."""
    c = strip(c, casts=False)
    return c.kind in _CASTS


def binop(c: ci.Cursor) -> str | None:
    """The operator spelling of a BINARY_OPERATOR / COMPOUND_ASSIGNMENT_OPERATOR cursor, else None."""
    if c.kind not in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
        return None
    kids = list(c.get_children())
    if len(kids) != 2:
        return None
    lhs_end = kids[0].extent.end.offset
    for t in c.get_tokens():
        if t.extent.start.offset >= lhs_end:
            return str(t.spelling)
    return None


def operands(c: ci.Cursor) -> tuple[ci.Cursor, ci.Cursor]:
    """(lhs, rhs) of a binary operator cursor."""
    kids = list(c.get_children())
    return kids[0], kids[1]


def is_literal(c: ci.Cursor) -> bool:
    """True for an integer or floating literal, possibly cast or parenthesised."""
    return strip(c).kind in LITERALS


def callee_name(c: ci.Cursor) -> str:
    """Name of the function a CALL_EXPR calls ('' when unknown)."""
    return str(c.spelling or "")


def is_launch(c: ci.Cursor) -> ci.Cursor | None:
    """The config CALL_EXPR when ``c`` is a ``<<<...>>>`` launch (FACTS.md libclang), else None."""
    if c.kind != K.CALL_EXPR:
        return None
    for k in c.get_children():
        if k.kind == K.CALL_EXPR and k.spelling in LAUNCH_CONFIG:
            return k
    return None


def has_attr(fn: ci.Cursor, kind: ci.CursorKind) -> bool:
    """True when a declaration has an attribute child of ``kind``.

    A __global__ parent that parse.py re-marked __host__ __device__ (to see a device-side launch of a
    templated kernel) counts as __global__: it carries the annotation ``warpwise.global``.
    """
    kids = list(fn.get_children())
    if kind == K.CUDAGLOBAL_ATTR and any(k.kind == K.ANNOTATE_ATTR and k.spelling == "warpwise.global" for k in kids):
        return True
    return any(k.kind == kind for k in kids)


def is_device_function(fn: ci.Cursor) -> bool:
    """__global__ or __device__ function."""
    return has_attr(fn, K.CUDAGLOBAL_ATTR) or has_attr(fn, K.CUDADEVICE_ATTR)


def body_of(fn: ci.Cursor) -> ci.Cursor | None:
    """The COMPOUND_STMT body of a function definition."""
    for k in fn.get_children():
        if k.kind == K.COMPOUND_STMT:
            return k
    return None
