"""Coarsening (CGO'22 §IV, Fig. 6): a coarsened copy of the child runs WARPWISE_CFACTOR original blocks per
block in a loop; the launch divides the grid's x dimension by WARPWISE_CFACTOR and passes the original grid."""

from __future__ import annotations

from collections.abc import Callable

from .common import (
    body_text,
    check_applies,
    child_before_parent,
    config_text,
    is_recursive,
    mapped_text,
    params_text,
    statement_extent,
    with_extra,
)
from .edits import fresh, fresh_in, header_offset, indent_of, macro_block, make_edit, prelude
from .kernel import BuiltinUse, Child
from .launches import Site, refusals
from .model import TextEdit
from .parse import Parsed

DEFAULT_FACTOR = 4


def _coarse_kernel(p: Parsed, child: Child, name: str, site: Site) -> str:
    """Fig. 6 lines 01-05. A recursive launch inside the child becomes, in the copy, the same
    coarsened launch (so every level of the recursion is coarsened)."""
    own = p.text(child.start, child.end)
    bx = fresh_in(own, "ww_bx")  # renamed when the child is already a coarsened copy
    gd = fresh_in(own, "ww_gDim")

    def mapping(u: BuiltinUse) -> str | None:
        if u.var == "gridDim":
            return f"{gd}.{u.member}" if u.member else gd
        if u.var == "blockIdx":
            if u.member == "x":
                return bx
            if u.member is None:
                return f"make_uint3({bx}, blockIdx.y, blockIdx.z)"
        return None

    ind = "    "
    label = fresh_in(own, "ww_next_block")
    extra = []
    if is_recursive(site, child):
        s, e = statement_extent(p, site)
        code = _launch_lines(site, name, lambda a, b: mapped_text(p, child, a, b, mapping))
        extra.append((s, e, ("\n" + indent_of(p, s)).join(code)))
    body = body_text(p, child, mapping, f"goto {label}" if child.returns else None, ind, extra)
    lines = [f"/* warpwise coarsen (CGO'22 Fig. 6): coarsened copy of child kernel `{child.name}`; block b runs the",
             f"   original blocks b, b + gridDim.x, ... of the uncoarsened grid {gd} */",
             f"__global__ void {name}({with_extra(params_text(child), 'dim3 ' + gd)}) {{",
             f"  for (unsigned int {bx} = blockIdx.x; {bx} < {gd}.x; {bx} += gridDim.x) {{",
             ind + body]
    if child.returns:
        lines.append(ind + f"{label}:;")
    if child.sync_calls or child.shared_vars:
        lines.append(ind + "__syncthreads(); /* warpwise coarsen: the next original block reuses shared memory */")
    lines += ["  }", "}"]
    return "\n".join(lines)


def _launch_lines(site: Site, name: str, txt: Callable[[int, int], str]) -> list[str]:
    """The coarsened launch statement (Fig. 6 lines 07-10); ``txt(start, end)`` gives the source text of
    a piece of the launch (mapped builtins when it goes into the coarsened copy)."""
    sh = txt(site.shared.start, site.shared.end) if site.shared else None
    st = txt(site.stream.start, site.stream.end) if site.stream else None
    args = ", ".join(txt(a.start, a.end) for a in site.args)
    return [f"{{ /* warpwise coarsen (CGO'22 Fig. 6): each block of `{name}` runs WARPWISE_CFACTOR blocks of child "
            f"`{site.child_name}` */",
            f"  const dim3 ww_cf_gDim = {txt(site.grid.start, site.grid.end)};",
            "  dim3 ww_cf_cgDim = ww_cf_gDim;",
            "  ww_cf_cgDim.x = (ww_cf_gDim.x + WARPWISE_CFACTOR - 1) / WARPWISE_CFACTOR;",
            f"  {name}<<<{config_text(site, 'ww_cf_cgDim', txt(site.block.start, site.block.end), sh, st)}>>>"
            f"({with_extra(args, 'ww_cf_gDim')});",
            "  WARPWISE_COUNT_LAUNCH_ERROR(cudaPeekAtLastError());",
            "}"]


def coarsen_edits(p: Parsed, site: Site, child: Child | None, factor: int | None) -> list[TextEdit]:
    """Edits that coarsen the child of ``site``.

    ``factor``: default value of the ``WARPWISE_CFACTOR`` macro (original blocks per coarsened block;
    overridable with -DWARPWISE_CFACTOR=N).
    """
    ch = check_applies(p, site, child, "coarsen", refusals(p, site, child))
    child_before_parent(p, site, ch)
    name = fresh(p, f"ww_{ch.name.removeprefix('ww_')}_coarse")
    s, e = statement_extent(p, site)
    ind = indent_of(p, s)
    out = _launch_lines(site, name, p.text)
    head = prelude(p) + macro_block(p, "WARPWISE_CFACTOR", str(factor if factor is not None else DEFAULT_FACTOR),
                                    "coarsening factor: original child blocks per block (CGO'22 Fig. 6)")
    edits = []
    if head:
        edits.append(make_edit(p, header_offset(p), header_offset(p), head))
    edits.append(make_edit(p, ch.end, ch.end, "\n\n" + _coarse_kernel(p, ch, name, site)))
    if is_recursive(site, ch):  # the child (its own parent) launches the coarsened copy defined after it
        decl = with_extra(params_text(ch), "dim3 ww_gDim")
        edits.append(make_edit(p, ch.start, ch.start, f"/* warpwise coarsen: coarsened copy of `{ch.name}`, defined "
                               f"below */\n__global__ void {name}({decl});\n"))
    edits.append(make_edit(p, s, e, ("\n" + ind).join(out)))
    return edits
