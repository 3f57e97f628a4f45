"""Thresholding (CGO'22 §III, Fig. 3): launch the child only when it has at least WARPWISE_THRESHOLD threads;
otherwise the parent thread runs a serial copy of the child (loops over blocks and threads with the
builtin index variables replaced by the loop indices and bounds)."""

from __future__ import annotations

from collections.abc import Callable

from .common import (
    body_text,
    check_applies,
    child_before_parent,
    config_text,
    is_recursive,
    mapped_text,
    needs_3d,
    params_text,
    statement_extent,
    with_extra,
)
from .cursors import K
from .edits import fresh, fresh_in, header_offset, indent_of, macro_block, make_edit, prelude
from .kernel import BuiltinUse, Child
from .launches import Site, find_sites, refusals, thread_count
from .model import RewriteError, TextEdit
from .parse import Parsed
from .threads import ThreadCount

DEFAULT_THRESHOLD = 128


def _serial_mapping(child: Child, dims: str, bv: dict[str, str],
                    tv: dict[str, str]) -> Callable[[BuiltinUse], str | None]:
    looped = set(dims)

    def mapping(u: BuiltinUse) -> str | None:
        if u.var in ("blockDim", "gridDim"):
            base = "ww_sbDim" if u.var == "blockDim" else "ww_sgDim"
            return f"{base}.{u.member}" if u.member else base
        v = tv if u.var == "threadIdx" else bv
        if u.member is None:
            return "make_uint3(" + ", ".join(v[d] if d in looped else "0u" for d in "xyz") + ")"
        return v[u.member] if u.member in looped else "0u"

    return mapping


def _serial_function(p: Parsed, child: Child, name: str, dims: str, site: Site, tc: ThreadCount | None) -> str:
    """Fig. 3 lines 09-15: the serial device-function copy of the child. A recursive launch inside the
    child becomes, in the copy, the same thresholded launch (serial below WARPWISE_THRESHOLD, recursively)."""
    own = p.text(child.start, child.end)
    # loop indices ww_bx, ww_tx, ... (renamed if the file already uses them, e.g. a coarsened child)
    bv = {d: fresh_in(own, f"ww_b{d}") for d in "xyz"}
    tv = {d: fresh_in(own, f"ww_t{d}") for d in "xyz"}
    mapping = _serial_mapping(child, dims, bv, tv)
    depth = 2 * len(dims)
    ind = "  " * (depth + 1)
    label = fresh_in(own, "ww_next_thread")
    extra = []
    if is_recursive(site, child):
        s, e = statement_extent(p, site)
        code = _launch_lines(p, site, child, tc, name, lambda a, b: mapped_text(p, child, a, b, mapping), copy=True)
        extra.append((s, e, ("\n" + indent_of(p, s)).join(code)))
    body = body_text(p, child, mapping, f"goto {label}" if child.returns else None, ind, extra)
    lines = [f"/* warpwise threshold (CGO'22 Fig. 3): serial version of child kernel `{child.name}`, run by one",
             "   parent thread when the child grid would have fewer than WARPWISE_THRESHOLD threads */",
             f"__device__ void {name}({with_extra(params_text(child), 'dim3 ww_sgDim, dim3 ww_sbDim')}) {{"]
    level = 1
    for d in reversed(dims):  # blocks, outermost dimension first
        lines.append("  " * level + f"for (unsigned int {bv[d]} = 0; {bv[d]} < ww_sgDim.{d}; ++{bv[d]}) {{")
        level += 1
    for d in reversed(dims):
        lines.append("  " * level + f"for (unsigned int {tv[d]} = 0; {tv[d]} < ww_sbDim.{d}; ++{tv[d]}) {{")
        level += 1
    lines.append(ind + body)
    if child.returns:
        lines.append(ind + f"{label}:;")
    for lvl in range(level - 1, 0, -1):
        lines.append("  " * lvl + "}")
    lines.append("}")
    return "\n".join(lines)


