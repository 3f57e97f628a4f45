"""The advice stage's fast paths (issue 15) change cost only: `warpwise advise --format json` on every bundled
example is byte-identical with the straightforward per-edge / per-PC scans they replaced (kept here as the
reference, patched in for the "before" run; per-program tables are recomputed on every request there)."""

from __future__ import annotations

import bisect
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import EXAMPLES
from warpwise.analysis import pipeline
from warpwise.analysis.advice import code, common, latency
from warpwise.analysis.advice import common as cm
from warpwise.analysis.advice.context import KernelView
from warpwise.analysis.binary.model import writes_memory
from warpwise.analysis.program.model import Program, ProgramFunction
from warpwise.server.cli import main

NAMES = ("stencil", "gather", "intdiv", "noinline", "cdp")


def _active_in_loop_scan(self, pf, loop):  # type: ignore[no-untyped-def]
    total = 0
    for (name, off), s in self.profile.pcs.items():
        if self.resolve(name, off) is pf and pf is not None:
            b = pf.block_of(off)
            if b is not None and b.start in loop.blocks:
                total += s.issued
    return float(total)


def _address_registers_after_scan(view, pf, offset):  # type: ignore[no-untyped-def]
    block = pf.block_of(offset)
    if block is None:
        return frozenset()
    regs: set[str] = set()
    for i in block.instructions:
        if i.offset > offset and cm.is_memory(i):
            regs |= cm.address_registers(i)
    return frozenset(regs)


def _hotspots_all_rows(view, evs, weight, n=common.TOP_HOTSPOTS):  # type: ignore[no-untyped-def]
    agg = defaultdict(list)
    for ev in evs:
        agg[(ev.edge.function, ev.edge.def_offset, ev.edge.use_offset)].append(ev)
    rows = []
    for (fn, d, u), group in agg.items():
        w = sum(weight(e) for e in group)
        if w <= 0:
            continue
        by_reason: dict[str, float] = defaultdict(float)
        for e in group:
            by_reason[e.edge.reason] += weight(e)
        reason = max(by_reason, key=lambda r: by_reason[r])
        ev0 = group[0]
        loop = ev0.use_loop
        loop_scope = view.loop_scope(ev0.use_fn, loop) if (loop is not None and ev0.use_fn is not None) else None
        rows.append(common.Hotspot(def_=None if d is None else view.location(fn, d), use=view.location(fn, u),
                                   samples=w, distance=max(e.edge.distance for e in group), reason=reason,
                                   loop=loop_scope))
    rows.sort(key=lambda h: (-h.samples, h.use.pc))
    return rows[:n]


def _instructions_on_scan(view, lines):  # type: ignore[no-untyped-def]
    return [(pf.name, i) for pf in view.program.functions.values() for i in pf.instructions
            if i.loc is not None and (i.loc.file, i.loc.line) in lines]


def _barrier_intervals_scan(view, r):  # type: ignore[no-untyped-def]
    # per part, a scan of the function's issued instructions (the region's blocks) in its barrier intervals
    fn = r.fn
    bars = latency._barrier_offsets(fn)
    blocks = r.loop.blocks if r.loop is not None else None
    issued = [(k, n, off) for k, b, n, off in latency._issued_by_interval(view, fn) if blocks is None or b in blocks]
    spans: dict = {}
    for e in r.edges:
        use = e.use_ins.offset if e.use_ins is not None else None
        dfn = e.def_ins.offset if e.def_ins is not None and not e.is_self else use
        if use is None or dfn is None:
            continue
        lo, hi = sorted((bisect.bisect_right(bars, dfn), bisect.bisect_right(bars, use)))
        spans.setdefault((lo, hi), []).append(e)
    out = []
    for (lo, hi), edges in sorted(spans.items()):
        here = [(n, off) for k, n, off in issued if lo <= k <= hi]
        at = {off: n for n, off in here}
        out.append((cm.Region(scope=r.scope, fn=fn, loop=r.loop, edges=edges),
                    latency._independent_issue(fn, edges, at, sum(n for n, _ in here), max(at, default=None))))
    return out


def _use_functions_scan(self):  # type: ignore[no-untyped-def]
    return {e.use_fn.name: e.use_fn for e in self.edges if e.use_fn is not None}


def _memo_uncached(self, key, make):  # type: ignore[no-untyped-def]
    return make()


