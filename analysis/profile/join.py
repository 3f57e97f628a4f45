"""Join a profile's PCs to a cubin's instructions (issue 2, item 5).

Profile PCs are absolute; the report gives each function's start PC but not its name (except the
launched kernel). Two checks that the binary is the profiled build, each used where the profile has its input:

- *by SASS* (a CSV's SASS view, or a report read with its SASS text): the opcodes at the sampled offsets must
  agree;
- *by executed opcodes* (a report with InstructionStats, no SASS text needed): the report's warp-level executed
  instructions per opcode (``sass__inst_executed_per_opcode``) must equal the sum of each profiled PC's
  ``inst_executed`` under the opcode the binary has at that PC's offset. Every executed instruction counts,
  at its own offset: a build whose code moved by one instruction, or differs in any executed opcode, fails.

A profile function is matched to a cubin code section the same way: by its SASS, or else as the one
assignment of sections to the report's functions that makes the executed opcodes add up (candidates: the
sections holding an instruction at every profiled offset and, where both sides have lines, the report's
source lines at those offsets). Sampled PCs past the end of their section are moved to UNATTRIBUTED.
"""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass, replace

from warpwise.analysis.binary.model import Cubin, Instruction, SourceLoc
from warpwise.analysis.profile.model import KernelProfile, PCSample
from warpwise.analysis.profile.ncu import UNATTRIBUTED


class MismatchError(Exception):
    """The profile and the binary are not of the same build: the message says which kernel and where."""


@dataclass
class Section:
    """One code section of a cubin: owner function name, size in bytes, instructions by offset."""

    name: str
    size: int
    by_offset: dict[int, Instruction]


def sections(cubin: Cubin) -> dict[str, Section]:
    """Code sections of ``cubin`` keyed by the name of the function that owns the section."""
    out: dict[str, Section] = {}
    for f in cubin.functions.values():
        owner = f.section.removeprefix(".text.")
        sec = out.setdefault(owner, Section(owner, 0, {}))
        for ins in f.instructions:
            sec.by_offset[ins.offset] = ins
        sec.size = max(sec.size, f.start + f.size)
    return out


def _opcode_of_sass(text: str) -> str:
    toks = text.replace(";", " ").split()
    if toks and toks[0].startswith("@"):
        toks = toks[1:]
    return toks[0] if toks else ""


def _agreement(samples: list[PCSample], sec: Section) -> tuple[int, int]:
    """(matching, compared) opcodes between profile SASS and the section's instructions."""
    match = compared = 0
    for s in samples:
        if not s.sass:
            continue
        ins = sec.by_offset.get(s.offset)
        compared += 1
        if ins is not None and ins.opcode == _opcode_of_sass(s.sass):
            match += 1
    return match, compared


def _executed(samples: list[PCSample], sec: Section) -> Counter[str]:
    """Warp-level executed instructions of ``samples`` by the opcode (no modifiers) ``sec`` has at each one's
    offset; "" counts those with no instruction there."""
    out: Counter[str] = Counter()
    for s in samples:
        if s.inst_executed:
            ins = sec.by_offset.get(s.offset)
            out[ins.base_opcode if ins is not None else ""] += s.inst_executed
    return out


def _counts_agreement(totals: dict[str, int], got: Counter[str], unknown: int) -> tuple[int, int, str | None]:
    """(matching, compared) executed instructions between the report's per-opcode ``totals`` and ``got`` (the
    binary's opcodes at the profiled PCs; "" = no instruction at the offset), and the opcode whose counts
    differ most (None when none differs). ``unknown``: executed instructions at PCs no section was found for
    (their opcodes cannot be compared)."""
    match = sum(min(n, got.get(op, 0)) for op, n in totals.items())
    compared = max(sum(totals.values()) - unknown, sum(got.values()))
    worst = max(set(totals) | set(got), key=lambda op: (abs(totals.get(op, 0) - got.get(op, 0)), op), default=None)
    return match, compared, worst if worst is not None and totals.get(worst, 0) != got.get(worst, 0) else None


