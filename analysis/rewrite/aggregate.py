"""Aggregation (KLAP; CGO'22 §II-B and §V, Fig. 7): the launches of a child made by the parent
threads of one warp, block, group of blocks (multi-block) or the whole grid become one launch of an
aggregated child. Each parent thread stores its arguments and configuration in a record; the
aggregated grid is the sum of the parents' grids; each aggregated block finds its parent by binary
search over the inclusive scan of the parents' block counts (disaggregation).

Warp, block and multi-block: the records are written at the launch site and the aggregated grid is
launched at the end of the parent (every ``return`` of the parent becomes a jump to that point, so
all threads of the block reach it). Multi-block: group counters in global memory, atomics, a fence,
and the last block of the group to finish launches (Fig. 7). Grid: the host launches the aggregated
grid after the parent kernel has finished. Warp and block granularity apply the aggregation
threshold (§V-B): with fewer than WARPWISE_AGG_THRESHOLD parents each parent launches its own child.
"""

from __future__ import annotations

from .common import args_text, check_applies, child_before_parent, statement_extent
from .cursors import K, body_of
from .edits import fresh, header_offset, indent_of, macro_block, make_edit, prelude
from .kernel import BuiltinUse, Child, Param
from .launches import Site, find_sites, refusals
from .model import GRANULARITIES, RewriteError, TextEdit
from .parse import Parsed, walk_with_parents

DEFAULT_AGG_THRESHOLD = 2
DEFAULT_GROUP_BLOCKS = 8
CAPACITY = "(1u << 20)"
MAX_GROUPS = "65536"


def agg_mapping(u: BuiltinUse) -> str | None:
    """In an aggregated copy, blockIdx/gridDim/blockDim are those of the original launch (disaggregated)."""
    base = {"blockIdx": "ww_agg_blockIdx", "gridDim": "ww_agg_gridDim", "blockDim": "ww_agg_blockDim"}.get(u.var)
    if base is None:
        return None
    return f"{base}.{u.member}" if u.member else base


def disaggregate(child: Child, rec: str, record: str, block_dim: list[str]) -> list[str]:
    """Fig. 7 lines 02-06: the binary search for this block's record over the inclusive scan ``ww_scan``,
    ``record`` (the expression of that record of type ``rec``, indexed by ``ww_lo``), ``block_dim`` (lines declaring
    ``ww_agg_blockDim``), the original grid and block index when the child reads them, and the child's
    parameters copied out of the record."""
    used = {u.var for u in child.builtins}
    lines = ["  unsigned int ww_lo = 0, ww_hi = ww_n - 1;",
             "  while (ww_lo < ww_hi) {",
             "    const unsigned int ww_mid = (ww_lo + ww_hi) / 2;",
             "    if (ww_scan[ww_mid] <= blockIdx.x) ww_lo = ww_mid + 1; else ww_hi = ww_mid;",
             "  }",
             f"  const {rec} &ww_r = {record};", *block_dim]
    if "gridDim" in used or "blockIdx" in used:
        lines.append("  const dim3 ww_agg_gridDim = ww_r.ww_cfg_gDim;")
    if "blockIdx" in used:
        lines += ["  const unsigned int ww_b = blockIdx.x - (ww_lo > 0 ? ww_scan[ww_lo - 1] : 0u);",
                  "  const uint3 ww_agg_blockIdx = make_uint3(ww_b % ww_agg_gridDim.x,",
                  "      (ww_b / ww_agg_gridDim.x) % ww_agg_gridDim.y,",
                  "      ww_b / (ww_agg_gridDim.x * ww_agg_gridDim.y));"]
    # a bitwise copy, as the launch itself would pass it (no default construction)
    return lines + [f"  [[maybe_unused]] {prm.local_decl} = {_load(prm, 'ww_r')};" for prm in child.params]


