"""Profile-guided choice of the dynamic-parallelism rewrite: threshold, coarsening factor and aggregation
granularity for one device-side launch, chosen from what a Nsight Compute profile of the CDP program
says about its child grids (issue 14 item 4; no paper does this: CGO'22 §VIII sweeps them).

What a CDP profile holds (FACTS.md, examples/cdp): ncu profiles the host-launched parent; the child
grids it launches run inside that launch, so their PCs appear in the parent's report as sub-functions
``<parent>$fnN`` whose code starts like a kernel entry (``LDC R1, c[0x0][0x28]``, loading the stack
pointer); the device runtime's launch routines appear as other ``$fnN`` sub-functions (called frames),
and device-runtime scheduling as unattributed samples. Per SASS instruction the SourceCounters section
counts executions (``inst_executed`` warps, ``thread_inst_executed`` threads), so:

- child launches L = the threads that executed the parent's device-runtime calls (the most-executed
  ``CALL`` of the parent: every launch calls the runtime);
- child threads C = the threads past the child's bounds check: the thread count of the instruction after
  its first predicated ``EXIT`` (``if (i >= n) return;``), else of its first instruction (a recursive child
  shares the parent's code: C = entries - the parent's own threads);
- mean child grid m = C / L threads; samples in the device runtime (its sub-functions and unattributed
  samples) over all samples = the launch overhead's share of the time.

The facts are sums over every profiled launch of the parent, so each launch weighs by its own child
launches and threads: a sample of the parent's launches spread evenly over the run (systematic: launch
floor(i * R / K) of R, one report each, bench/dp/schedule.py) estimates the run's child grids, while a
window of the first launches of a multi-round program (a frontier that starts at one vertex) holds only
its first rounds — on the DP benchmark's SSSP, 12 child launches in six rounds of 26.

The rule (reasons are returned with it; its constants, ``Rule``, come from the hardware and the paper's
arguments, not from a fit: bench/dp/plan_loo.py measures how much a fit on the sweep would gain, in
sample and leave-one-program-out, docs/benchmarks.md "Dynamic parallelism"):

- threshold (CGO'22 §III: a launch costs microseconds, and a child grid that cannot fill a warp leaves
  most of its lanes idle): child grids of at most half a warp of useful threads on average
  (``Rule.serial_below`` = 16) get the largest threshold of the space, so nearly every child runs in its
  parent thread, and so does a recursive launch (a child run serially runs its whole subtree serially,
  saving all the launches below it); larger grids get one warp (32, the smallest threshold), so only
  grids that cannot fill one warp run serially;
- serial execution in the parent: when every child grid has a single block (launched threads per launch
  equal the child's block) and that block is smaller than the largest threshold, the largest threshold
  runs every child of the profile in its parent thread: no launch is left, so neither coarsening nor
  aggregation is applied (their bookkeeping would be pure overhead; the no-CDP program, CGO'22 §VIII,
  plus the threshold test) — except for a launch inside a loop of the parent, which keeps aggregation per
  block: device-side launches left in a loop whose warps diverge between launching and running serial
  copies livelocked in the H200's device runtime (docs/benchmarks.md, DP Run 6);
- coarsening factor (CGO'22 §IV: fewer, fuller blocks): when the child grids have more than one block on
  average (``Rule.coarsen_blocks`` = 1.05: one block plus rounding) and the child blocks of one parent
  launch are more than the GPU holds at once (``Rule.coarsen_waves`` = 1 GPU-full: SMs x the SM's block
  and thread limits, ``child_waves``; fewer blocks leave no block scheduling to save), the larger factor;
  otherwise factor 1;
- granularity (CGO'22 §V: a coarser unit makes fewer, larger launches but starts them later): with
  mostly-serial children the few launches left are aggregated per block, so they still overlap the
  parent; otherwise per grid when the host launch is in the file and the parent is a small part of the
  time (its own samples under ``Rule.parent_share_grid`` = 1/2: waiting for the whole parent grid before
  one launch costs little), else per group of blocks when the parent grid has more blocks than the GPU
  holds at once (SMs x blocks per SM), else per block. Launches by fewer than
  ``Rule.agg_min_launch_share`` (1 in 20) of the parent threads are not aggregated.
The space is the benchmark's sweep (bench/dp/sweep.py), so every choice is measured there.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..profile.model import KernelProfile, PCSample
from .model import TextEdit

THRESHOLDS = (32, 256)  # child threads; bench/dp/sweep.py THRESHOLDS
FACTORS = (1, 4)  # blocks per coarsened block; bench/dp/sweep.py FACTORS
WARP_SIZE = 32  # threads; CUDA C++ Programming Guide, "SIMT Architecture"
# resident blocks and threads per SM, compute capability 9.0 (H100/H200): CUDA C++ Programming Guide,
# "Technical Specifications per Compute Capability"
MAX_BLOCKS_PER_SM = 32
MAX_THREADS_PER_SM = 2048
_ENTRY = "LDC R1, c[0x0][0x28]"


@dataclass(frozen=True)
class Rule:
    """The constants of the plan's rule (module docstring): where each one comes from is stated there."""

    serial_below: float = WARP_SIZE / 2  # mean useful child threads at or below which children run serially
    coarsen_blocks: float = 1.05  # mean launched child blocks above which coarsening pays
    agg_min_launch_share: float = 0.05  # launches per parent thread below which aggregation is not worth it
    parent_share_grid: float = 0.5  # parent's share of samples below which grid granularity is chosen
    coarsen_waves: float = 1.0  # child blocks per parent launch, in GPU-fulls, at or below which nothing is coarsened


