"""What the transforms need to know about a child kernel's definition.

Refusal rules follow CGO'22 §III-C: a child that synchronises (``__syncthreads``, warp-level
primitives) or uses shared memory is not serialised by thresholding.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import clang.cindex as ci

from .cursors import LOOPS, K, body_of, expr_children, has_attr, strip
from .parse import Parsed, walk, walk_with_parents

BUILTINS = ("threadIdx", "blockIdx", "blockDim", "gridDim")
SYNC = {"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or", "sync", "this_thread_block",
        "__barrier_sync"}
WARP = {"__syncwarp", "__activemask", "__ballot_sync", "__any_sync", "__all_sync", "__shfl_sync",
        "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__match_any_sync", "__match_all_sync",
        "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync", "__reduce_and_sync",
        "__reduce_or_sync", "__reduce_xor_sync", "__shfl", "__shfl_up", "__shfl_down", "__shfl_xor",
        "__ballot", "__any", "__all", "tiled_partition"}


@dataclass(frozen=True)
class BuiltinUse:
    """A use of a builtin index variable: ``var.member`` (member None for a bare use), byte extent."""

    var: str
    member: str | None
    start: int
    end: int
    var_end: int  # end of the variable token (start .. var_end is the bare name)


@dataclass(frozen=True)
class Param:
    """A kernel parameter: name, declaration text, and its type with top-level const removed."""

    name: str
    decl_text: str
    field_type: str
    copy_problem: str | None = None  # why the type cannot be copied bitwise (None: it can)

    @property
    def local_decl(self) -> str:
        """A declaration of a local holding the parameter's value: the declaration text, or (array
        parameters, which decay to pointers) ``field_type name``."""
        return f"{self.field_type} {self.name}" if "[" in self.decl_text else self.decl_text


@dataclass
class Child:
    """A child kernel definition and the facts the transforms check."""

    name: str
    cursor: ci.Cursor
    body: ci.Cursor
    params: list[Param]
    builtins: list[BuiltinUse] = field(default_factory=list)
    returns: list[tuple[int, int]] = field(default_factory=list)
    sync_calls: list[str] = field(default_factory=list)
    warp_calls: list[str] = field(default_factory=list)
    shared_vars: list[str] = field(default_factory=list)
    helpers_with_builtins: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    sync_offsets: list[int] = field(default_factory=list)  # byte offsets of the sync_calls
    return_loops: list[list[tuple[int, int]]] = field(default_factory=list)  # per return: enclosing loops
    return_uniform: list[bool] = field(default_factory=list)  # per return: taken by all threads of a block
    has_goto: bool = False

    @property
    def start(self) -> int:
        return int(self.cursor.extent.start.offset)

    @property
    def end(self) -> int:
        return int(self.cursor.extent.end.offset)

    def early_exit_before_barrier(self) -> tuple[int, int] | None:
        """(return offset, barrier offset) of a ``return`` that a block barrier can follow, else None.

        Such a return, turned into a jump to the end of an iteration (coarsening), makes the thread
        wait at a different barrier than the threads that went on: a barrier textually after the
        return, or one in a loop around it, can still be reached after it. A ``goto`` with barriers
        is reported too (control flow not checked). Returns after every barrier are fine, and so are
        returns whose every enclosing condition is uniform over the block (block_uniform: all threads
        of a block return together).
        """
        if not self.sync_offsets:
            return None
        if self.has_goto and self.returns:
            return self.returns[0][0], self.sync_offsets[0]
        for (rs, _re), loops, uniform in zip(self.returns, self.return_loops, self.return_uniform, strict=True):
            if uniform:  # the whole block leaves together: no thread waits at a barrier alone
                continue
            for b in self.sync_offsets:
                if b > rs or any(ls <= b < le for ls, le in loops):
                    return rs, b
        return None


def _field_type(t: ci.Type) -> str:
    """The parameter's type without top-level const/restrict, arrays decayed to pointers ([dcl.fct])."""
    if t.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY, ci.TypeKind.VARIABLEARRAY,
                  ci.TypeKind.DEPENDENTSIZEDARRAY):
        return f"{t.get_array_element_type().spelling} *"
    if t.kind == ci.TypeKind.POINTER and t.get_pointee().kind != ci.TypeKind.FUNCTIONPROTO:
        return f"{t.get_pointee().spelling} *"
    s = str(t.spelling)
    if t.is_const_qualified():
        if s.startswith("const "):
            s = s[len("const "):]
        elif s.endswith(" const"):
            s = s[: -len(" const")]
    return s


