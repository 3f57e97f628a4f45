"""Join a profile's PCs to a cubin's instructions (issue 2, item 5).

Profile PCs are absolute; the report gives each function's start PC but not its name (except the
launched kernel). A profile function is matched to a cubin code section by its SASS: the opcodes at the
sampled offsets must agree (≥ 95%), else the binary is refused as another build. Sampled PCs past the end
of their section are moved to UNATTRIBUTED.

A report read without its SASS text (ncu-report's disassembler costs the reader ~72 MiB: issue 15 item 4)
is first checked without it, and accepted when all of these hold (:func:`_without_sass`):

- the ``$fnN`` functions are named by the one assignment of sections that makes the opcodes add up (below);
- the report's warp-level executed instructions per opcode (``sass__inst_executed_per_opcode``) equal, to
  1%, the sum of each profiled PC's ``inst_executed`` under the opcode the binary has at that PC's offset —
  every executed instruction counts, so any other opcode anywhere it ran shows;
- every PC whose own counters say what it is — global sectors, shared wavefronts, divergent branch targets,
  threads with the predicate off — has such an instruction at its offset (code moved by an instruction);
- the code itself: where the report carries the profiled module (``ncu.embedded_code``), each joined
  section's bytes are the binary's, byte for byte; where it carries none, the kernel's source lines in the
  report are the binary's at the same offsets, up to one common shift.

Otherwise the SASS is read after all (:func:`~warpwise.analysis.profile.ncu.fill_sass`, a second report
read) and the SASS check decides, with its messages: a mismatched binary, a report without the module and a
binary or report without lines, a function the counts cannot name. Known gap where the SASS is not read:
a report without the module, and a rebuild that only reorders instructions of one source line within a
block (same opcode counts, same lines at each offset).
"""

from __future__ import annotations

import copy
import hashlib
import struct
from collections import Counter
from dataclasses import dataclass, replace

from warpwise.analysis.arch.latency import SHARED_CAPABLE, opcodes_of_class
from warpwise.analysis.binary.model import Cubin, Instruction, SourceLoc, opcode_of_sass
from warpwise.analysis.profile.model import KernelProfile, PCSample
from warpwise.analysis.profile.ncu import UNATTRIBUTED, fill_sass
from warpwise.analysis.program.cfg import CONTROL_TRANSFERS, CONVERGENCE


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


def _agreement(samples: list[PCSample], sec: Section) -> tuple[int, int]:
    """(matching, compared) opcodes between profile SASS and the section's instructions."""
    match = compared = 0
    for s in samples:
        if not s.sass:
            continue
        ins = sec.by_offset.get(s.offset)
        compared += 1
        if ins is not None and ins.opcode == opcode_of_sass(s.sass):
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


def _counts_agreement(totals: dict[str, int], got: Counter[str], unknown: int) -> tuple[int, int]:
    """(matching, compared) executed instructions between the report's per-opcode ``totals`` and ``got`` (the
    binary's opcodes at the profiled PCs; "" = no instruction at the offset). ``unknown``: executed
    instructions at PCs no section was found for (their opcodes cannot be compared)."""
    match = sum(min(n, got.get(op, 0)) for op, n in totals.items())
    return match, max(sum(totals.values()) - unknown, sum(got.values()))


#: Opcodes (no modifiers) an instruction with per-PC evidence of a kind can have (Hopper SASS, CUDA 13 nvdisasm;
#: the metrics are SourceCounters' memory_l2_theoretical_sectors_global, memory_l1_wavefronts_shared,
#: smsp__branch_targets_threads_divergent). Checked on the repository's 129 profiled launches: every PC with
#: L2 sectors was LDG/STG/REDG/ST, with shared wavefronts LDS/STS, with divergent targets BRA.
# texture: the surface loads/stores count global sectors; the bulk reductions have no latency-table class yet
_GLOBAL_OPS = opcodes_of_class("global", "texture") | {"UBLKRED", "UTMAREDG"}
_SHARED_OPS = opcodes_of_class("shared") | SHARED_CAPABLE
_BRANCH_OPS = CONTROL_TRANSFERS | CONVERGENCE  # divergent targets are counted at branches and reconvergence


def _evidence_agreement(samples: list[PCSample], sec: Section) -> tuple[int, int, PCSample | None]:
    """(agreeing, compared) PCs whose own counters say what kind of instruction is there — global sectors (a
    global memory access), shared wavefronts (a shared-memory access), divergent branch targets (a branch),
    fewer threads with the predicate on than executing (a guarded ``@P`` instruction) — against the
    instruction ``sec`` has at that offset, and the first that disagrees. Offset-exact where the per-opcode
    counts are not (code moved within a straight-line block keeps its opcode histogram)."""
    match = compared = 0
    bad = None
    for s in sorted(samples, key=lambda x: x.offset):
        need = []
        if s.l2_sectors:
            need.append(_GLOBAL_OPS)
        if s.shared_wavefronts:
            need.append(_SHARED_OPS)
        if s.divergent_branches:
            need.append(_BRANCH_OPS)
        guarded = s.predicated_on_thread_inst_executed < s.thread_inst_executed
        if not need and not guarded:
            continue
        ins = sec.by_offset.get(s.offset)
        compared += 1
        if ins is not None and all(ins.base_opcode in ops for ops in need) and (not guarded or ins.predicate):
            match += 1
        elif bad is None:
            bad = s
    return match, compared, bad


def _file_name(path: str | None) -> str:
    return (path or "").replace("\\", "/").rsplit("/", 1)[-1]


