"""GPA's performance estimators (Zhou et al., CGO'21, §5.2, equations 2–10).

Notation (all in warp samples of one kernel launch): T = all samples, L = latency (not-issued) samples,
A = T − L active (issued) samples, M = matched samples, M_L = matched latency samples.

Reading of the garbled PDF, checked against GPA's released estimators (HPCToolkit
``GPUEstimator.cpp``: SequentialGPUEstimator, SequentialLatencyGPUEstimator, ParallelGPUEstimator):

- eq. 2 (stall elimination): S_e = T / (T − M)
- eq. 3 (latency hiding, naive): S_h = T / (T − M_L)
- eq. 4 (latency hiding): S_h = T / (T − min(A, M_L)); Theorem 5.1: S_h ≤ 2 whenever M_L ≤ L
- eq. 5 (scoped latency hiding): S_hl = T / (T − min(Σ_{l' ∈ nested(l)} A_l', M_Ll))
- eq. 6: C_W = W_new / W (change of active warps per scheduler)
- eq. 7: C_I = I_new / I (change of a scheduler's issue rate)
- eq. 8/9: I = 1 − (1 − R_I)^W, I_new = 1 − (1 − R_I)^W_new, R_I = ratio of issued samples of a warp
- eq. 10: S_p = C_W × C_I × f.

Eq. 10 as printed multiplies two factors that the text says are both below one for block increase, which
would be a slowdown. GPA's released code computes block increase as 1 / (C_W × (I / I_new) × f'), i.e.
the *work* per scheduler shrinks by C_W while its issue rate shrinks by C_I. warpwise therefore writes eqs.
6-10 as one whole-GPU throughput ratio (:func:`launch_shape_speedup`): the issue rate summed over the busy
schedulers, before and after, times the change of work; with the busy schedulers unchanged it is eq. 7's C_I,
with the same warps spread over more schedulers it is GPA's released C_work × C_I.
"""

from __future__ import annotations

from collections.abc import Callable

from warpwise.analysis.advice.model import Estimate

#: GPA Theorem 5.1: latency hiding never more than doubles performance.
LATENCY_HIDING_BOUND = 2.0


class EstimateError(ValueError):
    """Inputs outside an estimator's domain (negative samples, M ≥ T, W ≤ 0, R_I outside [0, 1])."""


def _check_samples(**values: float) -> None:
    for k, v in values.items():
        if v < 0:
            raise EstimateError(f"{k} = {v} samples is negative")


def stall_elimination(total: float, matched: float) -> Estimate:
    """GPA eq. 2: S_e = T / (T − M), all ``matched`` samples removed.

    ``total`` T and ``matched`` M in samples, 0 ≤ M < T. Raises EstimateError otherwise.
    """
    _check_samples(T=total, M=matched)
    if matched >= total:
        raise EstimateError(f"matched samples M = {matched} must be below the total T = {total}")
    return Estimate(total / (total - matched), "T/(T-M)", {"T": total, "M": matched}, "GPA eq. 2")


def work_removal(total: float, matched: float, barrier: float = 0.0) -> Estimate:
    """GPA eq. 2 for a fix that deletes the same share of every warp's work, with the barrier waits it
    shortens: S = (T − B) / (T − B − M).

    ``total`` T, ``matched`` M (samples on the deleted instructions and the stalls waiting on them),
    ``barrier`` B (samples of warps waiting at a block barrier, not in M). A warp waits at a barrier for the
    slowest warp of its block; when the fix removes the share M / (T − B) of each warp's work, every phase
    between barriers, and with it the wait at its end, shrinks by that share (a warpwise reading of GPA §5.2:
    eq. 2 with the synchronization samples scaled, not removed). With B = 0 this is eq. 2. Raises
    EstimateError for negative inputs or M ≥ T − B.
    """
    _check_samples(T=total, M=matched, B=barrier)
    if matched >= total - barrier:
        raise EstimateError(f"matched samples M = {matched} must be below T − B = {total - barrier}")
    if barrier <= 0:
        return stall_elimination(total, matched)
    return Estimate((total - barrier) / (total - barrier - matched), "(T-B)/(T-B-M)",
                    {"T": total, "M": matched, "B": barrier}, "GPA eq. 2, barrier waits scaled")


