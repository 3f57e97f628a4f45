"""Pruning cold def→use edges (GPA §4 "Prune cold edges", plus the barrier rule of GPA's released code).

Each rule returns True when the edge is *cold* (cannot have caused stalls of ``reason`` at the use):

- opcode rule: memory-dependency stalls only come from memory instructions, synchronization stalls only
  from synchronization instructions (GPA rule 1). warpwise adds the scoreboard split of execution
  dependency: ``short_scoreboard`` (MIO) stalls only come from variable-latency defs (they set a
  scoreboard barrier), ``wait`` stalls only from fixed-latency defs (or through a barrier/WAR wait).
- barrier rule: a def that sets a write barrier SBi for its result, used by an instruction that does not
  wait on SBi, cannot stall it (the wait happened earlier).
- dominator rule: an unpredicated instruction k on every path from i to j that uses the same operand
  would have stalled instead (GPA rule 2).
- latency rule: if every path is longer (issue cycles) than i's latency upper bound, i finished before j
  issued (GPA rule 3; bounds from analysis/arch/latency.py).

A CALL def (callee unknown) passes the opcode and latency rules: the callee may hold the instruction
that stalls the use.
"""

from __future__ import annotations

from functools import lru_cache
from typing import cast

from warpwise.analysis.arch.latency import L1TEX_CLASSES, MEMORY_CLASSES, latency_class, latency_of
from warpwise.analysis.arch.stalls import MEMORY_DEPENDENCY, SYNCHRONIZATION, stall_class
from warpwise.analysis.blame.slice import Dep, FunctionIndex

RULES = ("opcode", "barrier", "dominator", "latency")


def opcode_rule(fx: FunctionIndex, dep: Dep, reason: str) -> bool:
    """GPA rule 1, refined by scoreboard: True if the def's opcode cannot cause ``reason``.

    Nsight Compute's long scoreboard tracks L1TEX operations (global, local, texture, surface); the
    short scoreboard tracks MIO operations (shared memory, constant loads LDC, MUFU, conversions, S2R,
    shuffles). On the examples' H200 profiles, every use waiting only on an LDC or S2R barrier shows
    short_scoreboard stalls, and every use waiting on an LDG barrier long_scoreboard. So: long_scoreboard
    defs must be L1TEX operations; short_scoreboard defs must set a scoreboard barrier and not be L1TEX;
    ``wait`` (fixed-latency dependency) defs must set no barrier; synchronization stalls need a sync def.
    A write-after-read edge (through a read barrier) passes for either scoreboard.
    """
    key = opcode_key(fx, dep.def_index)
    return key is not None and opcode_cold(key[0], key[1], reason, dep.war)


def opcode_key(fx: FunctionIndex, k: int) -> tuple[str, bool] | None:
    """What the opcode rule reads of def ``k``: (latency class, sets a scoreboard barrier), None for a CALL
    (which passes the rule)."""
    return opcode_keys(fx)[k]


def opcode_keys(fx: FunctionIndex) -> list[tuple[str, bool] | None]:
    """:func:`opcode_key` of every instruction of the function, computed once per function (the rule runs
    per edge and reason)."""
    keys = cast("list[tuple[str, bool] | None] | None", fx.memo.get("opcode_key"))
    if keys is None:
        keys = fx.memo["opcode_key"] = [
            None if d.clobbers_all else
            (latency_class(i.opcode), d.write_barrier is not None or d.read_barrier is not None)
            for i, d in zip(fx.ins, fx.du, strict=True)]
    return keys


@lru_cache(maxsize=4096)
def opcode_cold(klass: str, barrier: bool, reason: str, war: bool) -> bool:
    """:func:`opcode_rule` on what it reads of the def (see there)."""
    cls = stall_class(reason)
    if reason in ("long_scoreboard", "short_scoreboard") and war:
        return False
    if reason == "long_scoreboard":
        return klass not in L1TEX_CLASSES
    if cls == MEMORY_DEPENDENCY:
        return klass not in MEMORY_CLASSES
    if cls == SYNCHRONIZATION:
        return klass != "sync"
    if reason == "short_scoreboard":
        return not barrier or klass in L1TEX_CLASSES
    if reason == "wait":
        # a result protected by a scoreboard barrier shows as a scoreboard stall, not as `wait`
        return barrier
    return False


def barrier_rule(fx: FunctionIndex, dep: Dep, reason: str) -> bool:
    """True if the def protects its result with write barrier SBi and the use does not wait on SBi."""
    d = fx.du[dep.def_index]
    if d.clobbers_all or d.write_barrier is None:
        return False
    waits = fx.ins[dep.use_index].control.waits_on
    if int(d.write_barrier[2:]) in waits:
        return False
    # the edge may still stand through the def's read barrier (write-after-read)
    return not (d.read_barrier is not None and int(d.read_barrier[2:]) in waits)


def dominator_rule(fx: FunctionIndex, dep: Dep, reason: str) -> bool:
    """GPA rule 2: True if an unpredicated user of the same operand lies on every path def→use."""
    return fx.on_every_path(dep.def_index, dep.use_index, dep.operands)


def latency_rule(fx: FunctionIndex, dep: Dep, reason: str, arch: str) -> bool:
    """GPA rule 3: True if the shortest def→use path (issue cycles) exceeds the def's latency bound."""
    if fx.du[dep.def_index].clobbers_all:
        return False
    if arch == fx.arch:  # the index's per-instruction bounds are these upper bounds
        return dep.cycles > fx.bound(dep.def_index)
    return dep.cycles > latency_of(fx.ins[dep.def_index].opcode, arch).upper


def structural_cut(fx: FunctionIndex, dep: Dep, arch: str) -> str | None:
    """The first of the reason-independent rules (barrier, dominator, latency) that cuts the edge.

    The three rules inlined (this runs once per candidate edge): the same tests as :func:`barrier_rule`,
    :func:`dominator_rule` and :func:`latency_rule`, in that order."""
    k = dep.def_index
    d = fx.du[k]
    if d.clobbers_all:  # a CALL passes the barrier and latency rules
        return "dominator" if fx.on_every_path(k, dep.use_index, dep.operands) else None
    wb = d.write_barrier
    if wb is not None:
        waits = fx.ins[dep.use_index].control.waits_on
        if int(wb[2:]) not in waits:
            rb = d.read_barrier
            if not (rb is not None and int(rb[2:]) in waits):
                return "barrier"
    if fx.on_every_path(k, dep.use_index, dep.operands):
        return "dominator"
    if arch == fx.arch:
        if dep.cycles > fx._bounds()[k]:
            return "latency"
    elif dep.cycles > latency_of(fx.ins[k].opcode, arch).upper:
        return "latency"
    return None


def cold_by(fx: FunctionIndex, dep: Dep, reason: str, arch: str,
            structural: dict[int, str | None] | None = None) -> str | None:
    """The first rule (in RULES order) that cuts the edge for ``reason``, or None if it survives.

    Only the opcode rule depends on the reason; pass a dict as ``structural`` to reuse the other rules'
    verdict per def across the reasons of one use (keyed by the def's index).
    """
    if opcode_rule(fx, dep, reason):
        return "opcode"
    if structural is None:
        return structural_cut(fx, dep, arch)
    if dep.def_index not in structural:
        structural[dep.def_index] = structural_cut(fx, dep, arch)
    return structural[dep.def_index]
