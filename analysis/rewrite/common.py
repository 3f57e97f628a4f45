"""Pieces shared by the threshold, coarsen and aggregate transforms."""

from __future__ import annotations

import re
from collections.abc import Callable

from .kernel import BuiltinUse, Child
from .launches import Site
from .model import RewriteError
from .parse import Parsed

_PEEK_CHECK = re.compile(rb"\s*WARPWISE_COUNT_LAUNCH_ERROR\(cudaPeekAtLastError\(\)\);")


def check_applies(p: Parsed, site: Site, child: Child | None, transform: str, refusals: dict[str, str]) -> Child:
    """Raise RewriteError with the refusal reason; return the child when the transform applies."""
    line = p.line_col(site.stmt_start)[0]
    if transform in refusals:
        raise RewriteError(f"{p.path}:{line}: cannot apply {transform}: {refusals[transform]}")
    assert child is not None
    return child


def statement_extent(p: Parsed, site: Site) -> tuple[int, int]:
    """Bytes of the launch statement, plus a directly following launch-error count inserted by an
    earlier warpwise pass (it is re-emitted by the new pass)."""
    assert site.stmt_end is not None
    end = site.stmt_end
    m = _PEEK_CHECK.match(p.data, end)
    if m:
        end = m.end()
    return site.stmt_start, end


def body_text(p: Parsed, child: Child, mapping: Callable[[BuiltinUse], str | None],
              return_text: str | None, indent: str, extra: list[tuple[int, int, str]] | None = None) -> str:
    """The child's body ``{...}`` with builtins mapped (None keeps a use), ``return`` replaced by
    ``return_text`` (None keeps it), byte ranges ``extra`` [(start, end, text)] replaced (they win over
    the builtins inside them: a recursive launch in the copy, already rewritten), and every line after
    the first indented by ``indent``."""
    repl: list[tuple[int, int, str]] = list(extra or [])
    for u in child.builtins:
        t = mapping(u)
        if t is not None:
            repl.append((u.start, u.end, t))
    if return_text is not None:
        for s, _e in child.returns:
            repl.append((s, s + len("return"), return_text))
    s, e = child.body.extent.start.offset, child.body.extent.end.offset
    out, pos = [], s
    for rs, re_, t in sorted(repl, key=lambda r: (r[0], -r[1])):
        if rs < pos:
            continue
        out.append(p.text(pos, rs))
        out.append(t)
        pos = re_
    out.append(p.text(pos, e))
    text = "".join(out)
    return text.replace("\n", "\n" + indent)


def mapped_text(p: Parsed, child: Child, start: int, end: int, mapping: Callable[[BuiltinUse], str | None]) -> str:
    """Source bytes [start, end) with the child's builtin uses inside them mapped (None keeps a use)."""
    out, pos = [], start
    for u in child.builtins:
        if u.start < start or u.end > end:
            continue
        t = mapping(u)
        if t is None:
            continue
        out += [p.text(pos, u.start), t]
        pos = u.end
    out.append(p.text(pos, end))
    return "".join(out)


def is_recursive(site: Site, child: Child) -> bool:
    """The launch is inside the child kernel itself (the child launches itself)."""
    return child.name == site.func.spelling and child.start <= site.stmt_start < child.end


def params_text(child: Child) -> str:
    """The child's parameter declarations joined by ', '."""
    return ", ".join(prm.decl_text for prm in child.params)


def with_extra(params: str, extra: str) -> str:
    """Append an extra parameter/argument to a list text."""
    return f"{params}, {extra}" if params.strip() else extra


def config_text(site: Site, grid: str, block: str, shared: str | None = None, stream: str | None = None) -> str:
    """``grid, block[, shared[, stream]]`` keeping the original shared/stream expressions."""
    parts = [grid, block]
    sh = shared if shared is not None else (site.shared.text if site.shared else None)
    st = stream if stream is not None else (site.stream.text if site.stream else None)
    if st is not None:
        parts += [sh if sh is not None else "0", st]
    elif sh is not None:
        parts.append(sh)
    return ", ".join(parts)


def args_text(site: Site) -> str:
    """The launch's argument expressions joined by ', '."""
    return ", ".join(a.text for a in site.args)


def needs_3d(p: Parsed, site: Site, child: Child) -> bool:
    """True unless grid and block are scalars and the child reads only .x of the builtins."""
    from .cursors import expr_children, strip

    cfg = expr_children(site.config)[1:3]
    for c in cfg:
        inner = strip(c, casts=False)
        kids = [k for k in expr_children(inner) if k.extent.start.offset != k.extent.end.offset]
        if inner.type.spelling == "dim3" and not (len(kids) == 1 and kids[0].type.spelling != "dim3"):
            return True
    return any(u.member in ("y", "z") or u.member is None for u in child.builtins if u.var in ("threadIdx", "blockIdx"))


def child_before_parent(p: Parsed, site: Site, child: Child) -> None:
    """Refuse when the child is defined after the parent (new functions go after the child)."""
    if child.start > site.func.extent.start.offset and child.name != site.func.spelling:
        line = p.line_col(site.stmt_start)[0]
        raise RewriteError(f"{p.path}:{line}: child kernel `{child.name}` is defined after its parent "
                           f"`{site.func.spelling}`: move its definition above the parent")