def latency_hiding(total: float, active: float, matched_latency: float, latency: float | None = None) -> Estimate:
    """GPA eq. 4: S_h = T / (T − min(A, M_L)); the hidden latency cannot exceed the active samples that
    could fill the stall slots.

    ``total`` T, ``active`` A (samples available to fill, kernel-wide or in scope), ``matched_latency``
    M_L. ``latency`` L (the kernel's latency samples), when given, is checked: M_L ≤ L makes the result
    ≤ 2 (Theorem 5.1), which is asserted. Raises EstimateError for negative inputs or A ≥ T with M_L > 0
    in a way that would divide by zero.
    """
    _check_samples(T=total, A=active, M_L=matched_latency)
    hidden = min(active, matched_latency)
    if hidden >= total:
        raise EstimateError(f"hidden samples {hidden} must be below the total T = {total}")
    s = total / (total - hidden)
    inputs = {"T": total, "A": active, "M_L": matched_latency}
    if latency is not None:
        if matched_latency > latency + 1e-6:
            raise EstimateError(f"matched latency samples M_L = {matched_latency} exceed L = {latency}")
        inputs["L"] = latency
        assert s <= LATENCY_HIDING_BOUND + 1e-9, f"Theorem 5.1 violated: {s} > 2 for {inputs}"
    return Estimate(s, "T/(T-min(A,M_L))", inputs, "GPA eq. 4")


def scoped_latency_hiding(total: float, nested_active: list[float], matched_latency: float,
                          latency: float | None = None) -> Estimate:
    """GPA eq. 5: S_hl = T / (T − min(Σ_{l' ∈ nested(l)} A_l', M_Ll)) for a loop or function scope l.

    ``nested_active``: active samples of l itself and of each scope nested in it (A_l'); their sum is the
    instructions that code motion inside l can use to hide l's matched latency ``matched_latency`` M_Ll.
    """
    _check_samples(T=total, M_Ll=matched_latency)
    for a in nested_active:
        _check_samples(A_l=a)
    a_sum = float(sum(nested_active))
    e = latency_hiding(total, a_sum, matched_latency, latency)
    inputs = {"T": total, "A_nested": a_sum, "M_Ll": matched_latency}
    if latency is not None:
        inputs["L"] = latency
    return Estimate(e.speedup, "T/(T-min(A_nested,M_Ll))", inputs, "GPA eq. 5")


def combine_latency_regions(total: float, active: float, hidden_per_region: list[float],
                            latency: float | None = None) -> Estimate:
    """Optimizer-level latency-hiding estimate over disjoint regions (GPA's released
    SequentialLatencyGPUEstimator): S = T / (T − min(A, Σ_l min(A_l, M_Ll))).

    ``hidden_per_region``: min(A_l, M_Ll) of each region (samples). Bounded by 2 (Theorem 5.1) when the
    regions' matched latency samples sum to at most L.
    """
    hidden = float(sum(hidden_per_region))
    e = latency_hiding(total, active, hidden, latency)
    inputs = {"T": total, "A": active, "H": hidden}
    if latency is not None:
        inputs["L"] = latency
    return Estimate(e.speedup, "T/(T-min(A,H)), H=sum_l min(A_l,M_Ll)", inputs, "GPA eqs. 4-5")


def issue_rate(r_i: float, warps: float) -> float:
    """GPA eq. 8/9: I = 1 − (1 − R_I)^W, the probability that a scheduler with ``warps`` W warps, each
    issuing with probability ``r_i`` R_I, issues in a cycle. Raises EstimateError for R_I ∉ [0, 1] or W ≤ 0.
    """
    if not 0.0 <= r_i <= 1.0:
        raise EstimateError(f"issue ratio R_I = {r_i} is outside [0, 1]")
    if warps <= 0:
        raise EstimateError(f"warps per scheduler W = {warps} must be positive")
    return 1.0 - (1.0 - r_i) ** warps


def scheduler_throughput(r_i: float, busy_sms: float, warps_per_sm: float, schedulers: int) -> float:
    """Warp instructions issued per cycle on the whole GPU: Σ over busy schedulers of I(W) (GPA eq. 8/9).

    ``busy_sms`` SMs hold ``warps_per_sm`` warps each (a mean; fractional values are allowed), spread evenly
    over their ``schedulers``; with fewer warps than schedulers each busy scheduler holds one warp.
    """
    if busy_sms <= 0 or warps_per_sm <= 0:
        raise EstimateError(f"no warps to issue ({busy_sms} busy SMs, {warps_per_sm} warps per SM)")
    per_sched = warps_per_sm / schedulers
    if per_sched >= 1.0:
        return busy_sms * schedulers * issue_rate(r_i, per_sched)
    return busy_sms * warps_per_sm * issue_rate(r_i, 1.0)


