"""Finding device-side launches (CDP) in a .cu file and deciding which transforms apply.

A ``k<<<g, b, s, st>>>(args)`` launch is a CALL_EXPR named ``k`` with a config CALL_EXPR child
``__cudaPushCallConfiguration`` (FACTS.md, libclang); a device-side launch is one inside a
``__global__`` or ``__device__`` function.
"""

from __future__ import annotations

from dataclasses import dataclass

import clang.cindex as ci

from .cursors import LOOPS, K, body_of, expr_children, has_attr, is_device_function, is_launch
from .kernel import Child, find_child, find_child_template, statement_end
from .model import Launch, RewriteError, Span
from .parse import Parsed, parse, require_parses, walk, walk_with_parents
from .threads import ThreadCount, recover_thread_count

WARPWISE_AGG_STREAMS = {"", "0", "NULL", "nullptr", "cudaStreamFireAndForget", "cudaStreamTailLaunch"}


@dataclass
class Site:
    """A launch with the cursors the transforms need (internal)."""

    call: ci.Cursor
    config: ci.Cursor
    func: ci.Cursor
    ancestors: tuple[ci.Cursor, ...]
    child_name: str
    stmt_start: int
    stmt_end: int | None
    grid: Span
    block: Span
    shared: Span | None
    stream: Span | None
    args: list[Span]
    device_side: bool
    from_macro: bool

    @property
    def in_loop(self) -> bool:
        return any(a.kind in LOOPS for a in self.ancestors)


def _span(p: Parsed, c: ci.Cursor) -> Span | None:
    s, e = c.extent.start.offset, c.extent.end.offset
    if s == e:
        return None
    return Span(p.text(s, e), s, e)


def find_sites(p: Parsed) -> list[Site]:
    """All kernel launches in function bodies of the main file, host and device side."""
    sites: list[Site] = []
    for fn in p.top_level():
        if fn.kind not in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE, K.CXX_METHOD) or not fn.is_definition():
            continue
        body = body_of(fn)
        if body is None:
            continue
        device = is_device_function(fn)
        for c, ps in walk_with_parents(body):
            cfg = is_launch(c)
            if cfg is None:
                continue
            kids = list(c.get_children())
            callee = kids[0]
            cargs = expr_children(cfg)[1:]
            grid, block = _span(p, cargs[0]), _span(p, cargs[1])
            if grid is None or block is None:
                continue
            shared = _span(p, cargs[2]) if len(cargs) > 2 else None
            stream = _span(p, cargs[3]) if len(cargs) > 3 else None
            args = [s for s in (_span(p, a) for a in kids[1:] if a != cfg and a != callee) if s is not None]
            start = c.extent.start.offset
            text = p.text(start, c.extent.end.offset)
            name = callee.spelling or text.split("<<<")[0].strip()
            sites.append(Site(c, cfg, fn, (*ps,), name, start, statement_end(p, c.extent.end.offset),
                              grid, block, shared, stream, args, device, "<<<" not in text))
    return sites


# device-side calls that wait for earlier work of the thread's grid (CDP1; removed for sm_90 / CUDA 12)
WAITS = ("cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaStreamWaitEvent")


def waits_after(p: Parsed, site: Site) -> tuple[str, int] | None:
    """(what, 1-based line) of a device-side wait for the child that the parent reaches after the launch:
    a wait later in the parent function, or anywhere in a loop around the launch (the next iteration
    waits for this one's child). The code after such a wait uses the child's results."""
    loops = [(a.extent.start.offset, a.extent.end.offset) for a in site.ancestors if a.kind in LOOPS]
    after = site.stmt_end if site.stmt_end is not None else site.call.extent.end.offset
    for c in walk(site.func):
        if c.kind != K.CALL_EXPR:
            continue
        name = f"`{c.spelling}()`" if c.spelling in WAITS else _helper_waits(p, c, set())
        if name is None:
            continue
        at = c.extent.start.offset
        if at >= after or any(ls <= at < le for ls, le in loops):
            return name, p.line_col(at)[0]
    return None


