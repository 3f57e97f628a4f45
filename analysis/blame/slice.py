"""Backward slicing within a function over the CFG (GPA §4 "Backward slicing").

For each register a stalled instruction *j* uses (general, uniform, predicate, or virtual barrier
``SBi``), walk backwards along every CFG path until the union P of the guards of the defs found on that
path covers j's guard (GPA: "P contains p′ iff p′ ∈ P or _ ∈ P"; Pi ∪ !Pi = _). Each def found is an
immediate dependency source, with the shortest def→use distance in issue cycles.

Walking every path from every use is quadratic on large functions, so for unpredicated uses the walk
beyond j's own block is answered from a per-register summary computed once per function (a reaching-
definitions fixpoint where a block stops the walk when its own defs cover an unpredicated use). A def
stops propagating once it is farther than its latency upper bound (the latency rule would cut it at every
use beyond that point): surviving edges are unchanged, the cost is linear on every CFG shape, and the
``cut_*`` counters count only the candidates the search met (defs dropped that way are not counted). The
summary is exact for per-block coverage; a path on which coverage needs defs from two different blocks
(``@P0`` in one, ``@!P0`` in another) continues past them, so it may report a few more (older) sources
than the per-path walk. Predicated uses not covered in their own block use the exact per-path walk
(cheapest-first by cycles; each (block, scan end, P) state once).
"""

from __future__ import annotations

import bisect
import heapq
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import networkx as nx
from warpwise.analysis.blame.operands import DefUse, function_def_use
from warpwise.analysis.program.model import ProgramFunction

UNPREDICATED = "_"
_EMPTY: dict[int, tuple[int, int]] = {}  # read-only stand-in for "no reaching defs"

#: The exact per-path walk (predicated uses) stops a path after this many issue cycles: a def further
#: away on every path is cut by the latency rule anyway (the largest upper bound in
#: analysis/arch/latency.py is 2000 cycles). Only CALL defs, which that rule spares, can be missed.
SEARCH_LIMIT_CYCLES = 2000


@dataclass(slots=True)
class Dep:
    """One def→use dependency found by slicing.

    ``def_index``/``use_index``: positions in the function's instruction list. ``operands``: registers
    it flows through. ``cycles``: issue cycles on the shortest path (sum of stall counts from the def up
    to, not including, the use); ``instructions``: instruction count of that path (def→next = 1).
    ``war``: flows through a *read* barrier the def set (write-after-read dependency).
    """

    def_index: int
    use_index: int
    operands: set[str] = field(default_factory=set)
    cycles: int = 0
    instructions: int = 0
    war: bool = False


def covers(preds: frozenset[str], guard: str | None) -> bool:
    """Whether the union of def guards ``preds`` covers the use guard (None = unpredicated, GPA's ``_``)."""
    if UNPREDICATED in preds:
        return True
    if guard is not None and guard in preds:
        return True
    for p in preds:
        comp = p[1:] if p.startswith("!") else "!" + p
        if comp in preds:
            return True
    return False


