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
threshold (§V-B): with fewer than _AGG_THRESHOLD parents each parent launches its own child.
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


def _agg_kernel(p: Parsed, child: Child, name: str, rec: str) -> str:
    """Fig. 7 lines 01-11: the aggregated child with disaggregation by binary search."""

    def mapping(u: BuiltinUse) -> str | None:
        base = {"blockIdx": "_ww_agg_blockIdx", "gridDim": "_ww_agg_gridDim", "blockDim": "_ww_agg_blockDim"}.get(u.var)
        if base is None:
            return None
        return f"{base}.{u.member}" if u.member else base

    from .common import body_text

    used = {u.var for u in child.builtins}
    body = body_text(p, child, mapping, None, "  ")
    lines = [f"/* _ww_ aggregate (CGO'22 Fig. 7, lines 01-11): aggregated copy of child kernel `{child.name}`.",
             "   Block i belongs to the parent p whose inclusive scan of block counts is the first above i",
             "   (binary search); the block takes that parent's arguments and launch configuration. */",
             f"__global__ void {name}(const {rec} *_ww_recs, const unsigned int *_ww_scan, unsigned int _ww_n) {{",
             "  unsigned int _ww_lo = 0, _ww_hi = _ww_n - 1;",
             "  while (_ww_lo < _ww_hi) {",
             "    const unsigned int _ww_mid = (_ww_lo + _ww_hi) / 2;",
             "    if (_ww_scan[_ww_mid] <= blockIdx.x) _ww_lo = _ww_mid + 1; else _ww_hi = _ww_mid;",
             "  }",
             f"  const {rec} &_ww_r = _ww_recs[_ww_lo];",
             "  const dim3 _ww_agg_blockDim = _ww_r._ww_cfg_bDim;",
             "  if (threadIdx.x >= _ww_agg_blockDim.x || threadIdx.y >= _ww_agg_blockDim.y ||",
             "      threadIdx.z >= _ww_agg_blockDim.z) return; /* the aggregated block is the largest parent block */"]
    if "gridDim" in used or "blockIdx" in used:
        lines.append("  const dim3 _ww_agg_gridDim = _ww_r._ww_cfg_gDim;")
    if "blockIdx" in used:
        lines += ["  const unsigned int _ww_b = blockIdx.x - (_ww_lo > 0 ? _ww_scan[_ww_lo - 1] : 0u);",
                  "  const uint3 _ww_agg_blockIdx = make_uint3(_ww_b % _ww_agg_gridDim.x,",
                  "      (_ww_b / _ww_agg_gridDim.x) % _ww_agg_gridDim.y,",
                  "      _ww_b / (_ww_agg_gridDim.x * _ww_agg_gridDim.y));"]
    for prm in child.params:  # a bitwise copy, as the launch itself would pass it (no default construction)
        lines.append(f"  [[maybe_unused]] {prm.local_decl} = {_load(prm, '_ww_r')};")
    lines.append("  " + body)
    lines.append("}")
    return "\n".join(lines)


def _load(prm: Param, rec: str) -> str:
    """The parameter's value read back from its record bytes."""
    return f"*reinterpret_cast<{prm.field_type} const *>({rec}.{prm.name})"


def _record(child: Child, rec: str) -> str:
    # byte storage: a __device__ array of records must not construct its members (user types may
    # have a user-provided or deleted default constructor; nvcc rejects dynamic initialisation)
    fields = "".join(f"  alignas({prm.field_type}) unsigned char {prm.name}[sizeof({prm.field_type})];\n"
                     for prm in child.params)
    return (f"/* _ww_ aggregate: one parent thread's launch of child kernel `{child.name}` (arguments as bytes, "
            f"copied with memcpy, and configuration) */\nstruct {rec} {{\n{fields}  uint3 _ww_cfg_gDim;\n"
            "  uint3 _ww_cfg_bDim;\n  unsigned int _ww_cfg_shm;\n};\n")


def _agg_stream(site: Site) -> str:
    st = site.stream.text.strip() if site.stream else ""
    return "cudaStreamTailLaunch" if st == "cudaStreamTailLaunch" else "cudaStreamFireAndForget"


