"""The per-kernel view the optimizers match against: profile totals, blame edges joined with their SASS
instructions, functions and loops, and the architecture facts.

Built once per kernel by :func:`build_view`; every optimizer reads it and none modifies it. Names: a
profile keys PCs by the function ncu reports (a ``__noinline__`` callee in a non-rdc build shares the
kernel's section and is reported under the kernel's name), the program model has one function per symbol;
:meth:`KernelView.resolve` maps a (name, section offset) pair to the program function that holds it.
"""

from __future__ import annotations

import functools
import itertools
import posixpath
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from warpwise.analysis.advice.model import Location, Scope
from warpwise.analysis.arch import stalls
from warpwise.analysis.arch.model import ArchFacts
from warpwise.analysis.binary.model import Instruction, SourceLoc
from warpwise.analysis.blame.model import BlameEdge, BlameGraph
from warpwise.analysis.confine import read_source
from warpwise.analysis.profile.model import KernelProfile, PCSample
from warpwise.analysis.profile.paths import map_path
from warpwise.analysis.program.model import BasicBlock, Loop, Program, ProgramFunction

_UNRESOLVED = object()  # KernelView.resolve's "not looked up yet" (None is a valid answer)


@dataclass(slots=True, init=False)
class EdgeView:
    """A blame edge with its instructions resolved.

    ``def_fn``/``use_fn``: program functions holding def and use (None when the program does not know the
    PC); ``def_ins``/``use_ins``: the instructions; ``use_loop``/``def_loop``: innermost loops (None
    outside loops); ``gpa_class``: the reason's GPA class from arch's table. ``stall`` / ``latency``: the
    edge's stall and latency (not-issued) samples; ``is_self``: the stall is kept by the stalled
    instruction itself (no def) — copied from ``edge`` once (the optimizers read them per edge many times;
    blame edges are not changed after blaming).
    """

    edge: BlameEdge
    use_fn: ProgramFunction | None
    use_ins: Instruction | None
    use_loop: Loop | None
    def_fn: ProgramFunction | None = None
    def_ins: Instruction | None = None
    def_loop: Loop | None = None
    gpa_class: str = stalls.OTHER
    stall: float = field(init=False, repr=False, compare=False)
    latency: float = field(init=False, repr=False, compare=False)
    is_self: bool = field(init=False, repr=False, compare=False)

    def __init__(self, edge: BlameEdge, use_fn: ProgramFunction | None, use_ins: Instruction | None,
                 use_loop: Loop | None, def_fn: ProgramFunction | None = None, def_ins: Instruction | None = None,
                 def_loop: Loop | None = None, gpa_class: str = stalls.OTHER) -> None:
        # written out (not the dataclass's __init__ and a __post_init__): build_view makes one per blame edge,
        # ~740k on a 200k-instruction cubin
        self.edge = edge
        self.use_fn = use_fn
        self.use_ins = use_ins
        self.use_loop = use_loop
        self.def_fn = def_fn
        self.def_ins = def_ins
        self.def_loop = def_loop
        self.gpa_class = gpa_class
        self.stall = edge.stall_samples
        self.latency = edge.latency_samples
        self.is_self = edge.def_offset is None


#: What :meth:`KernelView.edges_by` selects edges by.
_EDGE_KEYS: dict[str, Callable[[EdgeView], str]] = {
    "gpa_class": lambda e: e.gpa_class,
    "reason": lambda e: e.edge.reason,
    "category": lambda e: e.edge.category,
}


@dataclass(frozen=True)
class LoadQueueing:
    """How long a launch's global loads wait, against DRAM's latency at its traffic
    (:meth:`KernelView.load_queueing`): ``wait_ns`` the wait per execution of its global loads (Little's law
    over the PC samples, :meth:`KernelView.wait_per_execution`, averaged over the loads weighted by their wait
    samples); ``latency_ns`` the DRAM load-to-use latency at the launch's DRAM throughput
    (arch/roofline.dram_latency_ns); ``share`` the share of the launch's samples waiting on those loads;
    ``dram_pct`` the launch's DRAM throughput (% of peak); ``queued``: the loads queue in the memory system
    (arch/roofline QUEUEING_FACTOR, QUEUEING_SHARE and THROUGHPUT_FRACTION all met)."""

    wait_ns: float
    latency_ns: float
    share: float
    dram_pct: float
    queued: bool