def _line_agreement(samples: list[PCSample], sec: Section) -> tuple[int, int]:
    """(agreeing, compared) PCs whose source line in the report is the line ``sec``'s line table has at the same
    offset (its innermost position or a call site it was inlined through, same file name: the two may spell a
    header's folder differently), up to one line shift common to all (a source edited above the kernel and
    rebuilt: the same SASS, every line moved alike)."""
    deltas: list[set[int]] = []
    for s in samples:
        ins = sec.by_offset.get(s.offset)
        if s.line is None or ins is None or ins.loc is None:
            continue
        name = _file_name(s.file)
        deltas.append({s.line - loc.line for loc in (ins.loc, *ins.inline_chain) if _file_name(loc.file) == name})
    if not deltas:
        return 0, 0
    common = Counter(d for ds in deltas for d in ds).most_common(1)
    return (common[0][1] if common else 0), len(deltas)


_MAX_SEARCH = 20000  # assignment search nodes: past this only functions with one candidate section are named


def _names_by_counts(by_func: dict[str, list[PCSample]], kernel: str, secs: dict[str, Section],
                     totals: dict[str, int], min_agreement: float = 0.95) -> dict[str, str]:
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
            m, c, _ = _evidence_agreement(ss, sec)
            lm, lc = _line_agreement(ss, sec)
            if got.get("", 0) == 0 and all(n <= rest.get(op, 0) for op, n in got.items()) and m == c and \
                    lm >= min_agreement * lc:
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


def _code_sha256(sec: Section) -> str:
    """SHA-256 (hex) of a section's code bytes (each instruction's two 64-bit words, little-endian)."""
    h = hashlib.sha256()
    for _, ins in sorted(sec.by_offset.items()):
        h.update(struct.pack("<QQ", ins.lo, ins.hi))
    return h.hexdigest()


#: Acceptance without SASS text: every executed instruction's opcode as the report counts it, all but 1% (two
#: replay passes of a kernel whose control flow depends on atomics may differ slightly).
_COUNTS_AGREEMENT = 0.99


def _without_sass(profile: KernelProfile, by_func: dict[str, list[PCSample]],
                  secs: dict[str, Section]) -> dict[str, str] | None:
    """Profile function -> section owner when the binary is shown to be the profiled build without SASS text;
    None when that is not shown (then the SASS check decides, with its own messages). Shown: the report has
    per-opcode counts, every function is named (:func:`_names_by_counts`), each joined section's code is the
    report's module's byte for byte (:func:`_code_sha256`) or, for a report without the module, the
    kernel's source lines agree at the same offsets (:func:`_line_agreement`), every PC's counters agree with
    the instruction at its offset (:func:`_evidence_agreement`), and ≥ 99% of the launch's executed
    instructions have the opcode the report counts."""
    totals, kernel, code = profile.executed_per_opcode, profile.mangled, profile.profiled_code_sha256
    if not totals:
        return None
    rename = {kernel: kernel} | _names_by_counts(by_func, kernel, secs, totals)
    if any(f not in rename for f in by_func if f != UNATTRIBUTED) or len(set(rename.values())) < len(rename):
        return None
    if code:  # the profiled code itself: byte for byte, or the SASS decides
        if any(_code_sha256(secs[t]) not in code.get(t, ()) for t in rename.values()):
            return None
    else:
        lm, lc = _line_agreement(by_func.get(kernel, []), secs[kernel])
        if not lc or lm < 0.95 * lc:
            return None
    got: Counter[str] = Counter()
    for func, target in rename.items():
        m, c, _ = _evidence_agreement(by_func.get(func, []), secs[target])
        if m < c:
            return None
        got.update(_executed(by_func.get(func, []), secs[target]))
    unknown = sum(s.inst_executed for s in by_func.get(UNATTRIBUTED, []))
    m, c = _counts_agreement(totals, got, unknown)
    return rename if c and m >= _COUNTS_AGREEMENT * c else None


def _by_sass(profile: KernelProfile, by_func: dict[str, list[PCSample]], secs: dict[str, Section], cubin: Cubin,
             min_agreement: float) -> dict[str, str]:
    """Profile function -> section owner by the opcodes at the sampled offsets (the profile's SASS text).
    Raises MismatchError when fewer than ``min_agreement`` of the kernel's compared opcodes agree."""
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
                   and ins.opcode != opcode_of_sass(s.sass)) if m < c else None
        where = (f" first difference at offset {bad.offset:#x}: profile has '{bad.sass}', binary has "
                 f"'{secs[profile.mangled].by_offset[bad.offset].text}'") if bad else ""
        raise MismatchError(f"{cubin.path} does not match {profile.report} for kernel {profile.name}: only "
                            f"{m}/{c} sampled instructions agree.{where} Rebuild, or pass the binary that was profiled")
    return rename


def join(profile: KernelProfile, cubin: Cubin, min_agreement: float = 0.95) -> KernelProfile:
    """Rename the profile's functions to the cubin's and check that the cubin is the profiled build.

    Returns ``profile`` (modified in place: keys and PCSample.function renamed, out-of-range PCs moved to
    UNATTRIBUTED, and ``PCSample.sass`` filled from the cubin where the reader left it empty). A profile
    without SASS text is checked without it where it can be (module docstring), else its SASS is read from
    the report. Raises MismatchError when the kernel is not in the cubin, the architectures differ, fewer
    than ``min_agreement`` of the compared sampled opcodes agree (a different build of the source), or the
    report cannot be read again for its SASS.
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

    rename = None
    if profile.origin == "ncu-rep" and not any(s.sass for s in profile.pcs.values()):
        rename = _without_sass(profile, by_func, secs)
        if rename is None and not fill_sass(profile):  # not shown without SASS: the report's, lazily
            raise MismatchError(f"{cubin.path} could not be checked against {profile.report} for kernel "
                                f"{profile.name}: the report's SASS could not be read again")
    if rename is None:
        rename = _by_sass(profile, by_func, secs, cubin, min_agreement)

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
