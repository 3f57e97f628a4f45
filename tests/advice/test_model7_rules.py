"""Model rule of helper modelA (issue 10; redoing helper model7's lost rule), on the committed H200 reports and
cubins: memory_transaction_reduction names constant memory only where a throttled load's address is the same for
every thread of a warp (the constant cache serializes a warp's distinct addresses)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from warpwise.analysis.pipeline import analyze

from tests.conftest import pair_report

ADVICE = Path(__file__).resolve().parents[2] / "bench" / "advice"
CONST = "read-only values shared by all threads in constant memory"


@cache
def _hint(rel: str) -> str:
    d = ADVICE / rel
    meta = json.loads((d / "pair.json").read_text())
    srcs = [p for p in sorted(d.iterdir()) if p.suffix in (".cu", ".cuh")] + [ADVICE / "pairs" / "bench.cuh"]
    an = analyze(pair_report(d), sorted(d.glob("orig.*.cubin")), srcs, kernel=meta["kernel"])
    ks = [k for k in an.kernels if k.advice_report is not None]
    rep: Any = max(ks, key=lambda k: k.profile.launch.duration_ns).advice_report
    return str(next(a for a in rep.candidates if a.optimizer == "memory_transaction_reduction").hint)


def test_warp_uniform_weights_keep_the_constant_memory_hint() -> None:
    # mlp_shade reads the same weight w[j] in every thread (the address from the loop counter and a parameter)
    h = _hint("holdout6/pairs/mlp_weights_global")
    assert "throttles the global accesses" in h and CONST in h


def test_per_thread_loads_do_not_name_constant_memory() -> None:
    # kmeans_rowmajor: each thread reads its own point (thread-indexed address): constant memory would serialize
    h = _hint("holdout5/pairs/kmeans_rowmajor")
    assert "throttles the global accesses" in h and "constant memory" not in h
    h = _hint("holdout5/pairs/quant_int8_rowwise")
    assert "already as wide as they get" in h and "constant memory" not in h
