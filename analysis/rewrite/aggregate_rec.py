"""Aggregation of a recursive launch (the child kernel launches itself), block granularity (KLAP;
CGO'22 §II-B, Fig. 7 for the aggregated kernel).

Every level aggregates: the host-launched kernel K records the launches of each of its blocks and
launches one aggregated grid per block; the aggregated kernel is a copy of K that reads its arguments
from the records and records and launches its own children the same way, so each recursion level is
one aggregated grid per parent block instead of one grid per parent thread.

Why the non-recursive scheme cannot be reused (launches.refusals used to refuse this): its record pool
is indexed by the parent's block index, and the grids of one level run while those of the next level
are being recorded, with the same block indices, so a level would overwrite records its own blocks
have not read yet. Here records are never reused within one host launch: each recorded launch takes
the next free record of a pool (an atomic bump counter), and each aggregated launch the next free
stretch of an index and scan array; the counters are reset by the host before each host launch of K
(stream order: the previous launch, all its levels included, has finished). A launch that finds the
pool full, or a block with more than WARPWISE_AGG_BLOCK_RECORDS launches, launches directly (K, as the
original did), so the result never depends on the capacity.

Refused (RewriteError, with the reason): other granularities; a child block size that is not a
constant (the aggregated block is the largest recorded block, and its extra threads would have to
skip the barriers the aggregation adds); launch expressions that read blockIdx/gridDim/blockDim (they
differ in the aggregated copy); no host launch of K in the file, or one on a stream (the pool is reset
before each host launch, and concurrent host launches would share it).
"""

from __future__ import annotations

from .aggregate import _agg_stream, _load, _record, agg_mapping, disaggregate, fill_record
from .common import args_text, body_text, statement_extent
from .cursors import K
from .edits import fresh, header_offset, indent_of, macro_block, make_edit, prelude
from .kernel import Child
from .launches import Site, find_sites
from .model import RewriteError, TextEdit
from .parse import Parsed
from .program import constants, eval_int

BLOCK_RECORDS = "256"
_DEFAULT_STREAMS = ("0", "NULL", "nullptr", "cudaStreamLegacy")


def _refuse(p: Parsed, site: Site, why: str) -> RewriteError:
    line = p.line_col(site.stmt_start)[0]
    return RewriteError(f"{p.path}:{line}: cannot apply aggregate: recursive launch (the child is the parent kernel "
                        f"itself): {why}")


