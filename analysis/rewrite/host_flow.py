"""Whether the host-side launches of one kernel depend on each other, from the launch arguments in the source.

kernel_merge's launch-floor estimate (advice/launches.py) assumes the launches are independent: their CTAs can
share one grid in any order. That is false when a launch reads a buffer an earlier launch of the kernel writes:

- a **rotation**: the launch is in a loop whose body exchanges two of the launch's pointer arguments
  (``std::swap(a, b)``, or ``a = b`` / ``b = t`` assignments between argument variables) — the ping-pong of an
  iterative solver or a time stepper, where each launch reads what the previous one wrote;
- a **repeat**: the launch is in a loop and passes a variable declared outside the loop and not changed in it to a
  non-const pointer parameter: every launch writes (and may read) the same buffer;
- **steps**: the launch is in a ``for`` loop, passes that loop's counter, and every other argument is a plain
  variable declared outside the loop and not changed in it: the launches apply successive steps (time steps,
  stages of a sorting network) to the same data, each launch reading what the one before wrote — the verdict
  assumes the counter selects the step, not a different part of the data (a per-plane index would);
- **convergence**: the launch is in a loop that copies device memory back to the host (``cudaMemcpy*`` with
  ``cudaMemcpyDeviceToHost``) and leaves on what it read — a ``break``/``return``/``goto`` in the body, or a
  loop condition naming a copy's destination: a frontier or residual loop (level-synchronous BFS, an iterative
  solver run to a tolerance) whose trip count and per-launch work depend on the data. Checked first: such launches
  are neither independent nor a fixed sequence of steps, whatever their arguments;
- a **rotation** whose loop is a counted ``for`` passing an expression of its counter only (``1 << s``, ``s``) to
  a by-value parameter is **steps** too, in ping-pong form (the stage launches of a Stockham FFT or a sorting
  network that alternate two buffers): the counter selects the step, the buffers carry the data between steps;
- a **chain**: a variable passed to a non-const pointer parameter (a buffer the kernel may write) of one launch
  is passed to a pointer parameter of a later launch of the kernel in the same function (producer -> consumer:
  eager element-wise pipelines).

Only plain variables count (a ``DECL_REF_EXPR`` after implicit casts): ``dp[t]``, ``d_out + off`` or a struct
built in the loop body name a different buffer per launch or cannot be followed, so they link nothing. The
verdict "independent" therefore means "no argument links one launch to another in the source" — the stated
assumption of the estimate, not a proof (a struct field or a global can still carry a dependence).

Host-only libclang parse (parse.py; FACTS.md libclang: a launch is a CALL_EXPR with a
``__cudaPushCallConfiguration`` child). Parameter constness: a ``const T*`` parameter is only read (CUDA C++
Programming Guide, "const" / ``__restrict__`` semantics of kernel pointer parameters); any other pointer may be
written.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import clang.cindex as ci

from .cursors import LOOPS, K, binop, has_attr, operands, strip
from .launches import Site, find_sites
from .parse import Parsed, blocking_errors, parse, walk


@dataclass(frozen=True)
class HostFlow:
    """How the host-side launches of one kernel relate.

    ``kind``: "independent" (no argument links them), "convergence", "rotation", "steps", "repeat" or "chain"
    (module docstring);
    ``launches``:
    host-side launch sites of the kernel found; ``reason``: one sentence with the variables and line;
    ``line``: 1-based line of the launch that shows the dependence (the first site when independent);
    ``params``: per kernel parameter "read" (pointer to const), "write" (other pointer) or "value"."""

    kind: str
    launches: int
    reason: str
    line: int
    params: tuple[str, ...] = ()


def _kernel_params(p: Parsed, kernel: str) -> list[str] | None:
    """Per parameter of the __global__ ``kernel``: "read" (pointer to const), "write" (other pointer) or
    "value"; None when the kernel's definition is not in the file (the main file's top-level declarations:
    walking the whole translation unit would visit every CUDA header's cursors, ~0.8 s)."""
    for c in p.top_level():
        if c.kind == K.FUNCTION_DECL and c.spelling == kernel and c.is_definition() and \
                has_attr(c, K.CUDAGLOBAL_ATTR):
            out = []
            for a in c.get_arguments():
                t = a.type.get_canonical()
                if t.kind == ci.TypeKind.POINTER:
                    out.append("read" if t.get_pointee().is_const_qualified() else "write")
                else:
                    out.append("value")
            return out
    return None