def bitwise_copy_problem(t: ci.Type, depth: int = 0) -> str | None:
    """Why a value of type ``t`` cannot be copied bitwise (memcpy) between records, or None.

    C++ [class.prop]: a class is trivially copyable unless it has a user-provided copy/move
    constructor or destructor, a virtual function or a virtual base, or a member/base that is not.
    A deleted or user-provided *default* constructor does not matter (nothing is default-constructed),
    nor does a reference member (copied as its address, as the kernel launch itself copies it).
    """
    t = t.get_canonical()
    while t.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY):
        t = t.get_array_element_type().get_canonical()
    if t.kind != ci.TypeKind.RECORD or depth > 16:
        return None
    decl = t.get_declaration()
    name = t.spelling
    for c in decl.get_children():
        if c.kind == K.CONSTRUCTOR and (c.is_copy_constructor() or c.is_move_constructor()) \
                and not c.is_default_method() and not _is_deleted(c):
            return f"`{name}` has a user-provided {'copy' if c.is_copy_constructor() else 'move'} constructor"
        if c.kind == K.DESTRUCTOR and not c.is_default_method() and not _is_deleted(c):
            return f"`{name}` has a user-provided destructor"
        if c.kind == K.CXX_METHOD and c.is_virtual_method():
            return f"`{name}` has a virtual function (`{c.spelling}`)"
        if c.kind == K.CXX_BASE_SPECIFIER:
            if any(tk.spelling == "virtual" for tk in c.get_tokens()):
                return f"`{name}` has a virtual base"
            why = bitwise_copy_problem(c.type, depth + 1)
            if why:
                return why
        if c.kind == K.FIELD_DECL:
            why = bitwise_copy_problem(c.type, depth + 1)
            if why:
                return why
    return None


def _is_deleted(c: ci.Cursor) -> bool:
    try:
        return bool(c.is_deleted_method())
    except AttributeError:  # older libclang bindings: look for `= delete`
        toks = [t.spelling for t in c.get_tokens()]
        return "delete" in toks and "=" in toks


def builtin_uses(p: Parsed, root: ci.Cursor) -> list[BuiltinUse]:
    """Uses of threadIdx/blockIdx/blockDim/gridDim under ``root`` (not inside lambdas)."""
    out: list[BuiltinUse] = []
    member_refs: set[int] = set()
    for c, ps in walk_with_parents(root):
        if any(a.kind == K.LAMBDA_EXPR for a in ps):
            continue
        if c.kind == K.MEMBER_REF_EXPR:
            kids = list(c.get_children())
            if len(kids) == 1:
                base = strip(kids[0])
                if base.kind == K.DECL_REF_EXPR and base.spelling in BUILTINS:
                    out.append(BuiltinUse(base.spelling, c.spelling, c.extent.start.offset, c.extent.end.offset,
                                          base.extent.end.offset))
                    member_refs.add(base.extent.start.offset)
    for c in walk(root):
        if c.kind == K.DECL_REF_EXPR and c.spelling in BUILTINS and c.extent.start.offset not in member_refs:
            out.append(BuiltinUse(c.spelling, None, c.extent.start.offset, c.extent.end.offset, c.extent.end.offset))
    for u in out:
        if p.text(u.start, u.var_end) != u.var:
            raise ValueError(f"builtin `{u.var}` at byte {u.start} comes from a macro expansion")
    return sorted(out, key=lambda u: u.start)


def _uses_builtins(p: Parsed, fn: ci.Cursor, seen: set[str]) -> bool:
    body = body_of(fn)
    if body is None:
        return False
    if fn.spelling in seen:
        return False
    seen.add(fn.spelling)
    for c in walk(body):
        if c.kind == K.DECL_REF_EXPR and c.spelling in BUILTINS:
            return True
        if c.kind == K.CALL_EXPR and c.referenced is not None and c.referenced.kind == K.FUNCTION_DECL:
            d = c.referenced.get_definition()
            # a kernel launched from here has its own builtins (a launch is no helper call)
            if d is not None and p.in_main(d) and not has_attr(d, K.CUDAGLOBAL_ATTR) and _uses_builtins(p, d, seen):
                return True
    return False


