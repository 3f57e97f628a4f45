"""The launch floor and the loaded DRAM latency (analysis/arch/roofline) against the H200 measurement they come
from (bench/arch/launch_latency_h200.csv, bench/arch/launch_latency.cu), and the launch-shape estimate that uses
them (advice/estimate.loaded_launch_shape_speedup)."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import pytest
from warpwise.analysis.advice import estimate as est
from warpwise.analysis.arch.roofline import DRAM_LATENCY_BY_LOAD, dram_latency_factor, launch_floor_ns

ARCH = Path(__file__).resolve().parents[2] / "bench" / "arch"


def _launches() -> list[tuple[str, dict[str, int], dict[str, float]]]:
    """(kind, parameters, metrics) of every launch of the committed run, in launch order."""
    metrics: dict[int, dict[str, float]] = defaultdict(dict)
    with open(ARCH / "launch_latency_h200.csv", newline="") as f:
        for row in csv.DictReader(f):
            metrics[int(row["ID"])][row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
    out = []
    for line in (ARCH / "launch_latency_h200.launches.txt").read_text().splitlines():
        i, kind, *kv = line.split()
        out.append((kind, {k: int(v) for k, v in (x.split("=") for x in kv)}, metrics[int(i)]))
    return out


def test_launch_floor_follows_the_empty_kernels_ctas_per_sm() -> None:
    empties = [(p, m) for kind, p, m in _launches() if kind == "empty"]
    assert len(empties) >= 20
    for p, m in empties:
        measured = m["gpu__time_duration.sum"]
        assert launch_floor_ns(p["ctas_per_sm"]) == pytest.approx(measured, rel=0.15), p
    # the floor grows with the CTAs of the first wave: 32 per SM cost ~2.5x one per SM
    assert launch_floor_ns(32) / launch_floor_ns(1) == pytest.approx(4128 / 1632, rel=0.1)


def test_loaded_latency_is_the_chain_benchmarks_littles_law() -> None:
    chains = [(p, m) for kind, p, m in _launches() if kind == "chain"]
    assert len(chains) == 2 * len(DRAM_LATENCY_BY_LOAD) + 4  # two runs of 9 shapes; the table merges 4 low ones
    base = DRAM_LATENCY_BY_LOAD[0][1]
    for p, m in chains:
        seconds = m["gpu__time_duration.sum"] * 1e-9
        latency_ns = p["bytes_in_flight"] / (m["dram__bytes_read.sum"] / seconds) * 1e9
        pct = m["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"]
        assert max(1.0, latency_ns / base) == pytest.approx(dram_latency_factor(pct), abs=0.02), (p, pct)
    assert dram_latency_factor(0.0) == 1.0 and dram_latency_factor(20.0) < 1.01
    assert 1.12 < dram_latency_factor(55.0) < 1.16
    assert dram_latency_factor(89.0) > dram_latency_factor(70.0) > dram_latency_factor(55.0)  # extrapolated


def test_loaded_launch_shape_speedup() -> None:
    old, new = (1.0, 32.0), (132.0, 64.0)
    base = est.launch_shape_speedup(0.01, old, new, 4)
    # no memory waits, or no DRAM traffic: GPA eqs. 6-10 unchanged
    assert est.loaded_launch_shape_speedup(0.01, old, new, 4, 1.0, 0.25, 0.0, dram_latency_factor) == base
    assert est.loaded_launch_shape_speedup(0.01, old, new, 4, 1.0, 0.0, 0.9, dram_latency_factor) == base
    # a one-block stream at 0.25% of DRAM peak: ~250x more traffic per second puts DRAM near 50% where a load
    # waits ~10% longer; 90% of the time waiting on loads gives ~9% less
    e = est.loaded_launch_shape_speedup(0.01, old, new, 4, 1.0, 0.25, 0.9, dram_latency_factor)
    lam = e.inputs["lambda"]
    assert lam == pytest.approx(dram_latency_factor(0.25 * e.speedup), rel=1e-3)  # the fixed point
    assert e.speedup == pytest.approx(base.speedup / (1 + 0.9 * (lam - 1)), rel=0.02)
    assert 0.85 * base.speedup < e.speedup < 0.95 * base.speedup
    assert "DRAM latency under load" in e.equation


def test_unrolling_puts_loads_in_flight_at_the_latency_their_traffic_causes() -> None:
    # colsum_unroll1's loop: 95% of the samples wait on its loads, unrolled 8x; at 7.8% of DRAM peak the 6x
    # faster loop moves DRAM to ~45%, where a load waits ~7% longer (H200: 5.07x measured)
    s0, lam0 = est.memory_parallelism_speedup([(0.953, 8.0)])
    assert lam0 == 1.0 and s0 == pytest.approx(1 / (1 - 0.953 * (1 - 1 / 8)))
    s, lam = est.memory_parallelism_speedup([(0.953, 8.0)], 7.77, dram_latency_factor)
    assert lam == pytest.approx(dram_latency_factor(7.77 * s), rel=1e-3)
    assert s == pytest.approx(1 / (1 - 0.953 * (1 - lam / 8)), rel=1e-3)
    assert 5.5 < s < 5.9
    with pytest.raises(est.EstimateError):
        est.memory_parallelism_speedup([(0.6, 8.0), (0.6, 8.0)])