def _lines_agree(samples: list[PCSample], sec: Section, min_agreement: float) -> bool:
    """Whether the report's source lines at ``samples`` are those ``sec``'s line table has at the same offsets
    (the innermost position or a call site it was inlined through); True when no offset has both."""
    match = compared = 0
    for s in samples:
        ins = sec.by_offset.get(s.offset)
        if s.line is None or ins is None or ins.loc is None:
            continue
        compared += 1
        match += any(loc.line == s.line and loc.file == s.file for loc in (ins.loc, *ins.inline_chain))
    return not compared or match >= min_agreement * compared


_MAX_SEARCH = 20000  # assignment search nodes: past this the functions stay unnamed (their PCs unattributed)


def _names_by_counts(by_func: dict[str, list[PCSample]], kernel: str, secs: dict[str, Section],
                     totals: dict[str, int], min_agreement: float) -> dict[str, str]:
    """Profile function -> section owner for the report's provisional ``$fnN`` functions without SASS text:
    the one assignment (each section used once) under which the executed opcodes of the kernel and of these
    functions equal the report's ``totals``; where no single exact one exists, a function whose executed
    opcodes fit what the kernel leaves in exactly one candidate section. Unnamed functions are left out."""
    rest = Counter(totals)
    rest.subtract(_executed(by_func.get(kernel, []), secs[kernel]))
    funcs = [f for f in sorted(by_func) if f not in (UNATTRIBUTED, kernel)]
    cands: dict[str, list[tuple[str, Counter[str]]]] = {}
    for f in funcs:
        ss = by_func[f]
        opts = []
        for name, sec in secs.items():
            if name == kernel:
                continue
            got = _executed(ss, sec)  # "" > 0: an executed PC where the section has no instruction
            if got.get("", 0) == 0 and all(n <= rest.get(op, 0) for op, n in got.items()) and \
                    _lines_agree(ss, sec, min_agreement):
                opts.append((name, got))
        cands[f] = opts
    order = sorted(funcs, key=lambda f: len(cands[f]))
    found: list[dict[str, str]] = []
    nodes = 0

    def search(k: int, left: Counter[str], used: dict[str, str]) -> None:
        nonlocal nodes
        if len(found) > 1 or nodes > _MAX_SEARCH:
            return
        nodes += 1
        if k == len(order):
            if not any(left.values()):
                found.append(dict(used))
            return
        f = order[k]
        for name, got in cands[f]:
            if name in used.values() or any(n > left.get(op, 0) for op, n in got.items()):
                continue
            used[f] = name
            search(k + 1, _minus(left, got), used)
            del used[f]

    search(0, rest, {})
    if len(found) == 1 and nodes <= _MAX_SEARCH:
        return found[0]
    return {f: opts[0][0] for f, opts in cands.items() if len(opts) == 1}


def _minus(a: Counter[str], b: Counter[str]) -> Counter[str]:
    out = Counter(a)
    out.subtract(b)
    return out


