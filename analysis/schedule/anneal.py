"""Simulated annealing over schedules (SIP Alg. 1), with warpwise's additions.

SIP Alg. 1: start at T_max; each step perturbs the current schedule x into x', computes
ΔE = E(x') − E(x), accepts x' if ΔE < 0 (and records it as best if it beats the best), else accepts
it with probability exp(−ΔE / T); then cools T ← T / L; stops when T <= T_min. Energy here is the
candidate's median time divided by the original's (unitless, so temperatures do not depend on the
kernel's duration); a candidate that fails testing has no energy and is never accepted (SIP gives it
a 0 reward). Additions: perturbations are drawn only from statically legal moves, and untried moves
of the current state first; the search stops early when every legal move of the best state has been
evaluated and none improves it (a local optimum, nothing left for a greedy step), or when the
current state has no legal move.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar, cast

S = TypeVar("S")
M = TypeVar("M", bound=Hashable)


# A step whose energy came from the cache costs no GPU time; it advances the iteration-based cooling by
# this fraction of a step, so ``iterations`` counts (mostly) measured schedules and the search still ends.
CACHED_STEP = 0.1


@dataclass(frozen=True)
class AnnealParams:
    """Alg. 1's parameters: ``t_max``, ``t_min`` (unitless, energy is a time ratio) and the cooling
    factor ``cooling`` (L > 1). With ``iterations`` set, L = (t_max/t_min)^(1/iterations) so the
    schedule of temperatures takes exactly that many measured steps (a cached step counts
    :data:`CACHED_STEP`). ``seed`` seeds the move and acceptance
    draws. With ``time_limit`` (seconds) the temperature also follows the elapsed fraction f of that
    time, T = t_max·(t_min/t_max)^f, taking the colder of the two: the search cools over its time
    budget instead of stopping early when steps are fast (cached or rejected candidates)."""

    t_max: float = 0.02
    t_min: float = 0.0005
    cooling: float = 1.03
    iterations: int | None = None
    seed: int = 0
    time_limit: float | None = None

    def factor(self) -> float:
        """The cooling factor L actually used.

        Raises:
            ValueError: t_min >= t_max, non-positive temperatures, L <= 1 or iterations < 1.
        """
        if not 0 < self.t_min < self.t_max:
            raise ValueError(f"need 0 < t_min < t_max, got {self.t_min}, {self.t_max}")
        if self.iterations is not None:
            if self.iterations < 1:
                raise ValueError("iterations must be >= 1")
            return float((self.t_max / self.t_min) ** (1.0 / self.iterations))
        if self.cooling <= 1.0:
            raise ValueError("cooling factor L must be > 1")
        return self.cooling

    def steps(self) -> int:
        """Number of temperature steps from t_max down to t_min."""
        return max(1, math.ceil(math.log(self.t_max / self.t_min) / math.log(self.factor()) - 1e-9))


@dataclass
class Step:
    """One iteration: the move tried, its energy (None = rejected by testing), whether accepted."""

    iteration: int
    temperature: float
    move: Hashable
    energy: float | None
    accepted: bool
    cached: bool


@dataclass
class AnnealResult(Generic[S, M]):
    """Best state, its energy and the moves that lead there from the start; ``stopped``: why it ended
    (``cooled``, ``time limit``, ``no improving move``, ``no legal move``, ``cancelled``)."""

    best: S
    best_energy: float
    best_path: list[M]
    steps: list[Step] = field(default_factory=list)
    stopped: str = "cooled"


def anneal(
    start: S,
    start_energy: float,
    moves: Callable[[S], Sequence[M]],
    apply: Callable[[S, M], S],
    energy: Callable[[S], tuple[float | None, bool]],
    params: AnnealParams,
    key: Callable[[S], Hashable] = lambda s: cast(Hashable, s),
    on_step: Callable[[Step, int], None] | None = None,
    cancel: threading.Event | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> AnnealResult[S, M]:
    """Run SIP Alg. 1 from ``start`` (energy ``start_energy``).

    ``moves(s)``: the legal moves of state s; ``apply(s, m)``: the next state; ``energy(s)``:
    (energy or None when rejected, whether it came from a cache); ``key(s)``: a hashable identity of a
    state; ``on_step(step, total_steps)`` is called after every iteration; setting ``cancel`` stops
    the search after the current iteration; ``clock`` (seconds) measures ``params.time_limit``.
    """
    rng = random.Random(params.seed)
    factor = params.factor()
    total = params.steps()
    path: list[M] = []
    best_path: list[M] = []
    x, ex = start, start_energy
    best, best_e = start, start_energy
    tried: dict[Hashable, dict[M, float | None]] = {}
    result: AnnealResult[S, M] = AnnealResult(best, best_e, best_path)
    t = params.t_max
    it = 0
    t_iter = t
    t0 = clock()
    while t > params.t_min:
        if cancel is not None and cancel.is_set():
            result.stopped = "cancelled"
            break
        legal = list(moves(x))
        if not legal:
            result.stopped = "no legal move"
            break
        seen = tried.setdefault(key(x), {})
        fresh = [m for m in legal if m not in seen]
        if not fresh and x is best and all(e is None or e >= ex for e in seen.values()):
            result.stopped = "no improving move"
            break
        m = rng.choice(fresh or legal)
        x2 = apply(x, m)
        e2, cached = energy(x2)
        seen[m] = e2
        accepted = False
        if e2 is not None:
            de = e2 - ex
            if de < 0 or rng.random() < math.exp(-de / t):
                accepted = True
                x, ex, path = x2, e2, [*path, m]
                if ex < best_e:
                    best, best_e, best_path = x, ex, list(path)
        step = Step(it, t, m, e2, accepted, cached)
        result.steps.append(step)
        it += 1
        if on_step is not None:
            on_step(step, total)
        t_iter /= factor if not cached else factor**CACHED_STEP
        t = t_iter
        if params.time_limit:
            frac = (clock() - t0) / params.time_limit
            t_time = params.t_max * (params.t_min / params.t_max) ** frac
            if t_time < t:
                t = t_time
                if t <= params.t_min:
                    result.stopped = "time limit"
    result.best, result.best_energy, result.best_path = best, best_e, best_path
    return result