RULE = Rule()


@dataclass
class DpFacts:
    """What a CDP profile says about one parent kernel (summed over its profiled launches).

    Counts are threads or launches; samples are ncu warp samples.
    """

    parent: str
    profiled_launches: int = 0
    parent_threads: int = 0
    parent_blocks: int = 0
    block_threads: int = 0
    child_launches: int = 0
    child_threads: int = 0  # threads past the child's bounds check (the useful threads)
    child_threads_launched: int = 0  # threads that entered the child (whole blocks)
    samples: int = 0
    parent_samples: int = 0
    child_samples: int = 0
    runtime_samples: int = 0
    achieved_occupancy: float = 0.0  # percent, mean over launches
    sm_count: int = 0
    max_blocks_per_sm: float = 0.0  # parent blocks an SM holds at once (occupancy limit)
    recursive: bool = False  # the child is the parent kernel itself

    @property
    def mean_child_threads(self) -> float:
        """Mean threads per child grid (0 without launches)."""
        return self.child_threads / self.child_launches if self.child_launches else 0.0

    @property
    def launches_per_parent_thread(self) -> float:
        return self.child_launches / self.parent_threads if self.parent_threads else 0.0

    @property
    def runtime_share(self) -> float:
        return self.runtime_samples / self.samples if self.samples else 0.0

    @property
    def parent_share(self) -> float:
        return self.parent_samples / self.samples if self.samples else 0.0


def dp_facts(profiles: Iterable[KernelProfile], parent: str, recursive: bool = False) -> DpFacts | None:
    """DpFacts of kernel ``parent`` (demangled base name) from the profiled launches among ``profiles``;
    None when none of them is that kernel."""
    facts = DpFacts(parent, recursive=recursive)
    occ = 0.0
    for kp in profiles:
        if kp.name.split("(")[0].split("<")[0].strip() != parent:
            continue
        facts.profiled_launches += 1
        g, b = kp.launch.grid, kp.launch.block
        blocks, threads = g[0] * g[1] * g[2], b[0] * b[1] * b[2]
        facts.parent_blocks += blocks
        facts.parent_threads += blocks * threads
        facts.block_threads = threads
        facts.sm_count = kp.launch.sm_count
        occ += kp.launch.achieved_occupancy
        lim = [v for v in kp.launch.occupancy_limit.values() if v > 0]
        facts.max_blocks_per_sm = min(lim) if lim else facts.max_blocks_per_sm
        by_fn: dict[str, list[tuple[int, PCSample]]] = {}
        for (fn, off), s in kp.pcs.items():
            by_fn.setdefault(fn, []).append((off, s))
            facts.samples += s.samples
        calls = 0
        entries = 0
        useful = 0
        for fn, rows in by_fn.items():
            rows.sort(key=lambda r: r[0])
            first = rows[0][1]
            n = sum(r[1].samples for r in rows)
            if fn == kp.mangled:
                facts.parent_samples += n
                calls = max([calls] + [r[1].thread_inst_executed for r in rows if r[1].sass.startswith("CALL")])
                entries += first.thread_inst_executed if recursive else 0
            elif fn.startswith(kp.mangled + "$") and first.sass.startswith(_ENTRY):
                facts.child_samples += n
                entries += first.thread_inst_executed
                useful += _past_bounds_check(rows)
            else:  # device-runtime routines and unattributed samples
                facts.runtime_samples += n
        if recursive:
            entries -= blocks * threads
        facts.child_launches += calls
        facts.child_threads_launched += max(entries, 0)
        facts.child_threads += useful if useful and not recursive else max(entries, 0)
    if facts.profiled_launches == 0:
        return None
    facts.achieved_occupancy = occ / facts.profiled_launches
    return facts