@dataclass
class KernelView:
    """Everything one kernel's optimizers may read.

    ``total``/``latency``/``active``: T, L, A (samples); ``selected``: samples whose sampled warp issued
    (Nsight Compute's ``selected`` reason), so ``r_issue`` = selected / T is GPA's per-warp R_I (eq. 8);
    ``edges``: blame edges joined with instructions; ``program`` may be None (then loop- and
    function-scoped optimizers report the missing structure); ``sources``: recorded path -> source text;
    ``launches``: how many launches of this kernel the run made (None when unknown: one profiled launch);
    ``outside``: stall samples of PCs the program does not hold (left out of every optimizer);
    ``runtime``: stall samples at PCs inside CUDA device-runtime functions (:func:`is_runtime_function`),
    also left out: the user cannot change that code.
    """

    profile: KernelProfile
    program: Program | None
    blame: BlameGraph
    arch: ArchFacts
    sources: dict[str, str] = field(default_factory=dict)
    launches: int | None = None
    outside: float = 0.0
    runtime: float = 0.0
    edges: list[EdgeView] = field(default_factory=list)
    total: int = 0
    latency: int = 0
    active: int = 0
    selected: int = 0
    _pc_fn: dict[tuple[str, int], ProgramFunction | None] = field(default_factory=dict, repr=False)
    _memo: dict[Any, Any] = field(default_factory=dict, repr=False)
    _locs: dict[tuple[str, int], Location] = field(default_factory=dict, repr=False)
    _use_fns: dict[str, ProgramFunction] = field(default_factory=dict, repr=False)  # use_functions, by build_view
    _edge_stalls: float = field(default=0.0, repr=False)  # edge_stalls, by build_view

    @property
    def reach(self) -> dict[str, float]:
        """Reachable fraction of peak per unit for this launch (analysis/arch/roofline.reach: DRAM's from the
        share of the launch's global sectors that its writes move)."""
        def make() -> dict[str, float]:
            from warpwise.analysis.arch import roofline

            share = roofline.dram_write_share([(s.sass, s.l2_sectors) for s in self.profile.pcs.values()])
            return roofline.reach(share)
        return dict(self.memo("roofline.reach", make))

    def wait_per_execution(self, wait: float, sample: PCSample) -> float:
        """Wait (cycles) per execution of the instruction at ``sample`` that ``wait`` stall samples stand for:
        a PC sample stands for ``interval x W`` warp-cycles (the sampler takes one of the SM's W active warps
        per interval: ``LaunchConfig.sampling_interval_cycles`` x ``achieved_warps_per_sm``), so Little's law
        gives ``wait x interval x W / n`` over the n warp-level executions (``inst_executed``). 0 when the
        profile lacks the interval, the occupancy or the executions."""
        lc = self.profile.launch
        per_sample = lc.sampling_interval_cycles * lc.achieved_warps_per_sm
        if per_sample <= 0 or sample.inst_executed <= 0:
            return 0.0
        return wait * per_sample / sample.inst_executed

    @property
    def load_queueing(self) -> LoadQueueing | None:
        """The launch's global-load waits against DRAM's latency at its traffic (:class:`LoadQueueing`): the
        long_scoreboard samples blamed on each global load (its edges to the instructions that wait for it), as a
        wait per execution (:meth:`wait_per_execution`, converted to ns by the launch's elapsed cycles per ns),
        averaged over the loads weighted by those samples. None when the profile has no such waits, no DRAM
        throughput or no elapsed cycles."""
        def make() -> LoadQueueing | None:
            from warpwise.analysis.advice import common as cm
            from warpwise.analysis.arch import roofline

            lc = self.profile.launch
            dram = lc.throughput_pct.get("dram", 0.0)
            if lc.elapsed_cycles <= 0 or lc.duration_ns <= 0 or dram <= 0 or self.total <= 0:
                return None
            waits: dict[tuple[str, int], float] = defaultdict(float)
            for e in self.edges_by(reason=("long_scoreboard",)):
                d = e.def_ins
                if e.is_self or e.def_fn is None or d is None or d.base_opcode not in cm.GLOBAL_LOADS \
                        or not cm.is_global_mem(d):
                    continue
                waits[(e.def_fn.name, d.offset)] += e.stall
            w_sum = weighted = 0.0
            for (name, off), w in waits.items():
                s = self.sample_at(name, off)
                per = self.wait_per_execution(w, s) if s is not None else 0.0
                if per > 0:
                    w_sum += w
                    weighted += w * per
            if w_sum <= 0:
                return None
            wait_ns = weighted / w_sum * lc.duration_ns / lc.elapsed_cycles
            lat = roofline.dram_latency_ns(dram)
            share = w_sum / self.total
            queued = (wait_ns >= roofline.QUEUEING_FACTOR * lat and share >= roofline.QUEUEING_SHARE
                      and dram >= 100.0 * roofline.THROUGHPUT_FRACTION)
            return LoadQueueing(wait_ns=wait_ns, latency_ns=lat, share=share, dram_pct=dram, queued=queued)
        found: LoadQueueing | None = self.memo("load_queueing", make)
        return found

    @property
    def reach_now(self) -> dict[str, float]:
        """Reachable fraction of peak per unit for the traffic as the launch issues it: :attr:`reach`, with
        DRAM's lowered to its present throughput when the launch's global loads queue in the memory system
        (:attr:`load_queueing`) and neither L2 nor L1 is at its own roofline (which would explain the queue):
        requests waiting in line mean DRAM serves this access pattern no faster. For the caps of fixes that
        leave the traffic unchanged (the bound line, latency hiding, more warps, fewer instructions); a fix that
        changes the traffic is capped by the roofline after it, with :attr:`reach` (the new pattern's requests
        are not this one's)."""
        out = self.reach
        q = self.load_queueing
        if q is None or not q.queued:
            return out
        from warpwise.analysis.arch import roofline

        # a cache level at its roofline already explains the queue (an L2-bound gather): DRAM's reach stays
        tp = self.profile.launch.throughput_pct
        if any(c.bound for c in roofline.ceilings(tp, out) if c.unit in ("l2", "l1")):
            return out
        out["dram"] = min(out.get("dram", 1.0), q.dram_pct / 100.0)
        return out

    def edges_by(self, *, gpa_class: Iterable[str] = (), reason: Iterable[str] = (),
                 category: Iterable[str] = ()) -> list[EdgeView]:
        """The edges whose GPA class is in ``gpa_class``, or whose blame edge's Nsight Compute ``reason`` or
        ``category`` is in those, in ``edges`` order: ``[e for e in edges if e.gpa_class in gpa_class or ...]``.
        From value -> positions indexes (made by :func:`build_view` with the edges, else by one pass on first
        use), so an optimizer that wants one class or reason reads those edges only instead of all of them."""
        edges = self.edges
        runs: list[list[int]] = []
        attrs = 0
        for attr, wanted in (("gpa_class", gpa_class), ("reason", reason), ("category", category)):
            values = set(wanted)
            if not values:
                continue
            attrs += 1
            get = _EDGE_KEYS[attr]

            def index(get: Callable[[EdgeView], str] = get) -> dict[str, list[int]]:
                out: dict[str, list[int]] = {}
                for k, e in enumerate(edges):
                    out.setdefault(get(e), []).append(k)
                return out

            by: dict[str, list[int]] = self.memo(("edges_by", attr), index)
            runs += [by[v] for v in values if v in by]
        if not runs:
            return []
        # one run is already in order; several are merged: one attribute's are disjoint (each edge has one value),
        # so a sort of their concatenation; several attributes' may overlap, so a sort of their union
        if len(runs) == 1:
            pos = runs[0]
        elif attrs == 1:
            pos = sorted(itertools.chain.from_iterable(runs))
        else:
            pos = sorted({k for run in runs for k in run})
        return [edges[k] for k in pos]

    def use_functions(self) -> dict[str, ProgramFunction]:
        """Name -> program function of the edges' uses, in the order of the first edge of each (``{e.use_fn.name:
        e.use_fn for e in edges if e.use_fn is not None}``), recorded by :func:`build_view` as it makes the edges
        (one per use, not per edge; empty for a view made without edges)."""
        return self._use_fns

    def edge_stalls(self) -> float:
        """``sum(e.stall for e in edges)``: the stall samples of every edge, summed in edge order by
        :func:`build_view` as it makes the edges (0 for a view made without edges)."""
        return self._edge_stalls

    def memo(self, key: Any, make: Callable[[], Any]) -> Any:
        """``make()``, computed once per view and ``key`` (derived per-function tables: the profile and
        program a view holds do not change)."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    @property
    def r_issue(self) -> float:
        """R_I: share of samples in which the sampled warp issued (GPA eq. 8)."""
        return self.selected / self.total if self.total else 0.0

    @property
    def sm_count(self) -> int:
        """SMs of the profiled device (the profile's count; arch's reference product when it has none)."""
        return self.profile.launch.sm_count or self.arch.default_sm_count

    def source(self, file: str | None) -> str | None:
        """Text of recorded source ``file``: from ``sources`` (exact path, else the longest matching path
        suffix), else the file on disk when it resolves inside the workspace / command-line folders
        (:mod:`warpwise.analysis.confine`; a line table can name any path). None when unavailable."""
        if not file:
            return None
        if file in self.sources:
            return self.sources[file]
        best = map_path(file, list(self.sources))
        if best is not None and str(best) in self.sources:
            return self.sources[str(best)]
        return read_source(file)

    # ---- resolution -------------------------------------------------------------------------------
    def resolve(self, name: str, offset: int) -> ProgramFunction | None:
        """The program function holding section offset ``offset`` of function/section owner ``name``."""
        key = (name, offset)
        hit = self._pc_fn.get(key, _UNRESOLVED)
        if hit is not _UNRESOLVED:
            return hit
        pf: ProgramFunction | None = None
        if self.program is not None:
            cand = self.program.functions.get(name)
            if cand is not None:
                fn = cand.function
                if fn.start <= offset < fn.start + fn.size:
                    pf = cand
                else:
                    pf = self.program.function_at(fn.section, offset)
            else:
                pf = self.program.function_at(f".text.{name}", offset)
        self._pc_fn[key] = pf
        return pf

    def sample_at(self, name: str, offset: int) -> PCSample | None:
        """The profile's counters of the PC (``name`` may be a program function inside a kernel's section,
        whose PCs Nsight Compute files under the kernel's name)."""
        s = self.profile.pcs.get((name, offset))
        if s is not None:
            return s
        pf = self.resolve(name, offset)
        if pf is not None and pf.function.section.startswith(".text."):
            return self.profile.pcs.get((pf.function.section[len(".text."):], offset))
        return None

    def instruction(self, name: str, offset: int) -> Instruction | None:
        """The SASS instruction at ``offset`` of ``name`` (None if the program does not have it)."""
        pf = self.resolve(name, offset)
        return None if pf is None else pf.function.at(offset)

    def loop(self, name: str, offset: int) -> Loop | None:
        """Innermost loop holding the PC (None outside loops or without a program)."""
        pf = self.resolve(name, offset)
        return None if pf is None else pf.loop_of(offset)

    def location(self, name: str, offset: int) -> Location:
        """The PC as a report location: program function, opcode and source line (profile's as fallback).
        Made once per PC (Location is frozen; hotspots and scopes ask per edge)."""
        key = (name, offset)
        loc = self._locs.get(key)
        if loc is None:
            loc = self._locs[key] = self._location(name, offset)
        return loc

    def _location(self, name: str, offset: int) -> Location:
        pf = self.resolve(name, offset)
        ins = None if pf is None else pf.function.at(offset)
        sample = self.sample_at(name, offset)
        file = line = None
        if ins is not None and (at := user_loc(ins)) is not None:
            file, line = at.file, at.line  # header code at the user line that called it
        elif sample is not None:
            file, line = sample.file, sample.line
        opcode = ins.opcode if ins is not None else (sample.sass.split()[0] if sample and sample.sass else "?")
        return Location(function=pf.name if pf is not None else name, pc=offset, opcode=opcode,
                        file=file, line=line)

    # ---- samples ---------------------------------------------------------------------------------
    def samples_where(self, pred: Callable[[ProgramFunction | None, PCSample], bool]) -> Iterable[PCSample]:
        """Profile samples whose (program function, sample) satisfy ``pred(pf, sample)``."""
        for (name, off), s in self.profile.pcs.items():
            if pred(self.resolve(name, off), s):
                yield s

    def active_in_loop(self, pf: ProgramFunction, loop: Loop) -> float:
        """Active (issued) samples of the instructions in ``loop`` and its nested loops (GPA eq. 5's
        Σ_{l' ∈ nested(l)} A_l')."""
        if pf is None:  # callers pass a loop's function; keep the old scan's answer for None
            return 0.0
        by_block = self._issued_by_block(pf)
        return float(sum(by_block.get(b, 0) for b in loop.blocks))

    def _issued_by_block(self, pf: ProgramFunction) -> dict[int, int]:
        """Issued samples per block start of ``pf`` (so loop totals cost the loop's blocks, not the profile's
        PCs): :meth:`_issued_tables`."""
        return self._issued_tables()[1].get(id(pf), {})

    def active_in_function(self, pf: ProgramFunction) -> float:
        """Active samples of the instructions of ``pf`` (:meth:`_issued_tables`)."""
        return float(self._issued_tables()[0].get(id(pf), 0))

    def _issued_tables(self) -> tuple[dict[int, int], dict[int, dict[int, int]]]:
        """Issued samples per function and per (function, block start), keyed by ``id`` of the program function
        (None's id: PCs outside the program), from one pass over the profile for all functions. Each total is
        summed in profile order, as a per-function ``sum()`` over the profile would."""
        def make() -> tuple[dict[int, int], dict[int, dict[int, int]]]:
            by_fn: dict[int, int] = {}
            by_block: dict[int, dict[int, int]] = {}
            for s, pf, start in self.pc_blocks():
                key = id(pf)
                issued = s.samples - s.not_issued  # PCSample.issued, written out (one per sampled PC)
                by_fn[key] = by_fn.get(key, 0) + issued
                if start is not None:
                    counts = by_block.setdefault(key, {})
                    counts[start] = counts.get(start, 0) + issued
            return by_fn, by_block

        tables: tuple[dict[int, int], dict[int, dict[int, int]]] = self.memo("issued_tables", make)
        return tables

    def pc_blocks(self) -> list[tuple[PCSample, ProgramFunction | None, int | None]]:
        """(sample, program function, start of the block holding the PC) of every profiled PC, in profile order
        (function None: a PC outside the program; block None: outside the function's blocks). One resolution
        pass per view, shared by the per-function and per-block sample tables (:meth:`_issued_tables`,
        ``latency.fixed_waits_in_loop``) that each resolved every PC before."""
        def make() -> list[tuple[PCSample, ProgramFunction | None, int | None]]:
            out: list[tuple[PCSample, ProgramFunction | None, int | None]] = []
            resolved = self._pc_fn
            last: ProgramFunction | None = None
            blocks: dict[int, BasicBlock] = {}
            for pc, s in self.profile.pcs.items():
                pf = resolved.get(pc, _UNRESOLVED)  # resolve's cache, read here: build_view filled it
                if pf is _UNRESOLVED:
                    pf = self.resolve(*pc)
                start: int | None = None
                if pf is not None:
                    if pf is not last:
                        last, blocks = pf, pc_table(pf).block
                    off = pc[1]
                    b = blocks.get(off)
                    if b is None:
                        b = pf.block_of(off)
                    if b is not None:
                        start = b.start
                out.append((s, pf, start))
            return out

        rows: list[tuple[PCSample, ProgramFunction | None, int | None]] = self.memo("pc_blocks", make)
        return rows

    def samples_in_function(self, pf: ProgramFunction) -> float:
        """All samples of the instructions of ``pf``."""
        return float(sum(s.samples for (n, o), s in self.profile.pcs.items() if self.resolve(n, o) is pf))

    def stall_totals(self) -> dict[str, int]:
        """Kernel-wide samples per stall reason, in the order the profile's PCs first name them (one pass per view;
        each call gets its own copy)."""
        def make() -> dict[str, int]:
            out: dict[str, int] = defaultdict(int)
            for s in self.profile.pcs.values():
                for r, v in s.stalls.items():
                    out[r] += v
            return dict(out)
        return dict(self.memo("stall_totals", make))

    def latency_totals(self) -> dict[str, int]:
        """Kernel-wide not-issued samples per stall reason."""
        out: dict[str, int] = defaultdict(int)
        for s in self.profile.pcs.values():
            for r, v in s.stalls_not_issued.items():
                out[r] += v
        return dict(out)

    # ---- scopes ----------------------------------------------------------------------------------
    def loop_scope(self, pf: ProgramFunction, loop: Loop) -> Scope:
        """A loop as a report scope: its source line range and header line. When most of the loop's lines are in
        a CUDA toolkit header (an ``atomicAdd`` or math function inlined into a short loop), the range is that of
        its instructions' user lines (:func:`user_loc`): the loop the user wrote, not a toolkit header's."""
        key = ("loop_scope", id(pf), loop.header)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self._loop_scope(pf, loop)
        scope: Scope = hit
        return scope

    def _loop_scope(self, pf: ProgramFunction, loop: Loop) -> Scope:
        file, first, last = loop.file, loop.first_line, loop.last_line
        if file is not None and is_toolkit_header(file):
            file, first, last = pf.memo(("loop_user_lines", loop.header), lambda: _user_line_range(pf, loop))
        label = f"loop at line {first}" if first else f"loop at {loop.header:#x}"
        return Scope(kind="loop", file=file, line=first, end_line=last, function=pf.name, name=label)

    def function_scope(self, pf: ProgramFunction) -> Scope:
        """A function as a report scope: the line range of its own body in its main file (computed once per
        function: it scans every instruction and optimizers ask per region).

        An instruction inlined from a helper (a ``__forceinline__`` function of a .cuh) counts at its
        outermost call site, which is in the function's own body: a kernel whose time is in a header's
        helper is still scoped to the file that defines it."""
        return pf.memo("function_scope", lambda: _function_scope(pf))

    def kernel_scope(self) -> Scope:
        """The whole kernel as a scope (file/lines of its kernel function when the program has it)."""
        if self.program is not None:
            pf = self.program.functions.get(self.profile.mangled)
            if pf is not None:
                s = self.function_scope(pf)
                return Scope(kind="kernel", file=s.file, line=s.line, end_line=s.end_line,
                             function=pf.name, name=f"kernel {self.profile.name}")
        return Scope(kind="kernel", function=self.profile.mangled, name=f"kernel {self.profile.name}")

    def line_scope(self, loc: Location) -> Scope:
        """One source line as a scope."""
        return Scope(kind="line", file=loc.file, line=loc.line, end_line=loc.line, function=loc.function,
                     name=f"line {loc.line}" if loc.line else f"pc {loc.pc:#x}")