def _agg_kernel(p: Parsed, child: Child, name: str, rec: str) -> str:
    """Fig. 7 lines 01-11: the aggregated child with disaggregation by binary search."""
    from .common import body_text

    body = body_text(p, child, agg_mapping, None, "  ")
    lines = [f"/* warpwise aggregate (CGO'22 Fig. 7, lines 01-11): aggregated copy of child kernel `{child.name}`.",
             "   Block i belongs to the parent p whose inclusive scan of block counts is the first above i",
             "   (binary search); the block takes that parent's arguments and launch configuration. */",
             f"__global__ void {name}(const {rec} *ww_recs, const unsigned int *ww_scan, unsigned int ww_n) {{",
             *disaggregate(child, rec, "ww_recs[ww_lo]", [
                 "  const dim3 ww_agg_blockDim = ww_r.ww_cfg_bDim;",
                 "  if (threadIdx.x >= ww_agg_blockDim.x || threadIdx.y >= ww_agg_blockDim.y ||",
                 "      threadIdx.z >= ww_agg_blockDim.z) return; "
                 "/* the aggregated block is the largest parent block */"]),
             "  " + body, "}"]
    return "\n".join(lines)


def _load(prm: Param, rec: str) -> str:
    """The parameter's value read back from its record bytes."""
    return f"*reinterpret_cast<{prm.field_type} const *>({rec}.{prm.name})"


def _record(child: Child, rec: str) -> str:
    # byte storage: a __device__ array of records must not construct its members (user types may
    # have a user-provided or deleted default constructor; nvcc rejects dynamic initialisation)
    fields = "".join(f"  alignas({prm.field_type}) unsigned char {prm.name}[sizeof({prm.field_type})];\n"
                     for prm in child.params)
    return (f"/* warpwise aggregate: one parent thread's launch of child kernel `{child.name}` (arguments as bytes, "
            f"copied with memcpy, and configuration) */\nstruct {rec} {{\n{fields}  uint3 ww_cfg_gDim;\n"
            "  uint3 ww_cfg_bDim;\n  unsigned int ww_cfg_shm;\n};\n")


def fill_record(ch: Child, site: Site, mx: str, ind: str, extra: list[str]) -> list[str]:
    """Lines that fill record ``ww_agg_r`` from the launch (arguments copied bytewise, configuration),
    then ``extra``, then raise the unit's maximum block and shared size ``mx[0..3]``."""
    out = [f"{ind}{{ {prm.field_type} const ww_agg_a{k} = ({a.text}); "
           f"memcpy(ww_agg_r.{prm.name}, &ww_agg_a{k}, sizeof ww_agg_a{k}); }}"
           for k, (prm, a) in enumerate(zip(ch.params, site.args, strict=True))]
    out += [f"{ind}ww_agg_r.ww_cfg_gDim = ww_agg_gDim;", f"{ind}ww_agg_r.ww_cfg_bDim = ww_agg_bDim;",
            f"{ind}ww_agg_r.ww_cfg_shm = ww_agg_shm;", *(ind + x for x in extra)]
    return out + [f"{ind}atomicMax(&{mx}[{i}], {v});" for i, v in
                  enumerate(("ww_agg_bDim.x", "ww_agg_bDim.y", "ww_agg_bDim.z", "ww_agg_shm"))]


def _agg_stream(site: Site) -> str:
    st = site.stream.text.strip() if site.stream else ""
    return "cudaStreamTailLaunch" if st == "cudaStreamTailLaunch" else "cudaStreamFireAndForget"


