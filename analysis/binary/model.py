"""Binary model: a cubin's functions and their SASS instructions (DESIGN.md "Binary model").

Offsets are byte offsets within the function's own ``.text.<name>`` section (the ``pc`` of the JSON
contract). Instructions are 16 bytes on Volta and later.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Global/generic stores, reductions and atomics (SASS base opcodes): writes a later global load may depend on.
GLOBAL_WRITES = frozenset({"STG", "ST", "RED", "REDG", "ATOM", "ATOMG"})
#: Every base opcode that writes memory, of any state space: GLOBAL_WRITES plus shared/local stores and
#: atomics and surface stores (NVIDIA CUDA Binary Utilities, "Instruction Set Reference"). Not REDUX: a
#: warp-wide reduction into a register, whose name only starts like RED; not LDGSTS, the asynchronous
#: global-to-shared copy, which the optimizers class with the global loads.
MEMORY_WRITES = GLOBAL_WRITES | {"STS", "STL", "STSM", "ATOMS", "REDAS", "SUST", "SURED", "SUATOM"}


def opcode_of_sass(text: str) -> str:
    """The opcode with modifiers (``LDG.E.64``) of one line of SASS text as Nsight Compute or nvdisasm prints
    it (``@!P0 LDG.E.64 R2, [R4] ;``): the first token after an optional predicate; "" for an empty line."""
    toks = text.replace(";", " ").split()
    if toks and toks[0].startswith("@"):
        toks = toks[1:]
    return toks[0] if toks else ""


def writes_memory(opcode: str) -> bool:
    """Whether an instruction of ``opcode`` (with or without modifiers) writes memory (:data:`MEMORY_WRITES`)."""
    return opcode.split(".", 1)[0] in MEMORY_WRITES


@dataclass(frozen=True)
class ControlCode:
    """Scheduling control bits of one Volta+ instruction, decoded from the high 64-bit word.

    Layout (DESIGN.md, checked against nvdisasm on sm_75..sm_120 in FACTS.md):
    stall = (hi>>41)&0xF cycles, yield = (hi>>45)&1, write barrier = (hi>>46)&7,
    read barrier = (hi>>49)&7 (7 = none), wait mask = (hi>>52)&0x3F (bit i waits on barrier i),
    reuse = (hi>>58)&0xF (operand reuse-cache flags).
    """

    stall: int
    yield_flag: int
    write_barrier: int | None
    read_barrier: int | None
    wait_mask: int
    reuse: int

    @staticmethod
    def from_hi(hi: int) -> ControlCode:
        """Decode the control bits of the high 64-bit instruction word ``hi``."""
        wb = (hi >> 46) & 7
        rb = (hi >> 49) & 7
        return ControlCode(
            stall=(hi >> 41) & 0xF,
            yield_flag=(hi >> 45) & 1,
            write_barrier=None if wb == 7 else wb,
            read_barrier=None if rb == 7 else rb,
            wait_mask=(hi >> 52) & 0x3F,
            reuse=(hi >> 58) & 0xF,
        )

    @property
    def waits_on(self) -> tuple[int, ...]:
        """Scoreboard barriers (0..5) this instruction waits on before issuing."""
        return _WAITS_ON[self.wait_mask]


#: wait mask (6 bits) -> the barriers it waits on, ascending (blame asks this per edge: a table, not a loop)
_WAITS_ON: tuple[tuple[int, ...], ...] = tuple(tuple(i for i in range(6) if m >> i & 1) for m in range(64))


@dataclass(frozen=True)
class SourceLoc:
    """A source position: file as recorded in the binary/profile (compile machine's path), 1-based line."""

    file: str
    line: int


@dataclass(slots=True)
class Instruction:
    """One SASS instruction.

    ``offset``: bytes from the start of the function's section. ``text``: nvdisasm's SASS without the
    trailing ``;`` (e.g. ``@P0 LDG.E R2, desc[UR4][R2.64]``). ``opcode``: the mnemonic with modifiers
    (``LDG.E``), no predicate. ``loc``: innermost source position (None if the line table has none).
    ``inline_chain``: the call sites the instruction was inlined through, innermost first. ``target``: a
    branch target offset set by a producer that knows it (None: decoded from the text or words). Slotted:
    large cubins hold millions of these.
    """

    offset: int
    text: str
    opcode: str
    predicate: str | None
    operands: list[str]
    lo: int
    hi: int
    control: ControlCode
    loc: SourceLoc | None = None
    inline_chain: tuple[SourceLoc, ...] = ()
    #: branch target section offset when a producer knows it (synthetic SASS; program.cfg.branch_target)
    target: int | None = None
    #: mnemonic without modifiers (``LDG.E.64`` -> ``LDG``); derived from ``opcode`` once (every analysis
    #: stage asks for it per instruction, millions of times on large cubins)
    base_opcode: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.base_opcode = self.opcode.split(".", 1)[0]


@dataclass
class Function:
    """A function in a cubin: a kernel (``.text.<name>`` section) or a device function.

    ``section`` is the ELF section holding its code; ``start`` is the function's first byte within that
    section (nonzero for a ``__noinline__`` function placed inside a kernel's section in non-rdc builds),
    ``size`` its length in bytes. Instruction offsets are relative to the *section*, like profile PCs.
    """

    name: str
    section: str
    start: int
    size: int
    is_kernel: bool
    instructions: list[Instruction] = field(default_factory=list)

    @property
    def source_name(self) -> str:
        """Mangled source-level name: ``$_Z7advancePfPKfiif$_Z4dampfff`` (a __noinline__ function
        placed in a kernel's section, prefixed with the kernel) -> ``_Z4dampfff``; others unchanged."""
        return self.name.rsplit("$", 1)[-1] if self.name.startswith("$") else self.name

    def at(self, offset: int) -> Instruction | None:
        """The instruction at section offset ``offset`` or None."""
        i = (offset - self.start) // 16
        if 0 <= i < len(self.instructions) and self.instructions[i].offset == offset:
            return self.instructions[i]
        for ins in self.instructions:
            if ins.offset == offset:
                return ins
        return None


@dataclass
class Cubin:
    """A loaded cubin: target architecture (``sm_90``) and functions by symbol name.

    ``relocatable``: an ``-rdc=true`` cubin (ELF ET_REL): relocated fields such as call targets are zero
    in the instruction words. ``member``: for a cubin extracted from an executable/library/fatbin, its
    ELF name inside that file (``app.sm_90.cubin``); ``path`` is then the container's path. A symbol name
    that occurs in two sections is keyed ``name@section`` for the second one.
    """

    path: str
    arch: str
    functions: dict[str, Function]
    debug_build: bool = False  # -G: unoptimized SASS, advice does not describe release code
    relocatable: bool = False
    member: str | None = None

    def kernels(self) -> list[Function]:
        """Functions that are ``__global__`` kernels."""
        return [f for f in self.functions.values() if f.is_kernel]