def launch_shape_speedup(r_i: float, old: tuple[float, float], new: tuple[float, float], schedulers: int,
                         work_ratio: float = 1.0) -> Estimate:
    """GPA eqs. 6–10 written as a whole-GPU throughput ratio, for optimizers that change the launch shape.

    ``old``/``new``: (busy SMs, warps per busy SM) before and after the change; ``work_ratio``: warp
    instructions after / before for the same work (< 1 when small CTAs waste SIMT lanes and the change
    fills them: 0.5 for 16-thread CTAs made whole warps). S = (P_new / P_old) / work_ratio with
    P = Σ_schedulers I(W) (:func:`scheduler_throughput`). With busy SMs unchanged this is eq. 7's C_I; with
    the same warps spread over more SMs it is eq. 10's C_work × C_I (the work per scheduler shrinks by C_W).
    """
    if work_ratio <= 0:
        raise EstimateError(f"work ratio {work_ratio} must be positive")
    p_old = scheduler_throughput(r_i, old[0], old[1], schedulers)
    p_new = scheduler_throughput(r_i, new[0], new[1], schedulers)
    s = p_new / p_old / work_ratio
    inputs = {"R_I": r_i, "SMs": old[0], "W_SM": old[1], "SMs_new": new[0], "W_SM_new": new[1],
              "P": p_old, "P_new": p_new, "work": work_ratio}
    formula = "(P_new/P)/work, P=sum_sched 1-(1-R_I)^W" + ("" if work_ratio == 1.0 else ", work=lanes/lanes_new")
    return Estimate(s, formula, inputs, "GPA eqs. 6-10")


def loaded_launch_shape_speedup(r_i: float, old: tuple[float, float], new: tuple[float, float], schedulers: int,
                                work_ratio: float, dram_pct: float, memory_share: float,
                                latency_factor: Callable[[float], float]) -> Estimate:
    """:func:`launch_shape_speedup` with the DRAM latency the new shape's traffic causes: the same bytes in 1/S
    of the time put DRAM at ``dram_pct`` × S % of peak, where a load waits ``latency_factor(pct)`` times its
    unloaded latency (analysis/arch/roofline.dram_latency_factor, measured on the H200), so each warp's time
    grows by 1 + m(λ − 1), m = ``memory_share`` (the share of samples waiting on global loads), and its issue
    rate falls to R_I / (1 + m(λ − 1)). Solved as a fixed point (S and λ depend on each other; 8 rounds, the
    change in S is below 0.1% after 3-4 on the benchmark). GPA eqs. 6–10 assume R_I does not change with the
    shape; this is a warpwise extension (Little's law with a load-dependent latency). Equal to
    :func:`launch_shape_speedup` when ``memory_share`` or ``dram_pct`` is 0.
    """
    base = launch_shape_speedup(r_i, old, new, schedulers, work_ratio)
    if memory_share <= 0 or dram_pct <= 0:
        return base
    p_old = scheduler_throughput(r_i, old[0], old[1], schedulers)
    s, lam = base.speedup, 1.0
    for _ in range(8):
        lam = max(1.0, latency_factor(dram_pct * s))
        r_new = r_i / (1.0 + memory_share * (lam - 1.0))
        s = scheduler_throughput(r_new, new[0], new[1], schedulers) / p_old / work_ratio
    if s >= base.speedup * 0.995:
        return base
    inputs = {**base.inputs, "dram_pct": dram_pct, "m_mem": memory_share, "lambda": lam}
    return Estimate(s, f"{base.formula}, R_I_new=R_I/(1+m(lambda-1)), lambda=L_DRAM(dram_pct*S)/L_DRAM(0)",
                    inputs, "GPA eqs. 6-10, DRAM latency under load")


def memory_parallelism_speedup(parts: list[tuple[float, float]], dram_pct: float = 0.0,
                               latency_factor: Callable[[float], float] | None = None) -> tuple[float, float]:
    """Little's law for a fix that puts k times more of a loop's loads in flight (unrolling): each loop's
    global-memory wait, the share f of the samples, shrinks to f·λ/k, so S = 1 / (1 − Σ_l f_l (1 − λ/k_l)).
    ``parts``: (f_l, k_l) per loop; λ = ``latency_factor``(``dram_pct`` × S): the same DRAM bytes in 1/S of the
    time load DRAM S times more, where a load waits longer (analysis/arch/roofline.dram_latency_factor; 1
    without a factor or DRAM traffic). Solved as a fixed point (8 rounds). Returns (S, λ); raises EstimateError
    when Σ f_l (1 − 1/k_l) ≥ 1."""
    saved = sum(f * (1 - 1 / k) for f, k in parts)
    if saved >= 1:
        raise EstimateError(f"the loops' load shares {parts} leave no time")
    s, lam = 1 / (1 - saved), 1.0
    if latency_factor is None or dram_pct <= 0:
        return s, lam
    for _ in range(8):
        lam = max(1.0, latency_factor(dram_pct * s))
        s = 1 / (1 - sum(f * (1 - min(1.0, lam / k)) for f, k in parts))
    return s, lam