#: Name fragments of CUDA device-runtime code linked into -rdc programs (CDP2 launch/parameter-buffer/error
#: entry points ``__cudaCDP2*``, their ``__cuda_syscall_*`` targets, the runtime's helpers and memset/memcpy
#: kernels from ``cuda_device_runtime.cu``). The program calls it but cannot change it.
RUNTIME_PREFIXES = ("__cuda",)
RUNTIME_FRAGMENTS = ("cuda_device_runtime", "cnprt")
#: Prefixes of the compiler-emitted CUDA math routines (``__cuda_sm3x_div_rn_noftz_f32_slowpath``, named
#: ``$__internal_0_$__cuda_sm3x_...`` by nvcc 13): also not user code, but fast math replaces them, and their
#: cost belongs to the user line that calls them.
MATH_PREFIXES = ("__cuda_sm", "__internal_", "__nv_")


#: Folders of the compilers' own headers (C++ standard library, libc) on Linux and Windows.
SYSTEM_HEADER_DIRS = ("/usr/include/", "/usr/local/include/", "/usr/lib/gcc/", "/include/c++/", "/vc/tools/msvc/",
                      "/windows kits/")


#: The ``include`` folder of a CUDA installation, on a normalized lower-case path: ``cuda/include/``,
#: ``cuda-13.0/targets/x86_64-linux/include/`` (the runfile and the Debian/RPM packages), ``cuda/v13.0/include/``
#: (Windows), ``cuda/12.3/include/`` (the HPC SDK), ``nvidia/cu13/include/`` and ``nvidia/cuda_runtime/include/``
#: (the PyPI wheels). A project folder that merely names CUDA (``cuda-kernels/include/``) is not one.
_TOOLKIT_INCLUDE = re.compile(r"(?:^|/)(?:cuda(?:[-/]v?\d+(?:\.\d+)*)?|nvidia/cu\d+|nvidia/cuda_\w+)"
                              r"(?:/targets/[^/]+)?/include/")


