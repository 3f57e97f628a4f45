"""Build the program structure (blocks, CFG, dominators, loop nests) of a cubin's functions.

GPA §3 ("Static Analyzer") splits nvdisasm's super blocks into basic blocks and finds loop nests with
Dyninst; warpwise does the same on the decoded SASS with networkx: leaders are the function entry, every
direct branch target and every instruction after a block end (BRA/JMP/BRX/JMX, EXIT/RET/KILL, BPT.TRAP);
predicated jumps and exits also fall through. CALL does not end a block (the callee returns to the next
instruction). BSSY/BSYNC/WARPSYNC are ordinary instructions for the CFG (they synchronize threads, they do
not move the PC of a converged warp). An indirect jump (BRX/JMX) has no known targets and is treated as
leaving the function (documented limitation). Natural loops (one per header, the union of its back
edges' bodies) are found over blocks reachable from the entry; irreducible cycles have no loop.
"""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import networkx as nx
from warpwise.analysis.binary.model import Cubin, Function, Instruction
from warpwise.analysis.gcpause import without_gc
from warpwise.analysis.program import cfg as cf
from warpwise.analysis.program.model import BasicBlock, CallSite, Loop, Program, ProgramFunction

VIRTUAL_EXIT = -1  # node added to the reversed CFG for post-dominators


class ProgramError(ValueError):
    """A function's instructions cannot form a CFG (empty, overlapping or misaligned offsets)."""


@without_gc
def build_program(cubin: Cubin) -> Program:
    """Program structure of every function in ``cubin``.

    Raises ProgramError (naming the cubin and function) for a function whose instruction list is empty
    or not in increasing offset order.
    """
    funcs = {name: build_function(fn, cubin) for name, fn in cubin.functions.items()}
    return Program(cubin=cubin, functions=funcs)


def build_function(fn: Function, cubin: Cubin | None = None) -> ProgramFunction:
    """Blocks, CFG, (post-)dominators, loops and call sites of one function."""
    where = f"{cubin.path if cubin else '<cubin>'}: function {fn.name}"
    ins = fn.instructions
    if not ins:
        raise ProgramError(f"{where}: no instructions")
    for a, b in pairwise(ins):
        if b.offset <= a.offset:
            raise ProgramError(f"{where}: instruction offsets not increasing at {b.offset:#x}")
    lo, hi = ins[0].offset, ins[-1].offset + 16
    offsets = {i.offset for i in ins}

    targets: dict[int, int | None] = {}
    leaders = {lo}
    for k, i in enumerate(ins):
        if cf.is_branch(i):
            t = cf.branch_target(i, fn)
            if t is not None and t in offsets:
                targets[i.offset] = t
                leaders.add(t)
            else:
                targets[i.offset] = None
        if cf.ends_block(i) and k + 1 < len(ins):
            leaders.add(ins[k + 1].offset)

    blocks: dict[int, BasicBlock] = {}
    cur: list[Instruction] = []
    for i in ins:
        if i.offset in leaders and cur:
            blocks[cur[0].offset] = BasicBlock(fn.name, cur[0].offset, cur[-1].offset + 16, cur)
            cur = []
        cur.append(i)
    blocks[cur[0].offset] = BasicBlock(fn.name, cur[0].offset, cur[-1].offset + 16, cur)

    g: nx.DiGraph = nx.DiGraph()
    g.add_nodes_from(blocks)
    exits: list[int] = []
    edges: list[tuple[int, int, dict[str, str]]] = []
    for start, b in blocks.items():
        last = b.last
        if cf.is_branch(last):
            t = targets.get(last.offset)
            if t is not None:
                edges.append((start, t, {"kind": "branch"}))
            if cf.is_indirect(last) or t is None:
                exits.append(start)  # unknown destination: leaves the analysed region
        elif cf.is_end(last):
            exits.append(start)
        if cf.falls_through(last) and b.end < hi:
            edges.append((start, b.end, {"kind": "fall"}))
        elif cf.falls_through(last):
            exits.append(start)
    g.add_edges_from(edges)  # as add_edge per edge, in this order (a repeated edge keeps the last kind)
    pf = ProgramFunction(function=fn, blocks=blocks, cfg=g, entry=lo, exits=sorted(set(exits)))
    succ: dict[int, list[int]] = {n: list(ss) for n, ss in g._succ.items()}
    pred: dict[int, list[int]] = {n: list(ps) for n, ps in g._pred.items()}
    pf.idom = _immediate_dominators(succ, pred, lo)
    pf.idom[lo] = lo
    # post-dominators: dominators of the reversed CFG from a virtual exit node that precedes every exit
    # (successor lists in the order networkx's reversed copy would hold them: g.edges order)
    rsucc: dict[int, list[int]] = {n: [] for n in g}
    for u, ss in succ.items():
        for v in ss:
            rsucc[v].append(u)
    rsucc[VIRTUAL_EXIT] = list(pf.exits)
    rpred: dict[int, list[int]] = {n: list(ss) for n, ss in succ.items()}
    for e in pf.exits:
        rpred[e].append(VIRTUAL_EXIT)
    rpred[VIRTUAL_EXIT] = []
    pf.ipdom = {n: (d if d != VIRTUAL_EXIT else n)
                for n, d in _immediate_dominators(rsucc, rpred, VIRTUAL_EXIT).items()}
    _find_loops(pf, succ, pred)
    pf.calls = _call_sites(fn, cubin)
    return pf


