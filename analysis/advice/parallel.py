"""Parallel optimizers (GPA Table 2 "Parallel Optimizers" and the launch-shape ones of GPA's released set):
they change how many blocks and threads run, estimated with GPA eqs. 6–10 from launch facts, the
architecture's residency limits (analysis/arch) and the issue ratio R_I of the samples.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import replace

from warpwise.analysis.advice import atomics
from warpwise.analysis.advice import common as cm
from warpwise.analysis.advice import estimate as est
from warpwise.analysis.advice import ranking as rk
from warpwise.analysis.advice.context import EdgeView, KernelView, user_loc
from warpwise.analysis.advice.model import Advice, Cap, Estimate, Skipped
from warpwise.analysis.advice.registry import register
from warpwise.analysis.arch import occupancy as occ
from warpwise.analysis.arch import stalls
from warpwise.analysis.arch.roofline import dram_latency_factor
from warpwise.analysis.binary.model import Instruction
from warpwise.analysis.blame.operands import def_use, function_def_use
from warpwise.analysis.profile.model import PCSample
from warpwise.analysis.program.model import Loop, Program, ProgramFunction

#: Pseudo function name under which launch-shape advice records what it matched (Advice.matched).
LAUNCH_SHAPE = "<launch shape>"

#: GPA released (GPUBlockDecreaseOptimizer): blocks of at most this many warps are "small".
WARP_COUNT_LIMIT = 2


def _warps_per_block(view: KernelView) -> int:
    tpb = view.profile.launch.threads_per_block
    return -(-tpb // view.arch.warp_size) if tpb > 0 else 0


def _kernel_advice(view: KernelView, opt_id: str, e: Estimate, matched: float, hint: str,
                   evs: list[EdgeView] | None = None) -> Advice:
    # launch-shape advice all claims the kernel's parallelism: one key, so such findings group together
    return Advice(optimizer=opt_id, kernel=view.profile.name, scope=view.kernel_scope(), matched_samples=matched,
                  share=matched / view.total if view.total else 0.0, estimate=e,
                  hotspots=cm.hotspots(view, evs or [], cm.latency_weight), hint=hint,
                  matched={(LAUNCH_SHAPE, None, -1): matched} if matched > 0 else {})


def launch_basis(view: KernelView, old_warps: float, new_warps: float) -> str:
    """What a launch-shape estimate (GPA eqs. 6-10) is built from, in words: the launch facts (CTAs, threads per
    CTA, SMs), the warps per busy SM before and after the fix (W and W', warps) and the issue ratio R_I =
    selected / T (eq. 8). Not from matched stall samples: the estimate does not scale with any line's share."""
    lc = view.profile.launch
    return (f"GPA eqs. 6-10 over the launch facts ({lc.blocks:,} CTAs of {lc.threads_per_block} threads on "
            f"{view.sm_count} SMs: "
            f"warps per busy SM {old_warps:g} now, {new_warps:g} after the fix) and the issue ratio "
            f"R_I = {view.selected:,} selected / {view.total:,} warp samples")


def _need_issue(view: KernelView, opt_id: str) -> Skipped | None:
    if view.total <= 0 or view.selected <= 0:
        return Skipped(opt_id, "the profile has no 'selected' samples to derive the issue ratio R_I", missing=True)
    return None


def _residency(view: KernelView) -> occ.Residency | None:
    lc = view.profile.launch
    if lc.threads_per_block <= 0 or lc.blocks <= 0:
        return None
    return occ.residency(view.arch, lc.threads_per_block, lc.blocks, view.sm_count, lc.registers_per_thread,
                         lc.shared_bytes_per_block, lc.occupancy_limit)


def first_wave_ctas_per_sm(view: KernelView) -> float:
    """CTAs on each busy SM in the launch's first wave: min(⌈grid CTAs / SMs⌉, resident CTAs per SM); 1 when the
    profile has no launch shape. The launch floor grows with it (analysis/arch/roofline.launch_floor_ns)."""
    r = _residency(view)
    if r is None or view.sm_count <= 0:
        return 1.0
    return float(r.first_wave_ctas_per_sm)


def _old_shape(view: KernelView, r: occ.Residency) -> tuple[float, float]:
    """(busy SMs, warps per busy SM) of the profiled launch; the achieved warps when the report has them."""
    w = r.resident_warps_per_sm
    achieved = view.profile.launch.achieved_warps_per_sm
    if r.fills_gpu and 0 < achieved < w:
        w = achieved
    return float(r.active_sms), w


def _capped(view: KernelView, e: Estimate, sm_work: float = 1.0) -> tuple[Estimate, Cap | None]:
    cap = rk.roofline_cap(view.profile.launch.throughput_pct, rk.units_for("thread_increase", "parallel"), sm_work,
                          reach_of=view.reach_now)
    return rk.apply_cap(e, cap)


def _row_coalescing(view: KernelView, tpb: int) -> tuple[dict[str, float], dict[str, float]] | None:
    """Traffic ratios (code.coalesced_ratios) when the launch's CTAs are 2D and narrower than a warp in x and the
    proposed ``tpb``-thread CTA can be a warp wide; None otherwise or when no access fetches excess sectors."""
    from warpwise.analysis.advice.code import coalesced_ratios

    bx, by, _ = view.profile.launch.block
    ws = view.arch.warp_size
    if not (0 < bx < ws and by > 1 and tpb % ws == 0):
        return None
    return coalesced_ratios(view, limit=1.0)


def _capped_after(view: KernelView, e: Estimate, ratios: dict[str, float]) -> tuple[Estimate, Cap | None]:
    """``e`` limited by the roofline after a fix that scales each unit's work by ``ratios``
    (arch/roofline.after_fix): min(S, 1/max_u(p_u r_u/a_u))."""
    cap = rk.after_fix_cap(view.profile.launch.throughput_pct, ratios, e.speedup, view.reach)
    if cap is None:
        return e, None
    if e.speedup <= cap.cap:
        return e, replace(cap, binding=False)
    inputs = {**e.inputs, **{f"r_{u}": r for u, r in ratios.items()}, f"C_{cap.unit}": cap.cap}
    return (Estimate(cap.cap, f"min({e.formula}; C_{cap.unit}), C = 1/max_u(p_u*r_u/a_u) with r_u = unit u's "
                              "work after/before (coalesced rows)", inputs, f"{e.equation}, roofline after the fix"),
            cap)


#: Threads per CTA the launch-shape advice proposes when the CTA is too small: 256 is the common choice of
#: CUDA libraries and the CUDA Best Practices Guide's "between 128 and 256 threads per block" advice.
PROPOSED_THREADS = 256


def _full_shape(view: KernelView, r: occ.Residency) -> tuple[occ.Residency, int]:
    """Residency with CTAs of at least PROPOSED_THREADS threads and a grid that fills the GPU."""
    lc = view.profile.launch
    tpb = max(lc.threads_per_block, PROPOSED_THREADS) if lc.threads_per_block % view.arch.warp_size or \
        lc.threads_per_block < PROPOSED_THREADS else lc.threads_per_block
    big = occ.residency(view.arch, tpb, 10**9, view.sm_count, lc.registers_per_thread, lc.shared_bytes_per_block)
    return big, tpb


def sized_to_sms(view: KernelView, r: occ.Residency) -> bool:
    """Whether the grid is a whole number (at least one) of CTAs per SM: a launch sized from the SM count
    (``cudaDevAttrMultiProcessorCount``), as persistent and cooperative (``grid.sync()``) kernels are, whose
    stride loops cover the work whatever the CTA's size. A grid sized from the data (⌈n / threads⌉ CTAs) is
    not, except by chance."""
    return view.sm_count > 0 and r.grid_ctas >= view.sm_count and r.grid_ctas % view.sm_count == 0


def _sm_filling_shape(view: KernelView, r: occ.Residency, big: occ.Residency, tpb: int) -> tuple[occ.Residency, int]:
    """(residency, threads per CTA) of the largest CTA the launch's SMs can hold as many of as they hold now, for a
    small grid sized to the SM count (:func:`sized_to_sms`: a persistent or cooperative kernel).

    Every SM already has its CTAs, so block_increase has nothing to add and the CTA's size alone sets the warps
    each SM holds: PROPOSED_THREADS is a size for grids that also grow, while here the fix is the largest CTA
    (ArchFacts.max_threads_per_block, in whole warps) of which each SM still holds the first wave's
    CTAs / SMs under the register, shared-memory and warp limits (analysis/arch/occupancy), so a grid that
    relied on co-residency (``grid.sync()``) stays co-resident. ``big``/``tpb``: :func:`_full_shape`'s, kept when
    no larger CTA fits. The work must divide over the added threads (a block-stride loop): the estimate stays an
    upper bound."""
    lc, arch = view.profile.launch, view.arch
    per_sm = max(1, r.grid_ctas // max(1, view.sm_count))
    for t in range(arch.max_threads_per_block - arch.max_threads_per_block % arch.warp_size, tpb, -arch.warp_size):
        res = occ.residency(arch, t, 10**9, view.sm_count, lc.registers_per_thread, lc.shared_bytes_per_block)
        if res.ctas_per_sm >= per_sm:
            return res, t
    return big, tpb


#: A grid whose busy SMs hold at most this share of the SM's warp slots is "small": its work must be split
#: over more threads to use the GPU (a warpwise threshold; above it the grid already keeps SMs busy).
SMALL_GRID_SHARE = 0.25


def small_grid(view: KernelView, r: occ.Residency) -> bool:
    """Fewer CTAs than SMs, or a grid that cannot fill one wave and leaves each busy SM at most
    SMALL_GRID_SHARE of its warp slots."""
    return r.grid_ctas < view.sm_count or (
        not r.fills_gpu and r.resident_warps_per_sm <= SMALL_GRID_SHARE * view.arch.max_warps_per_sm)


def _more_parallelism(view: KernelView, opt_id: str, r: occ.Residency) -> Advice | Skipped:
    """A small grid (:func:`small_grid`) given more threads for the same work, split over them (a grid-stride
    loop, or less work per thread): block_increase adds CTAs of the same size until the grid fills one wave
    (every SM holds as many as its occupancy limit allows: the GPU's CTA slots), thread_increase keeps the
    CTAs and gives each PROPOSED_THREADS threads. Estimated
    as a throughput ratio (eqs. 6-10) with per-SM ceilings scaled by the work each SM keeps and the shared
    ceilings (DRAM, L2) unchanged; an upper bound, since it assumes the work divides."""
    from warpwise.analysis.advice.filters import device_launch_lines

    if device_launch_lines(view):
        return Skipped(opt_id, "the kernel launches child grids from the device: its small grid is the CDP parent, "
                               "whose cost is the launches (see the dynamic-parallelism rewrites), not its own "
                               "parallelism")
    miss = _need_issue(view, opt_id) or _sequential(view, opt_id)
    if miss:
        return miss
    lc, arch = view.profile.launch, view.arch
    old = _old_shape(view, r)
    if opt_id == "block_increase":
        ctas_new = max(r.slots, r.grid_ctas)
        busy = float(min(view.sm_count, ctas_new))
        w_new = min(float(r.warps_per_sm), ctas_new / busy * r.warps_per_cta)
        tpb, work = lc.threads_per_block, 1.0
        per_sm = max(1, r.slots // max(1, view.sm_count))
        what = (f"launch about {ctas_new} CTAs of {tpb} threads instead of {r.grid_ctas} ({view.sm_count} SMs x "
                f"{per_sm} CTA{'s' if per_sm != 1 else ''} each: size the grid with "
                "cudaOccupancyMaxActiveBlocksPerMultiprocessor times the SM count), splitting the work over them "
                "with a grid-stride loop")
    else:
        big, tpb = _full_shape(view, r)
        if sized_to_sms(view, r):
            big, tpb = _sm_filling_shape(view, r, big, tpb)
        busy = old[0]
        w_new = min(float(big.warps_per_sm), old[1] * (-(-tpb // arch.warp_size)) / r.warps_per_cta)
        work = r.lane_efficiency
        what = (f"give each of the {r.grid_ctas} CTAs {tpb} threads instead of {lc.threads_per_block}, splitting "
                "each CTA's work over them")
        if sized_to_sms(view, r) and tpb > PROPOSED_THREADS:
            what += (" (the grid is sized to the SM count and every SM already has its CTA, so the CTA's size is "
                     f"what fills its warp slots: {tpb} threads is the largest CTA an SM still holds "
                     f"{r.grid_ctas // view.sm_count} of, so a grid sized for co-residency stays co-resident)")
    new = (busy, w_new)
    sm_work = work * (old[0] * old[1]) / (busy * w_new) if busy * w_new > 0 else 1.0
    shape = est.loaded_launch_shape_speedup(view.r_issue, old, new, arch.schedulers_per_sm, work,
                                            lc.throughput_pct.get("dram", 0.0), _global_load_share(view),
                                            dram_latency_factor)
    e, cap = _capped(view, shape, sm_work)
    hint = (f"the grid has {r.grid_ctas} CTA{'s' if r.grid_ctas != 1 else ''} of {lc.threads_per_block} threads: "
            f"{r.active_sms} of {view.sm_count} SMs get work and each holds {old[1]:g} of {arch.max_warps_per_sm} "
            f"warps; {what}")
    if r.lane_efficiency < 1:
        idle = 1 - r.lane_efficiency
        hint += f"; CTAs of {lc.threads_per_block} threads also leave {idle:.0%} of each warp's lanes idle"
    a = _kernel_advice(view, opt_id, e, float(view.selected), hint)
    a.upper_bound, a.cap = True, cap
    a.basis = launch_basis(view, old[1], w_new)
    if opt_id == "block_increase":  # the grid of one full wave: each busy SM dispatches its share of the CTAs
        a.ctas_per_sm_after = float(max(1, min(r.ctas_per_sm, -(-ctas_new // max(1, view.sm_count)))))
    return a


def _global_load_share(view: KernelView) -> float:
    """Share of the kernel's samples that wait on global loads (memory-dependency stalls blamed on an LDG or
    another global-memory read): m of est.loaded_launch_shape_speedup."""
    if view.total <= 0:
        return 0.0
    waiting = sum(e.stall for e in view.edges_by(gpa_class=(stalls.MEMORY_DEPENDENCY,))
                  if cm.is_global_mem(e.def_ins))
    return min(1.0, waiting / view.total)


@register("block_increase", "Block increase", "parallel",
          "Fewer CTAs than SMs: SMs sit idle.",
          "Launch more CTAs (at least one per SM; split the work or use a grid-stride loop) so every SM gets work.")
def block_increase(view: KernelView) -> Advice | Skipped:
    """GPA Table 2 block increase, eqs. 6–10 as a throughput ratio (:func:`estimate.launch_shape_speedup`): a
    grid of fewer CTAs than SMs gets more CTAs of the same size, the work split over them
    (:func:`_more_parallelism`, an upper bound). GPA's variant keeps the threads and splits the CTAs; with one
    CTA per busy SM the idle SMs are the loss either way, and real fixes add CTAs (grid-stride loops)."""
    r = _residency(view)
    if r is None:
        return Skipped("block_increase", "the profile has no grid/block size", missing=True)
    n = view.sm_count
    if r.grid_ctas >= n:
        return Skipped("block_increase", f"{r.grid_ctas} CTAs for {n} SMs: every SM has work")
    return _more_parallelism(view, "block_increase", r)


def _sequential(view: KernelView, opt_id: str) -> Skipped | None:
    """Skipped for a fix that spreads a small grid's work over more threads when the hot loop is a recurrence
    (:func:`carried_recurrence`): there is no more parallel work to spread."""
    rec = carried_recurrence(view)
    if rec is not None:
        return Skipped(opt_id, f"the hot loop at {cm.line_ref(rec[0], rec[1])} carries a value from one "
                               "iteration to the next through a multiplication (a recurrence such as an "
                               "IIR filter's state): a thread's iterations are sequential, so more CTAs "
                               "have no work to take; hide the latency inside the thread instead "
                               "(independent loads issued ahead)")
    return None


#: Single-precision multiplies whose first two sources are the multiplicands (the third of FFMA is the addend).
_MULTIPLIES = ("FMUL", "FFMA")


def carried_recurrence(view: KernelView) -> tuple[str | None, int | None] | None:
    """(file, line) of the hottest innermost loop of the kernel (most samples) when it carries a float value
    across iterations through a multiplication: a register an FMUL/FFMA reads as a multiplicand before the loop
    body (in address order over the loop's blocks) writes it, and that the body later writes with a value
    computed from that product: y[t] = b x[t] - a y[t-1], Horner, a fixed-point iteration (a running sum only
    scaled for its output, ``out[y] = sum * k; sum += d``, carries no product and is a sum). Such a loop is a
    linear or non-linear recurrence: its iterations cannot be split over more threads without reformulating it
    (a parallel scan), unlike a sum
    (the carried value only an addend: a reduction). None when there is no program, loop or such register.
    Register-level and approximate (a body of several paths is read in address order)."""
    prog = view.program
    if prog is None:
        return None
    best: tuple[float, ProgramFunction, Loop] | None = None
    for pf in view.use_functions().values():
        for lp in pf.loops.values():
            if lp.children:
                continue
            w = view.active_in_loop(pf, lp)
            if best is None or w > best[0]:
                best = (w, pf, lp)
    if best is None or best[0] <= 0:
        return None
    _, pf, lp = best
    body = sorted((i for i in pf.instructions if (b := pf.block_of(i.offset)) is not None and b.start in lp.blocks),
                  key=lambda i: i.offset)
    def gprs(regs: Iterable[str]) -> set[str]:  # values, not scoreboards, predicates or immediates
        return {r for r in regs if r[:1] == "R" and r[1:].isdigit()}

    written: set[str] = set()
    read_first: set[str] = set()  # registers a multiply reads before the body writes them: carried candidates
    tainted: set[str] = set()  # registers holding a value computed from such a product
    fed_back: set[str] = set()  # registers written with such a value
    for i in body:
        du = def_use(i)
        reads, defs = gprs(du.uses), gprs(du.defs)
        product = False
        if i.base_opcode in _MULTIPLIES and ".F64" not in i.opcode:
            first = gprs(o.lstrip("-|").rstrip("|").split(".")[0] for o in i.operands[1:3]) - written
            read_first |= first
            product = bool(first)
        if product or reads & tainted:
            tainted |= defs
            fed_back |= defs
        else:
            tainted -= defs  # the register now holds another value
        written |= set(du.defs)
    # carried through the multiplication: the product flows back into the register the multiply read first
    # (y = a*y + b, Horner's p = p*x + c); a running sum scaled for output (out = sum * k, sum += d) is a sum
    carried = read_first & fed_back
    if not carried:
        return None
    return lp.file, lp.first_line


@register("thread_increase", "Thread increase", "parallel",
          "Occupancy limited by the number of CTAs an SM may hold: the CTAs are too small.",
          "Use more threads per CTA (e.g. 16x16 instead of 4x4) so the SM's warp slots fill up.")
def thread_increase(view: KernelView) -> Advice | Skipped:
    """GPA Table 2 thread increase, eqs. 6–9 (C_I: same SMs, more warps each) times the lane factor when
    CTAs smaller than a warp leave lanes idle. Fires when the CTA count per SM is among the residency
    limiters (ties included, analysis/arch/occupancy) and the grid fills the GPU; a grid that cannot fill
    it gets :func:`_more_parallelism`."""
    lc, arch = view.profile.launch, view.arch
    r = _residency(view)
    if r is None:
        return Skipped("thread_increase", "the profile has no block size", missing=True)
    if not r.fills_gpu:
        if small_grid(view, r) and (lc.threads_per_block < PROPOSED_THREADS or r.lane_efficiency < 1):
            return _more_parallelism(view, "thread_increase", r)
        return Skipped("thread_increase", f"the grid of {r.grid_ctas} CTAs of {lc.threads_per_block} threads does "
                                          f"not fill the GPU's {r.slots} CTA slots but keeps "
                                          f"{r.resident_warps_per_sm:.0f} warps per busy SM: not a small grid")
    if "blocks" not in r.limiters or r.warps_per_sm >= arch.max_warps_per_sm:
        return Skipped("thread_increase", f"occupancy is limited by {', '.join(r.limiters)}, not by the number of "
                                          "CTAs per SM")
    miss = _need_issue(view, "thread_increase")
    if miss:
        return miss
    big, tpb = _full_shape(view, r)
    # the same threads in fewer, larger CTAs: the grid still fills the GPU when it has enough threads
    threads = lc.threads_per_block * r.grid_ctas
    big_fill = threads >= big.slots * tpb
    old = _old_shape(view, r)
    new_w = float(big.warps_per_sm) if big_fill else threads / arch.warp_size / view.sm_count
    work = r.lane_efficiency
    e = est.launch_shape_speedup(view.r_issue, old, (old[0], new_w), arch.schedulers_per_sm, work)
    shape = f"about {tpb} threads per CTA"
    widened = _row_coalescing(view, tpb)
    if widened is not None:
        # A 2D CTA narrower than a warp makes each warp span several rows: its row-contiguous loads touch one
        # segment per row. CTAs a warp wide in x fetch about the ideal sectors, so the roofline after the fix
        # takes the coalesced traffic (code.coalesced_ratios), with SM work scaled by the idle lanes removed.
        ratios, _ = widened
        e, cap = _capped_after(view, e, {**ratios, "sm": work})
        shape += f" ({arch.warp_size}x{tpb // arch.warp_size}: a warp per row segment keeps row accesses coalesced)"
    else:
        e, cap = _capped(view, e, work)
    hint = (f"CTAs of {lc.threads_per_block} threads ({'x'.join(str(d) for d in lc.block if d > 1) or '1'}) reach "
            f"{arch.arch}'s limit of {r.limits['blocks']} CTAs per SM with only {r.warps_per_sm} of "
            f"{arch.max_warps_per_sm} warps resident: use {shape}")
    if r.lane_efficiency < 1:
        idle = 1 - r.lane_efficiency
        hint += f" (each warp of a {lc.threads_per_block}-thread CTA leaves {idle:.0%} of its lanes idle)"
    a = _kernel_advice(view, "thread_increase", e, float(view.selected), hint)
    a.cap = cap
    a.basis = launch_basis(view, old[1], new_w)
    return a


@register("occupancy_increase", "Occupancy increase", "parallel",
          "Theoretical occupancy below the architecture's maximum because registers or shared memory run out.",
          "Use fewer registers (__launch_bounds__, -maxrregcount) or less shared memory per block so more "
          "warps fit on an SM.")
def occupancy_increase(view: KernelView) -> Advice | Skipped:
    """GPA released occupancy increase (ParallelLatency estimator), eqs. 6–9: W = achieved warps per SM,
    W_new = the warps the next-tightest limit allows. Only for grids that fill the GPU: with fewer CTAs
    than slots, more resident warps per SM cannot help (:func:`_more_parallelism`)."""
    lc, arch = view.profile.launch, view.arch
    r = _residency(view)
    if r is None:
        return Skipped("occupancy_increase", "the profile has no grid/block size", missing=True)
    if not r.fills_gpu:
        return Skipped("occupancy_increase", f"the grid of {r.grid_ctas} CTAs does not fill the GPU's {r.slots} CTA "
                                             "slots: more resident warps per SM cannot help")
    if r.warps_per_sm >= arch.max_warps_per_sm:
        return Skipped("occupancy_increase", "theoretical occupancy is already the architecture's maximum")
    resource = [k for k in r.limiters if k in ("registers", "shared_mem")]
    if not resource or any(k in r.limiters for k in ("blocks", "warps")):
        return Skipped("occupancy_increase", f"occupancy is limited by {', '.join(r.limiters)}, not by registers or "
                                             "shared memory alone")
    miss = _need_issue(view, "occupancy_increase")
    if miss:
        return miss
    others = [v for k, v in r.limits.items() if k not in resource]
    ctas_new = min(others)
    old = _old_shape(view, r)
    w_new = old[1] * (ctas_new * r.warps_per_cta) / r.warps_per_sm
    w_new = min(w_new, float(arch.max_warps_per_sm), r.grid_ctas / view.sm_count * r.warps_per_cta)
    e, cap = _capped(view, est.launch_shape_speedup(view.r_issue, old, (old[0], w_new), arch.schedulers_per_sm))
    what = {"registers": f"registers ({lc.registers_per_thread} per thread)",
            "shared_mem": f"shared memory ({lc.shared_bytes_per_block} bytes per CTA)"}
    hint = (f"only {r.warps_per_sm} of {arch.max_warps_per_sm} warps fit on an SM, limited by "
            f"{' and '.join(what[k] for k in resource)}: reduce that resource per CTA to let more warps hide each "
            "other's latency")
    a = _kernel_advice(view, "occupancy_increase", e, float(view.selected), hint)
    a.cap = cap
    a.basis = launch_basis(view, old[1], w_new)
    return a


def issue_contention(view: KernelView) -> tuple[float, float]:
    """(not_selected, selected) warp samples of the kernel (Nsight Compute's stall reasons: a warp ready while
    another issued, and the warp that issued). Warps compete for issue slots when the first exceeds the second:
    the gate of occupancy_decrease and of sm_balance under one wave."""
    tot = view.stall_totals()
    return float(tot.get("not_selected", 0)), float(tot.get("selected", 0))


@register("occupancy_decrease", "Occupancy decrease", "parallel",
          "More warps are ready than the schedulers can issue (not_selected above selected) while memory or "
          "math pipes throttle.",
          "Run fewer warps per SM (more registers or shared memory per block, fewer blocks per SM) to relieve "
          "contention.")
def occupancy_decrease(view: KernelView) -> Advice | Skipped:
    """GPA released occupancy decrease (SequentialLatency estimator, eq. 4 with the kernel's A). GPA
    matches not-selected stalls; those are never latency samples (another warp issued), so warpwise
    gates on not_selected > selected and hides the throttle/pipe latency samples that contention causes."""
    nsel, sel = issue_contention(view)
    if nsel <= sel:
        return Skipped("occupancy_decrease", "warps are not competing for issue slots (not_selected <= selected)")
    # Throttles at long-latency arithmetic (e.g. F2F through the MIO queue) are that instruction's own
    # throughput limit: strength reduction owns them, fewer warps would not remove the work.
    evs = [e for e in view.edges_by(gpa_class=(stalls.MEMORY_THROTTLE, stalls.PIPE_BUSY))
           if not cm.is_long_latency_arith(e.use_ins, view.arch.arch)]
    region = cm.Region(scope=view.kernel_scope(), fn=None, loop=None, edges=evs)

    res = cm.latency_hiding_advice(view, "occupancy_decrease", [(region, float(view.active))], lambda r: "",
                                   nothing="no throttle or pipe stalls to relieve")
    if isinstance(res, Advice):
        # the gate's counts (not_selected against selected) and the estimate's own input (H: the throttle and
        # pipe-busy latency samples it hides, at most A), so the suggestion quotes the numbers of the formula
        h = res.estimate.inputs["H"]
        res.hint = (f"{nsel:,.0f} samples found a warp ready but not selected ({sel:,.0f} selected) while pipes "
                    f"throttle ({h:,.0f} throttle and pipe-busy latency samples, the estimate's H): fewer resident "
                    "warps (more registers or shared memory per block) can cut the contention")
    return res


@register("block_decrease", "Block decrease", "parallel",
          "Many small blocks (at most two warps each) with instruction-fetch stalls.",
          "Use fewer, larger blocks: give each thread or block more work (coarsening).")
def block_decrease(view: KernelView) -> Advice | Skipped:
    """GPA released block decrease (SequentialLatency estimator, eq. 4): blocks > SMs, ≤ 2 warps per block,
    instruction-fetch latency samples hidden; first, blocks that each end by flushing per-block results to the
    same global addresses (atomics.flush_contention_advice: coarsening, GPA eq. 2)."""
    lc = view.profile.launch
    wpb = _warps_per_block(view)
    if lc.blocks <= 0 or wpb <= 0:
        return Skipped("block_decrease", "the profile has no grid/block size", missing=True)
    if (flush := atomics.flush_contention_advice(view)) is not None:
        return flush
    if (redundant := redundant_block_advice(view)) is not None:
        return redundant
    if lc.blocks <= view.sm_count or wpb > WARP_COUNT_LIMIT:
        return Skipped("block_decrease", f"{lc.blocks} blocks of {wpb} warps: blocks are not small and many")
    evs = view.edges_by(reason=cm.ICACHE_REASONS)
    region = cm.Region(scope=view.kernel_scope(), fn=None, loop=None, edges=evs)

    def hint(r: cm.Region) -> str:
        return (f"{lc.blocks} blocks of {lc.threads_per_block} threads wait on instruction fetch: coarsen the work "
                "so fewer, larger blocks run the same code")

    return cm.latency_hiding_advice(view, "block_decrease", [(region, float(view.active))], hint,
                                    nothing="no instruction-fetch stalls")


#: Special registers whose value differs between CTAs, or between calls, other than the CTA index: a value
#: read from them is never the same in every CTA of a row.
_VARYING_SREGS = ("SR_CLOCK", "SR_GLOBALTIMER", "SR_SMID", "SR_VIRTID", "SR_NSMID", "SR_GRIDID")
#: Conditional control-flow instructions whose guard decides which blocks run.
_BRANCHES = frozenset({"BRA", "BRX", "EXIT", "RET", "BREAK", "JMP", "JMX", "KILL", "BRK"})
#: Grid dimensions and the CTA-index special register of each (SASS: S2R Rn, SR_CTAID.X).
_CTAID = {0: "SR_CTAID.X", 1: "SR_CTAID.Y", 2: "SR_CTAID.Z"}


#: Kernels of more instructions than this are not searched for repeated CTA work (a warpwise bound on the cost of
#: grid_varying's fixed point: 0.3 s for holdout6's 26,545-instruction asian_paths on the shared 2-core machine).
TAINT_LIMIT = 60_000
#: Taint-set marker: every register may be varying (after a CALL).
_ANY = "*"


def grid_varying(pf: ProgramFunction, dim: int) -> frozenset[int] | None:
    """Offsets of the instructions of kernel ``pf`` whose result, or whether they run, can differ between
    CTAs that differ only in ``blockIdx`` along grid dimension ``dim`` (0 = x, 1 = y, 2 = z); every other
    instruction computes the same values in all those CTAs (the same per thread index). None when the
    grid dimension is not 0-2. Everything after a CALL (in its block and the blocks it reaches) is taken as
    varying: the callee's effects are not followed.

    A forward taint analysis over the CFG with the def/use tables of blame.operands (register sets joined at
    block entries, to a fixed point). Sources: ``S2R/S2UR SR_CTAID.<dim>``; clocks, timers and SM ids
    (:data:`_VARYING_SREGS`); atomics (their result depends on the other CTAs); shared or local loads once a
    varying value is stored to that space; global loads that can follow a global write of the kernel (at a
    lower offset or in the same loop: another CTA's result); the instructions of blocks control-dependent on a
    varying branch (Ferrante, Ottenstein and Warren's control dependence: the blocks on the post-dominator-tree
    path from the branch's successors up to, not including, its immediate post-dominator). An instruction
    reading a varying register or guarded by a varying predicate is varying and makes its defs varying; an
    unguarded instruction that is not kills them. Never raises."""
    ins = pf.instructions
    sreg = _CTAID.get(dim)
    if sreg is None:
        return None
    writes = [i.offset for i in ins if i.base_opcode in cm.GLOBAL_WRITES]
    first_write = min(writes) if writes else None
    write_blocks = {b.start for w in writes if (b := pf.block_of(w)) is not None}

    def after_write(i: Instruction) -> bool:
        if first_write is None:
            return False
        if first_write < i.offset:
            return True
        lp = pf.loop_of(i.offset)
        return lp is not None and any(lp.contains_block(b) for b in write_blocks)

    def seed(i: Instruction) -> bool:
        op = i.base_opcode
        if op in ("S2R", "S2UR", "CS2R"):
            return (sreg in i.text and (sreg + "." not in i.text)) or any(s in i.text for s in _VARYING_SREGS)
        if op.startswith("ATOM") or op in ("RED", "REDG"):
            return True
        return op in cm.GLOBAL_LOADS and after_write(i)

    return forward_taint(pf, seed)


def forward_taint(pf: ProgramFunction, seed: Callable[[Instruction], bool], control: bool = True) -> frozenset[int]:
    """Offsets of the instructions of ``pf`` that ``seed`` instructions reach: by data (a register or
    predicate they define, read later), through shared or local memory (a load of a space a reached store
    wrote), and with ``control`` by control dependence (the blocks a reached branch decides: Ferrante,
    Ottenstein and Warren, the post-dominator-tree path from the branch's successors up to, not including,
    its immediate post-dominator). A forward analysis over the CFG with blame.operands' def/use tables
    (register sets joined at block entries, to a fixed point); an unguarded instruction not reached kills its
    defs, a guarded one kills them only for later instructions under the same guard in its block. Everything
    after a CALL is reached (the callee is not followed). Never raises.

    Cost: ``seed`` is asked once per instruction, and a block is stepped again only when its entry set grew or
    its step changed (it became control-dependent on a reached branch, or holds a load of a space a reached
    store wrote). The transfer is monotone in the entry set, the control-dependent blocks and the spaces, so
    this least fixed point is the one found when each round restarts from empty entry sets and steps every
    block until no set changes, and what a round reaches only grows: a round looks for new spaces and decided
    blocks among the blocks it stepped."""
    ins = pf.instructions
    du = function_def_use(pf)
    index = {i.offset: k for k, i in enumerate(ins)}
    span = {b: (index[pf.blocks[b].instructions[0].offset], index[pf.blocks[b].instructions[-1].offset] + 1)
            for b in sorted(pf.blocks) if pf.blocks[b].instructions}
    src = [seed(i) for i in ins]  # a source: seeded, or (from a later round) a load of a space a reached store wrote
    store_space: list[str | None] = []  # per instruction: the space a shared/local store writes
    load_pos: dict[str, list[int]] = {}  # space -> positions of its shared/local loads
    for k, i in enumerate(ins):
        cls = cm.mem_class(i)
        if cls in ("shared", "local"):
            if i.base_opcode in cm.MEMORY_WRITES:
                store_space.append(cls)
                continue
            load_pos.setdefault(cls, []).append(k)
        store_space.append(None)
    block_at = [0] * len(ins)
    for b, (a, e) in span.items():
        block_at[a:e] = [b] * (e - a)
    # per instruction: (uses, defs, guard, guard's predicate without "!", CALL?)
    rows = [(d.uses, d.defs, d.guard, d.guard.lstrip("!") if d.guard else None, d.clobbers_all) for d in du]
    succs = {b: [s for s in pf.cfg.successors(b) if s in span] for b in span}
    order = list(span)

    ctrl: set[int] = set()  # blocks control-dependent on a varying branch
    spaces: set[str] = set()
    state_in: dict[int, frozenset[str]] = {b: frozenset() for b in span}
    reached: dict[int, list[int]] = {}  # block -> its varying instruction positions, from its last step
    dirty = set(span)
    while True:
        stepped: set[int] = set()
        while dirty:
            for b in order:
                if b not in dirty:
                    continue
                dirty.discard(b)
                stepped.add(b)
                a, e = span[b]
                if b in ctrl:  # every instruction varying: each adds its defs (and a CALL the any-register mark)
                    reached[b] = list(range(a, e))
                    cur = set(state_in[b])
                    for row in rows[a:e]:
                        if row[4]:
                            cur.add(_ANY)
                        cur |= row[1]
                    out = frozenset(cur)
                else:
                    cur = set(state_in[b])
                    here: list[int] = []
                    # registers written by a non-varying instruction under guard G: an instruction under the same
                    # G reads that value, not the one before it (@!P0 LDS R8 ... @!P0 FADD R8: in the block only)
                    clean: dict[str, set[str]] = {}
                    k = a
                    for uses, defs, guard, g, call in rows[a:e]:
                        if clean and guard in clean:
                            seen = cur - clean[guard]
                        else:
                            seen = cur
                        v = (src[k] or _ANY in cur or not seen.isdisjoint(uses) or (g is not None and g in cur))
                        if call:
                            cur.add(_ANY)  # a call: what the callee leaves in any register is not followed
                        if v:
                            here.append(k)
                            cur |= defs
                            for regs in clean.values():
                                regs -= defs
                        elif guard is None:
                            cur -= defs
                        else:
                            clean.setdefault(guard, set()).update(defs)
                        if clean:
                            for r in defs:
                                clean.pop(r, None)
                                clean.pop("!" + r, None)
                        k += 1
                    reached[b] = here
                    out = frozenset(cur)
                for s in succs[b]:
                    if not out <= state_in[s]:
                        state_in[s] = state_in[s] | out
                        dirty.add(s)
        new_ctrl = set(ctrl)
        new_spaces = set(spaces)
        for b in stepped:
            here = reached[b]
            for k in here:
                if (sp := store_space[k]) is not None:
                    new_spaces.add(sp)
            last_k = span[b][1] - 1
            last = ins[last_k]
            if not control or last.base_opcode not in _BRANCHES or not here or here[-1] != last_k:
                continue
            if du[last_k].guard is None and last.base_opcode not in ("BRX", "JMX"):
                continue  # an unconditional jump decides nothing
            stop = pf.ipdom.get(b)
            for s in pf.cfg.successors(b):
                n: int | None = s
                visited: set[int] = set()
                while n is not None and n != stop and n not in visited and n in span:
                    visited.add(n)
                    new_ctrl.add(n)
                    nxt = pf.ipdom.get(n)
                    n = None if nxt == n else nxt
        if new_ctrl == ctrl and new_spaces == spaces:
            return frozenset(ins[k].offset for b in order for k in reached[b])
        # the next round steps again only the blocks whose step changed; the others' exit sets change only
        # through their entry sets, as above
        dirty = new_ctrl - ctrl
        for sp in new_spaces - spaces:
            for k in load_pos.get(sp, ()):
                src[k] = True
                dirty.add(block_at[k])
        ctrl, spaces = new_ctrl, new_spaces


def _invariant_loop(pf: ProgramFunction, varying: frozenset[int]) -> Loop | None:
    """A loop of ``pf`` none of whose instructions is in ``varying`` and that loads from global or shared
    memory: a pass over memory every CTA of a grid row repeats (the largest such loop), or None."""
    best: Loop | None = None
    best_n = 0
    blocks = pf.blocks
    # per block (asked once per block, not per loop holding it): an instruction in ``varying``; a load from
    # global or shared memory
    varies: dict[int, bool] = {}
    loads: dict[int, bool] = {}
    for lp in pf.loops.values():
        n = sum(len(blocks[b].instructions) for b in lp.blocks)
        if not n:
            continue
        for b in lp.blocks:
            if b not in varies:
                body = blocks[b].instructions
                varies[b] = any(i.offset in varying for i in body)
                loads[b] = any(cm.mem_class(i) in ("global", "shared") and i.base_opcode not in cm.MEMORY_WRITES
                               for i in body)
        if any(varies[b] for b in lp.blocks) or not any(loads[b] for b in lp.blocks):
            continue
        if n > best_n:
            best, best_n = lp, n
    return best


def _invariant_staging(pf: ProgramFunction, varying: frozenset[int]) -> list[Instruction]:
    """The global loads of ``pf`` outside ``varying`` when the function also stores to shared memory outside
    ``varying`` before a block barrier: a table every CTA of a grid row stages the same way (a per-CTA set-up
    outside any loop, one element per thread). Empty otherwise."""
    ins = pf.instructions
    # the cheapest test first: most kernels have no barrier, then the loads are not listed
    bars = [i.offset for i in ins if i.base_opcode == "BAR"]
    if not bars:
        return []
    writes = cm.MEMORY_WRITES
    stores = [i.offset for i in ins
              if i.offset not in varying and cm.mem_class(i) == "shared" and i.base_opcode in writes]
    if not stores or max(bars) < min(stores):
        return []
    loads = [i for i in ins if i.offset not in varying and cm.mem_class(i) == "global" and i.base_opcode not in writes]
    return loads


def _kernels_by_name(prog: Program) -> dict[str, list[ProgramFunction]]:
    """Name -> the program's kernels of that name, in ``prog.functions`` order (``[pf for pf in
    prog.functions.values() if pf.is_kernel and pf.name == name]`` for every name at once; made once per program:
    each kernel's view asks for its own, which was a pass over every function per kernel)."""
    def make() -> dict[str, list[ProgramFunction]]:
        out: dict[str, list[ProgramFunction]] = {}
        for pf in prog.functions.values():
            if pf.is_kernel:
                out.setdefault(pf.name, []).append(pf)
        return out

    table: dict[str, list[ProgramFunction]] = prog.memo("advice_kernels_by_name", make)
    return table


def redundant_block_advice(view: KernelView) -> Advice | None:
    """block_decrease for a grid whose CTAs along one dimension repeat the same work: a grid dimension d of
    g > 1 CTAs in which a loop over memory, or the staging of global data into shared memory before a barrier,
    reads no value of ``blockIdx`` along d (:func:`grid_varying`, :func:`_invariant_loop`,
    :func:`_invariant_staging`): the g CTAs of a row (the CTAs that differ only in that index) compute the same
    values there, then use them for their own outputs. A CUDA engineer's fix is to coarsen along d: one CTA
    does the outputs of c of them (each thread c outputs), so the invariant work runs once per c CTAs
    (c = min(g, CTAs / CTAs per full wave): the coarsened grid still fills the GPU).

    Estimate: R = the warp samples at the invariant instructions of the kernel (all reasons: their issue,
    their latency and the barrier waits between them), removed except one c-th: GPA eq. 2 with
    M = R (1 - 1/c); then the roofline after the fix (code._after_fix_estimate), each unit's work scaled the
    same way from the per-PC counters (L2 sectors, shared wavefronts, executed instructions at the invariant
    PCs), DRAM unchanged (the useful traffic stays). None when no dimension qualifies."""
    from warpwise.analysis.advice.code import _after_fix_estimate, _l1_ratio

    prog = view.program
    lc = view.profile.launch
    if prog is None or view.total <= 0 or lc.blocks <= view.sm_count:
        return None
    kernels = _kernels_by_name(prog).get(view.profile.mangled, [])
    if len(kernels) != 1:
        return None
    pf = kernels[0]
    if len(pf.instructions) > TAINT_LIMIT:
        return None
    res = _residency(view)  # the launch's own limits (threads, registers, shared memory, CTA slots)
    if res is None:
        return None
    wave = max(1, res.slots)
    # the profile keys a subroutine's PCs (a __noinline__ callee in the kernel's code section) by the kernel's
    # name, at offsets that are not the kernel's own instructions: grid_varying does not follow calls, so the
    # callee's work, whose arguments come from its call sites, is not shown invariant (holdout13
    # ray_aabb_noinline: the slab test, called per box with the thread's ray, is 93% of the kernel's samples)
    own = pf.memo("instruction_offsets", lambda: frozenset(i.offset for i in pf.instructions))
    best: tuple[float, int, int, frozenset[int], Loop | None, list[Instruction]] | None = None
    for dim, g in enumerate(lc.grid):
        if g < 2:
            continue
        c = int(min(g, lc.blocks // wave))
        if c < 2:
            continue
        varying = pf.memo(("grid_varying", dim), lambda d=dim: grid_varying(pf, d))
        if varying is None:
            continue
        loop = _invariant_loop(pf, varying)
        staged = [] if loop is not None else _invariant_staging(pf, varying)
        if loop is None and not staged:
            continue
        r = float(sum(s.samples for (fn, off), s in view.profile.pcs.items()
                      if fn == pf.name and off in own and off not in varying))
        m = r * (1.0 - 1.0 / c)
        if best is None or m > best[0]:
            best = (m, dim, c, varying, loop, staged)
    if best is None:
        return None
    m, dim, c, varying, loop, staged = best
    inv = [(off, s) for (fn, off), s in view.profile.pcs.items()
           if fn == pf.name and off in own and off not in varying]
    keep = 1.0 / c

    def ratio(get: Callable[[PCSample], float]) -> float:
        tot = sum(get(s) for s in view.profile.pcs.values())
        part = sum(get(s) for _, s in inv)
        return 1.0 if tot <= 0 else max(0.0, 1.0 - part * (1.0 - keep) / tot)

    r_l2 = ratio(lambda s: float(s.l2_sectors + s.l2_sectors_local))  # L2 serves global and local memory
    shared_inv = sum(float(s.shared_wavefronts) for _, s in inv)
    ratios = {"l2": r_l2, "l1": _l1_ratio(view, global_ratio=r_l2, shared_removed=shared_inv * (1.0 - keep)),
              "sm": ratio(lambda s: float(s.inst_executed)), "dram": 1.0}
    evs = [e for e in view.edges if e.use_fn is pf and e.use_ins is not None and e.use_ins.offset not in varying]
    axis = "xyz"[dim]
    if loop is not None:
        where = "the loop at " + (f"lines {loop.first_line}-{loop.last_line}" if loop.first_line is not None
                                  else "its loop")
    else:
        locs = [user_loc(i) for i in staged]
        at = cm.lines_text(sorted({(loc.file, loc.line) for loc in locs if loc is not None}))
        where = f"the shared-memory staging of the loads at {at}" if at else "the shared-memory staging"
    row = " of each row" if any(n > 1 for k, n in enumerate(lc.grid) if k != dim) else ""
    hint = (f"the {lc.grid[dim]:,} CTAs along grid {axis}{row} compute the same values in {where} "
            f"(it reads no blockIdx.{axis}; {100 * r / view.total:.0f}% of the warp samples are on work "
            f"that does not depend on blockIdx.{axis}) before each writes its own "
            f"outputs: give each CTA the outputs of {c} of them (each thread {c} outputs, {c} times fewer CTAs along "
            f"{axis}), so that work runs once per {c} CTAs")
    res = cm.stall_elimination_advice(view, "block_decrease", evs, hint, nothing="no samples on the repeated work")
    if not isinstance(res, Advice):
        return None
    e = est.stall_elimination(view.total, m)
    res.estimate = Estimate(e.speedup, "T/(T-M), M = R(1-1/c)",
                            {**e.inputs, "R": r, "c": float(c), "g": float(lc.grid[dim])}, e.equation)
    res.matched_samples = m
    res.share = m / view.total
    res = _after_fix_estimate(view, res, ratios, False, {"R": r, "c": float(c)})
    res.params["redundant_blocks"] = 1
    return res


def _per_sm_load(view: KernelView, v: float) -> Advice | Skipped:
    """sm_balance for a grid under one wave (V < 1) with more CTAs B than SMs N: the CTA scheduler spreads the
    grid over the SMs, so some SMs hold ceil(B/N) CTAs and the mean is B/N. When one CTA alone already keeps its
    SM's issue busy — warps compete for issue slots, Nsight Compute's ``not_selected`` samples above the
    ``selected`` ones (the stall reasons' definitions: a warp ready while another issued), the gate
    occupancy_decrease uses — co-resident CTAs share the SM's issue and do not overlap for free, so the
    launch lasts as long as its busiest SM: S = max / mean = ceil(B/N) / (B/N), with the work spread evenly
    (more, smaller CTAs). Skipped when B ≤ N (block_increase's case) or warps do not compete for issue
    (co-resident CTAs then hide each other's latency)."""
    lc = view.profile.launch
    b, n = lc.blocks, view.sm_count
    if b <= 0 or n <= 0 or b <= n:
        return Skipped("sm_balance", f"the grid is {v:.2f} of one wave: see block_increase")
    most = math.ceil(b / n)
    if most * n == b:
        return Skipped("sm_balance", f"the grid's {b} CTAs fill the {n} SMs evenly ({most} each)")
    nsel, sel = issue_contention(view)
    if nsel <= sel:
        return Skipped("sm_balance", f"{b} CTAs on {n} SMs ({most} on some, {b / n:.2f} on average), but warps are "
                                     "not competing for issue (not_selected <= selected): co-resident CTAs overlap")
    mean = b / n
    e = Estimate(most / mean, "ceil(B/N)/(B/N)", {"B": float(b), "N": float(n), "ceil(B/N)": float(most),
                                                   "not_selected": float(nsel), "selected": float(sel)},
                 "per-SM load imbalance (CTA scheduler, one wave)")
    heavy = b - (most - 1) * n
    hint = (f"{b} CTAs on {n} SMs: {heavy} SMs run {most} CTAs, the others {most - 1}, and one CTA already keeps its "
            f"SM's issue busy ({nsel:,.0f} not-selected samples against {sel:,.0f} selected), so the launch lasts as "
            f"long as its busiest SMs; split the work into many more, smaller CTAs so every SM gets an even share")
    a = _kernel_advice(view, "sm_balance", e, 0.0, hint)
    a.basis = (f"the launch's CTAs per SM: at most {most}, {mean:.2f} on average ({b:,} CTAs on {n} SMs; LaunchStats), "
               "with co-resident CTAs sharing a busy SM's issue, not warp samples")
    a.params["confirmed"] = 1  # the premise (issue already busy with one CTA) is measured: an expected value
    return a


@register("sm_balance", "SM balance", "parallel",
          "The grid ends with a partial wave of blocks, leaving SMs idle at the tail.",
          "Size the grid to a whole number of waves (SMs × blocks per SM) or use a grid-stride loop with that "
          "many blocks.")
def sm_balance(view: KernelView) -> Advice | Skipped:
    """Tail-effect estimate from the launch's waves per SM V: S = ceil(V) / V (upper bound: the last
    partial wave takes as long as a full one). GPA's released optimizer uses SM efficiency, which the
    SourceCounters profile lacks; Nsight Compute's LaunchStats give V. A grid under one wave with more CTAs
    than SMs is uneven per SM instead (:func:`_per_sm_load`)."""
    v = view.profile.launch.waves_per_sm
    if v <= 0:
        return Skipped("sm_balance", "the profile has no waves-per-SM value", missing=True)
    if v < 1.0:
        return _per_sm_load(view, v)
    full = math.ceil(v - 1e-9)
    if full - v < 1e-6:
        return Skipped("sm_balance", f"the grid is exactly {full} waves")
    s = full / v
    e = Estimate(s, "ceil(V)/V", {"V": v, "ceil(V)": float(full)}, "tail effect (upper bound)")
    frac = v - math.floor(v)
    blocks = view.profile.launch.blocks
    per_wave = round(blocks / v) if blocks > 0 else 0
    size = f" (a multiple of {per_wave} blocks)" if per_wave else ""
    hint = (f"the grid is {v:.2f} waves: the last wave fills {frac:.0%} of the GPU's block slots, so SMs idle at the "
            f"tail; size the grid to whole waves{size} or use a grid-stride loop with one wave of blocks")
    a = _kernel_advice(view, "sm_balance", e, 0.0, hint)
    a.upper_bound = True
    a.basis = (f"the launch's waves per SM V = {v:.2f} ({blocks:,} CTAs; LaunchStats) with the last wave taken to "
               "last as long as a full one, not warp samples")
    return a