def is_toolkit_header(path: str) -> bool:
    """Whether a recorded source path is a header of the CUDA toolkit or of the system's compiler, not the user's:
    a file in the ``include`` folder of a CUDA installation (:data:`_TOOLKIT_INCLUDE`:
    ``.../cuda/bin/../targets/x86_64-linux/include/device_atomic_functions.hpp``, ``.../site-packages/nvidia/cu13/
    include/...``) or under a system header folder (:data:`SYSTEM_HEADER_DIRS`: ``/usr/include/c++/13/cmath``).
    Code inlined from it belongs to the user line that called it."""
    low = posixpath.normpath(path.replace("\\", "/")).lower()
    if any(d in low for d in SYSTEM_HEADER_DIRS):
        return True
    return _TOOLKIT_INCLUDE.search(low) is not None


def _user_line_range(pf: ProgramFunction, loop: Loop) -> tuple[str | None, int | None, int | None]:
    """(file, first line, last line) of the user lines (:func:`user_loc`) of ``loop``'s instructions, the file
    holding most of those lines (as the program's loop model picks it); (None, None, None) without line info."""
    locs = {(loc.file, loc.line) for b in loop.blocks for i in pf.blocks[b].instructions
            if (loc := user_loc(i)) is not None}
    if not locs:
        return None, None, None
    counts: dict[str, int] = defaultdict(int)
    for f, _ in locs:
        counts[f] += 1
    file = max(counts, key=lambda f: (counts[f], f))
    nums = [ln for f, ln in locs if f == file]
    return file, min(nums), max(nums)