def _immediate_dominators(succ: dict[int, list[int]], pred: dict[int, list[int]], start: int) -> dict[int, int]:
    """Immediate dominator of every node reachable from ``start`` except ``start`` (graph as successor and
    predecessor lists of block starts): Cooper, Harvey and Kennedy, "A simple, fast dominance algorithm"
    (2006), fig. 3 — the algorithm and the dict order (reverse postorder of a depth-first search taking
    successors in list order) of ``networkx.immediate_dominators`` (3.x), on plain lists instead of graph
    views (it was a third of ``build_program`` on 200k-instruction cubins, docs/benchmarks.md issue 15)."""
    post: list[int] = []
    seen = {start}
    stack = [(start, iter(succ[start]))]
    while stack:
        n, it = stack[-1]
        for s in it:
            if s not in seen:
                seen.add(s)
                stack.append((s, iter(succ[s])))
                break
        else:
            stack.pop()
            post.append(n)
    dfn = {u: i for i, u in enumerate(post)}
    order = post[-2::-1]  # reverse postorder without start
    idom: dict[int, int] = {start: start}
    changed = True
    while changed:
        changed = False
        for u in order:
            new = -2
            for v in pred[u]:
                if v not in idom:
                    continue
                if new == -2:
                    new = v
                    continue
                a, b = new, v  # intersect: walk both up the current tree to their common ancestor
                while a != b:
                    while dfn[a] < dfn[b]:
                        a = idom[a]
                    while dfn[a] > dfn[b]:
                        b = idom[b]
                new = a
            if idom.get(u) != new:
                idom[u] = new
                changed = True
    del idom[start]
    return idom


def _find_loops(pf: ProgramFunction, succ: dict[int, list[int]], pred: dict[int, list[int]]) -> None:
    """Natural loops of ``pf`` (module doc); ``succ``/``pred``: its CFG's successor and predecessor lists."""
    idom = pf.idom
    bodies: dict[int, set[int]] = {}
    backs: dict[int, list[tuple[int, int]]] = {}
    for u, hs in succ.items():  # the CFG's edges in networkx's g.edges order
        if u not in idom:
            continue
        for h in hs:
            if h in idom and pf.dominates(h, u):
                body = bodies.setdefault(h, {h})
                backs.setdefault(h, []).append((u, h))
                stack = [u]
                while stack:
                    n = stack.pop()
                    if n in body:
                        continue
                    body.add(n)
                    stack.extend(p for p in pred[n] if p in idom)
    # parent = smallest other loop whose body holds this header
    order = sorted(bodies, key=lambda h: len(bodies[h]))
    # loops holding each header block, in `order` (only those can enclose the loop of that header)
    holding: dict[int, list[int]] = {h: [] for h in bodies}
    for o in order:
        for b in bodies[o]:
            if b in holding:
                holding[b].append(o)
    parent: dict[int, int | None] = {}
    for h in order:
        cands = [o for o in holding[h] if o != h and bodies[h] <= bodies[o]]
        parent[h] = min(cands, key=lambda o: len(bodies[o])) if cands else None
    children: dict[int, list[int]] = {h: [] for h in bodies}
    for h, p in parent.items():
        if p is not None:
            children[p].append(h)

    def depth(h: int) -> int:
        d, p = 1, parent[h]
        while p is not None:
            d, p = d + 1, parent[p]
        return d

    for h in bodies:
        instrs = [i for s in bodies[h] for i in pf.blocks[s].instructions]
        lines = frozenset((i.loc.file, i.loc.line) for i in instrs if i.loc is not None)
        files = Counter(f for f, _ in lines)
        file = files.most_common(1)[0][0] if files else None
        nums = [ln for f, ln in lines if f == file]
        pf.loops[h] = Loop(
            function=pf.name, header=h, blocks=frozenset(bodies[h]), back_edges=tuple(sorted(backs[h])),
            depth=depth(h), parent=parent[h], children=tuple(sorted(children[h])), file=file,
            first_line=min(nums) if nums else None, last_line=max(nums) if nums else None, lines=lines,
            calls=tuple(sorted(i.offset for i in instrs if cf.is_call(i))), num_instructions=len(instrs))
    # innermost loop per block: the containing loop with the smallest body
    for h in order:
        for s in bodies[h]:
            pf._innermost.setdefault(s, h)


def _call_sites(fn: Function, cubin: Cubin | None) -> list[CallSite]:
    by_start: dict[tuple[str, int], str] = {}
    names: set[str] = set()
    if cubin is not None:
        for other in cubin.functions.values():
            by_start[(other.section, other.start)] = other.name
            names.add(other.name)
    out = []
    for i in fn.instructions:
        if not cf.is_call(i):
            continue
        if cf.is_indirect_call(i):  # `R2 \`(kernel)`: the label is the section the offset in R2 is taken from
            out.append(CallSite(caller=fn.name, offset=i.offset, callee=None, target=None))
            continue
        lab = cf.label_of(i)
        t = cf.branch_target(i, fn)
        callee = lab if lab in names else by_start.get((fn.section, t)) if t is not None else None
        if callee is None and lab is not None and not lab.startswith(".L"):
            callee = lab
        out.append(CallSite(caller=fn.name, offset=i.offset, callee=callee, target=t))
    return out
