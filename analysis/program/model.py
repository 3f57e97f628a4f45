"""Program structure model: functions, basic blocks, CFG, dominators and loop nests (GPA §3 "Static Analyzer").

Offsets are byte offsets within the function's ELF section (the profile's and the JSON contract's ``pc``).
A ``__noinline__`` device function that a non-rdc build places inside a kernel's section gets its own
:class:`ProgramFunction` whose offsets are still section offsets (``Function.start`` > 0).

Graphs are networkx ``DiGraph``s whose nodes are basic-block start offsets. Built by
:func:`warpwise.analysis.program.build.build_program`.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import networkx as nx
from warpwise.analysis.binary.model import Cubin, Function, Instruction, SourceLoc

_T = TypeVar("_T")


class _Memoized:
    """``memo(key, make)``: ``make()`` computed once per object and ``key``. For derived tables over a program
    or function (a cubin of hundreds of kernels would otherwise rescan the whole program per kernel, a function
    of thousands of loops every loop per loop). Programs do not change after they are built, so entries never
    go stale; they are left out of pickles (the analysis cache)."""

    _memo: dict[Any, Any]

    def memo(self, key: Any, make: Callable[[], _T]) -> _T:
        """``make()``, computed on the first call with ``key``."""
        try:
            return self._memo[key]
        except KeyError:
            v = self._memo[key] = make()
            return v

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_memo"] = {}
        return state


@dataclass
class BasicBlock:
    """A maximal straight-line run of instructions of one function.

    ``start``/``end``: section offsets of the first instruction and one past the last (bytes).
    ``instructions``: in address order. A CALL does not end a block (the callee returns to the next
    instruction); branches, EXIT/RET, BRX/JMX and BPT.TRAP do.
    """

    function: str
    start: int
    end: int
    instructions: list[Instruction]

    @property
    def last(self) -> Instruction:
        """The block's last instruction (its terminator, if it has one)."""
        return self.instructions[-1]

    def __len__(self) -> int:
        return len(self.instructions)


@dataclass
class Loop:
    """A natural loop (the union of the natural loops of all back edges to one header).

    ``header``: start offset of the header block; ``blocks``: start offsets of all blocks in the loop
    (header included, inner loops' blocks included); ``back_edges``: (latch block, header) pairs.
    ``parent``: the header of the enclosing loop or None; ``children``: headers of directly nested loops;
    ``depth``: 1 for an outermost loop. ``file``/``first_line``/``last_line``: source line range of the
    loop's instructions (innermost location; None when the line table has none). ``lines``: every
    (file, line) the loop's instructions map to. ``calls``: offsets of CALL instructions in the loop.
    """

    function: str
    header: int
    blocks: frozenset[int]
    back_edges: tuple[tuple[int, int], ...]
    depth: int = 1
    parent: int | None = None
    children: tuple[int, ...] = ()
    file: str | None = None
    first_line: int | None = None
    last_line: int | None = None
    lines: frozenset[tuple[str, int]] = frozenset()
    calls: tuple[int, ...] = ()
    num_instructions: int = 0

    def contains_block(self, block_start: int) -> bool:
        """Whether the block starting at ``block_start`` is inside this loop (or a nested one)."""
        return block_start in self.blocks


@dataclass
class CallSite:
    """A CALL instruction: ``offset`` in ``caller``; ``callee`` symbol name (None if unresolved, e.g. an
    indirect call or a relocated target in an -rdc cubin); ``target`` callee's section offset if known."""

    caller: str
    offset: int
    callee: str | None
    target: int | None