def aggregate_edits(p: Parsed, site: Site, child: Child | None, granularity: str,
                    agg_threshold: int | None, group_blocks: int | None = None) -> list[TextEdit]:
    """Edits that aggregate the child launches of ``site`` at ``granularity``
    (warp | block | multiblock | grid).

    ``agg_threshold``: default of ``WARPWISE_AGG_THRESHOLD`` (minimum parents for an aggregated launch, warp
    and block granularity, CGO'22 §V-B); ``group_blocks``: default of ``WARPWISE_AGG_GRANULARITY`` (blocks
    per multi-block group). Raises RewriteError when the launch is in a __device__ function, on a user
    stream, or (grid) the parent is never launched from host code here; a recursive launch goes to
    aggregate_rec.recursive_aggregate_edits (block granularity).
    """
    if granularity not in GRANULARITIES:
        raise RewriteError(f"{p.path}: unknown granularity `{granularity}` "
                           f"(expected one of {', '.join(GRANULARITIES)})")
    ch = check_applies(p, site, child, "aggregate", refusals(p, site, child))
    if site.child_name == site.func.spelling:  # recursive: every level aggregates, records never reused
        from .aggregate_rec import recursive_aggregate_edits

        return recursive_aggregate_edits(p, site, ch, granularity,
                                         agg_threshold if agg_threshold is not None else DEFAULT_AGG_THRESHOLD)
    child_before_parent(p, site, ch)
    line = p.line_col(site.stmt_start)[0]
    B = fresh(p, f"ww_{ch.name.removeprefix('ww_')}_agg")
    rec, recs, scan = f"{B}_rec", f"{B}_recs", f"{B}_scan"
    parent_body = body_of(site.func)
    assert parent_body is not None
    stream = _agg_stream(site)
    s, e = statement_extent(p, site)
    ind = indent_of(p, s)
    g_name = {"warp": "warp", "block": "block", "multiblock": "multi-block", "grid": "grid"}[granularity]

    # --- file-level declarations: record type, record pool, counters, aggregated kernel -----------
    decls = [_record(ch, rec),
             f"static __device__ {rec} {recs}[WARPWISE_AGG_CAPACITY]; /* warpwise aggregate: launch records */",
             f"static __device__ unsigned int {scan}[WARPWISE_AGG_CAPACITY]; /* warpwise aggregate: inclusive scan of "
             "block counts */"]
    if granularity == "multiblock":
        decls += [(f"static __device__ unsigned long long {B}_gcnt[WARPWISE_AGG_MAX_GROUPS]; "
                   "/* (parents << 32) | blocks */"),
                  f"static __device__ unsigned int {B}_gmax[WARPWISE_AGG_MAX_GROUPS][4]; "
                  "/* max block x, y, z, shared bytes */",
                  (f"static __device__ unsigned int {B}_gdone[WARPWISE_AGG_MAX_GROUPS]; "
                    "/* blocks of the group finished */")]
    if granularity == "grid":
        decls += [f"static __device__ unsigned long long {B}_gridcnt; /* (parents << 32) | blocks */",
                  f"static __device__ unsigned int {B}_gridmax[4]; /* max block x, y, z, shared bytes */"]
    decls.append("")
    decls.append(_agg_kernel(p, ch, B, rec))
    if granularity == "grid":
        decls.append(_host_launcher(B, rec, recs, scan, ch.name))
    file_text = "\n\n" + "\n".join(decls)

    # --- the launch site: record the launch (or launch directly when the unit's records are full) --
    cnt = {"warp": f"&{B}_cnt[{B}_unit]", "block": f"&{B}_cnt", "multiblock": f"&{B}_gcnt[{B}_g]",
           "grid": f"&{B}_gridcnt"}[granularity]
    mx = {"warp": f"{B}_max[{B}_unit]", "block": f"{B}_max", "multiblock": f"{B}_gmax[{B}_g]",
          "grid": f"{B}_gridmax"}[granularity]
    base = "0ull" if granularity == "grid" else f"{B}_base"
    cap = "(unsigned long long)WARPWISE_AGG_CAPACITY" if granularity == "grid" else f"{B}_cap"
    ok = "true" if granularity == "grid" else f"{B}_ok"
    shm = site.shared.text if site.shared else "0"
    orig_stream = site.stream.text if site.stream else "0"
    if len(site.args) != len(ch.params):
        raise RewriteError(f"{p.path}:{line}: the launch passes {len(site.args)} arguments but child "
                           f"`{ch.name}` takes {len(ch.params)} (default arguments are not supported)")
    out = [f"{{ /* warpwise aggregate ({g_name} granularity, CGO'22 §V): record this launch of child `{ch.name}` "
           "for the aggregated grid */",
           f"  const dim3 ww_agg_gDim = {site.grid.text};",
           f"  const dim3 ww_agg_bDim = {site.block.text};",
           f"  const unsigned int ww_agg_shm = {shm};",
           "  const unsigned int ww_agg_nb = ww_agg_gDim.x * ww_agg_gDim.y * ww_agg_gDim.z;",
           "  bool ww_agg_done = false;",
           f"  if ({ok} && ww_agg_nb > 0) {{",
           f"    const unsigned long long ww_agg_old = atomicAdd({cnt}, (1ull << 32) | ww_agg_nb);",
           f"    if ((ww_agg_old >> 32) < {cap}) {{ /* else: the unit's records are full */",
           f"      const unsigned long long ww_agg_i = {base} + (ww_agg_old >> 32);",
           f"      {rec} &ww_agg_r = {recs}[ww_agg_i];"]
    out += fill_record(ch, site, mx, "      ", [f"{scan}[ww_agg_i] = (unsigned int)ww_agg_old + ww_agg_nb;"])
    out += ["      ww_agg_done = true;",
            "    }",
            "  }",
            "  if (!ww_agg_done && ww_agg_nb > 0) { /* no record: launch as the original did */",
            f"    {site.child_name}<<<ww_agg_gDim, ww_agg_bDim, ww_agg_shm, {orig_stream}>>>({args_text(site)});",
            "    WARPWISE_COUNT_LAUNCH_ERROR(cudaPeekAtLastError());",
            "  }",
            "}"]

    head = prelude(p)
    head += macro_block(p, "WARPWISE_AGG_CAPACITY", CAPACITY,
                        "aggregation: launch records per parent launch")
    if granularity != "grid":
        head += macro_block(p, "WARPWISE_AGG_PER_THREAD", "8" if site.in_loop else "1",
                            "aggregation: records per parent thread (more launches of a thread go out directly)")
    if granularity in ("warp", "block"):
        head += macro_block(p, "WARPWISE_AGG_THRESHOLD", str(agg_threshold if agg_threshold is not None
                                                     else DEFAULT_AGG_THRESHOLD),
                            "aggregation threshold: minimum parents per aggregated launch (CGO'22 §V-B)")
    if granularity == "multiblock":
        head += macro_block(p, "WARPWISE_AGG_GRANULARITY", str(group_blocks or DEFAULT_GROUP_BLOCKS),
                            "multi-block aggregation: parent blocks per group (CGO'22 Fig. 7)")
        head += macro_block(p, "WARPWISE_AGG_MAX_GROUPS", MAX_GROUPS, "multi-block aggregation: group counters")
    edits = []
    if head:
        edits.append(make_edit(p, header_offset(p), header_offset(p), head))
    edits.append(make_edit(p, ch.end, ch.end, file_text))
    if granularity == "grid":
        edits.append(make_edit(p, s, e, ("\n" + ind).join(out)))
        edits += _host_sites(p, site, B, ch.end)
        return edits

    # --- warp / block / multi-block: prologue, returns → jump to the end, epilogue ----------------
    label = f"{B}_end"
    bs, be = parent_body.extent.start.offset, parent_body.extent.end.offset
    pro = _prologue(B, granularity)
    returns = [c.extent.start.offset for c, ps in walk_with_parents(parent_body)
               if c.kind == K.RETURN_STMT and not any(a.kind == K.LAMBDA_EXPR for a in ps)]
    epi = _epilogue(B, granularity, label, recs, scan, rec, ch, stream)
    if not returns:
        epi = epi[1:]  # no jump to the end: no label (nvcc warns about unused labels)
    edits.append(make_edit(p, bs + 1, bs + 1, "\n" + "\n".join("  " + ln if ln else ln for ln in pro) + "\n  {"))
    for rs in returns:
        edits.append(make_edit(p, rs, rs + len("return"), f"goto {label}"))
    edits.append(make_edit(p, s, e, ("\n" + ind).join(out)))
    edits.append(make_edit(p, be - 1, be - 1, "  }\n" + "\n".join("  " + ln if ln else ln for ln in epi) + "\n"))
    return sorted(edits, key=lambda x: x.start)


