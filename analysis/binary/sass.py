"""SASS text and line info from one nvdisasm run per cubin (``nvdisasm -c -gi``).

Output shapes parsed (nvdisasm 13.5 on nvcc 13.0 cubins)::

    .section  .text._Z1kPfPKfi,"ax",@progbits
    //## File "/tmp/inl.cu", line 2 inlined at "/tmp/inl.cu", line 5
    //## File "/tmp/inl.cu", line 5 inlined at "/tmp/inl.cu", line 9
    //## File "/tmp/inl.cu", line 9
            /*00e0*/                   FFMA R0, R2, R2, 1 ;

A run of ``//##`` lines is one location: the first line is the innermost position, and each line's
"inlined at" part is the next call site outwards. nvdisasm prints a location only when it changes, so
it carries over to the following instructions of the same section (Nsight Compute maps those PCs to the
same line). Instructions are matched to functions by section name and offset, never by nvdisasm's
function index (FACTS.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import ToolError
from .model import SourceLoc
from .tools import find_tool, run_tool

NVDISASM_ARGS = ("-c", "-gi")
_LOC = re.compile(r'//## File "(.*?)", line (\d+)(?: inlined at "(.*?)", line (\d+))?')


@dataclass(slots=True)
class SassLine:
    """One disassembled instruction: section offset (bytes), text without ``;``, location, inline chain."""

    offset: int
    text: str
    loc: SourceLoc | None
    inline_chain: tuple[SourceLoc, ...]


@dataclass
class Disassembly:
    """nvdisasm's output for one cubin: ``.target`` (``sm_90a``), instructions per code section, and per
    section the offsets of instructions that follow a label line (``.L_x_6:``, ``$k$callee:``)."""

    target: str
    sections: dict[str, list[SassLine]]
    labelled: dict[str, set[int]] = field(default_factory=dict)


def disassemble(path: str) -> Disassembly:
    """Run nvdisasm once on cubin ``path`` and parse every code section.

    Retries once with ``-ndf`` (no dataflow analysis), which nvdisasm's help names as the way around
    its dataflow analyser failing on some cubins.

    Raises:
        ToolError: nvdisasm is missing or failed on the file.
    """
    exe = find_tool("nvdisasm")
    what = f"nvdisasm on {path}"
    try:
        out = run_tool([exe, *NVDISASM_ARGS, path], what)
    except ToolError as first:
        if getattr(first.__cause__, "timed_out", False):
            raise  # a hung nvdisasm: no second run of the same time limit
        try:
            out = run_tool([exe, *NVDISASM_ARGS, "-ndf", path], what)
        except ToolError:
            raise first from None
    return parse(out)


def _section_name(line: str) -> str:
    rest = line.split(".section", 1)[1].strip()
    cut = rest.rfind(',"')
    name = rest[:cut] if cut >= 0 else rest
    return name.strip().strip('"')


def parse(text: str) -> Disassembly:
    """Parse ``nvdisasm -c -gi`` output (see the module docstring); linear in the output's length.

    Locations are interned: equal (file, line) pairs and equal chains share one object.
    """
    sections: dict[str, list[SassLine]] = {}
    labelled: dict[str, set[int]] = {}
    target = ""
    current: list[SassLine] | None = None
    current_labels: set[int] = set()
    label_open = False  # a label line not yet followed by an instruction
    loc: SourceLoc | None = None
    chain: tuple[SourceLoc, ...] = ()
    group: list[tuple[str, str, str | None, str | None]] = []
    group_open = False  # last location line not yet consumed by an instruction
    locs: dict[tuple[str, int], SourceLoc] = {}
    chains: dict[tuple[SourceLoc, ...], tuple[SourceLoc, ...]] = {}

    def intern(file: str, line: int) -> SourceLoc:
        key = (file, line)
        got = locs.get(key)
        if got is None:
            got = locs[key] = SourceLoc(file, line)
        return got

    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        c = s[0]
        if c == "/":
            if s.startswith("/*"):
                if current is None:
                    continue
                if group_open:
                    first = group[0]
                    loc = intern(first[0], int(first[1]))
                    ch = tuple(intern(g[2], int(g[3])) for g in group if g[2] is not None and g[3] is not None)
                    chain = chains.setdefault(ch, ch)
                    group_open = False
                j = s.find("*/")
                try:
                    off = int(s[2:j], 16) if j > 2 else -1
                except ValueError:
                    off = -1
                if off < 0:  # not an instruction line (a comment): the instruction count check catches gaps
                    continue
                body = s[j + 2 :].strip()
                if body.endswith(";"):
                    body = body[:-1].rstrip()
                current.append(SassLine(off, body, loc, chain))
                if label_open:
                    current_labels.add(off)
                    label_open = False
            elif s.startswith("//##"):
                m = _LOC.search(s)
                if m is None:
                    continue
                if not group_open:
                    group = []
                    group_open = True
                group.append((m.group(1), m.group(2), m.group(3), m.group(4)))
        elif c == ".":
            if s.startswith(".section") and s[8:9] in (" ", "\t"):  # not .sectioninfo
                name = _section_name(s)
                current = sections.setdefault(name, []) if name.startswith(".text.") else None
                current_labels = labelled.setdefault(name, set()) if current is not None else set()
                loc, chain, group_open, label_open = None, (), False, False
            elif current is not None and s.endswith(":") and " " not in s:
                label_open = True
            elif s.startswith(".target"):
                target = s.split()[1] if len(s.split()) > 1 else ""
        elif current is not None and s.endswith(":") and " " not in s:  # $kernel$callee: / _Z1kv:
            label_open = True
    return Disassembly(target, sections, labelled)


def split_instruction(text: str) -> tuple[str | None, str, list[str]]:
    """Split SASS ``text`` into (predicate, opcode with modifiers, operands).

    ``"@!P0 LDG.E R2, desc[UR4][R2.64]"`` -> ``("!P0", "LDG.E", ["R2", "desc[UR4][R2.64]"])``.
    The predicate is returned without ``@``. Commas inside ``{}``, ``[]`` or ``()`` do not split.
    """
    pred: str | None = None
    if text.startswith("@"):
        p, _, text = text.partition(" ")
        pred = p[1:]
        text = text.lstrip()
    opcode, _, ops = text.partition(" ")
    ops = ops.strip()
    if not ops:
        return pred, opcode, []
    if "{" not in ops:
        return pred, opcode, [o.strip() for o in ops.split(",")]
    out: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(ops):
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(ops[start:i].strip())
            start = i + 1
    out.append(ops[start:].strip())
    return pred, opcode, out