def user_loc(ins: Instruction) -> SourceLoc | None:
    """The user's source position of an instruction: its own line unless that lies in a CUDA toolkit header
    (:func:`is_toolkit_header`), else the outermost inlined call site outside the toolkit (the user line that
    used the header code: ``atomicAdd`` at orig.cu:21, not device_atomic_functions.hpp:112)."""
    if ins.loc is None:
        return None
    if not is_toolkit_header(ins.loc.file):
        return ins.loc
    for loc in reversed(ins.inline_chain):
        if not is_toolkit_header(loc.file):
            return loc
    return ins.loc


def _innermost(name: str) -> str:
    return name.rsplit("$", 1)[-1] if "$" in name else name


@functools.lru_cache(maxsize=4096)
def is_math_routine(name: str) -> bool:
    """Whether ``name`` (a program symbol) is a compiler-emitted CUDA math routine (e.g. the IEEE division
    slow path); local symbols ``$kernel$callee`` / ``$__internal_0_$__cuda_sm3x_...`` are matched on their parts."""
    if any(f in name for f in RUNTIME_FRAGMENTS):  # __nv_static_..._cuda_device_runtime_cu_... kernels
        return False
    parts = [p for p in name.split("$") if p] or [name]
    return any(p.startswith(MATH_PREFIXES) for p in parts)