def _arg_vars(site: Site) -> list[ci.Cursor | None]:
    """The variable each launch argument names (its declaration cursor), None for any other expression."""
    kids = [k for k in site.call.get_children() if k.kind.is_expression()]
    args = [k for k in kids[1:] if k != site.config]
    out: list[ci.Cursor | None] = []
    for a in args:
        s = strip(a, casts=False)
        ref = s.referenced if s.kind == K.DECL_REF_EXPR else None
        out.append(ref if ref is not None and ref.kind in (K.VAR_DECL, K.PARM_DECL) else None)
    return out


def _key(c: ci.Cursor) -> tuple[str, int]:
    return (str(c.spelling), int(c.extent.start.offset))


def _inside(c: ci.Cursor, scope: ci.Cursor) -> bool:
    return scope.extent.start.offset <= c.extent.start.offset < scope.extent.end.offset


def _rotation(site: Site, pointer_vars: dict[tuple[str, int], ci.Cursor]) -> str | None:
    """The swap/assignment in the innermost loop around ``site`` that exchanges two of its pointer-argument
    variables declared outside that loop, as text; None when there is none."""
    loops = [a for a in site.ancestors if a.kind in LOOPS]
    if not loops:
        return None
    loop = loops[-1]
    outer = {k: v for k, v in pointer_vars.items() if not _inside(v, loop)}
    if not outer:
        return None
    for c in walk(loop):
        if c.kind == K.CALL_EXPR and c.spelling == "swap":
            refs = {_key(strip(a, casts=False).referenced) for a in c.get_arguments()
                    if strip(a, casts=False).kind == K.DECL_REF_EXPR and strip(a, casts=False).referenced}
            if len(refs & set(outer)) >= 2:
                return "swap(" + ", ".join(sorted(k[0] for k in refs)) + ")"
        if binop(c) == "=":
            lhs, rhs = (strip(x, casts=False) for x in operands(c))
            if lhs.kind == K.DECL_REF_EXPR and rhs.kind == K.DECL_REF_EXPR and lhs.referenced and rhs.referenced:
                lk, rk = _key(lhs.referenced), _key(rhs.referenced)
                if lk in outer and (rk in pointer_vars or rhs.referenced.type.get_canonical().kind ==
                                    ci.TypeKind.POINTER):
                    return f"{lk[0]} = {rk[0]}"
    return None


def _assigned_in(var: ci.Cursor, scope: ci.Cursor) -> bool:
    """Whether ``scope`` may change ``var``: assigns it (``=``, a compound assignment, ``++``/``--``; ``v[i] = ...``
    writes only what it points to), takes its address (``cudaMalloc(&v, ...)`` can point it elsewhere each
    iteration) or passes it to ``swap``."""
    k = _key(var)
    for c in walk(scope):
        target = None
        if binop(c) is not None and (binop(c) == "=" or c.kind == K.COMPOUND_ASSIGNMENT_OPERATOR):
            target = strip(operands(c)[0], casts=False)
        elif c.kind == K.UNARY_OPERATOR:
            kids = list(c.get_children())
            toks = [str(t.spelling) for t in c.get_tokens()]
            if kids and ("++" in toks or "--" in toks or (toks and toks[0] == "&")):
                target = strip(kids[0], casts=False)
        elif c.kind == K.CALL_EXPR and c.spelling == "swap":
            if any(strip(a, casts=False).kind == K.DECL_REF_EXPR and strip(a, casts=False).referenced is not None
                   and _key(strip(a, casts=False).referenced) == k for a in c.get_arguments()):
                return True
        if target is not None and target.kind == K.DECL_REF_EXPR and target.referenced is not None and \
                _key(target.referenced) == k:
            return True
    return False