def _helper_waits(p: Parsed, call: ci.Cursor, seen: set[str]) -> str | None:
    """The wait a called __device__ function of this file makes (directly or through its callees), or None."""
    ref = call.referenced
    if ref is None or ref.kind != K.FUNCTION_DECL or ref.spelling in seen:
        return None
    d = ref.get_definition()
    if d is None or not p.in_main(d):
        return None
    seen.add(ref.spelling)
    for c in walk(d):
        if c.kind == K.CALL_EXPR:
            if c.spelling in WAITS:
                return f"`{c.spelling}()` in `{ref.spelling}`"
            inner = _helper_waits(p, c, seen)
            if inner is not None:
                return inner
    return None


def refusals(p: Parsed, site: Site, child: Child | None) -> dict[str, str]:
    """Map transform → reason it does not apply to ``site`` (absent: it applies)."""
    out: dict[str, str] = {}
    common = None
    wait = waits_after(p, site) if site.device_side else None
    if wait is not None:
        common = (f"the parent waits for the child ({wait[0]} on line {wait[1]}) and uses its results after "
                  "the wait: that is CDP1's device-side synchronisation, which CUDA 12 removed for sm_90 (CDP2); "
                  "the rewrites keep CDP2's rule that a parent never reads its child's results (aggregation "
                  "would even move the launch after that code). Restructure first: move the code after the "
                  "wait into a kernel launched into cudaStreamTailLaunch, which runs once the parent's children "
                  "are done")
    elif site.from_macro:
        common = "the launch comes from a macro expansion"
    elif site.stmt_end is None:
        common = "the launch is not a statement of its own (it is part of a larger expression)"
    elif child is None and find_child_template(p, site.child_name) is not None:
        launched = p.text(site.call.extent.start.offset, site.config.extent.start.offset).rstrip(" \t<")
        common = (f"child kernel `{site.child_name}` is a function template (launched as `{launched}`): the "
                  "rewrites copy the child's body into new device code (a serial loop, a coarsened or an "
                  "aggregated kernel), and those copies would have to be templates of the same parameters "
                  "instantiated with the launch's arguments, which warpwise does not generate; write the "
                  "instantiation you launch as a non-template kernel to rewrite it")
    elif child is None:
        common = f"the definition of child kernel `{site.child_name}` is not in this file"
    elif "<" in site.child_name or child.cursor.kind == K.FUNCTION_TEMPLATE:
        common = "template child kernels are not supported"
    elif child.problems:
        common = f"child kernel `{child.name}`: {child.problems[0]}"
    elif child.start > site.func.extent.start.offset and child.name != site.func.spelling:
        common = (f"child kernel `{child.name}` is defined after its parent `{site.func.spelling}`: move its "
                  "definition above the parent")
    elif child.helpers_with_builtins:
        common = (f"child kernel `{child.name}` calls `{child.helpers_with_builtins[0]}`, which reads "
                  "threadIdx/blockIdx/blockDim/gridDim: inline it into the kernel first")
    if common is not None:
        return {t: common for t in ("threshold", "coarsen", "aggregate")}
    assert child is not None
    if child.sync_calls:
        out["threshold"] = (f"child kernel `{child.name}` synchronises its threads "
                            f"(`{child.sync_calls[0]}`): serialising it in one thread is not possible "
                            "(CGO'22 §III-C)")
    elif child.warp_calls:
        out["threshold"] = (f"child kernel `{child.name}` uses the warp-level primitive "
                            f"`{child.warp_calls[0]}` (CGO'22 §III-C)")
    elif child.shared_vars or (site.shared is not None and site.shared.text.strip() not in ("0", "0u", "0U")):
        what = f"`{child.shared_vars[0]}`" if child.shared_vars else "dynamic shared memory"
        out["threshold"] = (f"child kernel `{child.name}` uses shared memory ({what}): each parent thread "
                            "would need a whole child block's shared memory (CGO'22 §III-C)")
    bad = child.early_exit_before_barrier()
    if bad is not None:
        out["coarsen"] = (f"child kernel `{child.name}` returns early (line {p.line_col(bad[0])[0]}) and a "
                          f"block barrier can follow (line {p.line_col(bad[1])[0]}): in the coarsening loop the "
                          "returning thread would wait at the end-of-block barrier while the others wait at "
                          "that one, pairing the wrong barriers (CGO'22 §IV); move the return after the last "
                          "barrier or guard the work with `if` instead (a return whose conditions read only "
                          "blockIdx, gridDim, blockDim, kernel arguments and constants is accepted: the whole "
                          "block returns together)")
    if site.child_name == site.func.spelling:
        pass  # recursive: aggregate_rec.py (block granularity; it refuses the shapes it cannot aggregate)
    elif not has_attr(site.func, K.CUDAGLOBAL_ATTR):
        out["aggregate"] = "the launch is in a __device__ function; aggregation needs it in the __global__ parent"
    elif any(prm.copy_problem for prm in child.params):
        prm = next(prm for prm in child.params if prm.copy_problem)
        out["aggregate"] = (f"parameter `{prm.name}` of child kernel `{child.name}`: {prm.copy_problem}, so its "
                            "value cannot be stored bitwise in a launch record (the copy would skip it)")
    elif site.stream is not None and site.stream.text.strip() not in WARPWISE_AGG_STREAMS:
        out["aggregate"] = (f"the launch uses stream `{site.stream.text}`: an aggregated launch cannot "
                            "keep per-thread stream order")
    return out