def _prologue(B: str, g: str) -> list[str]:
    tid = f"const unsigned int {B}_tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);"
    blk = (f"const unsigned long long {B}_blk = blockIdx.x + (unsigned long long)gridDim.x * "
           "(blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);")
    nthr = f"const unsigned int {B}_nthr = blockDim.x * blockDim.y * blockDim.z;"
    if g == "block":
        return ["/* warpwise aggregate (block granularity, KLAP / CGO'22 §II-B): this block's launches of the child",
                "   are recorded and launched as one aggregated grid when the block ends */",
                f"__shared__ unsigned long long {B}_cnt; /* (parents << 32) | child blocks */",
                f"__shared__ unsigned int {B}_max[4]; /* max block x, y, z, shared bytes */",
                tid, blk, nthr,
                f"const unsigned long long {B}_cap = (unsigned long long){B}_nthr * WARPWISE_AGG_PER_THREAD; "
                "/* records of this block */",
                f"const unsigned long long {B}_base = {B}_blk * {B}_cap; /* first record of this block */",
                f"const bool {B}_ok = {B}_base + {B}_cap <= WARPWISE_AGG_CAPACITY;",
                f"if ({B}_tid == 0) {{ {B}_cnt = 0; {B}_max[0] = {B}_max[1] = {B}_max[2] = {B}_max[3] = 0; }}",
                "__syncthreads();"]
    if g == "warp":
        return ["/* warpwise aggregate (warp granularity, KLAP / CGO'22 §II-B): each warp's launches of the child are",
                "   recorded and launched as one aggregated grid when the block ends */",
                f"__shared__ unsigned long long {B}_cnt[32]; /* per warp: (parents << 32) | child blocks */",
                f"__shared__ unsigned int {B}_max[32][4]; /* per warp: max block x, y, z, shared bytes */",
                tid, blk, nthr,
                f"const unsigned int {B}_unit = {B}_tid / 32; /* warp of this thread */",
                f"const unsigned long long {B}_cap = 32ull * WARPWISE_AGG_PER_THREAD; /* records of this warp */",
                (f"const unsigned long long {B}_base = ({B}_blk * {B}_nthr + ({B}_tid & ~31u)) * "
                  "WARPWISE_AGG_PER_THREAD;"),
                f"const bool {B}_ok = {B}_base + {B}_cap <= WARPWISE_AGG_CAPACITY;",
                f"if (({B}_tid & 31u) == 0) {{",
                f"  {B}_cnt[{B}_unit] = 0;",
                f"  {B}_max[{B}_unit][0] = {B}_max[{B}_unit][1] = {B}_max[{B}_unit][2] = {B}_max[{B}_unit][3] = 0;",
                "}",
                "__syncthreads();"]
    return ["/* warpwise aggregate (multi-block granularity, CGO'22 §V-A / Fig. 7): the launches of each group",
            "   of WARPWISE_AGG_GRANULARITY blocks are recorded; the group's last block to finish launches them as",
            "   one grid */",
            tid, blk, nthr,
            f"const unsigned long long {B}_g = {B}_blk / WARPWISE_AGG_GRANULARITY; /* group of this block */",
            (f"const unsigned long long {B}_cap = (unsigned long long)WARPWISE_AGG_GRANULARITY * {B}_nthr * "
              "WARPWISE_AGG_PER_THREAD;"),
            f"const unsigned long long {B}_base = {B}_g * {B}_cap; /* first record of the group */",
            f"const bool {B}_ok = {B}_g < WARPWISE_AGG_MAX_GROUPS && {B}_base + {B}_cap <= WARPWISE_AGG_CAPACITY;"]