def _advise_json(name: str, capsys: pytest.CaptureFixture[str]) -> str:
    pipeline._profile_cache.clear()
    pipeline._binary_cache.clear()
    assert main(["advise", str(EXAMPLES / name), "--format", "json"]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("name", NAMES)
def test_advice_json_identical_to_reference_scans(name: str, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WARPWISE_NO_CACHE", "1")
    fast = _advise_json(name, capsys)
    with monkeypatch.context() as m:
        m.setattr(KernelView, "active_in_loop", _active_in_loop_scan)
        m.setattr(code, "_address_registers_after", _address_registers_after_scan)
        m.setattr(common, "hotspots", _hotspots_all_rows)
        m.setattr(code, "_instructions_on", _instructions_on_scan)
        m.setattr(Program, "memo", _memo_uncached)
        m.setattr(ProgramFunction, "memo", _memo_uncached)
        m.setattr(common, "_loops_sharing_lines", lambda pf, loop: list(pf.loops.values()))
        m.setattr(latency, "_barrier_intervals", _barrier_intervals_scan)
        m.setattr(KernelView, "use_functions", _use_functions_scan)
        m.setattr(KernelView, "edge_stalls", lambda self: sum(e.stall for e in self.edges))
        m.setattr(KernelView, "memo", _memo_uncached)  # per-view tables (region issue, dependency edges) remade
        slow = _advise_json(name, capsys)
    assert '"advice"' in fast and len(fast) > 1000
    assert fast == slow


BARRIER_PAIRS = ("causal_tiles", "rowsum_tree", "transpose_bank")  # bench/advice/pairs kernels with __syncthreads


def _pair_advice(pair: str) -> list[str]:
    import json
    from pathlib import Path

    from tests.conftest import pair_report

    d = Path(__file__).resolve().parents[2] / "bench" / "advice" / "pairs" / pair
    meta = json.loads((d / "pair.json").read_text())
    srcs = [p for p in sorted(d.iterdir()) if p.suffix in (".cu", ".cuh")] + [d.parent / "bench.cuh"]
    pipeline._profile_cache.clear()
    pipeline._binary_cache.clear()
    an = pipeline.analyze(pair_report(d), sorted(d.glob("orig.*.cubin")), srcs, kernel=meta["kernel"])
    return [repr(k.advice_report) for k in an.kernels]


@pytest.mark.parametrize("pair", BARRIER_PAIRS)
def test_barrier_parts_identical_to_a_scan_per_part(pair: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # code_reordering's barrier rule: the region's issued samples grouped by interval once (latency._region_issue)
    # against the scan of the function's issued instructions per part it replaced
    monkeypatch.setenv("WARPWISE_NO_CACHE", "1")
    parts: list[int] = []
    real = latency._independent_issue

    def counted(*a):  # type: ignore[no-untyped-def]
        parts.append(len(a[1]))
        return real(*a)

    monkeypatch.setattr(latency, "_independent_issue", counted)
    fast = _pair_advice(pair)
    assert parts, "the kernel has no barrier parts: the test would not compare anything"
    with monkeypatch.context() as m:
        m.setattr(latency, "_barrier_intervals", _barrier_intervals_scan)
        m.setattr(KernelView, "memo", _memo_uncached)
        slow = _pair_advice(pair)
    assert fast == slow and "code_reordering" in "".join(fast)


# bench/advice pairs whose loads feed an atomic's address
ATOMIC_PAIRS = ("holdout/pairs/hist_global_atomics", "holdout7/pairs/hist256_smallgrid",
                "holdout5/pairs/hist15_tailwave", "holdout13/pairs/radix_digit_counts")


class _AtomicEverywhere(dict):  # type: ignore[type-arg]
    """A last-atomic table that claims an atomic at the end of every block: the register scan always runs."""

    def get(self, key, default=None):  # type: ignore[no-untyped-def]
        return 1 << 62


@pytest.mark.parametrize("pair", ATOMIC_PAIRS)
def test_last_atomic_table_answers_as_the_block_scan(pair: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # atomics.feeds_atomic_address skips the register scan of a use's block when no atomic follows the use in it
    # (atomics._last_atomic); with the table defeated every edge is scanned, and each answer must be the same
    from warpwise.analysis.advice import atomics

    monkeypatch.setenv("WARPWISE_NO_CACHE", "1")
    answers: list[tuple[int | None, int | None, bool]] = []
    real = atomics.feeds_atomic_address

    def recorded(view, ev):  # type: ignore[no-untyped-def]
        got = real(view, ev)
        answers.append((ev.edge.use_offset, ev.edge.def_offset, got))
        return got

    monkeypatch.setattr(atomics, "feeds_atomic_address", recorded)  # code.py calls it through the module
    # indirect_address_elimination asks feeds_atomic_address only of edges whose value forms an off-chip address
    # (code._off_chip: a shared atomic's bin is not one), so ask it of every edge that filter sees
    feeds = code._feeds_address
    monkeypatch.setattr(code, "_feeds_address",
                        lambda view, ev: (atomics.feeds_atomic_address(view, ev), feeds(view, ev))[1])
    d = Path(__file__).resolve().parents[2] / "bench" / "advice" / pair
    fast = _pair_advice_at(d)
    fast_answers = list(answers)
    answers.clear()
    with monkeypatch.context() as m:
        m.setattr(atomics, "_last_atomic", lambda pf: _AtomicEverywhere())
        slow = _pair_advice_at(d)
    assert any(a[2] for a in fast_answers), "no load feeds an atomic: nothing compared"
    assert fast_answers == answers
    assert fast == slow


def _pair_advice_at(d: Path) -> list[str]:
    import json

    from tests.conftest import pair_report

    meta = json.loads((d / "pair.json").read_text())
    srcs = [p for p in sorted(d.iterdir()) if p.suffix in (".cu", ".cuh")] + [d.parent / "bench.cuh"]
    pipeline._profile_cache.clear()
    pipeline._binary_cache.clear()
    an = pipeline.analyze(pair_report(d), sorted(d.glob("orig.*.cubin")), srcs, kernel=meta["kernel"])
    return [repr(k.advice_report) for k in an.kernels]


#: bench/advice pairs whose loaded values form addresses (True), and biquad_bank, whose loaded sample's register is
#: reused for a later store's address (code._reaches_address: no edge feeds an address, False)
GATHER_PAIRS = (("holdout/pairs/mesh_neighbors", True), ("holdout6/pairs/im2col_indexmap", True),
                ("holdout8/pairs/stencil_spmv", True), ("holdout8/pairs/biquad_bank", False))


def _read_registers_regex(i):  # type: ignore[no-untyped-def]
    return {r for op in i.operands[1:] for r in code._REGISTER.findall(op)} | \
        {p for op in i.operands[1:] for p in code._PREDICATE.findall(op)}


def _written_registers_regex(i):  # type: ignore[no-untyped-def]
    if not i.operands:
        return set()
    out = set(cm.dest_registers(i))
    first = i.operands[0].split()[0].partition(".")[0]
    if first.startswith(("P", "UP", "UR")) and first not in ("PT", "UPT"):
        out.add(first)
    return out


def _after_in_block_scan(block, use):  # type: ignore[no-untyped-def]
    out, after = [], False
    for i in block.instructions:
        if i.offset == use.offset:
            after = True
        elif after:
            out.append(i)
    return out


@pytest.mark.parametrize(("pair", "feeds"), GATHER_PAIRS)
def test_block_scan_register_sets_answer_as_the_regex_scan(pair: str, feeds: bool,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # indirect_address_elimination's block scans read register sets cached per operand / (opcode, first operand)
    # string (code._operand_registers, code._written_of) and start at the use's position (code._after_in_block):
    # every instruction of the pair's program answers as the per-call regex sets and the flag scan they replaced,
    # and the advice is the same with those patched in
    from warpwise.analysis.binary.load import load_cubin
    from warpwise.analysis.program.build import build_program

    d = Path(__file__).resolve().parents[2] / "bench" / "advice" / pair
    prog = build_program(load_cubin(sorted(d.glob("orig.*.cubin"))[0]))
    seen = 0
    for pf in prog.functions.values():
        for b in pf.blocks.values():
            for i in b.instructions:
                assert code._read_registers(i) == _read_registers_regex(i)
                assert code._written_registers(i) == _written_registers_regex(i)
                assert code._written_data_registers(i) == {
                    r for r in _written_registers_regex(i) if not r.startswith(("P", "UP"))}
                assert code._after_in_block(b, i) == _after_in_block_scan(b, i)
                seen += 1
    assert seen >= 30  # 40-56 instructions in these pairs: the loops above compared something
    monkeypatch.setenv("WARPWISE_NO_CACHE", "1")
    fed: list[bool] = []
    real = code._feeds_address

    def recorded(view, ev):  # type: ignore[no-untyped-def]
        fed.append(real(view, ev))
        return fed[-1]

    monkeypatch.setattr(code, "_feeds_address", recorded)
    fast = _pair_advice_at(d)
    assert fed and any(fed) == feeds
    with monkeypatch.context() as m:
        m.setattr(code, "_read_registers", _read_registers_regex)
        m.setattr(code, "_written_registers", _written_registers_regex)
        m.setattr(code, "_written_data_registers",
                  lambda i: {r for r in _written_registers_regex(i) if not r.startswith(("P", "UP"))})
        m.setattr(code, "_after_in_block", _after_in_block_scan)
        slow = _pair_advice_at(d)
    assert fast == slow


def _forward_slices_eager(index, rows, weights, last, at):  # type: ignore[no-untyped-def]
    # the pass as it was before the weights were summed lazily (latency._mask_weights): every mask's weight
    # summed as it appears, rows scanned from the first def with a break after ``last``
    defs = list(weights)
    bit = {d: 1 << k for k, d in enumerate(defs)}
    by_bit = [weights[d] for d in defs]
    wt = {0: 0.0}

    def weight(m, base):  # type: ignore[no-untyped-def]
        got, diff = wt[base], m & ~base
        while diff:
            low = diff & -diff
            got += by_bit[low.bit_length() - 1]
            diff ^= low
        wt[m] = got

    weighted = 0.0
    masks: dict[int, int] = {}
    starts = [index[d] for d in defs if d in index]
    if starts and last is not None:
        taint: dict[str, int] = {}
        by_mask: dict[int, float] = {}
        for j in range(min(starts), len(rows)):
            off, reads, writes = rows[j]
            if off > last:
                break
            m = bit.get(off, 0)
            big = bc = 0
            for r in reads:
                t = taint.get(r)
                if t:
                    c = t.bit_count()
                    if c > bc:
                        big, bc = t, c
                    m |= t
            if not m:
                continue
            if m not in wt:
                weight(m, big)
            for r in writes:
                old = taint.get(r, 0)
                new = old | m
                if new != old:
                    if new not in wt:
                        weight(new, m)
                    taint[r] = new
            masks[off] = m
            n = at.get(off)
            if n:
                by_mask[m] = by_mask.get(m, 0.0) + n
        weighted = sum(n * wt[m] for m, n in by_mask.items())
    for d in defs:
        if d not in index:
            weighted += weights[d] * at.get(d, 0.0)
    return weighted, masks, bit, wt


@pytest.mark.parametrize("pair", BARRIER_PAIRS)
def test_lazy_mask_weights_answer_as_the_eager_pass(pair: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # code_reordering's slice pass records each mask's base and sums the weights afterwards, for the masks of issued
    # instructions and their bases only (latency._mask_weights), and stops at the row of ``last``: every call on the
    # pair's barrier parts gives the same float sum (==, not approximately), the same masks and the same weight
    # per asked mask as the pass that summed every mask's weight as it appeared
    monkeypatch.setenv("WARPWISE_NO_CACHE", "1")
    calls = derived = weighed = 0
    real = latency._forward_slices

    def compared(index, rows, weights, last, at):  # type: ignore[no-untyped-def]
        nonlocal calls, derived, weighed
        got, masks, bit = real(index, rows, weights, last, at)
        ref, ref_masks, ref_bit, ref_wt = _forward_slices_eager(index, rows, weights, last, at)
        assert got == ref and masks == ref_masks and bit == ref_bit
        asked = {m for off, m in masks.items() if at.get(off)}
        lazy = latency._mask_weights(asked, _bases(index, rows, weights, last), [weights[d] for d in weights])
        assert all(lazy[m] == ref_wt[m] for m in lazy)  # the asked masks and the bases their chains pass
        derived += sum(1 for m in lazy if m.bit_count() > 1)
        weighed += got > 0
        calls += 1
        return got, masks, bit

    monkeypatch.setattr(latency, "_forward_slices", compared)
    _pair_advice(pair)
    assert calls, "the kernel has no barrier parts: nothing compared"
    assert derived, "no mask holds two defs: the chains of _mask_weights were not exercised"
    assert weighed, "no part's slices issued: every sum compared was 0"


def _bases(index, rows, weights, last):  # type: ignore[no-untyped-def]
    # each mask's base as the pass records it (the submask its weight is summed from)
    bit = {d: 1 << k for k, d in enumerate(weights)}
    base = {0: 0}
    starts = [index[d] for d in weights if d in index]
    if not starts or last is None:
        return base
    taint: dict[str, int] = {}
    for off, reads, writes in rows[min(starts):]:
        if off > last:
            break
        m = bit.get(off, 0)
        big = bc = 0
        for r in reads:
            t = taint.get(r)
            if t:
                if t.bit_count() > bc:
                    big, bc = t, t.bit_count()
                m |= t
        if not m:
            continue
        base.setdefault(m, big)
        for r in writes:
            new = taint.get(r, 0) | m
            if new != taint.get(r, 0):
                base.setdefault(new, m)
                taint[r] = new
    return base


#: bench/advice pairs with barrier parts whose edges have no latency samples (latency._barrier_intervals skips
#: their slice pass): 5 of 24, 6 of 18 and 4 of 13 parts
ZERO_LATENCY_PAIRS = ("holdout5/pairs/haversine_fastmath", "holdout5/pairs/hist15_tailwave",
                      "holdout7/pairs/mc_options_140")


@pytest.mark.parametrize("pair", ZERO_LATENCY_PAIRS)
def test_parts_without_latency_skip_the_slice_pass_with_the_same_advice(pair: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # a part whose edges have no latency samples gets its issued samples as A without _independent_issue;
    # latency_hiding_advice drops it, so the advice equals that of the per-part scan (every part sliced)
    monkeypatch.setenv("WARPWISE_NO_CACHE", "1")
    zero = 0
    real = latency._barrier_intervals

    def counted(view, r):  # type: ignore[no-untyped-def]
        nonlocal zero
        out = real(view, r)
        zero += sum(1 for part, _ in out if sum(e.latency for e in part.edges) <= 0)
        return out

    d = Path(__file__).resolve().parents[2] / "bench" / "advice" / pair
    monkeypatch.setattr(latency, "_barrier_intervals", counted)
    fast = _pair_advice_at(d)
    assert zero, "no part without latency samples: the skip was not exercised"
    with monkeypatch.context() as m:
        m.setattr(latency, "_barrier_intervals", _barrier_intervals_scan)
        m.setattr(KernelView, "memo", _memo_uncached)
        slow = _pair_advice_at(d)
    assert fast == slow and "code_reordering" in "".join(fast)


def _forward_taint_rounds(pf, seed, control=True, rounds=None):  # type: ignore[no-untyped-def]
    """parallel.forward_taint as it was before the worklist (main 0feb439): every round starts from empty entry
    sets and steps every block until no set changes; ``rounds`` collects (control-dependent blocks, spaces) per
    round."""
    from warpwise.analysis.advice.parallel import _ANY, _BRANCHES
    from warpwise.analysis.blame.operands import def_use_all

    ins = pf.instructions
    du = def_use_all(ins)
    index = {i.offset: k for k, i in enumerate(ins)}
    span = {b: (index[pf.blocks[b].instructions[0].offset], index[pf.blocks[b].instructions[-1].offset] + 1)
            for b in sorted(pf.blocks) if pf.blocks[b].instructions}

    def source(i, varying_spaces):  # type: ignore[no-untyped-def]
        cls = cm.mem_class(i)
        if cls in ("shared", "local") and not writes_memory(i.opcode) and cls in varying_spaces:
            return True
        return seed(i)

    ctrl: set[int] = set()
    spaces: set[str] = set()
    while True:
        if rounds is not None:
            rounds.append((len(ctrl), len(spaces)))
        state_in = {b: frozenset() for b in span}
        varying: set[int] = set()
        changed = True
        while changed:
            changed = False
            varying = set()
            for b in span:
                cur = set(state_in[b])
                a, e = span[b]
                clean: dict[str, set[str]] = {}
                for k in range(a, e):
                    d, i = du[k], ins[k]
                    g = d.guard.lstrip("!") if d.guard else None
                    seen = cur - clean[d.guard] if d.guard in clean else cur
                    v = (b in ctrl or _ANY in cur or source(i, spaces) or any(u in seen for u in d.uses)
                         or (g is not None and g in cur))
                    if d.clobbers_all:
                        cur.add(_ANY)
                    if v:
                        varying.add(k)
                        cur |= d.defs
                        for regs in clean.values():
                            regs -= d.defs
                    elif d.guard is None:
                        cur -= d.defs
                    else:
                        clean.setdefault(d.guard, set()).update(d.defs)
                    for r in d.defs:
                        clean.pop(r, None)
                        clean.pop("!" + r, None)
                out = frozenset(cur)
                for s in pf.cfg.successors(b):
                    if s in state_in and not out <= state_in[s]:
                        state_in[s] = state_in[s] | out
                        changed = True
        new_ctrl = set(ctrl)
        new_spaces = set(spaces)
        for k in varying:
            i = ins[k]
            cls = cm.mem_class(i)
            if cls in ("shared", "local") and writes_memory(i.opcode):
                new_spaces.add(cls)
        for b, (_a, e) in span.items():
            last = ins[e - 1]
            if not control or last.base_opcode not in _BRANCHES or (e - 1) not in varying:
                continue
            if du[e - 1].guard is None and last.base_opcode not in ("BRX", "JMX"):
                continue
            stop = pf.ipdom.get(b)
            for s in pf.cfg.successors(b):
                n = s
                visited: set[int] = set()
                while n is not None and n != stop and n not in visited and n in span:
                    visited.add(n)
                    new_ctrl.add(n)
                    nxt = pf.ipdom.get(n)
                    n = None if nxt == n else nxt
        if new_ctrl == ctrl and new_spaces == spaces:
            return frozenset(ins[k].offset for k in varying)
        ctrl, spaces = new_ctrl, new_spaces


def _invariant_loop_scan(pf, varying):  # type: ignore[no-untyped-def]
    """parallel._invariant_loop as it was (main 0feb439): each loop's body listed and scanned."""

    best, best_n = None, 0
    for lp in pf.loops.values():
        body = [i for b in lp.blocks for i in pf.blocks[b].instructions]
        if not body or any(i.offset in varying for i in body):
            continue
        if not any(cm.mem_class(i) in ("global", "shared") and not writes_memory(i.opcode) for i in body):
            continue
        if len(body) > best_n:
            best, best_n = lp, len(body)
    return best


#: bench/advice cubins with grid-row taints of every kind: holdout10's nine pairs (rownorm_block_stats' repeated
#: row pass, guarded EXITs, shared-memory trees), holdout5's dequant_lut_perblock (shared staging behind a
#: barrier) and three main-set kernels with __syncthreads
TAINT_CUBINS = (*sorted((Path(__file__).resolve().parents[2] / "bench" / "advice" / "holdout10" / "pairs")
                        .glob("*/orig.sm_90.cubin")),
                *(Path(__file__).resolve().parents[2] / "bench" / "advice" / p / "orig.sm_90.cubin"
                  for p in ("holdout5/pairs/dequant_lut_perblock", "pairs/causal_tiles", "pairs/rowsum_tree",
                            "pairs/transpose_bank")))


def test_forward_taint_worklist_answers_as_the_round_robin(monkeypatch: pytest.MonkeyPatch) -> None:
    # parallel.forward_taint steps a block again only when its entry set grew or its step changed and warm-starts
    # each round from the last round's entry sets; the round-robin it replaced (kept above) restarts every round
    # from empty sets. Every kernel's grid_varying along x, y and z, and a taint from each kernel's global loads
    # with and without control dependence (code._narrow_reach's kind of seed), must be the same offsets, and
    # _invariant_loop's per-block tables must pick the loop the per-loop scan picked.
    from warpwise.analysis.advice import parallel
    from warpwise.analysis.binary.load import load_cubin
    from warpwise.analysis.program.build import build_program

    fast = parallel.forward_taint
    compared = several_rounds = partial = loops = 0
    for cubin in TAINT_CUBINS:
        prog = build_program(load_cubin(cubin))
        for pf in prog.functions.values():
            if not pf.is_kernel:
                continue
            for dim in (0, 1, 2):
                rounds: list[tuple[int, int]] = []
                monkeypatch.setattr(parallel, "forward_taint",
                                    lambda p, s, c=True, r=rounds: _forward_taint_rounds(p, s, c, r))
                slow = parallel.grid_varying(pf, dim)
                monkeypatch.setattr(parallel, "forward_taint", fast)
                got = parallel.grid_varying(pf, dim)
                assert got == slow, (cubin.parent.name, pf.name, dim)
                assert got is not None
                lp = parallel._invariant_loop(pf, got)
                assert lp is _invariant_loop_scan(pf, got)
                loops += lp is not None
                compared += 1
                several_rounds += len(rounds) > 1
                partial += 0 < len(got) < len(pf.instructions)
            loads = frozenset(i.offset for i in pf.instructions if cm.mem_class(i) == "global"
                              and i.base_opcode.startswith("LD"))
            for control in (True, False):
                def seed(i, loads=loads):  # type: ignore[no-untyped-def]
                    return i.offset in loads
                assert fast(pf, seed, control) == _forward_taint_rounds(pf, seed, control), (pf.name, control)
                compared += 1
    assert compared >= 40
    assert several_rounds >= 3, "no taint needed a second round (spaces or control dependence): the warm start " \
        "would not be compared"
    assert partial >= 10, "too few partial taints: the comparison would be weak"
    assert loops >= 2, "no invariant loop found: _invariant_loop's tables would not be compared"


#: bench/advice pairs whose advice asks for the edges at removed instructions (common._edges_at: strength reduction,
#: local-memory removal) and the repeated-CTA rule's kernel
INDEX_PAIRS = ("pairs/spill_bounds", "pairs/periodic_divmod", "pairs/knn_local", "holdout10/pairs/rownorm_block_stats")


@pytest.mark.parametrize("pair", INDEX_PAIRS)
def test_edge_and_kernel_tables_answer_as_the_scans(pair: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # common._edges_at's index (a use's list looked up once per run of its edges, a def's through its function's
    # offset table) must equal the per-edge index it replaced, keys in the same order; parallel._kernels_by_name
    # must list the kernels the per-view scan of every function found
    from warpwise.analysis.advice import parallel

    monkeypatch.setenv("WARPWISE_NO_CACHE", "1")
    indexed: list[int] = []
    kernels: list[int] = []
    real_at, real_rb = common._edges_at, parallel.redundant_block_advice

    def checked_at(view, keys):  # type: ignore[no-untyped-def]
        got = real_at(view, keys)
        if "edges_by_instruction" in view._memo:
            at_use: dict[tuple[str, int], list[int]] = {}
            at_def: dict[tuple[str, int], list[int]] = {}
            for k, e in enumerate(view.edges):
                if e.use_fn is not None and e.use_ins is not None:
                    at_use.setdefault((e.use_fn.name, e.use_ins.offset), []).append(k)
                if e.def_fn is not None and e.def_ins is not None:
                    at_def.setdefault((e.def_fn.name, e.def_ins.offset), []).append(k)
            fast_use, fast_def = view._memo["edges_by_instruction"]
            assert (fast_use, fast_def) == (at_use, at_def)
            assert list(fast_use) == list(at_use) and list(fast_def) == list(at_def)
            indexed.append(len(view.edges))
        return got

    def checked_rb(view):  # type: ignore[no-untyped-def]
        if view.program is not None:
            scan = [pf for pf in view.program.functions.values() if pf.is_kernel and pf.name == view.profile.mangled]
            assert parallel._kernels_by_name(view.program).get(view.profile.mangled, []) == scan
            kernels.append(len(scan))
        return real_rb(view)

    monkeypatch.setattr(common, "_edges_at", checked_at)
    monkeypatch.setattr(parallel, "redundant_block_advice", checked_rb)
    d = Path(__file__).resolve().parents[2] / "bench" / "advice" / pair
    _pair_advice_at(d)
    assert kernels and all(n == 1 for n in kernels)
    if pair != "holdout10/pairs/rownorm_block_stats":
        assert indexed and max(indexed) > 0, "_edges_at built no index: nothing compared"


def _split_field_loads_scan(view):  # type: ignore[no-untyped-def]
    # code.split_field_loads as it was before the per-program load lists (main 7aa82f6): every function of the
    # program scanned for global loads, and each load's sample looked up, once per kernel's view
    from warpwise.analysis.advice.parallel import TAINT_LIMIT, forward_taint

    prog = view.program
    out: dict = {}
    if prog is None:
        return out
    for pf in prog.functions.values():
        if len(pf.instructions) > TAINT_LIMIT:
            continue
        loads = []
        for i in pf.instructions:
            if i.base_opcode not in cm.GLOBAL_LOADS or not cm.is_global_mem(i):
                continue
            eff = code._efficiency(view.sample_at(pf.name, i.offset))
            if eff is not None and eff < code.COALESCE_LIMIT:
                loads.append(i)
        if not 2 <= len(loads) <= code.SPLIT_FIELD_CANDIDATES:
            continue
        traced = {i.offset: code.index_roots(pf, i) for i in loads}
        reach: dict = {}
        for b in loads:
            rb = traced[b.offset]
            if rb is None or not rb[0] or not rb[1]:
                continue
            partners = []
            for a in loads:
                ra = traced[a.offset]
                if a is b or ra is None or not ra[1] or ra[1] == rb[1] or not ra[0] & rb[0]:
                    continue
                if a.offset not in reach:
                    reach[a.offset] = forward_taint(pf, lambda ins, off=a.offset: ins.offset == off)
                if b.offset in reach[a.offset]:
                    partners.append(a)
            if partners and rb[0] <= frozenset().union(*(traced[a.offset][0] for a in partners)):
                out[(pf.name, b.offset)] = tuple((pf.name, a.offset) for a in partners)
    return out


#: bench/advice pairs for split_field_loads: hash_probe_split's payload load pairs with its two key loads; the others'
#: cubins hold several functions (virtual methods, function pointers, math helpers, other kernels)
SPLIT_PAIRS = ("holdout11/pairs/hash_probe_split", "holdout4/pairs/raytrace_virtual",
               "holdout8/pairs/simpson_fnptr", "holdout10/pairs/tone_dft_mpi", "holdout10/pairs/fem_phase_mix")


def test_split_field_loads_answer_as_the_program_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    # code.split_field_loads reads the program's global loads once per program and only the functions holding one
    # of the view's PCs; every view's answer must equal the program-wide scan per view it replaced
    monkeypatch.setenv("WARPWISE_NO_CACHE", "1")
    real = code.split_field_loads
    found = skipped = 0

    def compared(view):  # type: ignore[no-untyped-def]
        nonlocal found, skipped
        got = real(view)
        assert got == _split_field_loads_scan(view)
        found += len(got)
        sampled = {id(pf) for _, pf, _ in view.pc_blocks() if pf is not None}
        skipped += sum(1 for pf, loads in code._global_loads(view.program) if loads and id(pf) not in sampled)
        return got

    monkeypatch.setattr(code, "split_field_loads", compared)
    root = Path(__file__).resolve().parents[2] / "bench" / "advice"
    for pair in SPLIT_PAIRS:
        _pair_advice_at(root / pair)
    assert found, "no split field found: the comparison would not see a non-empty answer"
    assert skipped, "no function with global loads was left out: the sampled-function filter was not exercised"


def _backward_slices_loop(fn, index, rows, weights, bit, at, first):  # type: ignore[no-untyped-def]
    # latency._backward_slices as it was before latency._bit_sum (main 7aa82f6): each mask's weight summed one bit
    # at a time in ascending bit order
    starts = [index[d] for d in bit if d in index]
    if not starts:
        return 0.0
    lo = 0 if first is None else bisect.bisect_left([row[0] for row in rows], first)
    ins = fn.instructions
    need: dict[str, int] = {}
    seen = 0
    by_mask: dict[int, float] = {}
    for k in range(max(starts), lo - 1, -1):
        off, reads, writes = rows[k]
        own = bit.get(off, 0)
        m = 0
        for r in writes:
            m |= need.get(r, 0)
        if ins[k].base_opcode in cm.BRANCH_OPS or ins[k].base_opcode == "EXIT":
            m |= seen
        m &= ~own
        if m:
            n = at.get(off)
            if n:
                by_mask[m] = by_mask.get(m, 0.0) + n
        m |= own
        if m:
            for r in reads:
                need[r] = need.get(r, 0) | m
        seen |= own
    by_bit = {b: weights[d] for d, b in bit.items()}
    total = 0.0
    for m, n in by_mask.items():
        w = 0.0
        rest = m
        while rest:
            low = rest & -rest
            w += by_bit[low]
            rest ^= low
        total += n * w
    return total


#: bench/advice pairs with code_reordering's straight-line and barrier parts (the backward slices' kernels)
SLICE_PAIRS = ("pairs/causal_tiles", "pairs/rowsum_tree", "holdout11/pairs/jacobi5_stream",
               "holdout11/pairs/bitonic_segments")


@pytest.mark.parametrize("pair", SLICE_PAIRS)
def test_bit_sums_answer_as_the_bit_loop(pair: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # latency._backward_slices sums each mask's def weights through latency._bit_sum (bits read off bin(), weights
    # picked by itertools.compress, added left to right by functools.reduce): every call gives the same float (==)
    # as the loop over the mask's bits it replaced
    monkeypatch.setenv("WARPWISE_NO_CACHE", "1")
    real = latency._backward_slices
    calls = multi = 0

    def compared(fn, index, rows, weights, bit, at, first):  # type: ignore[no-untyped-def]
        nonlocal calls, multi
        got = real(fn, index, rows, weights, bit, at, first)
        assert got == _backward_slices_loop(fn, index, rows, weights, bit, at, first)
        calls += 1
        multi += got > 0 and len(bit) > 1
        return got

    monkeypatch.setattr(latency, "_backward_slices", compared)
    _pair_advice_at(Path(__file__).resolve().parents[2] / "bench" / "advice" / pair)
    assert calls, "no slice pass ran: nothing compared"
    assert multi, "no non-zero sum over several defs: the bit sums were not exercised"
    for m, by_bit in ((0, [1.0]), (0b1011, [0.1, 0.2, 0.3, 0.7]), ((1 << 200) | 1, [1e-3] * 201)):
        w = 0.5
        for k in range(len(by_bit)):
            if m >> k & 1:
                w += by_bit[k]
        assert latency._bit_sum(m, by_bit, 0.5) == w


def _contiguous_walks_scan(pf):  # type: ignore[no-untyped-def]
    # code.contiguous_walks as it was before the loop bodies were read off the loops' blocks (main 7aa82f6): every
    # instruction of the function scanned per innermost loop for the ones whose block is the loop's
    out: dict = {}
    for lp in pf.loops.values():
        if lp.children:
            continue
        body = [i for i in pf.instructions if (b := pf.block_of(i.offset)) is not None and b.start in lp.blocks]
        writes: dict = defaultdict(list)
        loads: dict = defaultdict(list)
        for i in body:
            for r in cm.dest_registers(i):
                writes[r].append(i)
            if i.base_opcode == "LDG" and (bo := code._base_and_offset(i)) is not None:
                loads[bo[0]].append((i, bo[1]))
        for reg, group in loads.items():
            if len(writes.get(reg, [])) != 1 or reg in {r for i, _ in group for r in cm.dest_registers(i)}:
                continue
            inc = writes[reg][0]
            step = code._self_increment(inc, reg)
            widths = {code.access_bytes(i) for i, _ in group}
            if step is None or len(widths) != 1:
                continue
            w = widths.pop()
            offs = sorted(o + (step if i.offset > inc.offset else 0) for i, o in group)
            if w <= 0 or step != len(offs) * w or offs != [offs[0] + j * w for j in range(len(offs))]:
                continue
            for i, _ in group:
                out[i.offset] = (w, step)
    return out


#: bench/advice cubins with innermost loops: record_hash_bytes' byte walk (contiguous_walks finds it), unrolled and
#: nested loops, loops split by barriers
WALK_CUBINS = ("holdout11/pairs/record_hash_bytes", "pairs/causal_tiles", "holdout11/pairs/bitonic_segments",
               "holdout8/pairs/nbody_direct_unroll8", "holdout6/pairs/asian_unroll_all",
               "holdout4/pairs/raytrace_virtual")


def test_contiguous_walks_answer_as_the_function_scan() -> None:
    # code.contiguous_walks reads each innermost loop's instructions off its blocks; the loop bodies and the walks
    # found must equal the per-loop scan of the function it replaced
    from warpwise.analysis.binary.load import load_cubin
    from warpwise.analysis.program.build import build_program

    root = Path(__file__).resolve().parents[2] / "bench" / "advice"
    loops = walks = 0
    for pair in WALK_CUBINS:
        prog = build_program(load_cubin(root / pair / "orig.sm_90.cubin"))
        for pf in prog.functions.values():
            assert code.contiguous_walks(pf) == _contiguous_walks_scan(pf)
            walks += len(code.contiguous_walks(pf))
            for lp in pf.loops.values():
                body = [i for s in sorted(lp.blocks) if (b := pf.blocks.get(s)) is not None for i in b.instructions]
                scan = [i for i in pf.instructions if (b := pf.block_of(i.offset)) is not None and b.start in lp.blocks]
                assert body == scan
                loops += not lp.children
    assert walks, "no contiguous walk found: the comparison would only see empty answers"
    assert loops >= 10, "too few innermost loops compared"
