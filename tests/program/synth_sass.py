"""Test helper: SASS text -> synthetic Functions, and synthetic profiles for them.

Synthetic line format: ``[@P0 ]OPCODE operands [; ctrl]`` where ``ctrl`` is a space-separated list of
``S<stall>``, ``W<wb>`` (write barrier), ``R<rb>`` (read barrier), ``M<mask>`` (wait-mask bits as digits,
e.g. ``M01``), ``L<line>`` (source line), ``T<offset>`` (branch target, hex). Offsets are 16 apart from 0.
"""

from __future__ import annotations

from warpwise.analysis.binary.model import ControlCode, Cubin, Function, Instruction, SourceLoc
from warpwise.analysis.profile.model import KernelProfile, LaunchConfig, PCSample


def split_operands(s: str) -> list[str]:
    """Split an operand string at top-level commas."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def make_instruction(offset: int, sass: str, ctrl: ControlCode, loc: SourceLoc | None = None) -> Instruction:
    """One Instruction from SASS text (no trailing ';')."""
    text = sass.strip()
    pred = None
    body = text
    if body.startswith("@"):
        pred, body = body.split(None, 1)
        pred = pred[1:]
    parts = body.split(None, 1)
    opcode = parts[0]
    operands = split_operands(parts[1]) if len(parts) > 1 else []
    return Instruction(offset=offset, text=text, opcode=opcode, predicate=pred, operands=operands,
                       lo=0, hi=0, control=ctrl, loc=loc)


def function(src: str, name: str = "k", file: str = "k.cu", start: int = 0) -> Function:
    """A synthetic Function from one instruction per line (see module doc)."""
    ins = []
    off = start
    for raw in src.strip().splitlines():
        raw = raw.strip()
        if not raw or raw.startswith("#"):
            continue
        sass, _, ctl = raw.partition(";")
        stall, wb, rb, mask, line, target = 1, None, None, 0, None, None
        for tok in ctl.split():
            k, v = tok[0], tok[1:]
            if k == "S":
                stall = int(v)
            elif k == "W":
                wb = int(v)
            elif k == "R":
                rb = int(v)
            elif k == "M":
                mask = sum(1 << int(d) for d in v)
            elif k == "L":
                line = int(v)
            elif k == "T":
                target = int(v, 16)
        c = ControlCode(stall=stall, yield_flag=0, write_barrier=wb, read_barrier=rb, wait_mask=mask, reuse=0)
        i = make_instruction(off, sass, c, SourceLoc(file, line) if line else None)
        if target is not None:
            i.target = target
        ins.append(i)
        off += 16
    return Function(name=name, section=f".text.{name}", start=start, size=off - start, is_kernel=True,
                    instructions=ins)


def profile(fn: Function, samples: dict[int, dict[str, int]], issued: dict[int, int] | None = None,
            arch: str = "sm_90", not_issued_share: float = 0.5) -> KernelProfile:
    """A KernelProfile for ``fn``: stall samples per offset and reason, plus issued samples per offset.

    The not-issued part of each reason is ``int(count * not_issued_share)``.
    """
    issued = issued or {}
    pcs = {}
    for off in sorted(set(samples) | set(issued)):
        st = samples.get(off, {})
        ni = {r: int(v * not_issued_share) for r, v in st.items()}
        pcs[(fn.name, off)] = PCSample(fn.name, off, off, "", samples=sum(st.values()) + issued.get(off, 0),
                                       not_issued=sum(ni.values()), stalls=dict(st), stalls_not_issued=ni)
    return KernelProfile(name=fn.name, mangled=fn.name, arch=arch, launch=LaunchConfig(), pcs=pcs)


def cubin(*fns: Function, arch: str = "sm_90") -> Cubin:
    """A Cubin holding ``fns``."""
    return Cubin(path="synthetic.cubin", arch=arch, functions={f.name: f for f in fns})