def _direct_launches(B: str, recs: str, rec: str, ch: Child, stream: str, ind: str) -> list[str]:
    """The leader launches each recorded child itself (fewer records than WARPWISE_AGG_THRESHOLD, §V-B)."""
    args = ", ".join(_load(prm, "ww_agg_r") for prm in ch.params)
    return [ind + "for (unsigned int ww_agg_j = 0; ww_agg_j < ww_agg_n; ++ww_agg_j) {",
            ind + f"  const {rec} &ww_agg_r = {recs}[{B}_base + ww_agg_j];",
            ind + f"  {ch.name}<<<dim3(ww_agg_r.ww_cfg_gDim), dim3(ww_agg_r.ww_cfg_bDim), ww_agg_r.ww_cfg_shm, "
            f"{stream}>>>({args});",
            ind + "  WARPWISE_COUNT_LAUNCH_ERROR(cudaGetLastError());",
            ind + "}"]


def _epilogue(B: str, g: str, label: str, recs: str, scan: str, rec: str, ch: Child, stream: str) -> list[str]:
    # n: recorded launches (atomics past the unit's capacity launched directly and are not in the
    # records); their blocks: the inclusive scan at the last record (records are in atomic order)
    count = ["  const unsigned int ww_agg_n = (unsigned int)((ww_agg_c >> 32) < " + f"{B}_cap ? (ww_agg_c >> 32) : "
             f"{B}_cap);",
             f"  const unsigned int ww_agg_blocks = ww_agg_n > 0 ? {scan}[{B}_base + ww_agg_n - 1] : 0u;"]
    launch = (f"{B}<<<ww_agg_blocks, dim3(ww_agg_m[0], ww_agg_m[1], ww_agg_m[2]), ww_agg_m[3], "
              f"{stream}>>>({recs} + {B}_base, {scan} + {B}_base, ww_agg_n);")
    if g in ("warp", "block"):
        cnt = f"{B}_cnt[{B}_unit]" if g == "warp" else f"{B}_cnt"
        mx = f"{B}_max[{B}_unit]" if g == "warp" else f"{B}_max"
        leader = f"({B}_tid & 31u) == 0" if g == "warp" else f"{B}_tid == 0"
        return [f"{label}:;",
                f"/* warpwise aggregate ({g} granularity): one thread launches the aggregated grid */",
                "__threadfence();",
                "__syncthreads();",
                f"if ({B}_ok && {leader}) {{",
                f"  const unsigned long long ww_agg_c = {cnt};",
                *count,
                "  if (ww_agg_n > 0 && ww_agg_n >= WARPWISE_AGG_THRESHOLD) {",
                f"    const unsigned int ww_agg_m[4] = {{{mx}[0], {mx}[1], {mx}[2], {mx}[3]}};",
                "    " + launch,
                "    WARPWISE_COUNT_LAUNCH_ERROR(cudaGetLastError());",
                "  } else {",
                "    /* warpwise aggregate: fewer parents than WARPWISE_AGG_THRESHOLD (CGO'22 §V-B): launch them one",
                "       by one */",
                *_direct_launches(B, recs, rec, ch, stream, "    "),
                "  }",
                "}"]
    return [f"{label}:;",
            "/* warpwise aggregate (multi-block granularity, CGO'22 Fig. 7 lines 26-35): fence, then the last block",
            "   of the group to finish launches the group's aggregated grid */",
            "__threadfence();",
            "__syncthreads();",
            f"if ({B}_ok && {B}_tid == 0) {{",
            "  const unsigned long long ww_agg_nblk = (unsigned long long)gridDim.x * gridDim.y * gridDim.z;",
            f"  const unsigned long long ww_agg_left = ww_agg_nblk - {B}_g * WARPWISE_AGG_GRANULARITY;",
            "  const unsigned int ww_agg_members = (unsigned int)(ww_agg_left < WARPWISE_AGG_GRANULARITY ? ww_agg_left "
            ": WARPWISE_AGG_GRANULARITY);",
            f"  if (atomicAdd(&{B}_gdone[{B}_g], 1u) + 1u == ww_agg_members) {{ /* last block of the group */",
            "    __threadfence();",
            f"    const unsigned long long ww_agg_c = atomicExch(&{B}_gcnt[{B}_g], 0ull); /* read and reset */",
            f"    const unsigned int ww_agg_m[4] = {{atomicExch(&{B}_gmax[{B}_g][0], 0u), "
            f"atomicExch(&{B}_gmax[{B}_g][1], 0u),",
            f"                                      atomicExch(&{B}_gmax[{B}_g][2], 0u), "
            f"atomicExch(&{B}_gmax[{B}_g][3], 0u)}};",
            f"    atomicExch(&{B}_gdone[{B}_g], 0u);",
            *("  " + c for c in count),
            "    if (ww_agg_n > 0) {",
            "      " + launch,
            "      WARPWISE_COUNT_LAUNCH_ERROR(cudaGetLastError());",
            "    }",
            "  }",
            "}"]


