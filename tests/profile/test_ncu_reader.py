"""The .ncu-rep reader against Nsight Compute's own CSV export of the same reports."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
from warpwise.analysis.profile.lines import line_stats
from warpwise.analysis.profile.ncu import UNATTRIBUTED, ProfileLoadError, load_profiles

from tests.conftest import NAMES, example


def ncu_csv(name: str) -> dict[int, dict[str, int]]:
    """Per-PC rows of `ncu --import R --page source --print-source sass --csv` (committed next to R)."""
    rows: dict[int, dict[str, int]] = {}
    header: list[str] = []
    with example(name, ".source.csv").open() as fh:
        for row in csv.reader(fh):
            if row and row[0] == "Address":
                header = row
            elif row and row[0].startswith("0x"):
                d = dict(zip(header, row, strict=False))
                rows[int(row[0], 16)] = {
                    "samples": int(d["Warp Stall Sampling (All Samples)"]),
                    "not_issued": int(d["Warp Stall Sampling (Not-issued Samples)"]),
                    "inst_executed": int(d["Instructions Executed"]),
                    "long_sb": int(d["stall_long_sb"]),
                }
    return rows


@pytest.mark.parametrize("name", NAMES)
def test_per_pc_counts_equal_nsight_compute(name: str) -> None:
    prof = load_profiles(example(name, ".ncu-rep"))[0]
    by_pc = {s.pc: s for s in prof.pcs.values()}
    rows = ncu_csv(name)
    for pc, want in rows.items():
        got = by_pc.get(pc)
        if got is None:
            assert want["samples"] == 0 and want["inst_executed"] == 0
            continue
        assert (got.samples, got.not_issued, got.inst_executed) == (
            want["samples"], want["not_issued"], want["inst_executed"]), hex(pc)
        assert got.stalls.get("long_scoreboard", 0) == want["long_sb"]


def test_kernel_totals_are_ncu_totals() -> None:
    # Totals of ncu's Source page (sum of its per-instruction rows) for the non-CDP kernels
    expect = {"stencil": 28464, "gather": 66700, "intdiv": 30172, "noinline": 13879}
    for name, total in expect.items():
        prof = load_profiles(example(name, ".ncu-rep"))[0]
        assert prof.total_samples == total == sum(r["samples"] for r in ncu_csv(name).values())
        assert prof.latency_samples == sum(r["not_issued"] for r in ncu_csv(name).values())


def test_cdp_keeps_child_and_runtime_samples() -> None:
    prof = load_profiles(example("cdp", ".ncu-rep"))[0]
    funcs = prof.functions()
    assert funcs[0] == "_Z9scale_allPKiPKfPfifPi"
    assert len([f for f in funcs if f != UNATTRIBUTED]) == 5  # parent, child, three CDP runtime stubs
    unattributed = sum(s.samples for s in prof.pcs.values() if s.function == UNATTRIBUTED)
    # total is every sample of the launch; ncu's Source page shows only the correlated part
    assert prof.total_samples == 17930
    assert prof.total_samples - unattributed == 13241
    assert prof.launch.grid == (16, 1, 1) and prof.launch.block == (128, 1, 1)


def test_launch_facts() -> None:
    prof = load_profiles(example("stencil", ".ncu-rep"))[0]
    lc = prof.launch
    assert (prof.name, prof.arch, prof.device) == ("blur_rows", "sm_90", "NVIDIA H200")
    assert lc.grid == (64, 2048, 1) and lc.block == (128, 2, 1)
    assert lc.registers_per_thread == 24 and lc.sm_count == 132
    assert lc.theoretical_occupancy == 100.0
    assert 80.0 < lc.achieved_occupancy < 100.0
    assert lc.duration_ns == 225344.0


def test_line_counts() -> None:
    lines = {(Path(ls.file).name, ls.line): ls for ls in line_stats(load_profiles(example("gather", ".ncu-rep"))[0])}
    hot = lines[("gather.cu", 17)]  # sum += vals[...] * x[c]: the dependent load's use
    assert hot.samples == 66386
    assert hot.stalls["long_scoreboard"] == 66223
    st = {(Path(ls.file).name, ls.line): ls for ls in line_stats(load_profiles(example("stencil", ".ncu-rep"))[0])}
    assert st[("stencil.cu", 18)].samples == 26850
    assert st[("stencil.cu", 18)].top_reasons(1) == [("mio_throttle", 12165)]


def test_corrupt_report(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ncu-rep"
    bad.write_bytes(example("stencil", ".ncu-rep").read_bytes()[:5000])
    with pytest.raises(ProfileLoadError, match=r"bad\.ncu-rep"):
        load_profiles(bad)
    empty = tmp_path / "empty.ncu-rep"
    empty.write_bytes(b"")
    with pytest.raises(ProfileLoadError, match="empty file"):
        load_profiles(empty)
    with pytest.raises(ProfileLoadError, match="no such report"):
        load_profiles(tmp_path / "missing.ncu-rep")
    text = tmp_path / "text.ncu-rep"
    shutil.copy(example("stencil", ".cu"), text)
    with pytest.raises(ProfileLoadError, match=r"text\.ncu-rep"):
        load_profiles(text)
