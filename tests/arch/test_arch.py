"""Architecture facts, latency classes and the stall-reason table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from warpwise.analysis.arch.facts import arch_facts
from warpwise.analysis.arch.latency import latency_class, latency_of, latency_table
from warpwise.analysis.arch.model import UnknownArchError
from warpwise.analysis.arch.stalls import CSV_ALIASES, STALL_CLASS, STALL_REASONS, is_blamed, stall_class
from warpwise.analysis.arch.tables import ARCHS

BENCH = Path(__file__).resolve().parents[2] / "bench" / "latency" / "latency_h200.json"
SOURCE_CSV = Path(__file__).resolve().parents[2] / "examples" / "gather" / "gather.source.csv"


def test_lookup_spellings_and_errors() -> None:
    assert arch_facts("sm_90").sm == 90 and arch_facts("sm_90a").sm == 90 and arch_facts(86).sm == 86
    with pytest.raises(UnknownArchError, match="sm_61"):
        arch_facts("sm_61")
    with pytest.raises(UnknownArchError, match="bogus"):
        arch_facts("bogus")


@pytest.mark.parametrize(("sm", "warps", "ctas", "smem_kib"), [
    (70, 64, 32, 96), (75, 32, 16, 64), (80, 64, 32, 164), (86, 48, 16, 100), (89, 48, 24, 100), (90, 64, 32, 228),
])
def test_programming_guide_table(sm: int, warps: int, ctas: int, smem_kib: int) -> None:
    a = ARCHS[sm]
    assert (a.max_warps_per_sm, a.max_ctas_per_sm, a.shared_memory_per_sm) == (warps, ctas, smem_kib * 1024)
    assert (a.schedulers_per_sm, a.warp_size, a.registers_per_sm, a.scoreboard_barriers) == (4, 32, 65536, 6)
    assert a.max_threads_per_sm == warps * a.warp_size


def test_every_fact_has_a_source() -> None:
    for a in ARCHS.values():
        for name in ("max_warps_per_sm", "schedulers_per_sm", "registers_per_sm", "shared_memory_per_sm",
                     "named_barriers", "warp_size", "scoreboard_barriers", "default_sm_count"):
            assert a.source(name)


def test_latencies_match_the_h200_measurement() -> None:
    m = json.loads(BENCH.read_text())
    t = latency_table("sm_90")
    assert t["alu"].cycles == pytest.approx(m["IMAD"], abs=0.5)
    assert t["fp64"].cycles == pytest.approx(m["DFMA"], abs=0.5)
    assert t["shared"].cycles == pytest.approx(m["LDS"]) and t["sfu"].cycles == pytest.approx(m["MUFU.EX2"], abs=0.5)
    assert t["constant"].cycles == pytest.approx(m["LDC"], abs=0.5)
    conv = (m["F2F_F64_F32+DADD+F2F_F32_F64"] - m["DADD"]) / 2
    assert t["conversion"].cycles == pytest.approx(conv, abs=0.5)
    for lat in t.values():
        assert lat.upper >= lat.cycles and lat.source
    assert t["global"].upper >= m["LDG_DRAM"]
    assert "estimate for sm_80" in latency_table("sm_80")["alu"].source


@pytest.mark.parametrize(("opcode", "klass", "fixed"), [
    ("LDG.E.64", "global", False), ("LDL", "local", False), ("LDC.64", "constant", False), ("ULDC", "alu", True),
    ("LDS.U16", "shared", False), ("MUFU.RSQ", "sfu", False), ("F2F.F64.F32", "conversion", False),
    ("DFMA", "fp64", True), ("IMAD.WIDE", "alu", True), ("BAR.SYNC.DEFER_BLOCKING", "sync", False),
])
def test_latency_classes(opcode: str, klass: str, fixed: bool) -> None:
    assert latency_class(opcode) == klass
    assert latency_of(opcode, "sm_90").fixed is fixed


def test_stall_table_covers_ncu_names() -> None:
    # every stall_* column of ncu's source export maps to a reason of the table
    header = SOURCE_CSV.read_text().splitlines()[1]
    stems = {c.strip('"')[6:] for c in header.split('","') if c.strip('"').startswith("stall_") and "(" not in c}
    assert stems and stems <= set(CSV_ALIASES)
    assert set(CSV_ALIASES.values()) <= set(STALL_REASONS)
    assert stall_class("long_scoreboard") == "memory_dependency"
    assert {r for r in STALL_CLASS if stall_class(r) == "execution_dependency"} == {"wait", "short_scoreboard"}
    assert is_blamed("barrier") and not is_blamed("lg_throttle") and not is_blamed("not_selected")
    assert stall_class("made_up") == "other"