def aggregate_edits(p: Parsed, site: Site, child: Child | None, granularity: str,
                    agg_threshold: int | None, group_blocks: int | None = None) -> list[TextEdit]:
    """Edits that aggregate the child launches of ``site`` at ``granularity``
    (warp | block | multiblock | grid).

    ``agg_threshold``: default of ``_AGG_THRESHOLD`` (minimum parents for an aggregated launch, warp
    and block granularity, CGO'22 §V-B); ``group_blocks``: default of ``_AGG_GRANULARITY`` (blocks
    per multi-block group). Raises RewriteError when the launch is in a loop, in a __device__
    function, recursive, on a user stream, or (grid) the parent is never launched from host code here.
    """
    if granularity not in GRANULARITIES:
        raise RewriteError(f"{p.path}: unknown granularity `{granularity}` "
                           f"(expected one of {', '.join(GRANULARITIES)})")
    ch = check_applies(p, site, child, "aggregate", refusals(p, site, child))
    child_before_parent(p, site, ch)
    line = p.line_col(site.stmt_start)[0]
    B = fresh(p, f"_ww_{ch.name.removeprefix('_ww_')}_agg")
    rec, recs, scan = f"{B}_rec", f"{B}_recs", f"{B}_scan"
    parent_body = body_of(site.func)
    assert parent_body is not None
    stream = _agg_stream(site)
    s, e = statement_extent(p, site)
    ind = indent_of(p, s)
    g_name = {"warp": "warp", "block": "block", "multiblock": "multi-block", "grid": "grid"}[granularity]

    # --- file-level declarations: record type, record pool, counters, aggregated kernel -----------
    decls = [_record(ch, rec),
             f"static __device__ {rec} {recs}[_WW_AGG_CAPACITY]; /* _ww_ aggregate: launch records */",
             f"static __device__ unsigned int {scan}[_WW_AGG_CAPACITY]; /* _ww_ aggregate: inclusive scan of "
             "block counts */"]
    if granularity == "multiblock":
        decls += [f"static __device__ unsigned long long {B}_gcnt[_WW_AGG_MAX_GROUPS]; /* (parents << 32) | blocks */",
                  f"static __device__ unsigned int {B}_gmax[_WW_AGG_MAX_GROUPS][4]; "
                  "/* max block x, y, z, shared bytes */",
                  f"static __device__ unsigned int {B}_gdone[_WW_AGG_MAX_GROUPS]; /* blocks of the group finished */"]
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
    cap = "(unsigned long long)_WW_AGG_CAPACITY" if granularity == "grid" else f"{B}_cap"
    ok = "true" if granularity == "grid" else f"{B}_ok"
    shm = site.shared.text if site.shared else "0"
    orig_stream = site.stream.text if site.stream else "0"
    if len(site.args) != len(ch.params):
        raise RewriteError(f"{p.path}:{line}: the launch passes {len(site.args)} arguments but child "
                           f"`{ch.name}` takes {len(ch.params)} (default arguments are not supported)")
    out = [f"{{ /* _ww_ aggregate ({g_name} granularity, CGO'22 §V): record this launch of child `{ch.name}` "
           "for the aggregated grid */",
           f"  const dim3 _ww_agg_gDim = {site.grid.text};",
           f"  const dim3 _ww_agg_bDim = {site.block.text};",
           f"  const unsigned int _ww_agg_shm = {shm};",
           "  const unsigned int _ww_agg_nb = _ww_agg_gDim.x * _ww_agg_gDim.y * _ww_agg_gDim.z;",
           "  bool _ww_agg_done = false;",
           f"  if ({ok} && _ww_agg_nb > 0) {{",
           f"    const unsigned long long _ww_agg_old = atomicAdd({cnt}, (1ull << 32) | _ww_agg_nb);",
           f"    if ((_ww_agg_old >> 32) < {cap}) {{ /* else: the unit's records are full */",
           f"      const unsigned long long _ww_agg_i = {base} + (_ww_agg_old >> 32);",
           f"      {rec} &_ww_agg_r = {recs}[_ww_agg_i];"]
    for k, (prm, a) in enumerate(zip(ch.params, site.args, strict=True)):
        out.append(f"      {{ {prm.field_type} const _ww_agg_a{k} = ({a.text}); "
                   f"memcpy(_ww_agg_r.{prm.name}, &_ww_agg_a{k}, sizeof _ww_agg_a{k}); }}")
    out += ["      _ww_agg_r._ww_cfg_gDim = _ww_agg_gDim;",
            "      _ww_agg_r._ww_cfg_bDim = _ww_agg_bDim;",
            "      _ww_agg_r._ww_cfg_shm = _ww_agg_shm;",
            f"      {scan}[_ww_agg_i] = (unsigned int)_ww_agg_old + _ww_agg_nb;",
            f"      atomicMax(&{mx}[0], _ww_agg_bDim.x);",
            f"      atomicMax(&{mx}[1], _ww_agg_bDim.y);",
            f"      atomicMax(&{mx}[2], _ww_agg_bDim.z);",
            f"      atomicMax(&{mx}[3], _ww_agg_shm);",
            "      _ww_agg_done = true;",
            "    }",
            "  }",
            "  if (!_ww_agg_done && _ww_agg_nb > 0) { /* no record: launch as the original did */",
            f"    {site.child_name}<<<_ww_agg_gDim, _ww_agg_bDim, _ww_agg_shm, {orig_stream}>>>({args_text(site)});",
            "    _WW_COUNT_LAUNCH_ERROR(cudaPeekAtLastError());",
            "  }",
            "}"]

    head = prelude(p)
    head += macro_block(p, "_WW_AGG_CAPACITY", CAPACITY,
                        "aggregation: launch records per parent launch")
    if granularity != "grid":
        head += macro_block(p, "_WW_AGG_PER_THREAD", "8" if site.in_loop else "1",
                            "aggregation: records per parent thread (more launches of a thread go out directly)")
    if granularity in ("warp", "block"):
        head += macro_block(p, "_AGG_THRESHOLD", str(agg_threshold if agg_threshold is not None
                                                     else DEFAULT_AGG_THRESHOLD),
                            "aggregation threshold: minimum parents per aggregated launch (CGO'22 §V-B)")
    if granularity == "multiblock":
        head += macro_block(p, "_AGG_GRANULARITY", str(group_blocks or DEFAULT_GROUP_BLOCKS),
                            "multi-block aggregation: parent blocks per group (CGO'22 Fig. 7)")
        head += macro_block(p, "_WW_AGG_MAX_GROUPS", MAX_GROUPS, "multi-block aggregation: group counters")
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
        return ["/* _ww_ aggregate (block granularity, KLAP / CGO'22 §II-B): this block's launches of the child are",
                "   recorded and launched as one aggregated grid when the block ends */",
                f"__shared__ unsigned long long {B}_cnt; /* (parents << 32) | child blocks */",
                f"__shared__ unsigned int {B}_max[4]; /* max block x, y, z, shared bytes */",
                tid, blk, nthr,
                f"const unsigned long long {B}_cap = (unsigned long long){B}_nthr * _WW_AGG_PER_THREAD; "
                "/* records of this block */",
                f"const unsigned long long {B}_base = {B}_blk * {B}_cap; /* first record of this block */",
                f"const bool {B}_ok = {B}_base + {B}_cap <= _WW_AGG_CAPACITY;",
                f"if ({B}_tid == 0) {{ {B}_cnt = 0; {B}_max[0] = {B}_max[1] = {B}_max[2] = {B}_max[3] = 0; }}",
                "__syncthreads();"]
    if g == "warp":
        return ["/* _ww_ aggregate (warp granularity, KLAP / CGO'22 §II-B): each warp's launches of the child are",
                "   recorded and launched as one aggregated grid when the block ends */",
                f"__shared__ unsigned long long {B}_cnt[32]; /* per warp: (parents << 32) | child blocks */",
                f"__shared__ unsigned int {B}_max[32][4]; /* per warp: max block x, y, z, shared bytes */",
                tid, blk, nthr,
                f"const unsigned int {B}_unit = {B}_tid / 32; /* warp of this thread */",
                f"const unsigned long long {B}_cap = 32ull * _WW_AGG_PER_THREAD; /* records of this warp */",
                f"const unsigned long long {B}_base = ({B}_blk * {B}_nthr + ({B}_tid & ~31u)) * _WW_AGG_PER_THREAD;",
                f"const bool {B}_ok = {B}_base + {B}_cap <= _WW_AGG_CAPACITY;",
                f"if (({B}_tid & 31u) == 0) {{",
                f"  {B}_cnt[{B}_unit] = 0;",
                f"  {B}_max[{B}_unit][0] = {B}_max[{B}_unit][1] = {B}_max[{B}_unit][2] = {B}_max[{B}_unit][3] = 0;",
                "}",
                "__syncthreads();"]
    return ["/* _ww_ aggregate (multi-block granularity, CGO'22 §V-A / Fig. 7): the launches of each group of",
            "   _AGG_GRANULARITY blocks are recorded; the group's last block to finish launches them as one grid */",
            tid, blk, nthr,
            f"const unsigned long long {B}_g = {B}_blk / _AGG_GRANULARITY; /* group of this block */",
            f"const unsigned long long {B}_cap = (unsigned long long)_AGG_GRANULARITY * {B}_nthr * _WW_AGG_PER_THREAD;",
            f"const unsigned long long {B}_base = {B}_g * {B}_cap; /* first record of the group */",
            f"const bool {B}_ok = {B}_g < _WW_AGG_MAX_GROUPS && {B}_base + {B}_cap <= _WW_AGG_CAPACITY;"]