@functools.lru_cache(maxsize=4096)  # pure in the name; asked once per blame edge
def is_runtime_function(name: str | None) -> bool:
    """Whether ``name`` is CUDA device-runtime code (``__cudaCDP2LaunchDeviceV2``, ``__cuda_syscall_*``,
    ``cnprt*``, the runtime's memset/memcpy kernels): names starting ``__cuda`` that are not math routines
    (:func:`is_math_routine`), or holding a device-runtime fragment. None is not runtime code."""
    if not name:
        return False
    if any(f in name for f in RUNTIME_FRAGMENTS):
        return True
    return not is_math_routine(name) and _innermost(name).startswith(RUNTIME_PREFIXES)


def is_user_function(name: str | None) -> bool:
    """Neither device-runtime code nor a compiler-emitted math routine (None counts as not user code)."""
    return bool(name) and not is_runtime_function(name) and not is_math_routine(name or "")


def demangle_short(name: str) -> str:
    """A readable short name of a (possibly local, ``$kernel$callee``) mangled symbol: the Itanium
    identifier of the innermost function (``$_Z7advancePfPKfiif$_Z4dampfff`` -> ``damp``)."""
    base = name.rsplit("$", 1)[-1] if name.startswith("$") else name
    if base.startswith("_Z"):
        i = 2
        while i < len(base) and base[i].isalpha() and base[i] in "NKVL":  # nested/const qualifiers
            i += 1
        j = i
        while j < len(base) and base[j].isdigit():
            j += 1
        if j > i:
            n = int(base[i:j])
            return base[j:j + n]
    return base