def _host_launcher(B: str, rec: str, recs: str, scan: str, child: str) -> str:
    return f"""
/* warpwise aggregate (grid granularity, KLAP): the host launches the aggregated grid of child kernel
   `{child}` after the parent kernel has finished, then resets the grid-wide counters */
static void {B}_host_launch(cudaStream_t ww_s) {{
  unsigned long long ww_c = 0;
  unsigned int ww_m[4] = {{0, 0, 0, 0}};
  cudaMemcpyFromSymbolAsync(&ww_c, {B}_gridcnt, sizeof ww_c, 0, cudaMemcpyDeviceToHost, ww_s);
  cudaMemcpyFromSymbolAsync(ww_m, {B}_gridmax, sizeof ww_m, 0, cudaMemcpyDeviceToHost, ww_s);
  cudaStreamSynchronize(ww_s); /* the aggregated grid's size is known once the parent has finished */
  const unsigned long long ww_zero = 0;
  const unsigned int ww_zeros[4] = {{0, 0, 0, 0}};
  cudaMemcpyToSymbol({B}_gridcnt, &ww_zero, sizeof ww_zero);
  cudaMemcpyToSymbol({B}_gridmax, ww_zeros, sizeof ww_zeros);
  const unsigned int ww_n = (unsigned int)((ww_c >> 32) < WARPWISE_AGG_CAPACITY ? (ww_c >> 32) : WARPWISE_AGG_CAPACITY);
  if (ww_n == 0) return;
  unsigned int ww_blocks = 0; /* inclusive scan at the last record (later launches went out directly) */
  cudaMemcpyFromSymbol(&ww_blocks, {scan}, sizeof ww_blocks, (ww_n - 1) * sizeof(unsigned int));
  {rec} *ww_recs = 0;
  unsigned int *ww_scan = 0;
  cudaGetSymbolAddress((void **)&ww_recs, {recs});
  cudaGetSymbolAddress((void **)&ww_scan, {scan});
  {B}<<<ww_blocks, dim3(ww_m[0], ww_m[1], ww_m[2]), ww_m[3], ww_s>>>(ww_recs, ww_scan, ww_n);
  if (cudaGetLastError() != cudaSuccess) ++ww_host_launch_errors;
}}"""


