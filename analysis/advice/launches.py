"""One ranking per kernel over all its profiled launches.

A report often holds several launches of one kernel (a solver's iterations, one launch per layer, sizes
that change). Each launch is analysed on its own (its launch shape, samples and blame); the kernel's advice
then combines them by the time each launch takes:

    S = Σ_i t_i / Σ_i (t_i / S_i)

— the speedup of the kernel's total time when launch i's time t_i shrinks by its own estimate S_i
(S_i = 1 for a launch the optimizer did not match). t_i is the launch's ``gpu__time_duration.sum``; a
report without durations weights by the launches' samples (PC samples accrue at a fixed rate per SM cycle,
so they are proportional to time on equally busy SMs). The interval combines the launches' bounds the
same way; the finding shown (scope, hotspots, hint) is that of the launch where the fix saves most time.

kernel_merge is the one optimizer whose estimate needs the launches together (:func:`merge_estimate`): a
launch that cannot fill the GPU costs about a fixed minimum time, so merging the launches into one turns
Σ_i t_i into about the total work at the rate of the launches that fill the GPU, plus one such floor. When no
launch fills the GPU there is no measured full-GPU rate: :func:`small_launches_estimate` counts the N launch floors
replaced by one and the idle CTA slots the merged grid fills, for launches the host source shows independent
(rewrite.host_flow). A producer -> consumer chain of memory-bound launches of one element-wise kernel is fused
instead (:func:`chain_fusion_estimate`: the intermediates' traffic disappears).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import replace

from warpwise.analysis.advice import filters
from warpwise.analysis.advice import ranking as rk
from warpwise.analysis.advice.model import Advice, AdviceReport, Estimate, LaunchEstimate, Scope
from warpwise.analysis.arch import occupancy as occ
from warpwise.analysis.arch.facts import arch_facts
from warpwise.analysis.arch.roofline import ACHIEVABLE, launch_floor_ns
from warpwise.analysis.profile.model import KernelProfile
from warpwise.analysis.rewrite.host_flow import HostFlow, host_flow

#: steps_fusion_estimate's "same pass over the same data" test: the longest launch under this many times the
#: shortest (a factor of two: the committed steps launches spread 1.04x-1.17x, a BFS level loop 271x).
STEPS_SAME_WORK = 2.0


def weight(profile: KernelProfile) -> float:
    """t_i of a launch: its duration in ns, else its sample count (see the module docstring)."""
    return profile.launch.duration_ns if profile.launch.duration_ns > 0 else float(profile.total_samples)


def merge_estimate(profiles: list[KernelProfile], flow: HostFlow | None = None) -> Estimate | None:
    """kernel_merge's estimate from the launches of one kernel; two models by what the launches measured.

    **Some launches fill the GPU** (Nsight Compute's LaunchStats "Waves Per SM" >= 1), some do not:
    S = Σ_i t_i / (t_floor + max(W · r, max_small (t_i − t_floor))). t_i: each launch's duration (ns,
    ``gpu__time_duration.sum``); W = Σ_i n_i, the work of all launches: n_i = the launch's executed warp
    instructions (Σ of its per-PC ``inst_executed``), or its threads (CTAs × threads per CTA) when a launch lacks
    them; t_floor, the per-launch floor: a launch whose grid cannot fill the GPU (waves < 1) costs about a fixed
    minimum (launch, ramp-up and drain: the fixed part f of ranking.apply_launch_floor's Amdahl model) plus what
    its few CTAs do, so t_floor = min(the shortest launch under one wave, arch.roofline.launch_floor_ns of the
    merged launch's first wave: an empty kernel's duration on the H200); r = Σ_full (t_i − t_floor) / Σ_full n_i,
    the time per unit of work beyond that floor of the launches that fill the GPU (every SM has a full wave of
    CTAs, so their time past the floor scales with their work — CUDA C++ Best Practices Guide, "Occupancy", and
    the wave/tail effect). One merged launch runs all the work at that measured full-GPU rate and pays the floor
    once; a launch under one wave runs its CTAs side by side, so its time past the floor is its slowest CTA's,
    which no bigger grid shortens. Counting instructions, not threads, keeps launches whose threads loop over
    rows of different lengths comparable (holdout4's gemv_fp16_decode_ww: three GEMVs of K = 4096 and 11008, the
    small launch's CTAs doing 2.7x the work each: 1.06x measured for the merge, 2.70x estimated per thread with
    the small launch's whole 32 us taken as the floor).

    **No launch fills the GPU** (:func:`small_launches_estimate`): the floors saved and the idle slots filled,
    only when ``flow`` (the host source's launch arguments, rewrite.host_flow) finds the launches independent.

    ``profiles``: the launches in report order. None when fewer than two launches, any launch lacks its
    duration, grid or waves, when every launch fills the GPU (nothing to merge away), or when none does and the
    launches are not known to be independent. Raises nothing.
    """
    if len(profiles) < 2:
        return None
    facts = [p.launch for p in profiles]
    if any(f.duration_ns <= 0 or f.blocks <= 0 or f.threads_per_block <= 0 or f.waves_per_sm <= 0 for f in facts):
        return None
    full = [i for i, f in enumerate(facts) if f.waves_per_sm >= 1.0]
    if len(full) == len(facts):
        return None
    if not full:
        return small_launches_estimate(profiles, flow)
    small = [i for i in range(len(facts)) if i not in full]
    executed = [float(sum(s.inst_executed for s in p.pcs.values())) for p in profiles]
    by_instructions = all(x > 0 for x in executed)
    n = executed if by_instructions else [float(f.blocks * f.threads_per_block) for f in facts]
    floor = min(f.duration_ns for f in facts)
    try:
        merged_k, _ = _shape(profiles[0], sum(f.blocks for f in facts))
        floor = min(min(facts[i].duration_ns for i in small), launch_floor_ns(merged_k))
    except ValueError:
        pass
    rate = sum(facts[i].duration_ns - floor for i in full) / sum(n[i] for i in full)
    work = sum(n)
    slowest = max(facts[i].duration_ns - floor for i in small)
    total = sum(f.duration_ns for f in facts)
    merged = max(work * rate, slowest) + floor
    if rate <= 0 or merged >= total:
        return None
    unit = "warp instructions" if by_instructions else "threads"
    return Estimate(total / merged, "sum_t_ns/(t_floor_ns+max(W*r_ns, max_small(t_ns-t_floor_ns))), "
                    f"r_ns=sum_full(t_ns-t_floor_ns)/sum_full_n, n = {unit}",
                    {"sum_t_ns": total, "W": work, "r_ns": rate, "t_floor_ns": floor, "slowest_small_ns": slowest,
                     "launches": float(len(facts)), "full_launches": float(len(full)),
                     "work_in_instructions": float(by_instructions)},
                    "launch floor: one merged launch at the full-GPU rate of the launches with >= 1 wave")


def _shape(profile: KernelProfile, ctas: int) -> tuple[float, float]:
    """(first-wave CTAs per busy SM, share of the GPU's CTA slots filled) of a launch of ``ctas`` CTAs with
    ``profile``'s CTA shape: k = min(⌈ctas / SMs⌉, resident CTAs per SM)
    (arch.occupancy.Residency.first_wave_ctas_per_sm), φ = min(1, ctas / (SMs × resident CTAs per SM))
    (arch.occupancy.residency: the CUDA Occupancy Calculator's rules). Raises ValueError for a CTA of no threads."""
    f = profile.launch
    r = occ.residency(arch_facts(profile.arch), f.threads_per_block, ctas, f.sm_count, f.registers_per_thread,
                      f.shared_bytes_per_block, f.occupancy_limit)
    return float(r.first_wave_ctas_per_sm), min(1.0, ctas / (f.sm_count * max(1, r.ctas_per_sm)))


def _stall_share(profiles: list[KernelProfile], reason: str) -> float:
    """Share of the launches' warp samples stalled on ``reason`` (Nsight Compute's name), summed over the
    launches; 0.0 when they hold no samples."""
    total = sum(p.total_samples for p in profiles)
    got = sum(s.stalls.get(reason, 0) for p in profiles for s in p.pcs.values())
    return got / total if total > 0 else 0.0


def _issue_share(profiles: list[KernelProfile]) -> float:
    """Share of the launches' warp samples in the ``selected`` state (the warp issued that cycle), summed over
    the launches; 0.0 when they hold no samples."""
    total = sum(p.total_samples for p in profiles)
    sel = sum(s.stalls.get("selected", 0) for p in profiles for s in p.pcs.values())
    return sel / total if total > 0 else 0.0


def small_launches_estimate(profiles: list[KernelProfile], flow: HostFlow | None) -> Estimate | None:
    """kernel_merge's estimate for N launches that each leave the GPU's CTA slots partly empty (waves < 1).

    Each launch i costs t_i = f_i + b_i: f_i = launch_floor_ns(k_i), the duration of an empty kernel whose first
    wave puts k_i CTAs on each busy SM (analysis/arch/roofline: H200 measurement, bench/arch/launch_latency.cu),
    paid whatever the CTAs do; b_i = max(0, t_i − f_i), the time its CTAs add. One launch over all the work
    (Σ C_i CTAs of the same shape) pays one floor f_M = launch_floor_ns(k_M) for its own first wave (k_M CTAs per
    SM), and its CTAs fill the slots the launches left idle:

        S = Σ_i t_i / (f_M + W),  W = max(Σ_i b_i σ_i / g_i,  max_i b_i,  Σ_i t_i d_i / reach_dram)

    σ_i = min(1, C_i / SMs), the share of SMs launch i kept busy (idle SMs add throughput linearly); g_i =
    min(k_M / k_i, 1 / (s W_i)) the throughput gain per busy SM from k_M instead of k_i resident CTAs, which
    grows with resident CTAs while the SM's issue slots are free (latency hiding) and stops where they are
    full: s is the share of the launches' warp samples that issued (``selected``), W_i = k_i × warps per CTA /
    schedulers per SM the warps sharing a scheduler, so s W_i is a scheduler's issue utilization (Nsight Compute
    samples one warp per scheduler per interval: Kernel Profiling Guide, "Warp Sampling"). max_i b_i: a CTA
    runs no faster in a bigger grid. d_i: launch i's DRAM throughput share (SpeedOfLight), so Σ t_i d_i is the
    DRAM time of the same bytes at peak, reach_dram = arch.roofline.ACHIEVABLE["dram"] the reachable share
    of it: merging moves the same bytes. Measured on the H200 (bench/advice/holdout9/pairs/planes_per_launch_clean, 48
    launches of 64 CTAs, 2026-12-03): 24.1x achieved by one launch over the batch. ``S_floors`` = Σ t_i /
    (f_M + Σ_i b_i), the floors alone (no fill), is kept as the lower end.

    The merged kernel also fetches each CTA's former launch arguments from a table or computes them, a cost the
    launches do not show (indexing a by-value parameter array with a run-time index copies the parameter to
    local memory in every thread: holdout9's planes_per_launch fix, 9.7x where the clean merge gave 24.1x).

    Assumes the launches are independent — their CTAs can run in one grid in any order — which ``flow`` must
    confirm (kind "independent": no launch argument links two launches in the host source); None otherwise, or
    when the launches' shapes are unknown or merging saves nothing. Raises nothing.
    """
    if flow is None or flow.kind != "independent":
        return None
    try:
        shapes = [_shape(p, p.launch.blocks) for p in profiles]
        merged_k, _ = _shape(profiles[0], sum(p.launch.blocks for p in profiles))
        arch = arch_facts(profiles[0].arch)
    except ValueError:
        return None
    t = [p.launch.duration_ns for p in profiles]
    f = [launch_floor_ns(k) for k, _ in shapes]
    b = [max(0.0, ti - fi) for ti, fi in zip(t, f, strict=True)]
    f_m = launch_floor_ns(merged_k)
    total = sum(t)
    floors_only = f_m + sum(b)
    if floors_only >= total:
        return None
    s = _issue_share(profiles)
    warps_per_cta = -(-profiles[0].launch.threads_per_block // arch.warp_size)
    fill_work = 0.0
    for p, bi, (k, _) in zip(profiles, b, shapes, strict=True):
        sigma = min(1.0, p.launch.blocks / max(1, p.launch.sm_count))
        utilization = s * k * warps_per_cta / max(1, arch.schedulers_per_sm)
        gain = max(1.0, min(merged_k / k, 1.0 / utilization if utilization > 0 else merged_k / k))
        fill_work += bi * sigma / gain
    dram_ns = sum(ti * p.launch.throughput_pct.get("dram", 0.0) / 100.0 for ti, p in zip(t, profiles, strict=True))
    dram_ns /= ACHIEVABLE["dram"]
    work = max(fill_work, max(b), dram_ns)
    merged = f_m + work
    return Estimate(total / merged, "sum_t_ns/(f_M_ns+W_ns), W = max(sum_i b_i*sigma_i/g_i, max b_i, DRAM time), "
                    "b_i=t_i-f_i, f=launch_floor_ns(first-wave CTAs/SM)",
                    {"sum_t_ns": total, "sum_f_ns": sum(f), "sum_b_ns": sum(b), "f_M_ns": f_m, "W_ns": work,
                     "launches": float(len(t)), "full_launches": 0.0, "S_floors": total / floors_only,
                     "issue_share": s, "slot_share": sum(phi for _, phi in shapes) / len(shapes)},
                    "launch floors and idle CTA slots: N launch floors replaced by one, the merged grid fills the "
                    "slots the launches left idle (independent launches, host source)")


def source_flow(profile: KernelProfile, min_sites: int = 1) -> HostFlow | None:
    """How the host-side launches of ``profile``'s kernel relate (rewrite.host_flow) in the first of the report's
    embedded sources that launches it at least ``min_sites`` times (``kernel<<<`` in the text: a cheap filter
    before the parse); None when no embedded source does or none parses."""
    kernel = profile.name.split("(", 1)[0].strip().rsplit("::", 1)[-1]
    if not kernel:
        return None
    site = re.compile(rf"\b{re.escape(kernel)}\s*<<<")
    for path, text in sorted(profile.source_files.items()):
        if len(site.findall(text)) >= min_sites:
            flow = host_flow(text, path, kernel)
            if flow is not None:
                return flow
    return None


def _global_op(sass: str) -> str:
    """The opcode of a SASS line without its predicate and modifiers (``@P0 LDG.E.128 ...`` -> ``LDG``)."""
    words = sass.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".", 1)[0] if words else ""


def _traffic(profile: KernelProfile) -> tuple[int, int, int, int, int]:
    """(global load L2 sectors, global store L2 sectors, local L2 sectors, global load warp instructions, global
    store warp instructions) of a launch: SourceCounters' memory_l2_theoretical_sectors_global of its LDG/LD and
    STG/ST instructions, memory_l2_theoretical_sectors_local of all (register spills, local arrays, by-value
    parameters copied to the stack), inst_executed."""
    ls = ss = loc = li = si = 0
    for pc in profile.pcs.values():
        op = _global_op(pc.sass)
        loc += pc.l2_sectors_local
        if op in ("LDG", "LD"):
            ls, li = ls + pc.l2_sectors, li + pc.inst_executed
        elif op in ("STG", "ST"):
            ss, si = ss + pc.l2_sectors, si + pc.inst_executed
    return ls, ss, loc, li, si


def chain_fusion_estimate(profiles: list[KernelProfile], flow: HostFlow | None) -> Estimate | None:
    """kernel_merge's estimate for a producer -> consumer chain of launches of one element-wise kernel that each
    fill the GPU and are bound by memory traffic: fusing the chain into one launch keeps the intermediates in
    registers, so only the first launch's global loads and the last launch's global stores remain, and the
    per-thread local traffic (spills, by-value parameters copied to the stack) is paid once instead of N times:

        S = Σ_i (L_i + S_i + X_i) / (L_1 + S_N + mean_i X_i)

    L_i, S_i: launch i's global load and store sectors, X_i its local sectors (SourceCounters' L2 theoretical
    sectors: what the memory instructions request). The launches' time follows their memory traffic (the
    roofline: each launch's memory throughput % of peak, Nsight Compute SpeedOfLight, is above its SM
    throughput %, Williams et al., CACM 2009), so the fused launch takes Σ t_i × its share of the sectors. The
    fused kernel's per-thread local traffic is taken as one launch's (the same code run once per element; the
    op it applies several times per element adds what the profile cannot show). The launch floors saved (N − 1)
    are left out: a launch that fills the GPU for hundreds of microseconds spends well under 1% there.

    Applies only when ``flow`` (rewrite.host_flow) shows a chain — a later launch takes a buffer an earlier one
    passes to a writable pointer — and the kernel is a map from one buffer to another: exactly one const pointer
    parameter (read) and one other pointer parameter (written), every launch the same grid and CTA, and one global
    store per global load executed (element i read and written by the same thread, not a stencil whose threads
    read their neighbours' results, which a fusion could not keep in registers). Assumes no other code reads the
    intermediate buffers. None otherwise. Raises nothing.
    """
    if flow is None or flow.kind != "chain" or len(profiles) < 2:
        return None
    if flow.params.count("read") != 1 or flow.params.count("write") != 1:
        return None
    facts = [p.launch for p in profiles]
    if any(f.waves_per_sm < 1.0 or f.duration_ns <= 0 for f in facts):
        return None
    if len({(f.grid, f.block) for f in facts}) != 1:
        return None
    if any(f.throughput_pct.get("memory", 0.0) <= f.throughput_pct.get("sm", 0.0) for f in facts):
        return None
    traffic = [_traffic(p) for p in profiles]
    if any(ls <= 0 or ss <= 0 or li != si for ls, ss, _, li, si in traffic):
        return None
    before = float(sum(ls + ss + loc for ls, ss, loc, _, _ in traffic))
    local = sum(t[2] for t in traffic) / len(traffic)
    after = float(traffic[0][0] + traffic[-1][1] + local)
    if after >= before:
        return None
    total = sum(f.duration_ns for f in facts)
    return Estimate(before / after, "sum_i(L_i+S_i+X_i)/(L_1+S_N+mean X), L/S/X = global load/store, local sectors",
                    {"sum_t_ns": total, "sectors_before": before, "sectors_after": after, "local_sectors": local,
                     "launches": float(len(facts)), "full_launches": float(len(facts))},
                    "fusion of a producer-consumer chain: intermediates stay in registers (roofline: time ~ traffic)")


def steps_fusion_estimate(profiles: list[KernelProfile], flow: HostFlow | None) -> Estimate | None:
    """kernel_merge's estimate for N launches of one kernel that step the same data (``flow.kind == "steps"``:
    a host loop passing its counter and otherwise the same variables, or its counter and two buffers it
    exchanges: rewrite.host_flow; a loop that stops on device results read back is "convergence", not steps),
    each filling the GPU and bound by memory traffic. Run inside one launch that keeps each element's (or each
    CTA's) state on chip between steps, the data crosses L2/DRAM once instead of N times while every step's SM
    work stays:

        S = Σ_i t_i / max(Σ_i t_i σ_i, min_i t_i)

    t_i: launch i's duration; σ_i: its SM throughput share of peak (SpeedOfLight "SM throughput"), so Σ t_i σ_i
    is the time the steps' instructions keep the SMs busy (a fused kernel issues no more of them: its global
    loads and stores between steps go); min_i t_i: one pass over the data, at least as long as one launch's
    memory time (the roofline: time follows the larger of the memory and SM work, Williams et al., CACM 2009).
    Conservative where the steps' SM throughput counts the memory instructions the fusion removes.

    Applies only when every launch fills the GPU (≥ 1 wave), all share one grid and CTA, take about the same time
    (the longest under twice the shortest: steps of the same pass over the same data; launches whose durations
    differ more do different work — a BFS level's frontier, a solver's shrinking active set — and the shortest of
    them is no pass over the data, so Σ t / min t would count the many short launches as savings: holdout13's
    bfs_levels_powerlaw, 29 level launches of 4.8 us to 1.31 ms, got 67x for a fix that measured 3.65x), and their
    time is the memory's: each launch memory bound (memory throughput % above SM throughput %), or most of the
    launches' warp samples (≥ 50%) waiting on memory (``long_scoreboard``: L1TEX global/local results, Nsight Compute
    stall reasons), the latency-bound form of the same traffic. The fusion is valid only while each step's dependence
    stays inside a thread or a CTA; the profile cannot check that, the advice says so. None otherwise. Raises
    nothing."""
    if flow is None or flow.kind != "steps" or len(profiles) < 2:
        return None
    facts = [p.launch for p in profiles]
    if any(f.waves_per_sm < 1.0 or f.duration_ns <= 0 for f in facts):
        return None
    if len({(f.grid, f.block) for f in facts}) != 1:
        return None
    if max(f.duration_ns for f in facts) >= STEPS_SAME_WORK * min(f.duration_ns for f in facts):
        return None
    bound = all(f.throughput_pct.get("memory", 0.0) > f.throughput_pct.get("sm", 0.0) for f in facts)
    if not bound and _stall_share(profiles, "long_scoreboard") < 0.5:
        return None
    total = sum(f.duration_ns for f in facts)
    sm_work = sum(f.duration_ns * f.throughput_pct.get("sm", 0.0) / 100.0 for f in facts)
    one = min(f.duration_ns for f in facts)
    after = max(sm_work, one)
    if after >= total:
        return None
    return Estimate(total / after, "sum_t_ns/max(sum_i t_i*sm_i, min_i t_i), sm_i = SM throughput share",
                    {"sum_t_ns": total, "sm_work_ns": sm_work, "one_pass_ns": one,
                     "launches": float(len(facts)), "full_launches": float(len(facts))},
                    "fusion of steps over the same data: one pass of traffic, every step's SM work (roofline)")


def _merge_advice(launches: list[tuple[KernelProfile, AdviceReport]], est: Estimate,
                  found: Advice | None, flow: HostFlow | None = None) -> Advice:
    """The kernel_merge Advice of ``launches`` with the launch-floor estimate ``est`` (:func:`merge_estimate`);
    ``found``: the time-weighted instruction-fetch finding of the same optimizer, whose hotspots it keeps;
    ``flow``: the host source's verdict the small-launch estimate rests on (named in the hint)."""
    first = launches[0][1]
    n = int(est.inputs["launches"])
    small = n - int(est.inputs["full_launches"])
    if "sm_work_ns" in est.inputs:
        i = est.inputs
        said = f" ({flow.reason})" if flow is not None else ""
        hint = (f"{n} launches of this kernel step the same data{said}: run the steps inside one launch, keeping "
                "each element's (or each CTA's) state in registers or shared memory between steps, so the data "
                f"crosses L2/DRAM once instead of {n} times. Valid while each step's dependence stays inside a "
                "thread or a CTA (a step that reads other CTAs' results needs a grid-wide sync: a cooperative "
                "launch)")
        basis = (f"{n} launches spent on memory traffic or its latency, sum t = {i['sum_t_ns'] / 1000:.1f} us; "
                 f"fused: the longer of one pass over the data (the shortest launch, {i['one_pass_ns'] / 1000:.1f} "
                 f"us) and every step's SM work (sum t_i x SM throughput = {i['sm_work_ns'] / 1000:.1f} us)")
    elif "sectors_after" in est.inputs:
        i = est.inputs
        said = f" ({flow.reason})" if flow is not None else ""
        hint = (f"{n} launches of this element-wise kernel form a chain, each reading what the one before wrote"
                f"{said}: fuse the steps into one launch (apply every op to an element in registers) so only the "
                "first input is read and the last output written. Assumes nothing else reads the intermediate "
                "buffers")
        basis = (f"{n} memory-bound launches request {i['sectors_before']:,.0f} L2 sectors (global and local); "
                 "fused, the first launch's loads, the last one's stores and one launch's local traffic remain: "
                 f"{i['sectors_after']:,.0f} sectors, in about that share of sum t = {i['sum_t_ns'] / 1000:.1f} us")
    elif "f_M_ns" in est.inputs:
        i = est.inputs
        said = f" ({flow.reason}, line {flow.line})" if flow is not None else ""
        hint = (f"{n} launches of this kernel, none filling the GPU (they hold {i['slot_share']:.1%} of its CTA "
                f"slots on average), each paying a launch floor of about {i['sum_f_ns'] / n / 1000:.1f} us: merge "
                "them into one launch over all the work (a grid dimension or a table of the launches' inputs; "
                "select each CTA's inputs with a computed pointer or from a table in global or constant memory: "
                "indexing an array inside a by-value parameter with a run-time index makes every thread copy the "
                "parameter to local memory). "
                f"Assumes the launches are independent, so their CTAs can share one grid{said}")
        basis = (f"{n} launches, sum t = {i['sum_t_ns'] / 1000:.1f} us = {i['sum_f_ns'] / 1000:.1f} us of launch "
                 f"floors + {i['sum_b_ns'] / 1000:.1f} us of CTA work on {i['slot_share']:.1%} of the CTA slots -> "
                 f"one {i['f_M_ns'] / 1000:.2f} us floor + {i['W_ns'] / 1000:.2f} us of that work on the filled "
                 f"slots (while issue slots are free: {i['issue_share']:.1%} of the samples issued); "
                 f"{i['S_floors']:.2f}x from the floors alone")
    else:
        unit = "warp instructions" if est.inputs.get("work_in_instructions") else "threads"
        hint = (f"{n} launches of this kernel, {small} of them too small to fill the GPU (under one wave of CTAs), "
                f"each paying a launch floor of about {est.inputs['t_floor_ns'] / 1000:.1f} us besides its work: "
                "merge them into one launch over all the work (a table of the inputs, as multi-tensor launches do)")
        basis = (f"{n} launches, {small} under one wave: sum t = {est.inputs['sum_t_ns'] / 1000:.1f} us -> "
                 f"{est.inputs['W']:,.0f} {unit} at {est.inputs['r_ns'] * 1000:.2f} ps each past the floor "
                 f"(the rate of the launches with a full wave) + one {est.inputs['t_floor_ns'] / 1000:.1f} us floor")
    per = [LaunchEstimate(launch=p.launch_index, duration_ns=p.launch.duration_ns, samples=rep.total,
                          speedup=est.speedup, grid=p.launch.grid, block=p.launch.block) for p, rep in launches]
    scope = first.kernel_scope or Scope("kernel", function=first.mangled, name=f"kernel {first.kernel}")
    if found is not None:
        return replace(found, estimate=est, hint=hint, basis=basis, launches=per, matched_samples=0.0, share=0.0,
                       matched={}, interval=None, upper_bound=False, cap=None)
    return Advice(optimizer="kernel_merge", kernel=first.kernel, scope=scope, matched_samples=0.0, share=0.0,
                  estimate=est, hint=hint, samples=sum(rep.total for _, rep in launches), launches=per, basis=basis)


def combine(launches: list[tuple[KernelProfile, AdviceReport]]) -> AdviceReport:
    """The kernel-level AdviceReport of several launches of one kernel (module docstring's rule).

    ``launches``: (profile, per-launch report) pairs in report order; their ``candidates`` (capped, not yet
    grouped) are combined per optimizer, filtered by MIN_SPEEDUP and ranked once. One launch: its own report.
    Raises ValueError for an empty list.
    """
    if not launches:
        raise ValueError("no launches to combine")
    if len(launches) == 1:
        return launches[0][1]
    t = [max(weight(p), 1e-9) for p, _ in launches]
    total_t = sum(t)
    by_opt: dict[str, list[tuple[int, Advice]]] = defaultdict(list)
    for i, (_, rep) in enumerate(launches):
        for a in rep.candidates:
            by_opt[a.optimizer].append((i, a))
    total_samples = sum(rep.total for _, rep in launches)
    timed = [p.launch.duration_ns > 0 for p, _ in launches]  # what weight() returned: the unit of t_i
    t_unit = ("= launch i's duration in ns" if all(timed) else "= launch i's warp samples (no durations)"
              if not any(timed) else "= launch i's duration in ns, or its warp samples where it has none")
    combined: list[Advice] = []
    for items in by_opt.values():
        s_i = [1.0] * len(launches)
        lo_i = [1.0] * len(launches)
        hi_i = [1.0] * len(launches)
        for i, a in items:
            s_i[i] = a.estimated_speedup
            lo, hi = a.interval or (a.estimated_speedup, a.estimated_speedup)
            lo_i[i], hi_i[i] = lo, hi
        s = total_t / sum(ti / si for ti, si in zip(t, s_i, strict=True))
        i_best, best = max(items, key=lambda ia: t[ia[0]] * (1 - 1 / ia[1].estimated_speedup))
        # a launch-shape basis names one launch's facts: say which
        basis = (f"{best.basis} (launch {'.'.join(map(str, launches[i_best][0].launch_index))})"
                 if best.basis else "")
        inputs = {f"t{i}": ti for i, ti in enumerate(t)} | {f"S{i}": si for i, si in enumerate(s_i)}
        est = Estimate(s, f"sum_i t_i / sum_i (t_i/S_i) over launches, t_i {t_unit}", inputs,
                       f"time-weighted over {len(launches)} launches of {best.estimate.equation}")
        matched: dict[tuple[str, int | None, int], float] = defaultdict(float)
        for _, a in items:
            for k, v in a.matched.items():
                matched[k] += v
        m = sum(a.matched_samples for _, a in items)
        per = [LaunchEstimate(launch=p.launch_index, duration_ns=p.launch.duration_ns, samples=rep.total,
                              speedup=s_i[i], grid=p.launch.grid, block=p.launch.block)
               for i, (p, rep) in enumerate(launches)]
        merged = replace(best, estimate=est, matched_samples=m, share=m / total_samples if total_samples else 0.0,
                         samples=total_samples, launches=per, alternatives=[], matched=dict(matched), basis=basis,
                         upper_bound=any(a.upper_bound for _, a in items),
                         interval=(total_t / sum(ti / x for ti, x in zip(t, lo_i, strict=True)),
                                   total_t / sum(ti / x for ti, x in zip(t, hi_i, strict=True))))
        combined.append(merged)
    profiles = [p for p, _ in launches]
    # the host source is parsed only for the small-launch model (every launch under one wave)
    flow = None
    if len(profiles) > 1 and all(0 < p.launch.waves_per_sm < 1.0 for p in profiles):
        flow = source_flow(profiles[0])
    elif len(profiles) > 1 and all(p.launch.waves_per_sm >= 1.0 for p in profiles):
        flow = source_flow(profiles[0])  # a chain (two launch sites) or steps (one site in a loop)
    merge = (merge_estimate(profiles, flow) or chain_fusion_estimate(profiles, flow)
             or steps_fusion_estimate(profiles, flow))
    if merge is not None:
        found = next((a for a in combined if a.optimizer == "kernel_merge"), None)
        combined = [a for a in combined if a.optimizer != "kernel_merge"]
        combined.append(_merge_advice(launches, merge, found, flow))
    first = launches[0][1]
    longest = max(range(len(launches)), key=lambda i: t[i])
    out = AdviceReport(kernel=first.kernel, mangled=first.mangled, arch=first.arch, total=total_samples,
                       latency=sum(r.latency for _, r in launches), active=sum(r.active for _, r in launches),
                       kernel_scope=first.kernel_scope, bound=launches[longest][1].bound, launches=len(launches))
    from warpwise.analysis.advice.advise import explain_bound, merge_launch_notes

    out.notes = merge_launch_notes([(p.launch_index, rep.notes, rep.few_samples) for p, rep in launches])
    for _, rep in launches:
        out.skipped.extend(s for s in rep.skipped if s.optimizer not in by_opt and
                           (merge is None or s.optimizer != "kernel_merge") and
                           all(s.optimizer != x.optimizer for x in out.skipped))
    kept = []
    for a in combined:
        low = filters.below_minimum(a)
        if low is not None:
            out.skipped.append(low)
        else:
            kept.append(a)
    out.candidates = list(kept)
    # intervals are already combined: order() recomputes them from the summed samples only when missing
    out.advice = rk.order(kept, total_samples, keep_intervals=True)
    explain_bound(out.advice, out.bound)
    return out