def _function_scope(pf: ProgramFunction) -> Scope:
    lines = [((i.inline_chain[-1] if i.inline_chain else i.loc).file,
              (i.inline_chain[-1] if i.inline_chain else i.loc).line)
             for i in pf.instructions if i.loc is not None]
    file = None
    lo = hi = None
    if lines:
        counts: dict[str, int] = defaultdict(int)
        for f, _ in lines:
            counts[f] += 1
        file = max(counts, key=lambda k: counts[k])
        nums = [ln for f, ln in lines if f == file]
        lo, hi = min(nums), max(nums)
    return Scope(kind="function", file=file, line=lo, end_line=hi, function=pf.name,
                 name=f"function {demangle_short(pf.name)}")


def build_view(profile: KernelProfile, program: Program | None, blame: BlameGraph, arch: ArchFacts,
               sources: dict[str, str] | None = None, launches: int | None = None) -> KernelView:
    """Join ``blame``'s edges with ``program``'s instructions and loops for ``profile``'s kernel.

    ``sources``: recorded source path -> text (defaults to the sources embedded in the profile);
    ``launches``: launches of this kernel in the run (None when unknown).
    """
    view = KernelView(profile=profile, program=program, blame=blame, arch=arch,
                      sources=dict(sources if sources is not None else profile.source_files), launches=launches)
    view.total = profile.total_samples
    view.latency = profile.latency_samples
    view.active = view.total - view.latency  # profile.active_samples, without summing the PCs twice more
    view.selected = sum(s.stalls.get("selected", 0) for s in profile.pcs.values())
    # One join per PC, not per edge (a PC has an edge per stall reason and candidate def): (function, instruction,
    # innermost loop, device-runtime function?) keyed by (profile name, section offset).
    at: dict[tuple[str, int], _Joined] = {}
    # stall reason -> (GPA class, its position list, the reason's position list)
    per_reason: dict[str, tuple[str, list[int], list[int]]] = {}
    # edges_by's indexes, filled as the edges are made (positions in view.edges)
    by_class: dict[str, list[int]] = {}
    by_reason: dict[str, list[int]] = {}
    by_category: dict[str, list[int]] = {}
    edges = view.edges
    # per profile name, the program function of that name with its offset range, PC table and runtime flag:
    # _join's lookups for a PC inside it, inlined below (one per blamed use; None: no function of that name)
    named: dict[str, tuple[ProgramFunction, int, int, PcTable, bool] | None] = {}
    resolved = view._pc_fn
    use_fns: dict[str, ProgramFunction] = {}  # KernelView.use_functions, per use instead of per edge
    stall_sum: float = 0  # KernelView.edge_stalls: sum() over the kept edges, in their order
    use_name: str | None = None
    use_off = -1
    use_fn: ProgramFunction | None = None
    use_ins: Instruction | None = None
    use_loop: Loop | None = None
    # what the use's edges add to: 0 kept edges, 1 view.outside, 2 view.runtime
    skip = 0
    outside, runtime = view.outside, view.runtime  # summed here in edge order, stored after the loop
    # per profile name, def offset -> its join (the defs of one name looked up without a key tuple per edge)
    def_at: dict[str, dict[int, _Joined]] = {}
    defs_here: dict[int, _Joined] = {}
    append = edges.append
    k = len(edges)  # the next edge's position
    for e in blame.edges:
        if e.use_offset != use_off or e.function != use_name:  # the edges of one use come one after another
            if e.function != use_name:
                got = def_at.get(e.function)
                if got is None:
                    got = def_at[e.function] = {}
                defs_here = got
            use_name, use_off = e.function, e.use_offset
            key = (use_name, use_off)
            hit = at.get(key)
            if hit is None:
                name = e.function
                if name in named:
                    f = named[name]
                else:
                    cand = program.functions.get(name) if program is not None else None
                    f = named[name] = None if cand is None else (
                        cand, cand.function.start, cand.function.start + cand.function.size, pc_table(cand),
                        is_runtime_function(cand.name))
                ins = f[3].ins.get(use_off) if f is not None and f[1] <= use_off < f[2] else None
                if f is not None and ins is not None:
                    resolved[key] = f[0]  # what view.resolve answers for it
                    hit = (f[0], ins, f[3].loop[use_off], f[4])
                else:
                    hit = _join(view, key)
                at[key] = hit
            use_fn, use_ins, use_loop, use_rt = hit
            if use_fn is None and program is not None:
                skip = 1  # e.g. CDP device-runtime code: no SASS, no source, not the user's
            elif use_rt:
                skip = 2  # __cudaCDP2* etc.: stalls inside code the user cannot change
            else:
                skip = 0
                if use_fn is not None and use_fn.name not in use_fns:
                    use_fns[use_fn.name] = use_fn  # its edges are kept below
        if skip:
            if skip == 1:
                outside += e.stall_samples
            else:
                runtime += e.stall_samples
            continue
        reason = e.reason
        r = per_reason.get(reason)
        if r is None:
            cls = stalls.stall_class(reason)
            r = per_reason[reason] = (cls, by_class.setdefault(cls, []), by_reason.setdefault(reason, []))
        cls = r[0]
        r[1].append(k)
        r[2].append(k)
        cat = by_category.get(e.category)
        if cat is None:
            cat = by_category[e.category] = []
        cat.append(k)
        k += 1
        stall_sum += e.stall_samples
        off = e.def_offset
        if off is None:
            append(EdgeView(e, use_fn, use_ins, use_loop, None, None, None, cls))
            continue
        d = defs_here.get(off)
        if d is None:
            key = (e.function, off)
            d = at.get(key)
            if d is None:
                d = at[key] = _join(view, key)
            defs_here[off] = d
        append(EdgeView(e, use_fn, use_ins, use_loop, d[0], d[1], d[2], cls))
    view.outside, view.runtime = outside, runtime
    view._memo[("edges_by", "gpa_class")] = by_class
    view._memo[("edges_by", "reason")] = by_reason
    view._memo[("edges_by", "category")] = by_category
    view._use_fns = use_fns
    view._edge_stalls = stall_sum
    return view