def _by_value_vars(site: Site) -> list[ci.Cursor | None]:
    """As :func:`_arg_vars`, also naming the variable a struct argument is copied from (a by-value struct
    argument is a copy-constructor CALL_EXPR whose one child names the variable)."""
    kids = [k for k in site.call.get_children() if k.kind.is_expression()]
    out: list[ci.Cursor | None] = []
    for a in (k for k in kids[1:] if k != site.config):
        x = strip(a, casts=False)
        if x.kind == K.CALL_EXPR:
            inner = [strip(c, casts=False) for c in x.get_children()]
            x = inner[0] if len(inner) == 1 else x
        ref = x.referenced if x.kind == K.DECL_REF_EXPR else None
        out.append(ref if ref is not None and ref.kind in (K.VAR_DECL, K.PARM_DECL) else None)
    return out


def _steps(site: Site) -> str | None:
    """The counter of the innermost ``for`` loop around ``site`` when the launch passes it and every other
    argument is a plain variable (or a struct copied from one) declared outside that loop and not changed in it
    (module docstring, "steps"); None otherwise."""
    vars_ = _by_value_vars(site)
    loops = [a for a in site.ancestors if a.kind in LOOPS]
    if not loops or loops[-1].kind != K.FOR_STMT or not vars_ or any(v is None for v in vars_):
        return None
    loop = loops[-1]
    init = next(iter(loop.get_children()), None)
    counters = {_key(c) for c in (init.get_children() if init is not None and init.kind == K.DECL_STMT else [])
                if c.kind == K.VAR_DECL}
    named = [v for v in vars_ if v is not None and _key(v) in counters]
    if not named:
        return None
    others = [v for v in vars_ if v is not None and _key(v) not in counters]
    if any(_inside(v, loop) or _assigned_in(v, loop) for v in others):
        return None
    # the loop body uses none of the data arguments outside the launch (a copy of a launch's output back to the
    # host between launches consumes each result: independent runs, not steps)
    keys = {_key(v) for v in others}
    end = site.stmt_end if site.stmt_end is not None else site.call.extent.end.offset
    body = list(loop.get_children())[-1]
    for c in walk(body):
        if c.kind == K.DECL_REF_EXPR and c.referenced is not None and _key(c.referenced) in keys and \
                not site.stmt_start <= c.extent.start.offset < end:
            return None
    return str(named[0].spelling)


def _nearest_loop_or_switch(c: ci.Cursor, loop: ci.Cursor) -> bool:
    """Whether a ``break`` at ``c`` inside ``loop`` leaves a loop or switch nested in ``loop`` (not ``loop``)."""
    for inner in walk(loop):
        if inner != loop and inner.kind in LOOPS | {K.SWITCH_STMT} and _inside(c, inner):
            return True
    return False