def _direct_launches(B: str, recs: str, rec: str, ch: Child, stream: str, ind: str) -> list[str]:
    """The leader launches each recorded child itself (fewer records than _AGG_THRESHOLD, §V-B)."""
    args = ", ".join(_load(prm, "_ww_agg_r") for prm in ch.params)
    return [ind + "for (unsigned int _ww_agg_j = 0; _ww_agg_j < _ww_agg_n; ++_ww_agg_j) {",
            ind + f"  const {rec} &_ww_agg_r = {recs}[{B}_base + _ww_agg_j];",
            ind + f"  {ch.name}<<<dim3(_ww_agg_r._ww_cfg_gDim), dim3(_ww_agg_r._ww_cfg_bDim), _ww_agg_r._ww_cfg_shm, "
            f"{stream}>>>({args});",
            ind + "  _WW_COUNT_LAUNCH_ERROR(cudaGetLastError());",
            ind + "}"]


def _epilogue(B: str, g: str, label: str, recs: str, scan: str, rec: str, ch: Child, stream: str) -> list[str]:
    # n: recorded launches (atomics past the unit's capacity launched directly and are not in the
    # records); their blocks: the inclusive scan at the last record (records are in atomic order)
    count = ["  const unsigned int _ww_agg_n = (unsigned int)((_ww_agg_c >> 32) < " + f"{B}_cap ? (_ww_agg_c >> 32) : "
             f"{B}_cap);",
             f"  const unsigned int _ww_agg_blocks = _ww_agg_n > 0 ? {scan}[{B}_base + _ww_agg_n - 1] : 0u;"]
    launch = (f"{B}<<<_ww_agg_blocks, dim3(_ww_agg_m[0], _ww_agg_m[1], _ww_agg_m[2]), _ww_agg_m[3], "
              f"{stream}>>>({recs} + {B}_base, {scan} + {B}_base, _ww_agg_n);")
    if g in ("warp", "block"):
        cnt = f"{B}_cnt[{B}_unit]" if g == "warp" else f"{B}_cnt"
        mx = f"{B}_max[{B}_unit]" if g == "warp" else f"{B}_max"
        leader = f"({B}_tid & 31u) == 0" if g == "warp" else f"{B}_tid == 0"
        return [f"{label}:;",
                f"/* _ww_ aggregate ({g} granularity): one thread launches the aggregated grid */",
                "__threadfence();",
                "__syncthreads();",
                f"if ({B}_ok && {leader}) {{",
                f"  const unsigned long long _ww_agg_c = {cnt};",
                *count,
                "  if (_ww_agg_n > 0 && _ww_agg_n >= _AGG_THRESHOLD) {",
                f"    const unsigned int _ww_agg_m[4] = {{{mx}[0], {mx}[1], {mx}[2], {mx}[3]}};",
                "    " + launch,
                "    _WW_COUNT_LAUNCH_ERROR(cudaGetLastError());",
                "  } else {",
                "    /* _ww_ aggregate: fewer parents than _AGG_THRESHOLD (CGO'22 §V-B): launch them one by one */",
                *_direct_launches(B, recs, rec, ch, stream, "    "),
                "  }",
                "}"]
    return [f"{label}:;",
            "/* _ww_ aggregate (multi-block granularity, CGO'22 Fig. 7 lines 26-35): fence, then the last block",
            "   of the group to finish launches the group's aggregated grid */",
            "__threadfence();",
            "__syncthreads();",
            f"if ({B}_ok && {B}_tid == 0) {{",
            "  const unsigned long long _ww_agg_nblk = (unsigned long long)gridDim.x * gridDim.y * gridDim.z;",
            f"  const unsigned long long _ww_agg_left = _ww_agg_nblk - {B}_g * _AGG_GRANULARITY;",
            "  const unsigned int _ww_agg_members = (unsigned int)(_ww_agg_left < _AGG_GRANULARITY ? _ww_agg_left "
            ": _AGG_GRANULARITY);",
            f"  if (atomicAdd(&{B}_gdone[{B}_g], 1u) + 1u == _ww_agg_members) {{ /* last block of the group */",
            "    __threadfence();",
            f"    const unsigned long long _ww_agg_c = atomicExch(&{B}_gcnt[{B}_g], 0ull); /* read and reset */",
            f"    const unsigned int _ww_agg_m[4] = {{atomicExch(&{B}_gmax[{B}_g][0], 0u), "
            f"atomicExch(&{B}_gmax[{B}_g][1], 0u),",
            f"                                      atomicExch(&{B}_gmax[{B}_g][2], 0u), "
            f"atomicExch(&{B}_gmax[{B}_g][3], 0u)}};",
            f"    atomicExch(&{B}_gdone[{B}_g], 0u);",
            *("  " + c for c in count),
            "    if (_ww_agg_n > 0) {",
            "      " + launch,
            "      _WW_COUNT_LAUNCH_ERROR(cudaGetLastError());",
            "    }",
            "  }",
            "}"]