def _launch_lines(p: Parsed, site: Site, ch: Child, tc: ThreadCount | None, serial: str,
                  txt: Callable[[int, int], str], copy: bool = False) -> list[str]:
    """The thresholded launch statement (Fig. 3 lines 01-07); ``txt(start, end)`` gives the source text
    of a piece of the launch (mapped builtins when it goes into a serial copy)."""
    g0, g1 = site.grid.start, site.grid.end
    # names not used in the file: a launch inside an earlier rewrite's block (thresholding warpwise's own
    # launch again) must not initialize a new `ww_threads` from the outer one
    n_thr, n_g, n_b = (fresh(p, n) for n in ("ww_threads", "ww_thr_gDim", "ww_thr_bDim"))
    if copy and tc is not None and any(b in tc.text for b in ("threadIdx", "blockIdx", "blockDim", "gridDim")):
        tc = None  # its text would need the copy's builtin mapping: count grid x block threads instead
    if tc is not None and tc.span is not None:
        grid = txt(g0, tc.span[0]) + n_thr + txt(tc.span[1], g1)
    else:
        grid = txt(g0, g1)
    sh = txt(site.shared.start, site.shared.end) if site.shared else None
    st = txt(site.stream.start, site.stream.end) if site.stream else None
    launch_cfg = config_text(site, n_g, n_b, sh, st)
    args = ", ".join(txt(a.start, a.end) for a in site.args)
    out = [f"{{ /* warpwise threshold (CGO'22 Fig. 3): launch child `{ch.name}` only when it has at least "
           "WARPWISE_THRESHOLD threads; otherwise this thread runs it serially */"]
    if tc is not None:
        out.append(f"  const auto {n_thr} = ({tc.text}); /* child threads, Fig. 4 pattern {tc.pattern} */")
    out.append(f"  const dim3 {n_g} = {grid};")
    out.append(f"  const dim3 {n_b} = {txt(site.block.start, site.block.end)};")
    if tc is None:
        out.append("  /* no Fig. 4 ceil-division pattern found in the grid expression: count grid x block threads */")
        out.append(f"  const unsigned long long {n_thr} = (unsigned long long){n_g}.x * {n_g}.y * {n_g}.z * "
                   f"{n_b}.x * {n_b}.y * {n_b}.z;")
    out += [f"  if ({n_thr} >= WARPWISE_THRESHOLD) {{",
            f"    {site.child_name}<<<{launch_cfg}>>>({args});",
            "    WARPWISE_COUNT_LAUNCH_ERROR(cudaPeekAtLastError());"]
    if site.in_loop:
        out += ["  }", *(f"  {line}" for line in LOOP_SYNC_COMMENT),
                "  __syncwarp(__activemask());",
                f"  if (!({n_thr} >= WARPWISE_THRESHOLD)) {{"]
    else:
        out.append("  } else {")
    out += [f"    {serial}({with_extra(args, f'{n_g}, {n_b}')});",
            "  }",
            "}"]
    return out


# A launch inside a loop of the parent: under independent thread scheduling the lanes of one warp can be
# in different iterations, some inside the device runtime's launch while others run the serial copy. On
# the H200 (CDP2, driver 580.159.04) such a warp livelocks: the launching lanes spin in the device runtime
# and never return, the warp's other lanes stay parked in the serial loop (cuda-gdb and mapped-memory
# progress counters, bench/dp/hang_diag.sh; docs/benchmarks.md, DP Run 6). The launching lanes of the
# warp therefore finish their launches before its other lanes start the serial copy: a mitigation (the
# H200 sweep: 55 of 68 points hung before, 2 of 90 after), which is why the profile-guided plan also keeps
# aggregation for such a launch (plan.choose, in_loop).
#: Why a threshold without aggregation is refused for a launch inside a loop of the parent: the two-if form
#: above still livelocked on 2 of 90 points of the H200 sweep (docs/benchmarks.md, DP Run 6); aggregation
#: moves the launches out of the loop (one per block after it), and no aggregated build ever hung.
LOOP_THRESHOLD_REFUSAL = (
    "the launch is inside a loop of the parent: a threshold without aggregation leaves device-side launches in a "
    "loop whose lanes diverge, and a warp with lanes in the launch while others run the serial copy livelocked "
    "in the device runtime on the H200 (CDP2, driver 580; docs/benchmarks.md, dynamic-parallelism Run 6); "
    "threshold and aggregate together (the profile-guided rewrite does), which moves the launches after the loop")