def _convergence(site: Site) -> str | None:
    """What makes the innermost loop around ``site`` a data-dependent one (module docstring, "convergence"): a
    device-to-host copy in the loop and an exit on what it read, as text (``"break at line 71 after a
    device-to-host copy in the loop"``): a ``break`` (of this loop, not of a nested loop or switch), ``return`` or
    ``goto`` in the body, or a loop test naming a copy's destination variable. None for a launch in no loop, a
    loop without a device-to-host copy, or one whose only exit is a test of host values."""
    loops = [a for a in site.ancestors if a.kind in LOOPS]
    if not loops:
        return None
    loop = loops[-1]
    copied: set[tuple[str, int]] = set()  # the variables the copies' destinations name
    seen = False
    for c in walk(loop):
        if c.kind == K.CALL_EXPR and str(c.spelling).startswith("cudaMemcpy"):
            args = list(c.get_arguments())
            if any(r.kind == K.DECL_REF_EXPR and r.spelling == "cudaMemcpyDeviceToHost"
                   for a in args for r in walk(a)) and args:
                copied |= {_key(r.referenced) for r in walk(args[0])
                           if r.kind == K.DECL_REF_EXPR and r.referenced is not None}
                seen = True
    if not seen:
        return None
    for c in walk(loop):
        if c.kind in (K.RETURN_STMT, K.GOTO_STMT) or \
                (c.kind == K.BREAK_STMT and not _nearest_loop_or_switch(c, loop)):
            word = {K.RETURN_STMT: "return", K.GOTO_STMT: "goto", K.BREAK_STMT: "break"}[c.kind]
            return f"{word} at line {c.location.line} after a device-to-host copy in the loop"
    # the loop's own test: a while's first child, a do's last; a for's header expressions (libclang leaves out
    # the empty ones, so its condition is not at a fixed position)
    kids = list(loop.get_children())
    header = {K.WHILE_STMT: kids[:1], K.DO_STMT: kids[-1:], K.FOR_STMT: kids[:-1]}.get(loop.kind, [])
    for h in header:
        if h.kind.is_expression() and any(r.kind == K.DECL_REF_EXPR and r.referenced is not None and
                                          _key(r.referenced) in copied for r in walk(h)):
            return f"the loop test at line {h.location.line} reads what a device-to-host copy in the loop wrote"
    return None


def _counter_expr_only(arg: ci.Cursor, counters: set[tuple[str, int]]) -> bool:
    """Whether the expression ``arg`` names a loop counter and no other variable (``1 << s``, ``s``, ``2 * s``)."""
    refs = [r for r in walk(arg) if r.kind == K.DECL_REF_EXPR and r.referenced is not None and
            r.referenced.kind in (K.VAR_DECL, K.PARM_DECL)]
    return bool(refs) and all(_key(r.referenced) in counters for r in refs)


def _ping_pong_steps(site: Site, params: list[str]) -> str | None:
    """The counter of the innermost ``for`` loop around a rotating ``site`` (its buffers exchanged in the loop)
    when the launch passes an expression of that counter only to a by-value parameter and the loop hands no
    pointer argument to another call (a copy back would consume each result): steps in ping-pong form (module
    docstring); None otherwise."""
    loops = [a for a in site.ancestors if a.kind in LOOPS]
    if not loops or loops[-1].kind != K.FOR_STMT:
        return None
    loop = loops[-1]
    init = next(iter(loop.get_children()), None)
    counters = {_key(c) for c in (init.get_children() if init is not None and init.kind == K.DECL_STMT else [])
                if c.kind == K.VAR_DECL}
    if not counters:
        return None
    kids = [k for k in site.call.get_children() if k.kind.is_expression()]
    args = [k for k in kids[1:] if k != site.config]
    named = [a for a, kind in zip(args, params, strict=False) if kind == "value" and _counter_expr_only(a, counters)]
    if not named:
        return None
    ptrs = {_key(v) for v, kind in zip(_arg_vars(site), params, strict=False) if v is not None and kind != "value"}
    end = site.stmt_end if site.stmt_end is not None else site.call.extent.end.offset
    for c in walk(list(loop.get_children())[-1]):
        if c.kind == K.CALL_EXPR and c.spelling != "swap" and c != site.call and \
                not site.stmt_start <= c.extent.start.offset < end and \
                any(r.kind == K.DECL_REF_EXPR and r.referenced is not None and _key(r.referenced) in ptrs
                    for a in c.get_arguments() for r in walk(a)):
            return None
    counter = next(r for r in walk(named[0]) if r.kind == K.DECL_REF_EXPR)
    return str(counter.spelling)


def _repeat(site: Site, vars_: list[ci.Cursor | None], params: list[str]) -> str | None:
    """The variable a looped ``site`` passes to a writable pointer parameter that is declared outside the
    innermost loop and never changed in it (the same buffer every iteration); None otherwise."""
    loops = [a for a in site.ancestors if a.kind in LOOPS]
    if not loops:
        return None
    loop = loops[-1]
    for v, kind in zip(vars_, params, strict=False):
        if v is not None and kind == "write" and not _inside(v, loop) and not _assigned_in(v, loop):
            return str(v.spelling)
    return None