@dataclass
class ProgramFunction(_Memoized):
    """One function's structure.

    ``blocks``: by start offset; ``cfg``: block-level DiGraph (edge attr ``kind``: ``fall``, ``branch``,
    ``indirect``); ``entry``: first block; ``exits``: blocks ending in EXIT/RET (or with no successor);
    ``idom``/``ipdom``: immediate (post-)dominator of each block (the entry/virtual exit maps to itself;
    blocks unreachable from the entry, or that cannot reach an exit, are missing);
    ``loops``: by header offset; ``calls``: CALL sites in this function.
    """

    function: Function
    blocks: dict[int, BasicBlock]
    cfg: nx.DiGraph
    entry: int
    exits: list[int]
    idom: dict[int, int] = field(default_factory=dict)
    ipdom: dict[int, int] = field(default_factory=dict)
    loops: dict[int, Loop] = field(default_factory=dict)
    calls: list[CallSite] = field(default_factory=list)
    _starts: list[int] = field(default_factory=list, repr=False)
    _innermost: dict[int, int] = field(default_factory=dict, repr=False)
    _dom_iv: dict[int, tuple[int, int]] = field(default_factory=dict, repr=False)
    _pdom_iv: dict[int, tuple[int, int]] = field(default_factory=dict, repr=False)
    _memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def name(self) -> str:
        """Symbol (mangled) name."""
        return self.function.name

    @property
    def is_kernel(self) -> bool:
        """Whether it is a ``__global__`` kernel."""
        return self.function.is_kernel

    @property
    def instructions(self) -> list[Instruction]:
        """All instructions in address order."""
        return self.function.instructions

    def block_of(self, offset: int) -> BasicBlock | None:
        """The block holding the instruction at section offset ``offset`` (None if outside)."""
        if not self._starts:
            self._starts = sorted(self.blocks)
        i = bisect.bisect_right(self._starts, offset) - 1
        if i < 0:
            return None
        b = self.blocks[self._starts[i]]
        return b if b.start <= offset < b.end else None

    def loop_of(self, offset: int) -> Loop | None:
        """The innermost loop holding the instruction at ``offset``, or None outside loops."""
        b = self.block_of(offset)
        if b is None:
            return None
        h = self._innermost.get(b.start)
        return None if h is None else self.loops[h]

    def loop_nest(self, offset: int) -> list[Loop]:
        """Loops around ``offset``, innermost first."""
        out: list[Loop] = []
        lp = self.loop_of(offset)
        while lp is not None:
            out.append(lp)
            lp = None if lp.parent is None else self.loops[lp.parent]
        return out

    def dominates(self, a: int, b: int) -> bool:
        """Whether block ``a`` dominates block ``b`` (block start offsets); O(1) after the first call."""
        if not self._dom_iv:
            self._dom_iv = _intervals(self.idom)
        return _within(self._dom_iv, a, b)

    def postdominates(self, a: int, b: int) -> bool:
        """Whether block ``a`` post-dominates block ``b``; O(1) after the first call."""
        if not self._pdom_iv:
            self._pdom_iv = _intervals(self.ipdom)
        return _within(self._pdom_iv, a, b)


def _intervals(tree: dict[int, int]) -> dict[int, tuple[int, int]]:
    """DFS entry/exit numbers of an immediate-(post)dominator tree (a root maps to itself)."""
    children: dict[int, list[int]] = {}
    roots = []
    for n, p in tree.items():
        if p == n:
            roots.append(n)
        else:
            children.setdefault(p, []).append(n)
    iv: dict[int, tuple[int, int]] = {}
    clock = 0
    for r in roots:
        stack = [(r, False)]
        enter: dict[int, int] = {}
        while stack:
            n, done = stack.pop()
            if done:
                iv[n] = (enter[n], clock)
                clock += 1
                continue
            enter[n] = clock
            clock += 1
            stack.append((n, True))
            stack.extend((c, False) for c in children.get(n, ()))
    return iv


def _within(iv: dict[int, tuple[int, int]], a: int, b: int) -> bool:
    ia, ib = iv.get(a), iv.get(b)
    return ia is not None and ib is not None and ia[0] <= ib[0] and ib[1] <= ia[1]


@dataclass
class Program(_Memoized):
    """A cubin's program structure: ``functions`` by symbol name, ``arch`` (``sm_90``)."""

    cubin: Cubin
    functions: dict[str, ProgramFunction]
    _memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def arch(self) -> str:
        """Target architecture of the cubin, e.g. ``sm_90``."""
        return self.cubin.arch

    def function(self, name: str) -> ProgramFunction:
        """The function named ``name``. Raises KeyError naming the cubin if missing."""
        try:
            return self.functions[name]
        except KeyError:
            raise KeyError(f"{self.cubin.path}: no function {name!r}") from None

    def kernels(self) -> list[ProgramFunction]:
        """Kernel functions."""
        return [f for f in self.functions.values() if f.is_kernel]

    def function_at(self, section: str, offset: int) -> ProgramFunction | None:
        """The function whose code in ELF section ``section`` covers section offset ``offset``."""
        for f in self.functions.values():
            fn = f.function
            if fn.section == section and fn.start <= offset < fn.start + fn.size:
                return f
        return None

    def loop_of(self, function: str, offset: int) -> Loop | None:
        """Innermost loop of ``function`` holding ``offset`` (None outside loops or unknown function)."""
        f = self.functions.get(function)
        return None if f is None else f.loop_of(offset)

    def loc(self, function: str, offset: int) -> SourceLoc | None:
        """Source location of the instruction at ``offset`` in ``function`` (None if unknown)."""
        f = self.functions.get(function)
        ins = None if f is None else f.function.at(offset)
        return None if ins is None else ins.loc