def recursive_aggregate_edits(p: Parsed, site: Site, ch: Child, granularity: str,
                              agg_threshold: int) -> list[TextEdit]:
    """Edits that aggregate the recursive launch ``site`` of kernel ``ch`` (its own parent) per block.

    ``agg_threshold``: default of WARPWISE_AGG_THRESHOLD (CGO'22 §V-B: fewer recorded launches in a block
    are launched one by one). Raises RewriteError for the shapes listed in the module docstring.
    """
    if granularity != "block":
        raise _refuse(p, site, f"{granularity} granularity is not implemented for it (a level's launches would "
                               "wait for a whole group or grid of the level above); use granularity block")
    s, e = statement_extent(p, site)
    if eval_int(site.block.text, constants(p.data.decode(errors="replace"))) is None:
        raise _refuse(p, site, f"the child block `{site.block.text}` is not a constant: the aggregated block is the "
                               "largest recorded one, and its extra threads would have to skip the block barriers "
                               "the aggregation adds")
    if any(s <= u.start and u.end <= e and u.var in ("blockIdx", "gridDim", "blockDim") for u in ch.builtins):
        raise _refuse(p, site, "the launch reads blockIdx/gridDim/blockDim, which are the aggregated grid's in "
                               "the aggregated copy")
    hosts = [hs for hs in find_sites(p) if not hs.device_side and hs.child_name == ch.name]
    if not hosts:
        raise _refuse(p, site, f"the host launch of `{ch.name}` is not in this file (the record pool is reset before "
                               "each host launch)")
    for hs in hosts:
        st = hs.stream.text.strip() if hs.stream else "0"
        if st not in _DEFAULT_STREAMS:
            raise _refuse(p, site, f"the host launch on line {p.line_col(hs.stmt_start)[0]} uses stream `{st}`: "
                                   "concurrent host launches would share the record pool")
        if hs.stmt_end is None or hs.stmt_start < ch.end:
            raise _refuse(p, site, f"the host launch on line {p.line_col(hs.stmt_start)[0]} comes before the end of "
                                   f"`{ch.name}`")
    body = ch.body
    B = fresh(p, f"ww_{ch.name}_ragg")
    rec, recs, idx, scan, top, label = (f"{B}_rec", f"{B}_recs", f"{B}_idx", f"{B}_scan", f"{B}_top",
                                        f"{B}_end")
    stream = _agg_stream(site)
    ind = indent_of(p, s)
    shm = site.shared.text if site.shared else "0"

    def record_site(indent: str) -> str:
        out = [f"{{ /* warpwise aggregate (block granularity, recursive launch): record this launch of `{ch.name}` */",
               f"  const dim3 ww_agg_gDim = {site.grid.text};",
               f"  const dim3 ww_agg_bDim = {site.block.text};",
               f"  const unsigned int ww_agg_shm = {shm};",
               "  const unsigned int ww_agg_nb = ww_agg_gDim.x * ww_agg_gDim.y * ww_agg_gDim.z;",
               "  bool ww_agg_done = false;",
               "  if (ww_agg_nb > 0) {",
               f"    const unsigned int ww_agg_li = atomicAdd(&{B}_n, 1u); /* this block's launch number */",
               "    if (ww_agg_li < WARPWISE_AGG_BLOCK_RECORDS) {",
               f"      const unsigned int ww_agg_ri = atomicAdd(&{top}[0], 1u); /* a record no one else uses */",
               "      if (ww_agg_ri < WARPWISE_AGG_CAPACITY) {",
               f"        {rec} &ww_agg_r = {recs}[ww_agg_ri];",
               *fill_record(ch, site, f"{B}_max", "        ", [])]
        out += ["        ww_agg_done = true;",
                "      }",
                f"      {B}_lrec[ww_agg_li] = ww_agg_done ? ww_agg_ri : 0xffffffffu; /* ~0: launched directly */",
                f"      {B}_lnb[ww_agg_li] = ww_agg_nb;",
                "    }",
                "  }",
                "  if (!ww_agg_done && ww_agg_nb > 0) { /* no record: launch as the original did */",
                f"    {ch.name}<<<ww_agg_gDim, ww_agg_bDim, ww_agg_shm, {site.stream.text if site.stream else '0'}>>>"
                f"({args_text(site)});",
                "    WARPWISE_COUNT_LAUNCH_ERROR(cudaPeekAtLastError());",
                "  }",
                "}"]
        return ("\n" + indent).join(out)

    prologue = ["/* warpwise aggregate (block granularity, recursive launch): this block's launches of "
                f"`{ch.name}` are recorded",
                "   and launched as one aggregated grid when the block ends */",
                f"__shared__ unsigned int {B}_n; /* launches made by this block */",
                f"__shared__ unsigned int {B}_max[4]; /* max block x, y, z, shared bytes */",
                f"__shared__ unsigned int {B}_lrec[WARPWISE_AGG_BLOCK_RECORDS]; /* their records */",
                f"__shared__ unsigned int {B}_lnb[WARPWISE_AGG_BLOCK_RECORDS]; /* their child blocks */",
                f"const unsigned int {B}_tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);",
                f"if ({B}_tid == 0) {{ {B}_n = 0; {B}_max[0] = {B}_max[1] = {B}_max[2] = {B}_max[3] = 0; }}",
                "__syncthreads();"]
    args = ", ".join(_load(prm, "ww_agg_r") for prm in ch.params)
    epilogue = [f"{label}:;",
                "/* warpwise aggregate (block granularity, recursive launch): one thread launches the block's "
                "aggregated grid */",
                "__threadfence();",
                "__syncthreads();",
                f"if ({B}_tid == 0) {{",
                f"  const unsigned int ww_agg_n = {B}_n < WARPWISE_AGG_BLOCK_RECORDS ? {B}_n : "
                "WARPWISE_AGG_BLOCK_RECORDS;",
                "  unsigned int ww_agg_m = 0; /* recorded launches */",
                f"  for (unsigned int ww_agg_j = 0; ww_agg_j < ww_agg_n; ++ww_agg_j) ww_agg_m += {B}_lrec[ww_agg_j] != "
                "0xffffffffu;",
                f"  const unsigned int ww_agg_k = ww_agg_m > 0 ? atomicAdd(&{top}[1], ww_agg_m) : 0u;",
                "  if (ww_agg_m > 0 && ww_agg_m >= WARPWISE_AGG_THRESHOLD && ww_agg_k + ww_agg_m <= "
                "WARPWISE_AGG_CAPACITY) {",
                "    unsigned int ww_agg_blocks = 0, ww_agg_i = ww_agg_k; /* inclusive scan of the block counts */",
                "    for (unsigned int ww_agg_j = 0; ww_agg_j < ww_agg_n; ++ww_agg_j) {",
                f"      if ({B}_lrec[ww_agg_j] == 0xffffffffu) continue;",
                f"      ww_agg_blocks += {B}_lnb[ww_agg_j];",
                f"      {idx}[ww_agg_i] = {B}_lrec[ww_agg_j];",
                f"      {scan}[ww_agg_i] = ww_agg_blocks;",
                "      ++ww_agg_i;",
                "    }",
                f"    {B}<<<ww_agg_blocks, dim3({B}_max[0], {B}_max[1], {B}_max[2]), {B}_max[3], {stream}>>>"
                f"({idx} + ww_agg_k, {scan} + ww_agg_k, ww_agg_m);",
                "    WARPWISE_COUNT_LAUNCH_ERROR(cudaGetLastError());",
                "  } else { /* fewer than WARPWISE_AGG_THRESHOLD (CGO'22 §V-B) or no index space: one by one */",
                "    for (unsigned int ww_agg_j = 0; ww_agg_j < ww_agg_n; ++ww_agg_j) {",
                f"      if ({B}_lrec[ww_agg_j] == 0xffffffffu) continue;",
                f"      const {rec} &ww_agg_r = {recs}[{B}_lrec[ww_agg_j]];",
                f"      {ch.name}<<<dim3(ww_agg_r.ww_cfg_gDim), dim3(ww_agg_r.ww_cfg_bDim), ww_agg_r.ww_cfg_shm, "
                f"{stream}>>>({args});",
                "      WARPWISE_COUNT_LAUNCH_ERROR(cudaGetLastError());",
                "    }",
                "  }",
                "}"]
    returns = list(ch.returns)
    epi = epilogue if returns else epilogue[1:]

    # the aggregated copy: disaggregation (Fig. 7 lines 01-11), then K's body with the same recording
    copy_body = body_text(p, ch, agg_mapping, f"goto {label}", "  ", extra=[(s, e, record_site(ind))])
    agg = [f"/* warpwise aggregate (block granularity, recursive launch; CGO'22 Fig. 7 lines 01-11): aggregated copy "
           f"of `{ch.name}`.",
           "   Block i belongs to the record whose inclusive scan of block counts is the first above i; it runs that",
           f"   launch of `{ch.name}` and aggregates its own launches the same way. */",
           f"__global__ void {B}(const unsigned int *ww_idx, const unsigned int *ww_scan, unsigned int ww_n) {{",
           *disaggregate(ch, rec, f"{recs}[ww_idx[ww_lo]]", [
               "  [[maybe_unused]] const dim3 ww_agg_blockDim = ww_r.ww_cfg_bDim; "
               "/* a constant: every record has it */"])]
    agg += ["  " + ln if ln else ln for ln in prologue]
    agg += ["  {", "  " + copy_body, "  }"]
    agg += ["  " + ln if ln else ln for ln in epi]
    agg.append("}")
    reset = (f"\n/* warpwise aggregate (recursive launch): the host empties the record pool before each host launch of "
             f"`{ch.name}` */\nstatic void {B}_reset(cudaStream_t ww_s) {{\n"
             "  const unsigned int ww_zero[2] = {0u, 0u};\n"
             f"  cudaMemcpyToSymbolAsync({top}, ww_zero, sizeof ww_zero, 0, cudaMemcpyHostToDevice, ww_s);\n}}")
    before = "\n".join([_record(ch, rec),
                        f"static __device__ {rec} {recs}[WARPWISE_AGG_CAPACITY]; /* warpwise aggregate: launch "
                        "records */",
                        f"static __device__ unsigned int {idx}[WARPWISE_AGG_CAPACITY]; /* records of each aggregated "
                        "launch */",
                        f"static __device__ unsigned int {scan}[WARPWISE_AGG_CAPACITY]; /* inclusive scans of their "
                        "block counts */",
                        f"static __device__ unsigned int {top}[2]; /* records and index entries used since the host "
                        "launch */",
                        f"__global__ void {B}(const unsigned int *ww_idx, const unsigned int *ww_scan, "
                        "unsigned int ww_n);",
                        ""]) + "\n"
    head = prelude(p)
    head += macro_block(p, "WARPWISE_AGG_CAPACITY", "(1u << 20)", "aggregation: launch records per host launch")
    head += macro_block(p, "WARPWISE_AGG_BLOCK_RECORDS", BLOCK_RECORDS,
                        "recursive aggregation: launches recorded per block (more go out directly)")
    head += macro_block(p, "WARPWISE_AGG_THRESHOLD", str(agg_threshold),
                        "aggregation threshold: minimum parents per aggregated launch (CGO'22 §V-B)")
    func_line = p.data.rfind(b"\n", 0, ch.start) + 1
    edits = [make_edit(p, header_offset(p), header_offset(p), head),
             make_edit(p, func_line, func_line, before),
             make_edit(p, ch.end, ch.end, "\n\n" + "\n".join(agg) + "\n" + reset)]
    bs, be = body.extent.start.offset, body.extent.end.offset
    edits.append(make_edit(p, bs + 1, bs + 1, "\n" + "\n".join("  " + ln if ln else ln for ln in prologue) + "\n  {"))
    for rs, _re in returns:
        edits.append(make_edit(p, rs, rs + len("return"), f"goto {label}"))
    edits.append(make_edit(p, s, e, record_site(ind)))
    edits.append(make_edit(p, be - 1, be - 1, "  }\n" + "\n".join("  " + ln if ln else ln for ln in epi) + "\n"))
    for hs in hosts:
        st = hs.stream.text if hs.stream else "0"
        call = f"{B}_reset({st}); /* warpwise aggregate: empty the record pool */ "
        assert hs.stmt_end is not None
        if hs.ancestors and hs.ancestors[-1].kind == K.COMPOUND_STMT:
            edits.append(make_edit(p, hs.stmt_start, hs.stmt_start, call))
        else:
            edits.append(make_edit(p, hs.stmt_start, hs.stmt_start, "{ " + call))
            edits.append(make_edit(p, hs.stmt_end, hs.stmt_end, " }"))
    return sorted(edits, key=lambda x: x.start)