def host_flow(source: str, path: str, kernel: str) -> HostFlow | None:
    """The relation of the host-side launches of ``kernel`` (its plain name) in ``source`` (the text of
    ``path``). None when the file does not parse (a broken AST can hide launches), holds no host-side launch
    of the kernel or not the kernel's definition (its parameters' constness is needed). Raises nothing.

    Cached per (source text, path, kernel): the libclang parse costs ~0.5 s and every re-analysis of a report
    whose embedded source did not change (the server's, each kernel of a multi-kernel report) asks again. A
    parse that raised (libclang missing or broken) is not cached: the next ask tries again."""
    try:
        return _host_flow(source, path, kernel)
    except Exception:  # libclang missing or broken: no verdict
        return None


@functools.lru_cache(maxsize=64)
def _host_flow(source: str, path: str, kernel: str) -> HostFlow | None:
    """:func:`host_flow`, raising what the libclang parse raises (functools.lru_cache caches no exception)."""
    p = parse(source, path)
    if blocking_errors(p):
        return None
    params = _kernel_params(p, kernel)
    sites = [s for s in find_sites(p) if not s.device_side and s.child_name == kernel]
    if params is None or not sites:
        return None
    first = p.line_col(sites[0].stmt_start)[0]
    by_fn: dict[tuple[str, int], list[tuple[Site, list[ci.Cursor | None]]]] = {}
    for s in sites:
        by_fn.setdefault(_key(s.func), []).append((s, _arg_vars(s)))
    for group in by_fn.values():
        written: dict[tuple[str, int], int] = {}  # variable -> line of the launch that may write it
        for s, vars_ in group:
            line = p.line_col(s.stmt_start)[0]
            ptrs = {_key(v): v for v, kind in zip(vars_, params, strict=False) if v is not None and kind != "value"}
            conv = _convergence(s)
            if conv is not None:
                return HostFlow("convergence", len(sites), f"the launch at line {line} is in a loop that reads "
                                f"device results back and leaves on them ({conv}): its trip count and each "
                                "launch's work depend on the data", line, tuple(params))
            rot = _rotation(s, ptrs)
            if rot is not None:
                step = _ping_pong_steps(s, params)
                if step is not None:
                    return HostFlow("steps", len(sites), f"the launch at line {line} is in a loop over {step}, "
                                    f"passes it as the step and exchanges its buffer arguments ({rot}): each launch "
                                    "is the next step over the same data, ping-ponging between the buffers", line,
                                    tuple(params))
                return HostFlow("rotation", len(sites), f"the launch at line {line} is in a loop that exchanges "
                                f"its buffer arguments ({rot}): each launch reads what the one before wrote",
                                line, tuple(params))
            step = _steps(s)
            if step is not None:
                return HostFlow("steps", len(sites), f"the launch at line {line} is in a loop over {step}, passes it "
                                "and otherwise the same variables, unchanged in the loop: each launch is the next "
                                "step over the same data", line, tuple(params))
            rep = _repeat(s, vars_, params)
            if rep is not None:
                return HostFlow("repeat", len(sites), f"the launch at line {line} is in a loop and passes {rep}, "
                                "declared outside the loop and not changed in it, to a writable pointer parameter: "
                                "every launch writes (and may read) the same buffer", line, tuple(params))
            for k in ptrs:
                if k in written and written[k] != line:
                    return HostFlow("chain", len(sites), f"the launch at line {line} takes {k[0]}, which the "
                                    f"launch at line {written[k]} passes to a writable pointer parameter: it reads "
                                    "what the launch before it wrote", line, tuple(params))
            for v, kind in zip(vars_, params, strict=False):
                if v is not None and kind == "write":
                    written.setdefault(_key(v), line)
    plural = "s" if len(sites) != 1 else ""
    return HostFlow("independent", len(sites), f"no argument of the {len(sites)} launch site{plural} of {kernel} "
                    "names a buffer another launch writes", first, tuple(params))