class FunctionIndex:
    """Per-function tables the slicer and pruning rules need (built once per function).

    ``du``: def/use of each instruction; ``block``: block start of each instruction; ``first``/``end``:
    first index / one-past-last index of each block; ``cum``: prefix sums of issue cycles
    (max(1, stall) per instruction) so a straight-line distance is ``cum[b] - cum[a]``.
    """

    def __init__(self, pf: ProgramFunction, arch: str | None = None) -> None:
        self.pf = pf
        self.arch = arch
        self.ins = pf.instructions
        self.index = {i.offset: k for k, i in enumerate(self.ins)}
        self.du: list[DefUse] = function_def_use(pf)
        block: list[int] = [0] * len(self.ins)
        self.block = block
        self.first: dict[int, int] = {}
        self.end: dict[int, int] = {}
        index = self.index
        spans: list[tuple[int, int, int]] = []
        for start, b in pf.blocks.items():
            a = index[b.instructions[0].offset]
            e = a + len(b.instructions)
            self.first[start], self.end[start] = a, e
            block[a:e] = [start] * (e - a)
            spans.append((start, a, e))
        cum = [0]
        t = 0
        for i in self.ins:
            st = i.control.stall
            t += st if st > 1 else 1
            cum.append(t)
        self.cum = cum
        defs: defaultdict[tuple[int, str], list[int]] = defaultdict(list)
        calls: defaultdict[int, list[int]] = defaultdict(list)
        users: defaultdict[tuple[int, str], list[int]] = defaultdict(list)
        du = self.du
        if sum(e - a for _, a, e in spans) != len(du):  # blocks that do not cover every instruction
            spans = [(block[k], k, k + 1) for k in range(len(du))]
        for b, a, e in sorted(spans, key=lambda s: s[1]):  # instruction order: every list stays ascending
            for k in range(a, e):
                d = du[k]
                if d.clobbers_all:
                    calls[b].append(k)
                for r in d.defs:
                    defs[(b, r)].append(k)
                if d.guard is None:
                    for r in d.uses:
                        users[(b, r)].append(k)
        # plain dicts: lookups below must never insert
        self._defs: dict[tuple[int, str], list[int]] = dict(defs)
        self._calls: dict[int, list[int]] = dict(calls)
        self._users: dict[tuple[int, str], list[int]] = dict(users)
        self.preds = {n: list(pf.cfg.predecessors(n)) for n in pf.cfg.nodes}
        self.succs = {n: list(pf.cfg.successors(n)) for n in pf.cfg.nodes}
        self._reach: dict[str, dict[int, dict[int, tuple[int, int]]]] = {}
        self._reach_far: dict[str, dict[int, dict[int, int]]] = {}
        self._bound: list[float] | None = None
        self._limits: dict[str, float] = {}
        self._blocks_of: dict[str, set[int]] | None = None
        self._order: list[int] | None = None
        self._rpo: dict[int, int] | None = None
        self._dag_order: list[int] | None = None
        self._dag: dict[int, list[int]] | None = None
        self._longest_cache: dict[int, tuple[dict[int, int], int]] = {}
        self._dag_pos: dict[int, int] = {}
        self._uses_order: dict[frozenset[str], tuple[str, ...]] = {}
        #: per-instruction tables other modules derive from this index once (e.g. prune.opcode_key)
        self.memo: dict[str, object] = {}

    # --- def lookup -------------------------------------------------------------------------------
    def defs_before(self, block: int, end: int, reg: str) -> list[int]:
        """Indices in ``block`` below ``end`` that define ``reg`` (CALLs included), nearest first."""
        a = self._defs.get((block, reg))
        c = self._calls.get(block)
        if not c:
            return a[bisect.bisect_left(a, end) - 1::-1] if a and a[0] < end else []
        out = (a[: bisect.bisect_left(a, end)] if a else []) + c[: bisect.bisect_left(c, end)]
        out.sort(reverse=True)
        return out

    def reaching_defs(self, j: int, reg: str, limit: int) -> tuple[frozenset[int] | None, int]:
        """(indices of the definitions of ``reg`` that reach instruction index ``j``, blocks stepped). A guarded
        definition reaches and lets the earlier ones through (it may not run); an unguarded one or a CALL ends
        its path. The set is None for a register live into the function (a path reaches the entry without a
        definition) or when the walk steps more than ``limit`` blocks. Backward walk over the CFG,
        O(blocks stepped); the search the blame slicer's own ``_sources`` does without its latency bound."""
        out: set[int] = set()
        seen: set[tuple[int, int]] = set()
        work = [(self.block[j], j)]
        steps = 0
        while work:
            key = work.pop()
            if key in seen:
                continue
            seen.add(key)
            steps += 1
            if steps > limit:
                return None, steps
            start, end = key
            covered = False
            for k in self.defs_before(start, end, reg):
                out.add(k)
                if self.du[k].guard is None or self.du[k].clobbers_all:
                    covered = True
                    break
            if not covered:
                preds = [q for q in self.preds.get(start, []) if q in self.end]
                if not preds:
                    return None, steps
                work += [(q, self.end[q]) for q in preds]
        return frozenset(out), steps

    def unpredicated_users(self, block: int, reg: str, lo: int, hi: int) -> bool:
        """Whether an unpredicated instruction with index in (lo, hi) of ``block`` uses ``reg``."""
        u = self._users.get((block, reg), [])
        k = bisect.bisect_right(u, lo)
        return k < len(u) and u[k] < hi

    # --- slicing ----------------------------------------------------------------------------------
    def slice_use(self, j: int) -> dict[int, Dep]:
        """Immediate dependency sources of instruction ``j`` over all the registers it uses."""
        return self.slice_candidates(j)[0]

    def slice_candidates(self, j: int) -> tuple[dict[int, Dep], int]:
        """(:meth:`slice_use`, number of candidate sources before pruning, capped at 2).

        The count also includes defs the search dropped past their latency bound (see
        :meth:`_reaching_in`), so "exactly one candidate" (GPA Fig. 7's coverage before pruning) is exact."""
        out: dict[int, Dep] = {}
        d = self.du[j]
        guard = d.guard
        du = self.du
        reached: list[str] = []  # registers whose sources came from the block-entry summary
        b = self.block[j]
        defs = None if b in self._calls else self._defs  # the in-block fast path below: blocks without CALL
        cum = self.cum
        cj = cum[j]
        regs = self._uses_order.get(d.uses)  # _sorted_uses, inlined
        if regs is None:
            regs = self._sorted_uses(d.uses)
        for reg in regs:
            sb = reg.startswith("SB")
            srcs: Sequence[tuple[int, int, int]] | None = None
            if defs is not None:
                # the commonest answer of _sources, inlined: the nearest def above j in its block is
                # unpredicated, so it is the only source (it covers every guard)
                a = defs.get((b, reg))
                if a and a[0] < j:
                    k = a[bisect.bisect_left(a, j) - 1]
                    if du[k].guard is None:
                        srcs = ((k, cj - cum[k], j - k),)
            if srcs is None:
                srcs = self._sources(j, reg, guard, reached)
            for k, cyc, n in srcs:
                dep = out.get(k)
                if dep is None:
                    dep = out[k] = Dep(k, j, {reg}, cyc, n)
                else:
                    if cyc < dep.cycles:
                        dep.cycles, dep.instructions = cyc, n
                    dep.operands.add(reg)
                if sb and du[k].read_barrier == reg and du[k].write_barrier != reg:
                    dep.war = True
        if len(out) >= 2 or not reached:
            return out, min(2, len(out))
        # at most one candidate so far: the defs dropped past their bound decide between 1 and 2
        far: set[int] = set(out)
        for reg in reached:
            fb = self._reach_far[reg].get(b)
            if fb:
                far.update(fb)
        return out, min(2, len(far))

    def _sorted_uses(self, uses: frozenset[str]) -> tuple[str, ...]:
        """``uses`` in sorted order (the order slice_candidates visits registers; cached per set)."""
        t = self._uses_order.get(uses)
        if t is None:
            t = self._uses_order[uses] = tuple(sorted(uses))
        return t

    def _sources(self, j: int, reg: str, guard: str | None,
                 reached: list[str] | None = None) -> list[tuple[int, int, int]]:
        """Defs of ``reg`` reaching ``j``: scan j's block; if that does not cover an unpredicated use, take
        the block's reaching-def summary; a predicated use with no cover in its block gets the exact
        per-path search (its guard can stop paths earlier than the summary does). ``reached`` collects the
        registers answered from the summary (whose far sets :meth:`slice_candidates` may need)."""
        b = self.block[j]
        cum, du = self.cum, self.du
        cj = cum[j]
        found: list[tuple[int, int, int]] = []
        ks: Sequence[int]
        if b in self._calls:
            ks = self.defs_before(b, j, reg)
        else:  # defs_before without CALLs, inlined: this runs once per (use, register)
            a = self._defs.get((b, reg))
            ks = a[bisect.bisect_left(a, j) - 1::-1] if a and a[0] < j else ()
        if ks:
            preds: frozenset[str] = frozenset()
            for k in ks:
                found.append((k, cj - cum[k], j - k))
                dk = du[k]
                if dk.clobbers_all or dk.guard is None:
                    return found  # an unpredicated def covers every guard
                preds = preds | {dk.guard}
                if covers(preds, guard):
                    return found
        if guard is not None:
            return self._slice_reg(j, reg, guard)
        f = self.first[b]
        c0, n0 = cj - cum[f], j - f
        rin = self._reaching_in(reg).get(b, _EMPTY)
        if reached is not None:
            reached.append(reg)
        if not found:
            return [(k, c + c0, n + n0) for k, (c, n) in rin.items()]
        best = {k: (c, n) for k, c, n in found}
        for k, (c, n) in rin.items():
            c, n = c + c0, n + n0
            old = best.get(k)
            if old is None or (c, n) < old:
                best[k] = (c, n)
        return [(k, c, n) for k, (c, n) in best.items()]

    def bound(self, k: int) -> float:
        """Issue cycles past which def ``k`` can no longer be a candidate source in another block: its
        latency upper bound on ``arch`` (GPA rule 3, the latency rule, would cut it; analysis/arch/latency.py),
        SEARCH_LIMIT_CYCLES without an arch, unbounded for a CALL (the latency rule spares CALLs)."""
        return self._bounds()[k]

    def _bounds(self) -> list[float]:
        """:meth:`bound` of every instruction (computed once)."""
        if self._bound is None:
            from warpwise.analysis.arch.latency import latency_of

            b: list[float] = []
            for ins, d in zip(self.ins, self.du, strict=True):
                if d.clobbers_all:
                    b.append(float("inf"))
                elif self.arch is None:
                    b.append(float(SEARCH_LIMIT_CYCLES))
                else:
                    b.append(float(latency_of(ins.opcode, self.arch).upper))
            self._bound = b
        return self._bound

    def _def_blocks(self, reg: str) -> set[int]:
        """Blocks with a def of ``reg`` or a CALL (which defines every register)."""
        if self._blocks_of is None:
            by: dict[str, set[int]] = {}
            for (b, r) in self._defs:
                by.setdefault(r, set()).add(b)
            self._blocks_of = by
        own = self._blocks_of.get(reg)
        if not self._calls:
            return own if own is not None else set()  # read-only for the caller
        return (own or set()) | self._calls.keys()

    def _path_limit(self, reg: str) -> float:
        """Issue cycles after which the per-path walk for ``reg`` stops: SEARCH_LIMIT_CYCLES, or less when
        every def of ``reg`` in the function has a smaller latency bound (a def found farther away would be
        cut by the latency rule)."""
        lim = self._limits.get(reg)
        if lim is None:
            if self._calls:
                lim = float(SEARCH_LIMIT_CYCLES)
            else:
                if not self._limits:
                    top: dict[str, float] = {}
                    bnd = self._bounds()
                    for (_b, r), ks in self._defs.items():
                        m = max([bnd[k] for k in ks])
                        if m > top.get(r, 0.0):
                            top[r] = m
                        elif r not in top:
                            top[r] = 0.0
                    self._limits.update({r: min(float(SEARCH_LIMIT_CYCLES), v) for r, v in top.items()})
                lim = self._limits.get(reg, 0.0)
            self._limits[reg] = lim
        return lim

    def _rpo_index(self) -> dict[int, int]:
        """Reverse-postorder position of every block (unreachable blocks after the reachable ones)."""
        if self._rpo is None:
            seen: set[int] = set()
            post: list[int] = []
            for root in [self.pf.entry, *sorted(self.first)]:
                if root in seen:
                    continue
                seen.add(root)
                stack = [(root, iter(self.succs.get(root, ())))]
                while stack:
                    n, it = stack[-1]
                    for x in it:
                        if x not in seen:
                            seen.add(x)
                            stack.append((x, iter(self.succs.get(x, ()))))
                            break
                    else:
                        post.append(n)
                        stack.pop()
            self._rpo = {b: k for k, b in enumerate(reversed(post))}
        return self._rpo

    def _reaching_in(self, reg: str) -> dict[int, dict[int, tuple[int, int]]]:
        """For every block, the defs of ``reg`` that reach its entry along some path on which no def
        covering an unpredicated use (GPA's predicate union) lies in between, each with the shortest
        (cycles, instructions) distance to the block entry (ties: fewer instructions).

        A forward dataflow fixpoint over the blocks in reverse postorder (distances only shrink, so it
        terminates). A def stops propagating once its distance exceeds :meth:`bound`: from there on the
        latency rule cuts it at every use, so dropping it changes no surviving edge, and each block's set
        stays as small as the defs of ``reg`` within their latency of its entry. That keeps the cost linear
        in blocks on every CFG shape (one register redefined in many skippable loops used to make every
        block carry every earlier def: quadratic)."""
        cached = self._reach.get(reg)
        if cached is not None:
            return cached
        bnd = self._bounds()
        cum, first, end, du, succs = self.cum, self.first, self.end, self.du, self.succs
        rpo = self._rpo_index()
        if self._order is None:
            self._order = sorted(self.first, key=rpo.__getitem__)
        order = self._order
        gen: dict[int, tuple[dict[int, tuple[int, int]], dict[int, int], bool]] = {}
        limit = SEARCH_LIMIT_CYCLES
        # sparse: only blocks defining reg (or holding a CALL) generate; others only pass sets along
        defs_of, calls = self._defs, self._calls
        for b in self._def_blocks(reg):
            e = end[b]
            found: dict[int, tuple[int, int]] = {}
            gfar: dict[int, int] = {}
            covered = False
            if b in calls:
                ks = self.defs_before(b, e, reg)
            else:  # defs_before(b, end, reg) of a block without CALL: all its defs, nearest first
                a = defs_of.get((b, reg))
                ks = a[::-1] if a else []
            if ks:
                preds: frozenset[str] = frozenset()
                for k in ks:
                    c = cum[e] - cum[k]
                    if c <= bnd[k]:
                        found[k] = (c, e - k)
                    elif c <= limit:
                        gfar[k] = c
                    dk = du[k]
                    if dk.clobbers_all or dk.guard is None:
                        covered = True  # an unpredicated def covers
                        break
                    preds = preds | {dk.guard}
                    if covers(preds, None):
                        covered = True
                        break
            gen[b] = (found, gfar if len(gfar) <= 2 else _two_nearest(gfar), covered)
        inn: dict[int, dict[int, tuple[int, int]]] = {}
        # the two nearest defs (within SEARCH_LIMIT_CYCLES) per block entry that reach it but were dropped
        # past their bound: enough to tell whether a use has exactly one candidate (slice_candidates)
        inn_far: dict[int, dict[int, int]] = {}
        heap = sorted(rpo[b] for b in gen)
        queued = set(gen)
        # blocks whose entry set changed (or whose own defs were not yet sent) since they were last popped.
        # A block queued only because its far set changed re-sends only that: what it sent of its entry
        # set and its own defs the last time is already in every successor's sets (both merges are joins:
        # per-def minimum, and for far sets "the two nearest of the union"), so re-sending changes nothing.
        dirty = set(gen)
        nothing: tuple[dict[int, tuple[int, int]], dict[int, int], bool] = ({}, {}, False)
        while heap:
            b = order[heapq.heappop(heap)]
            queued.discard(b)
            found, gfar, covered = gen.get(b, nothing)
            if b in dirty:
                dirty.discard(b)
                inb = inn.get(b)
            elif covered:
                continue
            else:
                inb = None
                found = _EMPTY
            ofar = gfar
            lc = cum[end[b]] - cum[first[b]]
            if not covered:
                fin = inn_far.get(b)
                if fin:
                    ofar = dict(gfar)
                    for k, c in fin.items():
                        c += lc
                        if c <= limit and c < ofar.get(k, limit + 1):
                            ofar[k] = c
            if covered or not inb:
                out = found
            else:
                out = dict(found)
                ln = end[b] - first[b]
                for k, (c, n) in inb.items():
                    c += lc
                    if c > bnd[k]:
                        if c <= limit and c < ofar.get(k, limit + 1):
                            if ofar is gfar:
                                ofar = dict(gfar)
                            ofar[k] = c
                        continue
                    if not found:  # a block without defs of reg (most): every entry def is new in out
                        out[k] = (c, n + ln)
                        continue
                    n += ln
                    old = out.get(k)
                    if old is None or (c, n) < old:
                        out[k] = (c, n)
            if len(ofar) > 2:
                ofar = _two_nearest(ofar)
            if not out and not ofar:
                continue
            for s in succs.get(b, ()):
                tgt = inn.get(s)
                if tgt is None:  # first visit: a copy, in out's order
                    inn[s] = dict(out)
                    changed = bool(out)
                else:
                    changed = False
                    for k, cn in out.items():
                        old = tgt.get(k)
                        if old is None or cn < old:
                            tgt[k] = cn
                            changed = True
                if changed:
                    dirty.add(s)
                if ofar:
                    # far sets are never changed in place once stored (copy on write), so they may be shared
                    tf = inn_far.get(s)
                    if tf is None:
                        inn_far[s] = ofar  # every entry of ofar is within the limit, at most two
                        changed = True
                    else:
                        merged = None
                        for k, c in ofar.items():
                            if c < tf.get(k, limit + 1):
                                if merged is None:
                                    merged = dict(tf)
                                merged[k] = c
                        if merged is not None:
                            merged = _two_nearest(merged)
                            if merged != tf:
                                inn_far[s] = merged
                                changed = True
                if changed and s not in queued:
                    heapq.heappush(heap, rpo[s])
                    queued.add(s)
        self._reach[reg] = inn
        self._reach_far[reg] = inn_far
        return inn

    def _slice_reg(self, j: int, reg: str, guard: str | None) -> list[tuple[int, int, int]]:
        found: dict[int, tuple[int, int]] = {}
        limit = self._path_limit(reg)
        bj = self.block[j]
        heap: list[tuple[int, int, int, int, frozenset[str]]] = [(0, 0, bj, j, frozenset())]
        seen: set[tuple[int, int, frozenset[str]]] = set()
        while heap:
            c, n, b, e, preds = heapq.heappop(heap)
            key = (b, e, preds)
            if key in seen:
                continue
            seen.add(key)
            stop = False
            for k in self.defs_before(b, e, reg):
                kc, kn = c + self.cum[e] - self.cum[k], n + e - k
                if k not in found or kc < found[k][0]:
                    found[k] = (kc, kn)
                dk = self.du[k]
                preds = preds | {UNPREDICATED if dk.clobbers_all or dk.guard is None else dk.guard}
                if covers(preds, guard):
                    stop = True
                    break
            if stop:
                continue
            f = self.first[b]
            c2, n2 = c + self.cum[e] - self.cum[f], n + e - f
            if c2 > limit:
                continue
            for p in self.preds.get(b, ()):
                pe = self.end[p]
                if (p, pe, preds) not in seen:
                    heapq.heappush(heap, (c2, n2, p, pe, preds))
        return [(k, c, n) for k, (c, n) in found.items()]

    # --- paths -------------------------------------------------------------------------------------
    def _dag_setup(self) -> None:
        """The CFG without its DFS back edges as successor lists, and a topological order of it: the
        reverse postorder of that same DFS (every edge it keeps goes from a later to an earlier finish)."""
        back, post = _back_edges(self.pf.cfg, self.pf.entry)
        self._dag = {n: [x for x in ss if (n, x) not in back] for n, ss in self.succs.items()}
        self._dag_order = post[::-1]
        self._dag_pos = {b: k for k, b in enumerate(self._dag_order)}

    def longest(self, i: int, j: int, fallback: int) -> int:
        """Instructions on the longest acyclic path from instruction ``i`` to ``j`` (GPA eq. 1 uses the
        longest path per pair). Straight line in one block: ``j - i``. Otherwise the longest path over
        the CFG without its DFS back edges; a loop-carried pair (reachable only through a back edge)
        uses ``fallback`` (the shortest path the slicer found)."""
        bi, bj = self.block[i], self.block[j]
        if bi == bj and i < j:
            return j - i
        if self._dag is None:
            self._dag_setup()
        assert self._dag is not None and self._dag_order is not None
        pos = self._dag_pos
        if pos[bj] <= pos[bi]:
            return fallback  # only reachable through a back edge (loop-carried)
        st = self._longest_cache.get(bi)
        if st is None:
            st = self._longest_cache[bi] = ({s: 0 for s in self._dag[bi]}, pos[bi] + 1)
        best, nxt = st
        # extend the single-source longest-path sweep (topological order) lazily up to bj
        order = self._dag_order
        dag = self._dag
        while nxt <= pos[bj]:
            b = order[nxt]
            nxt += 1
            if b not in best:
                continue
            w = best[b] + self.end[b] - self.first[b]
            for s in dag[b]:
                if best.get(s, -1) < w:
                    best[s] = w
        self._longest_cache[bi] = (best, nxt)
        if bj not in best:
            return fallback
        return (self.end[bi] - i) + best[bj] + (j - self.first[bj])

    def on_every_path(self, i: int, j: int, regs: set[str]) -> bool:
        """GPA's dominator rule test: an unpredicated instruction k ≠ i, j using one of ``regs`` lies on
        every CFG path from ``i`` to ``j``."""
        bi, bj = self.block[i], self.block[j]
        if bi == bj and i < j:  # straight line: unpredicated_users(bi, r, i, j), inlined
            users = self._users
            for r in regs:
                u = users.get((bi, r))
                if u:
                    k = bisect.bisect_right(u, i)
                    if k < len(u) and u[k] < j:
                        return True
            return False
        for r in regs:
            if self.unpredicated_users(bi, r, i, self.end[bi]):
                return True
            if self.unpredicated_users(bj, r, self.first[bj] - 1, j):
                return True
        # blocks strictly between: dominate bj, post-dominate bi, and cut every bi->bj path. Walk bj's
        # dominators up to the first one that also dominates bi (their nearest common dominator): a block
        # above it cannot lie on every bi->bj path without that path repeating it.
        pf = self.pf
        a = pf.idom.get(bj)
        while a is not None and a != bj:
            if a != bi and any((a, r) in self._users for r in regs) and pf.postdominates(a, bi):
                if not self._reaches_avoiding(bi, bj, a):
                    return True
            if pf.dominates(a, bi):
                break
            nxt = pf.idom.get(a)
            if nxt == a:
                break
            a = nxt
        return False

    def _reaches_avoiding(self, src: int, dst: int, avoid: int) -> bool:
        g = self.pf.cfg
        stack = [s for s in g.successors(src) if s != avoid]
        seen: set[int] = set()
        while stack:
            n = stack.pop()
            if n == dst:
                return True
            if n in seen:
                continue
            seen.add(n)
            stack.extend(s for s in g.successors(n) if s != avoid and s not in seen)
        return False


def _two_nearest(far: dict[int, int]) -> dict[int, int]:
    """The two entries with the smallest distances (ties: lower index): two distinct far candidates are as
    good as more for the "exactly one candidate" count, and keeping the nearest keeps the fixpoint exact."""
    if len(far) <= 2:
        return far
    return dict(sorted(far.items(), key=lambda kc: (kc[1], kc[0]))[:2])


def _back_edges(g: nx.DiGraph, entry: int) -> tuple[set[tuple[int, int]], list[int]]:
    """(edges to a node on the DFS stack, the DFS postorder), the DFS from the entry first, then from any
    unvisited node: removing those edges leaves a DAG, and the reversed postorder is a topological order
    of it."""
    state: dict[int, int] = {}  # 1 = on stack, 2 = done
    back: set[tuple[int, int]] = set()
    post: list[int] = []
    for root in [entry, *g.nodes]:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(g.successors(root)))]
        while stack:
            n, it = stack[-1]
            for s in it:
                st = state.get(s)
                if st == 1:
                    back.add((n, s))
                elif st is None:
                    state[s] = 1
                    stack.append((s, iter(g.successors(s))))
                    break
            else:
                state[n] = 2
                post.append(n)
                stack.pop()
    return back, post
