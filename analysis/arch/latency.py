"""Instruction latency classes: fixed latencies and upper bounds for variable-latency instructions.

This is the only latency table in warpwise (GPA §4 "instruction latency based pruning": fixed
latencies from microbenchmarks, upper bounds for variable-latency instructions). Cycles are SM clock
cycles as the issuing warp sees them (dependent-chain method of Jia et al. 2018).

Measured values: H200-bench = bench/latency/latency_h200.json (sm_90, driver 580.159.04, nvcc 13.0,
2026-11-30). Only sm_90 was measured; other architectures use the same numbers as estimates and say so in
``source``. Upper bounds are warpwise's own conservative choices (stated as such): the pruning rule only
cuts an edge when *every* path is longer than the bound, so a generous bound keeps doubtful edges.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from warpwise.analysis.arch.model import UnknownArchError

BENCH = "H200-bench (bench/latency/latency_h200.json, sm_90)"


@dataclass(frozen=True)
class Latency:
    """Latency of one instruction class.

    ``klass``: class name (``alu``, ``fp64``, ``conversion``, ``sfu``, ``shared``, ``global``, ``local``,
    ``constant``, ``texture``, ``tensor``, ``sync``, ``control``, ``special``). ``fixed``: whether the
    compiler schedules it with stall counts (no scoreboard). ``cycles``: typical latency; ``upper``:
    upper bound used by the latency pruning rule (cycles). ``source``: where the numbers come from.
    """

    klass: str
    fixed: bool
    cycles: float
    upper: float
    source: str


_SM90: dict[str, Latency] = {
    "alu": Latency("alu", True, 4.0, 6.0,
                   f"{BENCH}: FFMA 4.19, IMAD 4.00, FMUL 3.99; upper = 6 (assumption: +2 for .WIDE/.HI forms)"),
    "fp64": Latency("fp64", True, 8.0, 10.0, f"{BENCH}: DFMA 8.06, DADD 8.01; upper = 10 (assumption)"),
    "conversion": Latency("conversion", False, 19.0, 64.0,
                          f"{BENCH}: F2F.F64.F32+DADD+F2F.F32.F64 chain 45.99 - DADD 8.01 = 2 x 19.0; "
                          "upper = 64 (assumption: MIO queueing)"),
    "sfu": Latency("sfu", False, 17.0, 64.0, f"{BENCH}: MUFU.EX2 16.97; upper = 64 (assumption: MIO queueing)"),
    "shared": Latency("shared", False, 29.0, 256.0,
                      f"{BENCH}: LDS 29.00; upper = 256 (assumption: 32-way bank conflicts + MIO queueing)"),
    "global": Latency("global", False, 686.0, 2000.0,
                      f"{BENCH}: LDG L1 hit 32.00, L2 hit 277.65, DRAM 686.40 (1 GiB random ring; 687.23 over 4 GiB); "
                      "upper = 2000 (assumption: ~3x the unloaded DRAM latency, for queueing under load)"),
    "local": Latency("local", False, 686.0, 2000.0, f"{BENCH}: same path as global (LDG numbers); upper as global"),
    "texture": Latency("texture", False, 686.0, 2000.0, f"{BENCH}: LDG numbers; upper as global (assumption)"),
    "constant": Latency("constant", False, 60.0, 600.0,
                        f"{BENCH}: LDC chain 60.16 (constant cache hit); upper = 600 (assumption: miss to L2)"),
    "tensor": Latency("tensor", False, 32.0, 512.0, "assumption (not measured): MMA pipes; upper = 512"),
    "special": Latency("special", False, 24.0, 128.0,
                       "assumption (not measured): S2R/SHFL/VOTE/POPC-class MIO ops; upper = 128"),
    "sync": Latency("sync", False, 20.0, 2000.0, "assumption (not measured): barriers/fences; upper as global"),
    "control": Latency("control", True, 4.0, 6.0, "assumption: branches issue like ALU ops"),
}

_MEM_GLOBAL = ("LDG", "STG", "LD", "ST", "ATOM", "ATOMG", "RED", "REDG", "LDGSTS", "CCTL", "UBLKCP",
               "UTMALDG", "UTMASTG", "UTMAPF", "LDGDEPBAR")
_MEM_LOCAL = ("LDL", "STL")
_MEM_CONST = ("LDC",)
_MEM_SHARED = ("LDS", "STS", "ATOMS", "LDSM", "STSM", "REDAS")
_TEXTURE = ("TEX", "TLD", "TLD4", "TMML", "TXD", "TXQ", "SULD", "SUST", "SUATOM", "SURED")
_SFU = ("MUFU",)
_CONV = ("F2F", "F2I", "I2F", "I2I", "FRND", "F2FP", "I2IP")
_FP64 = ("DFMA", "DADD", "DMUL", "DSETP", "DMNMX")
_TENSOR = ("HMMA", "IMMA", "DMMA", "BMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA", "UTCHMMA", "UTCQMMA")
_SPECIAL = ("S2R", "S2UR", "SHFL", "VOTE", "POPC", "FLO", "BREV", "MATCH", "REDUX", "FCHK", "BMOV", "CS2R.32")
_SYNC = ("BAR", "MEMBAR", "FENCE", "DEPBAR", "WARPSYNC", "BSYNC", "ERRBAR", "SYNCS", "ARRIVES", "NANOSLEEP",
         "WARPGROUP", "ELECT")
_CONTROL = ("BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "BSSY", "BREAK", "BPT", "KILL", "YIELD", "NOP")

_CLASS_OF: dict[str, str] = {}
for _names, _k in ((_MEM_GLOBAL, "global"), (_MEM_LOCAL, "local"), (_MEM_CONST, "constant"),
                   (_MEM_SHARED, "shared"), (_TEXTURE, "texture"), (_SFU, "sfu"), (_CONV, "conversion"),
                   (_FP64, "fp64"), (_TENSOR, "tensor"), (_SPECIAL, "special"), (_SYNC, "sync"),
                   (_CONTROL, "control")):
    for _n in _names:
        _CLASS_OF[_n] = _k

MEMORY_CLASSES = frozenset({"global", "local", "constant", "shared", "texture"})
#: Generic-address and asynchronous-copy opcodes: filed under "global" above, they can also reach shared memory.
SHARED_CAPABLE = frozenset({"LD", "ST", "ATOM", "LDGSTS", "UBLKCP", "UTMALDG", "UTMASTG"})


def opcodes_of_class(*classes: str) -> frozenset[str]:
    """Base opcodes (no modifiers) whose latency class is one of ``classes`` (``global``, ``shared``, ...)."""
    return frozenset(op for op, k in _CLASS_OF.items() if k in classes)
#: Classes served by L1TEX, whose dependencies Nsight Compute reports as long_scoreboard.
L1TEX_CLASSES = frozenset({"global", "local", "texture"})

_KNOWN_SM = (70, 75, 80, 86, 89, 90, 100, 120)


def _sm(arch: str | int) -> int:
    try:
        sm = int(arch) if isinstance(arch, int) else int(str(arch).lower().removeprefix("sm_").rstrip("afk"))
    except ValueError:
        raise UnknownArchError(f"unknown architecture {arch!r} (expected sm_70 ... sm_120)") from None
    if sm not in _KNOWN_SM:
        raise UnknownArchError(f"no latency table for sm_{sm} (known: {', '.join(f'sm_{s}' for s in _KNOWN_SM)})")
    return sm


@lru_cache(maxsize=4096)
@lru_cache(maxsize=8192)  # pure in the opcode string; the advice stage asks ~10^6 times on a 200k-instruction cubin
def latency_class(opcode: str) -> str:
    """Latency class of a SASS opcode with modifiers (``LDG.E.64`` -> ``global``).

    ``ULDC`` (uniform constant load) is fixed-latency ALU-class; other ``U*`` uniform-datapath ops are ALU.
    """
    base = opcode.split(".", 1)[0]
    if opcode.startswith("CS2R.32"):
        return "special"
    if base in _CLASS_OF:
        return _CLASS_OF[base]
    if base in ("F2F", "I2F") or base.startswith("F2") or base.startswith("I2"):
        return "conversion"
    return "alu"


@lru_cache(maxsize=64)
def _table(sm: int) -> dict[str, Latency]:
    if sm == 90:
        return dict(_SM90)
    note = f"; estimate for sm_{sm} from sm_90 measurements (not measured on sm_{sm})"
    return {k: Latency(v.klass, v.fixed, v.cycles, v.upper, v.source + note) for k, v in _SM90.items()}


def latency_table(arch: str | int) -> dict[str, Latency]:
    """All latency classes for ``arch`` (``sm_90``, 90, ``sm_90a``). Raises UnknownArchError."""
    return dict(_table(_sm(arch)))


@lru_cache(maxsize=8192)
def latency_of(opcode: str, arch: str | int) -> Latency:
    """Latency (class, typical cycles, upper bound) of ``opcode`` on ``arch``. Raises UnknownArchError."""
    return _table(_sm(arch))[latency_class(opcode)]