def _host_sites(p: Parsed, site: Site, B: str, decl_end: int) -> list[TextEdit]:
    """After each host-side launch of the parent: call the host launcher of the aggregated grid."""
    edits = []
    for hs in find_sites(p):
        if hs.device_side or hs.child_name != site.func.spelling or hs.stmt_end is None:
            continue
        if hs.stmt_start < decl_end:
            raise RewriteError(f"{p.path}:{p.line_col(hs.stmt_start)[0]}: the host launch of parent "
                               f"`{site.func.spelling}` comes before the child kernel's definition")
        stream = hs.stream.text if hs.stream else "0"
        call = (f"{B}_host_launch({stream}); /* warpwise aggregate (grid granularity): the host launches the "
                "aggregated grid */")
        if hs.ancestors and hs.ancestors[-1].kind == K.COMPOUND_STMT:
            edits.append(make_edit(p, hs.stmt_end, hs.stmt_end, "\n" + indent_of(p, hs.stmt_start) + call))
        else:
            edits.append(make_edit(p, hs.stmt_start, hs.stmt_start, "{ "))
            edits.append(make_edit(p, hs.stmt_end, hs.stmt_end, " " + call + " }"))
    if not edits:
        raise RewriteError(f"{p.path}:{p.line_col(site.stmt_start)[0]}: grid granularity needs the host launch of "
                           f"parent `{site.func.spelling}` in this file; none found")
    return edits