def find_child(p: Parsed, name: str) -> Child | None:
    """The definition of kernel ``name`` in the main file, analysed; None when it is not there."""
    for c in p.top_level():
        if c.kind == K.FUNCTION_DECL and c.spelling == name and c.is_definition() \
                and has_attr(c, K.CUDAGLOBAL_ATTR):
            return analyse_child(p, c)
    return None


#: Declarations a __global__ function can sit in at file scope: namespaces and ``extern "C"`` blocks.
def global_functions(p: Parsed) -> set[str]:
    """Names of the ``__global__`` functions and function templates declared or defined in the main file of
    ``p`` (inside namespaces and ``extern "C"`` blocks too: ``Parsed.top_level``), as the compiler names them:
    ``tk`` for ``template <int N> __global__ void __launch_bounds__(256) tk(...)``. Function bodies are not
    entered."""
    return {c.spelling for c in p.top_level()
            if c.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE) and has_attr(c, K.CUDAGLOBAL_ATTR)}


def find_child_template(p: Parsed, name: str) -> ci.Cursor | None:
    """The definition of ``name`` as a ``__global__`` function template in the main file, or None."""
    for c in p.top_level():
        if c.kind == K.FUNCTION_TEMPLATE and c.spelling == name and c.is_definition() \
                and has_attr(c, K.CUDAGLOBAL_ATTR):
            return c
    return None


def analyse_child(p: Parsed, fn: ci.Cursor) -> Child:
    """Collect builtin uses, returns, synchronisation, shared memory and helper calls of a kernel."""
    body = body_of(fn)
    assert body is not None
    params = []
    problems = []
    for a in fn.get_arguments():
        if not a.spelling:
            problems.append("a parameter has no name")
        params.append(Param(a.spelling, p.ctext(a), _field_type(a.type), bitwise_copy_problem(a.type)))
    ch = Child(fn.spelling, fn, body, params, problems=problems)
    try:
        ch.builtins = builtin_uses(p, body)
    except ValueError as e:
        ch.problems.append(str(e))
    for c, ps in walk_with_parents(body):
        in_lambda = any(a.kind == K.LAMBDA_EXPR for a in ps)
        if c.kind == K.RETURN_STMT and not in_lambda:
            if expr_children(c):
                ch.problems.append("a return statement returns a value")
            ch.returns.append((c.extent.start.offset, c.extent.end.offset))
            ch.return_loops.append([(a.extent.start.offset, a.extent.end.offset) for a in ps if a.kind in LOOPS])
            ch.return_uniform.append(all(_condition_uniform(a, fn, body) for a in ps))
        elif c.kind in (K.GOTO_STMT, K.INDIRECT_GOTO_STMT) and not in_lambda:
            ch.has_goto = True
        elif c.kind == K.CALL_EXPR:
            n = c.spelling
            if n in SYNC or n.startswith("__syncthreads"):
                ch.sync_calls.append(n)
                ch.sync_offsets.append(c.extent.start.offset)
            elif n in WARP or n.startswith("__shfl") or n.startswith("__reduce_") or n.startswith("__match"):
                ch.warp_calls.append(n)
            elif c.referenced is not None and c.referenced.kind == K.FUNCTION_DECL:
                d = c.referenced.get_definition()
                if d is not None and p.in_main(d) and d.spelling != fn.spelling \
                        and _uses_builtins(p, d, set()) and n not in ch.helpers_with_builtins:
                    ch.helpers_with_builtins.append(n)
        elif c.kind == K.VAR_DECL and has_attr(c, K.CUDASHARED_ATTR):
            ch.shared_vars.append(c.spelling)
    if fn.kind == K.FUNCTION_TEMPLATE:
        ch.problems.append("template kernels are not supported")
    return ch


_BRANCHES = {K.IF_STMT, K.WHILE_STMT, K.FOR_STMT, K.DO_STMT, K.SWITCH_STMT, K.CONDITIONAL_OPERATOR,
             K.CXX_FOR_RANGE_STMT, K.CASE_STMT, K.DEFAULT_STMT}