def thread_count(p: Parsed, site: Site) -> ThreadCount | None:
    """Fig. 4 thread-count recovery for a site."""
    grid_cursor = expr_children(site.config)[1]
    return recover_thread_count(p, site.func, site.stmt_start, grid_cursor)


def to_launch(p: Parsed, site: Site, child: Child | None) -> Launch:
    """Public view of a device-side launch."""
    line, col = p.line_col(site.stmt_start)
    tc = thread_count(p, site)
    return Launch(line=line, column=col, start=site.stmt_start,
                  end=site.stmt_end if site.stmt_end is not None else site.call.extent.end.offset,
                  parent=site.func.spelling, child=site.child_name, grid=site.grid, block=site.block,
                  shared=site.shared, stream=site.stream, args=site.args,
                  thread_count=tc.text if tc else None, thread_count_pattern=tc.pattern if tc else None,
                  in_loop=site.in_loop, refusals=refusals(p, site, child))


def find_launches(source: str, path: str) -> list[Launch]:
    """Device-side launches of ``source`` (the text of ``path``), in source order.

    Raises RewriteError naming ``file:line:col`` and clang's message when the file has a parse error
    (parse.blocking_errors): a broken AST can hide launches, so "no launch" would be a wrong answer.
    """
    p = parse(source, path)
    require_parses(p)
    out = []
    children: dict[str, Child | None] = {}
    for s in find_sites(p):
        if not s.device_side:
            continue
        if s.child_name not in children:
            children[s.child_name] = find_child(p, s.child_name)
        out.append(to_launch(p, s, children[s.child_name]))
    return out


def site_at_line(p: Parsed, line: int) -> Site:
    """The device-side launch starting on 1-based ``line``; RewriteError naming the file otherwise.

    Call parse.require_parses first: on a file with parse errors "no launch here" may be wrong.
    """
    sites = [s for s in find_sites(p) if s.device_side]
    hits = [s for s in sites if p.line_col(s.stmt_start)[0] == line]
    if not hits:
        hits = [s for s in sites if p.line_col(s.stmt_start)[0] <= line <= p.line_col(s.call.extent.end.offset)[0]]
    if not hits:
        lines = ", ".join(str(p.line_col(s.stmt_start)[0]) for s in sites) or "none"
        raise RewriteError(f"{p.path}:{line}: no device-side kernel launch on this line "
                           f"(device-side launches are on lines: {lines})")
    if len(hits) > 1:
        raise RewriteError(f"{p.path}:{line}: {len(hits)} launches start on this line; put each on its own line")
    return hits[0]
