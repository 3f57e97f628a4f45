"""The instruction blamer's entry point (GPA §4): profile + program -> BlameGraph.

Steps per sampled instruction j and stall reason r (Nsight Compute names):
1. r not a dependency reason (throttles, fetch, not_selected, ...): j keeps its samples (GPA §4: "caused
   by instruction samples with the stall").
2. otherwise slice backwards for j's immediate dependency sources (:mod:`.slice`), prune cold edges for r
   (:mod:`.prune`), apportion r's samples and their not-issued part over the survivors by GPA eq. 1
   (:mod:`.apportion`), classify each edge (:mod:`.classify`). No survivor: j keeps them ("self").

Conservation: for every reason, the sum of edge ``stall_samples`` equals the profile's samples of that
reason (same for ``latency_samples`` and the not-issued counts). Sampled PCs that match no instruction of
the program — e.g. CDP device-runtime code Nsight Compute files under ``<unattributed>`` or under a
``kernel$fnN`` name with no symbol in the cubin — are self-kept under their own function name and offset
with an empty ``section``; ``stats['unresolved_samples']`` counts them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from warpwise.analysis.arch.facts import arch_facts
from warpwise.analysis.arch.model import ArchFacts
from warpwise.analysis.arch.stalls import is_blamed
from warpwise.analysis.binary.model import Cubin
from warpwise.analysis.blame.apportion import Source, apportion, efficiency_weight
from warpwise.analysis.blame.classify import classify_edge, classify_self
from warpwise.analysis.blame.model import BlameEdge, BlameGraph
from warpwise.analysis.blame.prune import RULES, opcode_cold, opcode_keys, structural_cut
from warpwise.analysis.blame.slice import Dep, FunctionIndex
from warpwise.analysis.gcpause import gc_paused
from warpwise.analysis.profile.model import KernelProfile, PCSample
from warpwise.analysis.program.build import build_program
from warpwise.analysis.program.cfg import CONTROL_TRANSFERS
from warpwise.analysis.program.model import Program, ProgramFunction

_CUT_KEY = {r: f"cut_{r}" for r in RULES}
_WHOLE = (1.0,)  # the shares of a single source



class BlameError(ValueError):
    """The profile and the program do not belong together (different architecture or kernel)."""


def _resolve(program: Program, fname: str, off: int) -> ProgramFunction | None:
    pf = program.functions.get(fname)
    if pf is not None:
        fn = pf.function
        if fn.start <= off < fn.start + fn.size:
            return pf
        return program.function_at(fn.section, off)  # __noinline__ code filed under the kernel's name
    return None


#: The fall-through instruction must run at least this many times less often than the transfer before it.
_RARE_FACTOR = 10


def _branch_owner(program: Program, pf: ProgramFunction, pc: PCSample,
                  by_section: dict[tuple[str, int], PCSample]) -> tuple[ProgramFunction, int]:
    """Offset to charge ``pc``'s branch_resolving samples to.

    While a warp waits for a branch target, its sampled PC is already the next one (observed on the
    H200: after a RET executed 4,259,712 times, the never-reached-by-fall-through first instruction of the
    division slow path, executed 65,408 times, held 1,490 branch_resolving samples). So when the previous
    instruction is a control transfer executed at least ``_RARE_FACTOR`` times as often as this one, the
    samples belong to the transfer (which may end the previous function of the same section). Otherwise
    they stay where ncu put them. Returns the owning function and section offset.
    """
    section = pf.function.section
    owner = next((f for f in program.functions.values() if f.function.section == section
                  and f.function.at(pc.offset - 16) is not None), None)
    prev = owner.function.at(pc.offset - 16) if owner is not None else None
    if owner is None or prev is None or prev.base_opcode not in CONTROL_TRANSFERS:
        return pf, pc.offset
    before = by_section.get((section, prev.offset))
    if before is None or before.inst_executed < _RARE_FACTOR * max(1, pc.inst_executed):
        return pf, pc.offset
    return owner, prev.offset


def attribute(program_or_cubin: Program | Cubin, profile: KernelProfile,
              arch: str | ArchFacts | None = None) -> BlameGraph:
    """Blame every stall sample of ``profile`` on the instruction that caused it.

    ``program_or_cubin``: the kernel's Program (or a Cubin, built on the fly). ``profile``: one kernel
    launch (samples keyed by (function, section offset)). ``arch``: facts or name (default: the
    program's architecture). Returns a BlameGraph whose edges carry float samples that sum, per reason,
    to the profile's integer samples; ``coverage_before``/``coverage_after`` = share of dependency-reason
    stall samples at instructions with exactly one candidate source before/after pruning (GPA Fig. 7).

    Raises:
        BlameError: the profile's architecture differs from the program's, or the profile's kernel is
            not a function of the program.
        UnknownArchError: ``arch`` is unknown.
    """
    with gc_paused():  # ~10^5 small acyclic objects: collection passes cost a third of the run
        return _attribute(program_or_cubin, profile, arch)


def _attribute(program_or_cubin: Program | Cubin, profile: KernelProfile,
               arch: str | ArchFacts | None) -> BlameGraph:
    program = program_or_cubin if isinstance(program_or_cubin, Program) else build_program(program_or_cubin)
    facts = arch_facts(arch if arch is not None else program.arch)
    if profile.arch and arch_facts(profile.arch).sm != arch_facts(program.arch).sm:
        raise BlameError(f"{profile.report or 'profile'}: kernel {profile.name} was profiled on {profile.arch} "
                         f"but {program.cubin.path} is {program.arch}")
    if profile.mangled and profile.mangled not in program.functions:
        raise BlameError(f"{profile.report or 'profile'}: kernel {profile.mangled} is not in {program.cubin.path}")

    graph = BlameGraph(kernel=profile.mangled or profile.name)
    arch_name = facts.arch
    stats: dict[str, float] = defaultdict(float)
    index: dict[str, FunctionIndex] = {}
    by_section: dict[tuple[str, int], PCSample] = {}
    resolved: list[tuple[PCSample, ProgramFunction | None]] = []
    for (fname, off), pc in sorted(profile.pcs.items()):
        pf = _resolve(program, fname, off)
        if pf is not None and pf.function.at(off) is None:
            pf = None
        resolved.append((pc, pf))
        if pf is not None:
            by_section[(pf.function.section, off)] = pc

    cov_total = cov_before = cov_after = 0.0
    blamed: dict[str, bool] = {}  # per reason: is_blamed / classify_self looked up once, not per PC
    self_class: dict[str, str] = {}
    for pc, pf in resolved:
        if not pc.stalls:
            continue
        if pf is None:
            for reason, s in pc.stalls.items():
                graph.edges.append(BlameEdge(pc.function, None, pc.offset, reason, classify_self(reason),
                                             float(s), float(pc.stalls_not_issued.get(reason, 0))))
                stats["unresolved_samples"] += s
            continue
        fx = index.get(pf.name)
        if fx is None:
            fx = index[pf.name] = FunctionIndex(pf, arch_name)
        okeys = opcode_keys(fx)
        j = fx.index[pc.offset]
        section = pf.function.section
        pname = pf.name
        deps: dict[int, Dep] | None = None
        dep_list: list[Dep] = []
        n_candidates = 0
        structural: dict[int, str | None] = {}
        src_cache: dict[int, Source] = {}
        operands: dict[int, tuple[str, ...]] = {}
        for reason, s in sorted(pc.stalls.items()):
            lat = float(pc.stalls_not_issued.get(reason, 0))
            if s <= 0 and lat <= 0:
                continue
            b = blamed.get(reason)
            if b is None:
                b = blamed[reason] = is_blamed(reason)
                self_class[reason] = classify_self(reason)
            if not b:
                owner_fn, owner = pf, pc.offset
                if reason == "branch_resolving":
                    owner_fn, owner = _branch_owner(program, pf, pc, by_section)
                    if owner != pc.offset:
                        stats["branch_resolving_moved"] += s
                graph.edges.append(BlameEdge(owner_fn.name, None, owner, reason, self_class[reason], float(s),
                                             lat, 0, section))
                continue
            if deps is None:
                deps, n_candidates = fx.slice_candidates(j)
                dep_list = list(deps.values())
            survivors: list[Dep] = []
            for dep in dep_list:
                # cold_by, inlined: the opcode rule per reason, the reason-independent rules once per def
                k = dep.def_index
                key = okeys[k]
                if key is not None and opcode_cold(key[0], key[1], reason, dep.war):
                    stats["cut_opcode"] += 1
                    continue
                if k in structural:
                    rule = structural[k]
                else:
                    rule = structural[k] = structural_cut(fx, dep, arch_name)
                if rule is None:
                    survivors.append(dep)
                else:
                    stats[_CUT_KEY[rule]] += 1
            cov_total += s
            if n_candidates == 1:
                cov_before += s
            if len(survivors) == 1:
                cov_after += s
            if not survivors:
                graph.edges.append(BlameEdge(pname, None, pc.offset, reason, "self", float(s), lat, 0, section))
                stats["self_samples"] += s
                continue
            sources = []
            for dep in survivors:
                src = src_cache.get(dep.def_index)
                if src is None:  # reason-independent: computed once per (def, use)
                    dpc = by_section.get((section, fx.ins[dep.def_index].offset))
                    src = src_cache[dep.def_index] = Source(
                        issued=float(dpc.issued) if dpc else 0.0,
                        path=fx.longest(dep.def_index, j, dep.instructions),
                        efficiency=efficiency_weight(dpc, facts.warp_size))
                sources.append(src)
            if len(sources) == 1 and sources[0].issued > 0:
                shares: Sequence[float] = _WHOLE  # apportion's w / w for one source of finite weight w > 0
            else:
                if sum(x.issued for x in sources) <= 0:  # no def was sampled issuing: executed counts stand in
                    sources = [Source(float(by_section[(section, fx.ins[d.def_index].offset)].inst_executed)
                                      if (section, fx.ins[d.def_index].offset) in by_section else 0.0, x.path,
                                      x.efficiency) for d, x in zip(survivors, sources, strict=True)]
                shares = apportion(sources)
            for dep, src, share in zip(survivors, sources, shares, strict=True):
                k = dep.def_index
                di = fx.ins[k]
                ops = operands.get(k)
                if ops is None:
                    ops = operands[k] = tuple(sorted(dep.operands))
                graph.edges.append(BlameEdge(
                    pname, di.offset, pc.offset, reason,
                    classify_edge(reason, di.opcode, dep.war, fx.du[k].clobbers_all),
                    s * share, lat * share, src.path, section, ops, dep.cycles))
            stats["apportioned_samples"] += s
    graph.coverage_before = cov_before / cov_total if cov_total else 0.0
    graph.coverage_after = cov_after / cov_total if cov_total else 0.0
    stats["dependency_samples"] = cov_total
    for r in RULES:
        stats.setdefault(f"cut_{r}", 0.0)
    graph.stats = dict(stats)
    return graph
