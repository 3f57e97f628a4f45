"""Join a profile's PCs to a cubin's instructions (issue 2, item 5).

Profile PCs are absolute; the report gives each function's start PC but not its name (except the
launched kernel). A profile function is matched to a cubin code section by its SASS: the opcodes at the
sampled offsets must agree. Sampled PCs past the end of their section are moved to UNATTRIBUTED.
"""

from __future__ import annotations

import copy
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


def join(profile: KernelProfile, cubin: Cubin, min_agreement: float = 0.95) -> KernelProfile:
    """Rename the profile's functions to the cubin's and check every sampled PC's SASS.

    Returns ``profile`` (modified in place: keys and PCSample.function renamed, out-of-range PCs moved to
    UNATTRIBUTED). Raises MismatchError when the kernel is not in the cubin, the architectures differ,
    or fewer than ``min_agreement`` of the compared opcodes agree (a different build of the source).
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
    for func in sorted(by_func):
        if func in (UNATTRIBUTED, profile.mangled):
            continue
        best, best_score = None, -1.0
        for name, sec in secs.items():
            m, c = _agreement(by_func[func], sec)
            score = m / c if c else 0.0
            if score > best_score:
                best, best_score = name, score
        if best is not None and best_score >= min_agreement:
            rename[func] = best

    m, c = _agreement(by_func.get(profile.mangled, []), secs[profile.mangled])
    if c and m / c < min_agreement:
        bad = next(s for s in by_func[profile.mangled]
                   if s.sass and (ins := secs[profile.mangled].by_offset.get(s.offset)) is not None
                   and ins.opcode != _opcode_of_sass(s.sass)) if m < c else None
        where = (f" first difference at offset {bad.offset:#x}: profile has '{bad.sass}', binary has "
                 f"'{secs[profile.mangled].by_offset[bad.offset].text}'") if bad else ""
        raise MismatchError(f"{cubin.path} does not match {profile.report} for kernel {profile.name}: only "
                            f"{m}/{c} sampled instructions agree.{where} Rebuild, or pass the binary that was profiled")

    new: dict[tuple[str, int], PCSample] = {}
    for s in profile.pcs.values():
        target = rename.get(s.function)
        if target is None or s.offset >= secs[target].size:
            s.function, s.offset = UNATTRIBUTED, s.pc
        else:
            s.function = target
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
