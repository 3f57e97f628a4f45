"""Parallel optimizers (GPA Table 2 "Parallel Optimizers" and the launch-shape ones of GPA's released set):
they change how many blocks and threads run, estimated with GPA eqs. 6–10 from launch facts, the
architecture's residency limits (analysis/arch) and the issue ratio R_I of the samples.
"""

from __future__ import annotations

import math

from warpwise.analysis.advice import common as cm
from warpwise.analysis.advice import estimate as est
from warpwise.analysis.advice.context import EdgeView, KernelView
from warpwise.analysis.advice.model import Advice, Estimate, Skipped
from warpwise.analysis.advice.registry import register
from warpwise.analysis.arch import stalls

#: GPA released (GPUBlockDecreaseOptimizer): blocks of at most this many warps are "small".
WARP_COUNT_LIMIT = 2

#: Classes GPA assumes disappear when a scheduler keeps at most one warp (GPA §5.2 after eq. 10: "no
#: pipeline, memory throttle, and no select stall"); used for f of block increase.
_CONTENTION = (stalls.MEMORY_THROTTLE, stalls.PIPE_BUSY, stalls.NOT_SELECTED)


def _warps_per_block(view: KernelView) -> int:
    tpb = view.profile.launch.threads_per_block
    return -(-tpb // view.arch.warp_size) if tpb > 0 else 0


def _kernel_advice(view: KernelView, opt_id: str, e: Estimate, matched: float, hint: str,
                   evs: list[EdgeView] | None = None) -> Advice:
    return Advice(optimizer=opt_id, kernel=view.profile.name, scope=view.kernel_scope(), matched_samples=matched,
                  share=matched / view.total if view.total else 0.0, estimate=e,
                  hotspots=cm.hotspots(view, evs or [], cm.latency_weight), hint=hint)


def _need_issue(view: KernelView, opt_id: str) -> Skipped | None:
    if view.total <= 0 or view.selected <= 0:
        return Skipped(opt_id, "the profile has no 'selected' samples to derive the issue ratio R_I", missing=True)
    return None


@register("block_increase", "Block increase", "parallel",
          "Fewer blocks than SMs while each block holds more than one warp per scheduler: SMs sit idle.",
          "Launch more, smaller blocks (same total threads) so every SM gets work.")
def block_increase(view: KernelView) -> Advice | Skipped:
    """GPA Table 2 block increase, eqs. 6–10: W = warps per scheduler of a busy SM, W_new = the same
    warps spread over every SM (at least one per scheduler); the work per scheduler shrinks by W_new / W,
    the issue rate by I_new / I; f = 1 / (1 − contention latency share) when W_new ≤ 1 (GPA's assumption
    that one warp per scheduler meets no throttle, pipe or not-selected stalls)."""
    lc, arch = view.profile.launch, view.arch
    blocks, n, s = lc.blocks, view.sm_count, arch.schedulers_per_sm
    if blocks <= 0 or lc.threads_per_block <= 0:
        return Skipped("block_increase", "the profile has no grid/block size", missing=True)
    if blocks >= n:
        return Skipped("block_increase", f"{blocks} blocks for {n} SMs: every SM has work")
    if lc.threads_per_block <= s * arch.warp_size:
        return Skipped("block_increase", f"blocks of {lc.threads_per_block} threads hold at most one warp per "
                                         "scheduler: smaller blocks add no parallelism")
    miss = _need_issue(view, "block_increase")
    if miss:
        return miss
    w = _warps_per_block(view) / s
    w_new = max(1.0, w * blocks / n)
    f, f_formula = 1.0, "1"
    if w_new <= 1.0:
        lat = view.latency_totals()
        r = sum(v for k, v in lat.items() if stalls.stall_class(k) in _CONTENTION) / view.total
        if r < 1.0:
            f, f_formula = 1.0 / (1.0 - r), f"1/(1-{r:.4f}) (throttle+pipe+not_selected latency share)"
    e = est.parallel_speedup(view.r_issue, w, w_new, redistributes_work=True, f=f, f_formula=f_formula)
    tpb_new = max(arch.warp_size, math.ceil(lc.threads_per_block * blocks / n / arch.warp_size) * arch.warp_size)
    blocks_new = math.ceil(lc.threads_per_block * blocks / tpb_new)
    hint = (f"the grid has {blocks} blocks for {n} SMs, so {n - blocks} SMs stay idle: launch about {blocks_new} "
            f"blocks of {tpb_new} threads instead of {blocks} of {lc.threads_per_block}")
    return _kernel_advice(view, "block_increase", e, float(view.selected), hint)


def _limits(view: KernelView) -> dict[str, float]:
    return {k: v for k, v in view.profile.launch.occupancy_limit.items() if v > 0}


@register("thread_increase", "Thread increase", "parallel",
          "Occupancy limited by the number of blocks an SM may hold: the blocks are too small.",
          "Use more threads per block so the SM's warp slots fill up.")
def thread_increase(view: KernelView) -> Advice | Skipped:
    """GPA Table 2 thread increase, eqs. 6–9 (C_I only: the work per scheduler does not change)."""
    lc, arch = view.profile.launch, view.arch
    wpb = _warps_per_block(view)
    if wpb <= 0:
        return Skipped("thread_increase", "the profile has no block size", missing=True)
    lim = _limits(view)
    by_blocks = min(lim.get("blocks", arch.max_ctas_per_sm), arch.max_ctas_per_sm)
    others = [v for k, v in lim.items() if k != "blocks"] or [arch.max_warps_per_sm / wpb]
    if not (by_blocks < min(others) and by_blocks * wpb < arch.max_warps_per_sm):
        return Skipped("thread_increase", "occupancy is not limited by the number of blocks per SM")
    miss = _need_issue(view, "thread_increase")
    if miss:
        return miss
    s = arch.schedulers_per_sm
    warps_now = lc.theoretical_warps_per_sm or by_blocks * wpb
    warps_new = min(arch.max_warps_per_sm, min(others) * wpb)
    e = est.parallel_speedup(view.r_issue, warps_now / s, warps_new / s, redistributes_work=False)
    tpb_new = math.ceil(warps_new / by_blocks) * arch.warp_size
    hint = (f"blocks of {lc.threads_per_block} threads reach {arch.arch}'s limit of {arch.max_ctas_per_sm} blocks per "
            f"SM with only {warps_now:g} of {arch.max_warps_per_sm} warps resident: use about {tpb_new} threads "
            "per block")
    return _kernel_advice(view, "thread_increase", e, float(view.selected), hint)


@register("occupancy_increase", "Occupancy increase", "parallel",
          "Theoretical occupancy below the architecture's maximum because registers or shared memory run out.",
          "Use fewer registers (__launch_bounds__, -maxrregcount) or less shared memory per block so more "
          "warps fit on an SM.")
def occupancy_increase(view: KernelView) -> Advice | Skipped:
    """GPA released occupancy increase (ParallelLatency estimator), eqs. 6–9: W = achieved warps per
    scheduler, W_new = W × max warps / theoretical warps."""
    lc, arch = view.profile.launch, view.arch
    if lc.theoretical_warps_per_sm <= 0:
        return Skipped("occupancy_increase", "the profile has no occupancy section", missing=True)
    if lc.theoretical_warps_per_sm >= arch.max_warps_per_sm:
        return Skipped("occupancy_increase", "theoretical occupancy is already the architecture's maximum")
    lim = _limits(view)
    limiter = min(lim, key=lambda k: lim[k]) if lim else "unknown"
    if limiter in ("blocks", "warps"):
        return Skipped("occupancy_increase", f"occupancy is limited by {limiter}, not by registers or shared memory")
    miss = _need_issue(view, "occupancy_increase")
    if miss:
        return miss
    s = arch.schedulers_per_sm
    w = (lc.achieved_warps_per_sm or lc.theoretical_warps_per_sm) / s
    w_new = w * arch.max_warps_per_sm / lc.theoretical_warps_per_sm
    e = est.parallel_speedup(view.r_issue, w, w_new, redistributes_work=False)
    what = {"registers": f"registers ({lc.registers_per_thread} per thread)",
            "shared_mem": f"shared memory ({lc.shared_bytes_per_block} bytes per block)"}.get(limiter, limiter)
    hint = (f"only {lc.theoretical_warps_per_sm:g} of {arch.max_warps_per_sm} warps fit on an SM, limited by {what}: "
            "reduce that resource per block to let more warps hide each other's latency")
    return _kernel_advice(view, "occupancy_increase", e, float(view.selected), hint)


@register("occupancy_decrease", "Occupancy decrease", "parallel",
          "More warps are ready than the schedulers can issue (not_selected above selected) while memory or "
          "math pipes throttle.",
          "Run fewer warps per SM (more registers or shared memory per block, fewer blocks per SM) to relieve "
          "contention.")
def occupancy_decrease(view: KernelView) -> Advice | Skipped:
    """GPA released occupancy decrease (SequentialLatency estimator, eq. 4 with the kernel's A). GPA
    matches not-selected stalls; those are never latency samples (another warp issued), so warpwise
    gates on not_selected > selected and hides the throttle/pipe latency samples that contention causes."""
    tot = view.stall_totals()
    nsel, sel = tot.get("not_selected", 0), tot.get("selected", 0)
    if nsel <= sel:
        return Skipped("occupancy_decrease", "warps are not competing for issue slots (not_selected <= selected)")
    # Throttles at long-latency arithmetic (e.g. F2F through the MIO queue) are that instruction's own
    # throughput limit: strength reduction owns them, fewer warps would not remove the work.
    evs = [e for e in view.edges if e.gpa_class in (stalls.MEMORY_THROTTLE, stalls.PIPE_BUSY)
           and not cm.is_long_latency_arith(e.use_ins, view.arch.arch)]
    region = cm.Region(scope=view.kernel_scope(), fn=None, loop=None, edges=evs)

    def hint(r: cm.Region) -> str:
        return (f"{nsel} samples found a warp ready but not selected ({sel} selected) while pipes throttle: fewer "
                "resident warps (more registers or shared memory per block) can cut the contention")

    return cm.latency_hiding_advice(view, "occupancy_decrease", [(region, float(view.active))], hint,
                                    nothing="no throttle or pipe stalls to relieve")


@register("block_decrease", "Block decrease", "parallel",
          "Many small blocks (at most two warps each) with instruction-fetch stalls.",
          "Use fewer, larger blocks: give each thread or block more work (coarsening).")
def block_decrease(view: KernelView) -> Advice | Skipped:
    """GPA released block decrease (SequentialLatency estimator, eq. 4): blocks > SMs, ≤ 2 warps per block,
    instruction-fetch latency samples hidden."""
    lc = view.profile.launch
    wpb = _warps_per_block(view)
    if lc.blocks <= 0 or wpb <= 0:
        return Skipped("block_decrease", "the profile has no grid/block size", missing=True)
    if lc.blocks <= view.sm_count or wpb > WARP_COUNT_LIMIT:
        return Skipped("block_decrease", f"{lc.blocks} blocks of {wpb} warps: blocks are not small and many")
    evs = [e for e in view.edges if e.edge.reason in cm.ICACHE_REASONS]
    region = cm.Region(scope=view.kernel_scope(), fn=None, loop=None, edges=evs)

    def hint(r: cm.Region) -> str:
        return (f"{lc.blocks} blocks of {lc.threads_per_block} threads wait on instruction fetch: coarsen the work "
                "so fewer, larger blocks run the same code")

    return cm.latency_hiding_advice(view, "block_decrease", [(region, float(view.active))], hint,
                                    nothing="no instruction-fetch stalls")


@register("sm_balance", "SM balance", "parallel",
          "The grid ends with a partial wave of blocks, leaving SMs idle at the tail.",
          "Size the grid to a whole number of waves (SMs × blocks per SM) or use a grid-stride loop with that "
          "many blocks.")
def sm_balance(view: KernelView) -> Advice | Skipped:
    """Tail-effect estimate from the launch's waves per SM V: S = ceil(V) / V (upper bound: the last
    partial wave takes as long as a full one). GPA's released optimizer uses SM efficiency, which the
    SourceCounters profile lacks; Nsight Compute's LaunchStats give V."""
    v = view.profile.launch.waves_per_sm
    if v <= 0:
        return Skipped("sm_balance", "the profile has no waves-per-SM value", missing=True)
    if v < 1.0:
        return Skipped("sm_balance", f"the grid is {v:.2f} of one wave: see block_increase")
    full = math.ceil(v - 1e-9)
    if full - v < 1e-6:
        return Skipped("sm_balance", f"the grid is exactly {full} waves")
    s = full / v
    e = Estimate(s, "ceil(V)/V", {"V": v, "ceil(V)": float(full)}, "tail effect")
    frac = v - math.floor(v)
    blocks = view.profile.launch.blocks
    per_wave = round(blocks / v) if blocks > 0 else 0
    size = f" (a multiple of {per_wave} blocks)" if per_wave else ""
    hint = (f"the grid is {v:.2f} waves: the last wave fills {frac:.0%} of the GPU's block slots, so SMs idle at the "
            f"tail; size the grid to whole waves{size} or use a grid-stride loop with one wave of blocks")
    return _kernel_advice(view, "sm_balance", e, 0.0, hint)