def _past_bounds_check(rows: list[tuple[int, PCSample]]) -> int:
    """Threads of a child that pass its bounds check: the thread count of the instruction after the first
    predicated ``EXIT`` (``if (i >= n) return;``) when no branch comes before it, else the entry count."""
    for k, (_off, s) in enumerate(rows):
        if s.sass.startswith(("BRA", "BSSY", "CALL", "RET", "BRX", "JMP")):
            break
        if s.sass.startswith("@") and " EXIT" in s.sass and k + 1 < len(rows):
            return rows[k + 1][1].thread_inst_executed
    return rows[0][1].thread_inst_executed


def child_waves(facts: DpFacts, child_block: int) -> float:
    """Launched child blocks per profiled parent launch over the child blocks the GPU holds at once
    (SMs x min(MAX_BLOCKS_PER_SM, MAX_THREADS_PER_SM / child block), the thread and block limits only; 0
    without SMs or blocks). Coarsening (CGO'22 §IV) saves block scheduling, which needs more blocks than
    one GPU-full."""
    if not (facts.sm_count and child_block and facts.profiled_launches):
        return 0.0
    per_sm = min(MAX_BLOCKS_PER_SM, max(MAX_THREADS_PER_SM // child_block, 1))
    blocks = (facts.child_threads_launched or facts.child_threads) / child_block / facts.profiled_launches
    return blocks / (facts.sm_count * per_sm)


@dataclass(frozen=True)
class Choice:
    """One point of the rewrite space: granularity None = no aggregation; threshold 0 = aggregation
    only (no threshold, no coarsening: the recursive-launch choice)."""

    threshold: int
    factor: int
    granularity: str | None

    @property
    def label(self) -> str:
        agg = f"aggregate per {self.granularity}" if self.granularity else "no aggregation"
        if self.threshold == 0:
            return f"no threshold, no coarsening, {agg}"
        return f"threshold {self.threshold}, coarsen x{self.factor}, {agg}"

    def steps(self) -> list[tuple[str, str | None]]:
        """The transforms in CGO'22 pass order (threshold -> coarsen -> aggregate)."""
        out: list[tuple[str, str | None]] = [("threshold", None), ("coarsen", None)] if self.threshold else []
        return out + ([("aggregate", self.granularity)] if self.granularity else [])


@dataclass
class Plan:
    """The chosen point, why, and the alternatives (nearest first)."""

    choice: Choice
    reasons: list[str]
    alternatives: list[Choice] = field(default_factory=list)
    facts: DpFacts | None = None
    all_serial: bool = False  # every profiled child grid runs in its parent thread under the choice

    @property
    def summary(self) -> str:
        return f"{self.choice.label}: " + "; ".join(self.reasons)


def choose(facts: DpFacts, child_block: int | None, allowed: set[str], grid_ok: bool, rule: Rule = RULE,
           in_loop: bool = False) -> Plan:
    """The profile-guided choice for one launch.

    ``child_block``: threads per child block (None when not a constant); ``allowed``: the transforms that
    apply to the launch (threshold / coarsen / aggregate); ``grid_ok``: grid granularity possible (the
    host launch of the parent is in the file); ``rule``: the rule's constants (the default is the stated
    rule; bench/dp/plan_loo.py passes others); ``in_loop``: the launch is inside a loop of the parent (then
    serial execution keeps aggregation per block: a threshold without aggregation leaves device-side
    launches in a loop whose warps diverge, which livelocked in the H200's device runtime, docs/benchmarks.md
    "Dynamic-parallelism rewrites", Run 6).
    """
    m = facts.mean_child_threads
    reasons = [f"{facts.child_launches} child launches of {m:.0f} threads on average "
               f"({facts.child_threads} child threads, {facts.profiled_launches} profiled parent launch"
               f"{'es' if facts.profiled_launches != 1 else ''} of {facts.parent_threads} threads)"]
    if facts.samples:
        reasons.append(f"{100 * facts.runtime_share:.0f}% of samples in the device runtime, "
                       f"{100 * facts.parent_share:.0f}% in the parent")
    if facts.recursive and "aggregate" in allowed:
        reasons.append(f"recursive launch, {100 * facts.runtime_share:.0f}% of the samples in the device runtime: "
                       "aggregate every level per block (KLAP): one launch per parent block instead of one per "
                       "parent thread; no threshold (a child run serially would run its whole subtree in one "
                       "thread) and no coarsening (the launch would go to the coarsened copy, which aggregation "
                       "does not follow)")
        only = Choice(0, 1, "block")
        return Plan(only, reasons, alternatives(only, allowed, grid_ok, recursive=True), facts)
    serial = m <= rule.serial_below or facts.recursive
    t = THRESHOLDS[-1] if serial else THRESHOLDS[0]
    if "threshold" in allowed:
        if facts.recursive:
            why = ("the launch is recursive: a child run serially also runs its whole subtree serially, which saves "
                   f"the subtree's launches ({100 * facts.runtime_share:.0f}% of the samples are in the device "
                   "runtime)")
        elif serial:
            why = f"child grids of {m:.0f} useful threads on average run faster in the parent thread than launched"
        else:
            why = "only the smallest child grids run serially"
        reasons.append(f"threshold {t}: {why}")
    bs = child_block or 128
    launched = facts.child_threads_launched or facts.child_threads
    blocks = launched / facts.child_launches / bs if facts.child_launches and bs else 0.0
    waves = child_waves(facts, bs)
    c = FACTORS[-1] if blocks > rule.coarsen_blocks and waves > rule.coarsen_waves else FACTORS[0]
    # every child grid one block (launches >= 1 block each, so a mean of 1 block is all of them) below the
    # largest threshold: the threshold runs all of them in the parent, no launch is left to coarsen or aggregate
    all_serial = (serial and not facts.recursive and "threshold" in allowed and child_block is not None
                  and 0 < facts.child_threads_launched <= facts.child_launches * child_block
                  and child_block < THRESHOLDS[-1])
    if all_serial:
        c = FACTORS[0]
    if "coarsen" in allowed:
        why = ("" if c > 1 else " (nothing to merge)" if blocks <= rule.coarsen_blocks else
               f" (their {waves:.1f} GPU-fulls of blocks per parent launch leave no block scheduling to save)")
        reasons.append(f"coarsen x{c}: child grids of {blocks:.2f} blocks of {bs} threads on average" + why)
    g: str | None
    if all_serial and in_loop and "aggregate" in allowed:
        g = "block"
        reasons.append(f"aggregate per block: every child grid is one block of {child_block} threads, under the "
                       f"threshold {t}, so all of them run in the parent thread, but the launch is in a loop: without "
                       "aggregation a warp whose lanes launch while others run the serial copy in other iterations "
                       "can livelock in the device runtime (CDP2, H200), so the launches left go to the aggregation "
                       "buffer instead")
    elif all_serial:
        g = None
        reasons.append(f"no aggregation: every child grid is one block of {child_block} threads, under the threshold "
                       f"{t}, so all of them run in the parent thread (serial execution, as without CDP)")
    elif "aggregate" not in allowed:
        g = None
        reasons.append("no aggregation (refused for this launch)")
    elif facts.launches_per_parent_thread < rule.agg_min_launch_share and not serial:
        g = None
        reasons.append(f"no aggregation: {facts.launches_per_parent_thread:.2f} launches per parent thread")
    elif serial:
        g = "block"
        reasons.append("aggregate per block: the few child grids left above the threshold still overlap the parent")
    elif grid_ok and facts.parent_share < rule.parent_share_grid:
        g = "grid"
        reasons.append(f"aggregate per grid: the parent is {100 * facts.parent_share:.0f}% of the samples, so "
                       "waiting for the whole parent grid before one launch costs little")
    else:
        resident = facts.sm_count * (facts.max_blocks_per_sm or 1)
        per_launch = facts.parent_blocks / max(facts.profiled_launches, 1)
        if resident and per_launch > resident:
            g = "multiblock"
            reasons.append(f"aggregate per group of blocks: the parent's {per_launch:.0f} blocks exceed the "
                           f"{resident:.0f} the GPU holds at once, so groups finish at different times")
        else:
            g = "block"
            reasons.append("aggregate per block: the parent is a large part of the time, its children should "
                           "overlap it")
    if in_loop and g is None and "aggregate" in allowed and not facts.recursive and not all_serial:
        g = "block"
        reasons.append("aggregate per block after all: the launch is in a loop, where a threshold without aggregation "
                       "is refused (a warp with lanes in the launch and lanes in the serial copy livelocked on the "
                       "H200)")
    choice = Choice(t if "threshold" in allowed else THRESHOLDS[0], c if "coarsen" in allowed else 1, g)
    return Plan(choice, reasons, alternatives(choice, allowed, grid_ok, facts.recursive, in_loop), facts, all_serial)


def alternatives(choice: Choice, allowed: set[str], grid_ok: bool, recursive: bool = False,
                 in_loop: bool = False) -> list[Choice]:
    """The rest of the space, nearest to ``choice`` first (fewest differing knobs). A recursive launch:
    threshold+coarsen without aggregation, or aggregation per block alone (aggregate_rec.py). A launch in a
    loop of the parent: only aggregated choices (a threshold alone is refused there: api.rewrite)."""
    grans: list[str | None] = [] if in_loop and not recursive and "aggregate" in allowed else [None]
    if "aggregate" in allowed and not recursive:
        grans += ["block", "multiblock"] + (["grid"] if grid_ok else [])
    space = [Choice(t, c, g) for t in THRESHOLDS for c in FACTORS for g in grans]
    if recursive and "aggregate" in allowed:
        space.append(Choice(0, 1, "block"))
        grans.append("block")

    def dist(x: Choice) -> tuple[int, int, int, int]:
        return ((x.threshold != choice.threshold) + (x.factor != choice.factor) + (x.granularity != choice.granularity),
                x.threshold, x.factor, grans.index(x.granularity))

    return sorted((x for x in space if x != choice), key=dist)


# the single point of the space with the best geometric mean over the DP benchmark's sweep (H200,
# docs/benchmarks.md): 1.35x the per-program best; it needs no host launch in the file
DEFAULT = Choice(THRESHOLDS[-1], FACTORS[-1], "multiblock")
NO_PROFILE = "no profile of the CDP program"


def default_reason(choice: Choice, recursive: bool) -> str:
    """Why the default ``choice`` was made, naming what applies to this launch (its label; for a recursive
    launch that aggregation per block alone is the one transform the recursion allows, aggregate_rec.py)."""
    why = f"the measured default (bench/dp, docs/benchmarks.md): {choice.label}"
    if recursive and choice.threshold == 0:
        why += " (a recursive launch: aggregation per block alone; threshold and coarsening do not combine with it)"
    return why


@dataclass(frozen=True)
class LaunchContext:
    """What the rule needs from the source about one device-side launch."""

    parent: str  # parent kernel
    recursive: bool  # the child is the parent kernel itself
    allowed: frozenset[str]  # transforms that apply (threshold / coarsen / aggregate)
    grid_ok: bool  # the host launch of the parent is in the file (grid granularity possible)
    child_block: int | None  # threads per child block when it is a constant
    in_loop: bool = False  # the launch is inside a loop of the parent


def launch_context(source: str, path: str, launch_line: int) -> LaunchContext:
    """LaunchContext of the device-side launch on ``launch_line``. Raises RewriteError (parse error, no
    launch on the line, or no transform applies, with the reasons)."""
    from .launches import find_launches, find_sites
    from .model import RewriteError
    from .parse import parse
    from .program import constants, eval_int

    hits = [la for la in find_launches(source, path) if la.line == launch_line]
    if len(hits) != 1:
        raise RewriteError(f"{path}:{launch_line}: no single device-side launch starts on this line")
    la = hits[0]
    if not la.transforms:
        raise RewriteError(f"{path}:{launch_line}: no rewrite applies: "
                           + "; ".join(f"{t}: {r}" for t, r in la.refusals.items()))
    p = parse(source, path)
    grid_ok = any(not s.device_side and s.child_name == la.parent for s in find_sites(p))
    return LaunchContext(la.parent, la.child == la.parent, frozenset(la.transforms), grid_ok,
                         eval_int(la.block.text, constants(source)), la.in_loop)


def plan_launch(source: str, path: str, launch_line: int, profiles: Iterable[KernelProfile] | None) -> Plan:
    """The plan for the device-side launch on ``launch_line`` of ``source``: profile-guided when
    ``profiles`` hold its parent kernel, else the measured default (whose reason says when ``profiles``
    were given but hold no launch of the parent). Raises RewriteError (parse error, no launch on the
    line, or no transform applies, with the reasons)."""
    ctx = launch_context(source, path, launch_line)
    given = list(profiles or [])
    facts = dp_facts(given, ctx.parent, recursive=ctx.recursive) if given else None
    unmatched = sorted({kp.name.split("(")[0].split("<")[0].strip() for kp in given}) if given and facts is None \
        else None
    return plan_for(ctx, facts, unmatched=unmatched)


def plan_for(ctx: LaunchContext, facts: DpFacts | None, rule: Rule = RULE,
             unmatched: list[str] | None = None) -> Plan:
    """The plan for a launch from its context and the profile's facts (None: no profile): the rule
    (``choose``) when the profile holds enough child launches, else the measured default.
    ``unmatched``: the kernels of profiles that were given but hold no launch of the parent (said in the
    reason)."""
    allowed, grid_ok, block, la = set(ctx.allowed), ctx.grid_ok, ctx.child_block, ctx
    # evidence: fewer child launches than the GPU has SMs say little about the program's child grids (an
    # early round of a frontier algorithm, say); the profile is then not used
    few = facts is not None and 0 < facts.child_launches < max(facts.sm_count, 1)
    if facts is None or facts.child_launches == 0 or few:
        g = DEFAULT.granularity if "aggregate" in allowed else None
        if g == "grid" and not grid_ok:
            g = "multiblock"
        choice = Choice(DEFAULT.threshold, DEFAULT.factor, g)
        if ctx.recursive and "aggregate" in allowed:  # threshold+coarsen cannot be aggregated: aggregation only
            choice = Choice(0, 1, "block")
        why = f"{NO_PROFILE}: {default_reason(choice, ctx.recursive)}"
        if facts is None and unmatched is not None:
            why = (f"the profile holds no launch of the parent `{la.parent}` (its kernels: "
                   f"{', '.join(unmatched) or 'none'}), so it is not used: {default_reason(choice, ctx.recursive)}")
        elif facts is not None and facts.child_launches == 0:
            why = (f"the profile of `{la.parent}` shows no child launches (were the launches profiled?): "
                   + default_reason(choice, ctx.recursive))
        elif facts is not None:
            why = (f"the profile of `{la.parent}` holds {facts.child_launches} child launches, fewer than the GPU's "
                   f"{facts.sm_count} SMs: too few to tell the program's child grids (a window of the first launches "
                   "of a multi-round program holds only its first rounds: profile single launches spread over the "
                   "run, ncu --launch-skip S --launch-count 1 at several S, and give the plan every report): "
                   + default_reason(choice, ctx.recursive))
        return Plan(choice, [why], alternatives(choice, allowed, grid_ok, ctx.recursive, ctx.in_loop),
                    None if few else facts)
    return choose(facts, block, allowed, grid_ok, rule, in_loop=ctx.in_loop)


def plan_edits(source: str, path: str, launch_line: int, choice: Choice) -> list[TextEdit]:
    """One TextEdit applying ``choice`` (threshold, coarsening unless the factor is 1, aggregation unless
    None) to the launch on ``launch_line``, with the macros' defaults set to the choice."""
    from .api import one_edit, pipeline

    steps: list[tuple[str, str | None]] = [("threshold", None)] if choice.threshold else []
    if choice.factor > 1:
        steps.append(("coarsen", None))
    if choice.granularity:
        steps.append(("aggregate", choice.granularity))
    out = pipeline(source, path, launch_line, steps, threshold=choice.threshold or None, factor=choice.factor)
    return one_edit(source, out)