LOOP_SYNC_COMMENT = (
    "/* warpwise threshold: the launch is in a loop: this warp's launching lanes finish their launches",
    "   before its other lanes run the serial copy (a warp with lanes in the device runtime's launch while",
    "   others run the serial copy livelocked on the H200, CDP2: docs/benchmarks.md \"The histo hang\") */",
)


def threshold_edits(p: Parsed, site: Site, child: Child | None, threshold: int | None) -> list[TextEdit]:
    """Edits that apply thresholding to ``site``.

    ``threshold``: default value of the ``WARPWISE_THRESHOLD`` macro (child threads; overridable with
    -DWARPWISE_THRESHOLD=N). Raises RewriteError (see refusals()) when the child synchronises, uses warp
    primitives or shared memory.
    """
    ch = check_applies(p, site, child, "threshold", refusals(p, site, child))
    child_before_parent(p, site, ch)
    dims = "xyz" if needs_3d(p, site, ch) else "x"
    serial = fresh(p, f"ww_{ch.name.removeprefix('ww_')}_serial")
    tc = thread_count(p, site)
    s, e = statement_extent(p, site)
    ind = indent_of(p, s)
    out = _launch_lines(p, site, ch, tc, serial, p.text)
    launch_text = ("\n" + ind).join(out)
    default = str(threshold if threshold is not None else DEFAULT_THRESHOLD)
    head = prelude(p) + macro_block(p, "WARPWISE_THRESHOLD", default,
                                    "threshold: minimum child threads for a launch (CGO'22 Fig. 3)")
    edits = []
    edits.append(make_edit(p, ch.end, ch.end, "\n\n" + _serial_function(p, ch, serial, dims, site, tc)))
    if is_recursive(site, ch):  # the child (its own parent) calls the serial copy defined after it
        decl = with_extra(params_text(ch), "dim3 ww_sgDim, dim3 ww_sbDim")
        edits.append(make_edit(p, ch.start, ch.start, f"/* warpwise threshold: serial copy of `{ch.name}`, defined "
                               f"below */\n__device__ void {serial}({decl});\n"))
        edits += _stack_edits(p, site, ch, serial)
        head += macro_block(p, "WARPWISE_SERIAL_STACK", "8192",
                            "threshold of a recursive launch: thread stack bytes for the recursive serial copy")
    edits.append(make_edit(p, s, e, launch_text))
    if head:
        edits.append(make_edit(p, header_offset(p), header_offset(p), head))
    return sorted(edits, key=lambda x: x.start)


def _stack_edits(p: Parsed, site: Site, ch: Child, serial: str) -> list[TextEdit]:
    """Before each host launch of a recursive child: raise the thread stack limit, because the serial
    copy calls itself once per level (the default 1 KiB stack overflows after a few levels)."""
    fn = f"{serial}_stack"
    out = []
    for hs in find_sites(p):
        if hs.device_side or hs.child_name != ch.name or hs.stmt_end is None:
            continue
        call = f"{fn}(); /* warpwise threshold: stack for the recursive serial copy */"
        if hs.ancestors and hs.ancestors[-1].kind == K.COMPOUND_STMT:
            out.append(make_edit(p, hs.stmt_start, hs.stmt_start, call + "\n" + indent_of(p, hs.stmt_start)))
        else:
            out.append(make_edit(p, hs.stmt_start, hs.stmt_start, "{ " + call + " "))
            out.append(make_edit(p, hs.stmt_end, hs.stmt_end, " }"))
    if not out:
        raise RewriteError(f"{p.path}:{p.line_col(site.stmt_start)[0]}: cannot apply threshold: the recursive serial "
                           f"copy of `{ch.name}` needs a larger thread stack, set before the host launches of "
                           f"`{ch.name}`, and none is in this file")
    text = (f"\n\n/* warpwise threshold: the recursive serial copy of `{ch.name}` needs WARPWISE_SERIAL_STACK bytes of "
            "stack per thread */\n"
            f"static void {fn}(void) {{\n"
            "  size_t ww_s = 0;\n"
            "  if (cudaDeviceGetLimit(&ww_s, cudaLimitStackSize) == cudaSuccess && ww_s < WARPWISE_SERIAL_STACK)\n"
            "    cudaDeviceSetLimit(cudaLimitStackSize, WARPWISE_SERIAL_STACK);\n"
            "}")
    out.append(make_edit(p, ch.end, ch.end, text))
    return out