def _host_launcher(B: str, rec: str, recs: str, scan: str, child: str) -> str:
    return f"""
/* _ww_ aggregate (grid granularity, KLAP): the host launches the aggregated grid of child kernel
   `{child}` after the parent kernel has finished, then resets the grid-wide counters */
static void {B}_host_launch(cudaStream_t _ww_s) {{
  unsigned long long _ww_c = 0;
  unsigned int _ww_m[4] = {{0, 0, 0, 0}};
  cudaMemcpyFromSymbolAsync(&_ww_c, {B}_gridcnt, sizeof _ww_c, 0, cudaMemcpyDeviceToHost, _ww_s);
  cudaMemcpyFromSymbolAsync(_ww_m, {B}_gridmax, sizeof _ww_m, 0, cudaMemcpyDeviceToHost, _ww_s);
  cudaStreamSynchronize(_ww_s); /* the aggregated grid's size is known once the parent has finished */
  const unsigned long long _ww_zero = 0;
  const unsigned int _ww_zeros[4] = {{0, 0, 0, 0}};
  cudaMemcpyToSymbol({B}_gridcnt, &_ww_zero, sizeof _ww_zero);
  cudaMemcpyToSymbol({B}_gridmax, _ww_zeros, sizeof _ww_zeros);
  const unsigned int _ww_n = (unsigned int)((_ww_c >> 32) < _WW_AGG_CAPACITY ? (_ww_c >> 32) : _WW_AGG_CAPACITY);
  if (_ww_n == 0) return;
  unsigned int _ww_blocks = 0; /* inclusive scan at the last record (later launches went out directly) */
  cudaMemcpyFromSymbol(&_ww_blocks, {scan}, sizeof _ww_blocks, (_ww_n - 1) * sizeof(unsigned int));
  {rec} *_ww_recs = 0;
  unsigned int *_ww_scan = 0;
  cudaGetSymbolAddress((void **)&_ww_recs, {recs});
  cudaGetSymbolAddress((void **)&_ww_scan, {scan});
  {B}<<<_ww_blocks, dim3(_ww_m[0], _ww_m[1], _ww_m[2]), _ww_m[3], _ww_s>>>(_ww_recs, _ww_scan, _ww_n);
  if (cudaGetLastError() != cudaSuccess) ++_ww_host_launch_errors;
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
        call = (f"{B}_host_launch({stream}); /* _ww_ aggregate (grid granularity): the host launches the "
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