#: A PC joined with the program: (function, instruction, innermost loop, whether the function is device-runtime
#: code); all None / False when the program does not hold the PC.
_Joined = tuple[ProgramFunction | None, Instruction | None, Loop | None, bool]


def _join(view: KernelView, key: tuple[str, int]) -> _Joined:
    """(function, instruction, innermost loop, device-runtime?) of PC ``key`` = (name, offset) in the view's
    program (looked up once per PC: several blame edges — one per stall reason and source — share a PC)."""
    pf = view.resolve(*key)
    if pf is None:
        return None, None, None, False
    t = pc_table(pf)
    ins = t.ins.get(key[1])
    if ins is not None:
        return pf, ins, t.loop[key[1]], is_runtime_function(pf.name)
    return pf, pf.function.at(key[1]), pf.loop_of(key[1]), is_runtime_function(pf.name)


@dataclass(frozen=True, slots=True)
class PcTable:
    """Per instruction offset of one function: ``ins`` = ``pf.function.at(offset)``, ``block`` =
    ``pf.block_of(offset)``, ``loop`` = ``pf.loop_of(offset)`` (None outside loops), for every instruction inside
    one of the function's blocks (the three dicts have the same keys). Three dicts rather than a tuple per
    instruction: they live as long as the program, and the cyclic collector walks each tracked object."""

    ins: dict[int, Instruction]
    block: dict[int, BasicBlock]
    loop: dict[int, Loop | None]

    def block_at(self, pf: ProgramFunction, offset: int) -> BasicBlock | None:
        """``pf.block_of(offset)`` (``pf``: the table's function), the bisection only for an offset the table
        lacks; a loop over one function's PCs asks the table it holds (:func:`block_at` looks the table up)."""
        b = self.block.get(offset)
        return b if b is not None else pf.block_of(offset)


def pc_table(pf: ProgramFunction) -> PcTable:
    """:class:`PcTable` of ``pf``, made once per function (one pass over the blocks instead of two bisections and
    an index check per lookup: the view joins every sampled PC and blame edge with them). An offset missing
    from it (no instruction starts there, or it lies outside the blocks) is answered by those methods
    themselves."""
    def make() -> PcTable:
        t = PcTable({}, {}, {})
        at = pf.function.at
        for b in pf.blocks.values():
            loop = pf.loop_of(b.start) if b.start < b.end else None
            for i in b.instructions:
                off = i.offset
                if b.start <= off < b.end and (ins := at(off)) is not None:
                    t.ins[off] = ins
                    t.block[off] = b
                    t.loop[off] = loop
        return t

    table: PcTable = pf.memo("advice_pc_table", make)
    return table


def block_at(pf: ProgramFunction, offset: int) -> BasicBlock | None:
    """``pf.block_of(offset)``: the basic block holding the instruction at section offset ``offset`` (None outside
    the function's blocks), read from :func:`pc_table`; the bisection only for an offset the table lacks."""
    return pc_table(pf).block_at(pf, offset)
