"""Control-flow facts of single SASS instructions: which ones end a block and where they go.

Branch targets come, in order of preference, from (1) an explicit ``target`` attribute the loader may set
on the instruction, (2) an absolute hex address in the operand text (``BRA 0x1a0``), (3) a label map the
loader may attach to the function (``Function.labels``: ``.L_x_6`` -> section offset), (4) the
instruction word itself. Word decoding (Volta+ layout, checked against nvdisasm labels on every branch of
the examples' sm_90 cubins built by nvcc 13.0): BRA/CALL.REL hold a signed word offset whose bits 0..7 are
``lo[16:24]``, bits 8..37 ``lo[34:64]`` and bits 38..55 ``hi[0:18]``; the target is pc + 16 + 4 × offset.
BSSY holds a signed byte offset in ``lo[32:64]`` (low 32 bits) relative to pc + 16.
"""

from __future__ import annotations

import re

from warpwise.analysis.binary.model import Function, Instruction

#: SASS opcodes that transfer control (branch, call, return, exit, trap): the one list the CFG builder,
#: the blamer and the schedule model share (Volta..Hopper mnemonics as nvdisasm prints them).
CONTROL_TRANSFERS = frozenset({"BRA", "BRX", "BRXU", "JMP", "JMX", "JMXU", "CALL", "RET", "EXIT", "KILL",
                               "BREAK", "BPT", "RTT"})
#: Warp convergence and scheduling instructions: code is never moved across them.
CONVERGENCE = frozenset({"BSSY", "BSYNC", "WARPSYNC", "YIELD"})

# Unconditional transfers that never fall through when unpredicated.
_JUMPS = frozenset({"BRA", "JMP", "BRX", "JMX"})
_ENDS = frozenset({"EXIT", "RET", "KILL"})
_INDIRECT = frozenset({"BRX", "JMX"})
_CALLS = frozenset({"CALL"})
_HEX = re.compile(r"(?<![\w.])0x([0-9a-fA-F]+)\b")
_LABEL = re.compile(r"`?\(([^)]+)\)")


def is_branch(ins: Instruction) -> bool:
    """BRA/JMP/BRX/JMX: a jump that ends its block."""
    return ins.base_opcode in _JUMPS


def is_indirect(ins: Instruction) -> bool:
    """BRX/JMX: a jump through a register; its targets are not in the instruction."""
    return ins.base_opcode in _INDIRECT


def is_call(ins: Instruction) -> bool:
    """CALL.REL/CALL.ABS: returns to the next instruction, so it does not end a block."""
    return ins.base_opcode in _CALLS


#: A CALL whose target is a register: ``CALL.ABS.NOINC R2`` or ``CALL.REL.NOINC R2 `(kernel)`` (relative to the
#: section, offset in R2): a virtual call or a call through a function pointer (nvdisasm's SASS; the register
#: is loaded from a vtable or a constant-bank slot right before it).
_REG_TARGET = re.compile(r"^R\d+\b")


def is_indirect_call(ins: Instruction) -> bool:
    """A CALL through a register (virtual call, function pointer): its callee is not in the instruction."""
    return is_call(ins) and bool(ins.operands) and _REG_TARGET.match(ins.operands[0]) is not None


def call_target_register(ins: Instruction) -> str | None:
    """The register an indirect CALL jumps through (``R2``), else None."""
    m = _REG_TARGET.match(ins.operands[0]) if is_indirect_call(ins) else None
    return m.group(0) if m else None


def is_end(ins: Instruction) -> bool:
    """EXIT/RET/KILL, or a trap (BPT.TRAP): leaves the function when executed."""
    return ins.base_opcode in _ENDS or ins.opcode.startswith("BPT.TRAP")


def ends_block(ins: Instruction) -> bool:
    """Whether the instruction is the last of its basic block."""
    return is_branch(ins) or is_end(ins)


def falls_through(ins: Instruction) -> bool:
    """Whether control may continue to the next instruction (predicated jumps/exits can)."""
    if not ends_block(ins):
        return True
    return ins.predicate is not None and ins.predicate not in ("PT",)


def _sext(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) & 1 else v


def decoded_target(ins: Instruction) -> int | None:
    """Target section offset of a PC-relative BRA/CALL.REL/BSSY decoded from the words (see module doc)."""
    op = ins.base_opcode
    if op == "BSSY":
        return ins.offset + 16 + _sext(ins.lo >> 32 & 0xFFFFFFFF, 32)
    if op == "BRA" or ins.opcode.startswith("CALL.REL"):
        raw = (ins.lo >> 16 & 0xFF) | (ins.lo >> 34) << 8 | (ins.hi & 0x3FFFF) << 38
        return ins.offset + 16 + 4 * _sext(raw, 56)
    return None


def label_of(ins: Instruction) -> str | None:
    """The symbolic target nvdisasm printed, e.g. ``.L_x_6`` or ``$kernel$damp``."""
    m = _LABEL.search(ins.text)
    return m.group(1).strip() if m else None


def branch_target(ins: Instruction, fn: Function) -> int | None:
    """Section offset a direct BRA/JMP/CALL/BSSY goes to, or None (indirect, relocated, unknown)."""
    t = ins.target
    if isinstance(t, int):
        return t
    if is_indirect(ins):
        return None
    lab = label_of(ins)
    labels = getattr(fn, "labels", None)
    if lab is not None and isinstance(labels, dict) and lab in labels:
        return int(labels[lab])
    if lab is None:
        for opnd in ins.operands:
            m = _HEX.search(opnd)
            if m and not opnd.startswith("c["):
                return int(m.group(1), 16)
    if ins.opcode.startswith("CALL.ABS") or ins.base_opcode == "JMP":
        return None  # absolute targets are relocated (zero in the words)
    if ins.lo == 0 and ins.hi == 0:
        return None
    return decoded_target(ins)