_UNIFORM_BUILTINS = {"blockIdx", "gridDim", "blockDim"}
_PURE_CALLS = {"min", "max", "abs", "umin", "umax", "llmin", "llmax"}
_ASSIGN_OPS = {"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="}


def _assigned(body: ci.Cursor) -> set[str]:
    """Names of variables written in ``body`` (assignments, ++/--) or whose address is taken."""
    out: set[str] = set()
    for c in walk(body):
        target = None
        if c.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
            from .cursors import binop

            if binop(c) in _ASSIGN_OPS:
                target = next(iter(c.get_children()), None)
        elif c.kind == K.UNARY_OPERATOR:
            toks = [t.spelling for t in c.get_tokens()]
            if toks and (toks[0] in ("++", "--", "&") or toks[-1] in ("++", "--")):
                target = next(iter(c.get_children()), None)
        if target is not None:
            t = strip(target)
            while t.kind in (K.MEMBER_REF_EXPR, K.ARRAY_SUBSCRIPT_EXPR) and list(t.get_children()):
                t = strip(next(iter(t.get_children())))
            if t.kind == K.DECL_REF_EXPR:
                out.add(t.spelling)
    return out


def block_uniform(expr: ci.Cursor, fn: ci.Cursor, body: ci.Cursor, depth: int = 0) -> bool:
    """True when ``expr`` has one value for all threads of a block, proven from the source: it reads only
    literals, blockIdx / gridDim / blockDim, kernel parameters and locals never written after their
    initialiser (recursively uniform), members of those, and min/max/abs of such values. Memory reads
    (``*p``, ``a[i]``, ``->``), other calls and threadIdx make it non-uniform (conservative)."""
    if depth > 8:
        return False
    written = _assigned(body)
    params = {a.spelling for a in fn.get_arguments()}
    for c in walk(expr):
        k = c.kind
        if k in (K.ARRAY_SUBSCRIPT_EXPR, K.CXX_THIS_EXPR, K.LAMBDA_EXPR):
            return False
        if k == K.UNARY_OPERATOR:
            toks = [t.spelling for t in c.get_tokens()]
            if toks and toks[0] == "*":
                return False
        if k == K.MEMBER_REF_EXPR and any(t.spelling == "->" for t in c.get_tokens()):
            return False
        if k == K.CALL_EXPR and c.spelling not in _PURE_CALLS:
            return False
        if k == K.DECL_REF_EXPR:
            name = c.spelling
            if name in _UNIFORM_BUILTINS:
                continue
            if name == "threadIdx":
                return False
            ref = c.referenced
            if ref is None:
                return False
            if ref.kind in (K.FUNCTION_DECL, K.ENUM_CONSTANT_DECL):
                continue
            if name in written:
                return False
            if ref.kind == K.PARM_DECL and name in params:
                continue
            if ref.kind == K.VAR_DECL:
                if ref.semantic_parent is not None and ref.semantic_parent.kind == K.TRANSLATION_UNIT:
                    if ref.type.is_const_qualified():
                        continue  # a namespace-scope constant
                    return False  # a global variable: memory
                init = [x for x in ref.get_children() if x.kind != K.TYPE_REF]
                if not init or not block_uniform(init[-1], fn, body, depth + 1):
                    return False
                continue
            return False
    return True


def _condition_uniform(a: ci.Cursor, fn: ci.Cursor, body: ci.Cursor) -> bool:
    """An enclosing statement of a return: a branch or loop whose condition is block-uniform, or no branch."""
    if a.kind not in _BRANCHES:
        return True
    if a.kind in (K.CASE_STMT, K.DEFAULT_STMT, K.DO_STMT, K.CXX_FOR_RANGE_STMT):
        return False
    kids = list(a.get_children())
    if not kids:
        return False
    if a.kind == K.FOR_STMT:  # init; cond; inc; body: every part but the body must be uniform
        return all(block_uniform(k, fn, body) for k in kids[:-1])
    return block_uniform(kids[0], fn, body)


def statement_end(p: Parsed, end: int) -> int | None:
    """Offset just past the ';' that ends the expression ending at ``end``; None if none follows."""
    i = end
    while i < len(p.data) and p.data[i:i + 1] in (b" ", b"\t"):
        i += 1
    if p.data[i:i + 1] == b";":
        return i + 1
    return None