def join(profile: KernelProfile, cubin: Cubin, min_agreement: float = 0.95) -> KernelProfile:
    """Rename the profile's functions to the cubin's and check that the cubin is the profiled build.

    Returns ``profile`` (modified in place: keys and PCSample.function renamed, out-of-range PCs moved to
    UNATTRIBUTED, and ``PCSample.sass`` filled from the cubin where the reader left it empty). Raises
    MismatchError when the kernel is not in the cubin, the architectures differ, or fewer than
    ``min_agreement`` of the compared sampled opcodes (by SASS) or executed instructions (by executed
    opcodes: the module docstring) agree — a different build of the source.
    """
    if profile.arch != "sm_unknown" and cubin.arch and cubin.arch != profile.arch:
        raise MismatchError(
            f"{cubin.path}: built for {cubin.arch} but the profile {profile.report} ran on {profile.arch} "
            f"({profile.device}); pass the {profile.arch} cubin (an executable holding several is fine)")
    secs = sections(cubin)
    if profile.mangled not in secs:
        known = ", ".join(sorted(secs)) or "none"
        raise MismatchError(f"{cubin.path}: kernel {profile.mangled} ({profile.name}) of {profile.report} "
                            f"is not in this cubin (its kernels: {known})")
    by_func: dict[str, list[PCSample]] = {}
    for s in profile.pcs.values():
        by_func.setdefault(s.function, []).append(s)

    rename: dict[str, str] = {profile.mangled: profile.mangled}
    no_sass = {f for f, ss in by_func.items() if not any(s.sass for s in ss)}
    for func in sorted(by_func):
        if func in (UNATTRIBUTED, profile.mangled) or func in no_sass:
            continue
        best, best_score = None, -1.0
        for name, sec in secs.items():
            m, c = _agreement(by_func[func], sec)
            score = m / c if c else 0.0
            if score > best_score:
                best, best_score = name, score
        if best is not None and best_score >= min_agreement:
            rename[func] = best
    totals = profile.executed_per_opcode
    if totals and no_sass - {UNATTRIBUTED, profile.mangled}:
        named = _names_by_counts({f: ss for f, ss in by_func.items() if f in no_sass or f == profile.mangled},
                                 profile.mangled, secs, totals, min_agreement)
        rename.update({f: n for f, n in named.items() if n not in rename.values()})

    m, c = _agreement(by_func.get(profile.mangled, []), secs[profile.mangled])
    if c and m / c < min_agreement:
        bad = next(s for s in by_func[profile.mangled]
                   if s.sass and (ins := secs[profile.mangled].by_offset.get(s.offset)) is not None
                   and ins.opcode != _opcode_of_sass(s.sass)) if m < c else None
        where = (f" first difference at offset {bad.offset:#x}: profile has '{bad.sass}', binary has "
                 f"'{secs[profile.mangled].by_offset[bad.offset].text}'") if bad else ""
        raise MismatchError(f"{cubin.path} does not match {profile.report} for kernel {profile.name}: only "
                            f"{m}/{c} sampled instructions agree.{where} Rebuild, or pass the binary that was profiled")
    if totals:
        got: Counter[str] = Counter()
        unknown = 0
        for func, ss in by_func.items():
            if func in rename:
                got.update(_executed(ss, secs[rename[func]]))
            else:
                unknown += sum(s.inst_executed for s in ss)
        m, c, worst = _counts_agreement(totals, got, unknown)
        if c and m < min_agreement * c:
            where = ""
            if worst == "":
                where = f" {got[worst]:,} executed instructions are at offsets where the binary has none."
            elif worst is not None:
                where = (f" Largest difference: the report executed {totals.get(worst, 0):,} {worst}, the binary "
                         f"has {worst} at profiled PCs that executed {got.get(worst, 0):,}.")
            raise MismatchError(
                f"{cubin.path} does not match {profile.report} for kernel {profile.name}: only {m:,}/{c:,} executed "
                f"instructions agree with the opcode the binary has at their offset (the report's InstructionStats "
                f"per opcode).{where} Rebuild, or pass the binary that was profiled")

    new: dict[tuple[str, int], PCSample] = {}
    for s in profile.pcs.values():
        target = rename.get(s.function)
        if target is None or s.offset >= secs[target].size:
            s.function, s.offset = UNATTRIBUTED, s.pc
        else:
            s.function = target
            if not s.sass and (ins := secs[target].by_offset.get(s.offset)) is not None:
                s.sass = ins.text  # the binary's SASS (the reader read none): the opcode checks above agree
        new[(s.function, s.offset)] = s
    profile.pcs = new
    return profile


def lines_from_profile(profile: KernelProfile, cubin: Cubin) -> tuple[Cubin, int]:
    """A copy of ``cubin`` (after :func:`join`) whose instructions without a line take the line the
    profile records for their PC, and how many did.

    For a cubin without a line table (built without -lineinfo, or stripped) profiled from a build that had
    one: Nsight Compute correlated the report's PCs from the profiled binary's own line table, so the same
    SASS (join checked it) has those lines. Inline chains are not in a report's per-PC lines and stay
    empty. A copy: the loaded cubin is shared by every profile of the binary (pipeline's cache).
    """
    secs = sections(cubin)
    lines: dict[tuple[str, int], SourceLoc] = {}
    for s in profile.pcs.values():
        if s.file and s.line is not None and s.function in secs:
            lines[(s.function, s.offset)] = SourceLoc(s.file, s.line)
    n = 0
    functions = {}
    for name, f in cubin.functions.items():
        owner = f.section.removeprefix(".text.")
        ins_out = []
        for ins in f.instructions:
            loc = lines.get((owner, ins.offset)) if ins.loc is None else None
            if loc is not None:
                ins = copy.copy(ins)
                ins.loc = loc
                n += 1
            ins_out.append(ins)
        functions[name] = replace(f, instructions=ins_out)
    return replace(cubin, functions=functions), n
