"""Shared fixtures: paths of the committed H200 examples (see examples/VERSIONS.txt)."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

# Tests never touch the user's real cache (~/.cache/warpwise): the persistent analysis cache is off unless a
# test turns it on, and points at a throwaway directory (inherited by servers the tests start).
os.environ.setdefault("WARPWISE_NO_CACHE", "1")
os.environ.setdefault("WARPWISE_CACHE_DIR", tempfile.mkdtemp(prefix="warpwise-test-cache-"))

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
NAMES = ("stencil", "gather", "intdiv", "noinline", "cdp")


def _bench_reports() -> ModuleType:
    """bench/advice/reports.py, loaded by path (bench/ is no package)."""
    spec = importlib.util.spec_from_file_location("advbench_reports", ROOT / "bench" / "advice" / "reports.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


bench_reports = _bench_reports()


def pair_report(pair_dir: Path) -> Path:
    """The plain ``orig.ncu-rep`` of a bench/advice pair folder (committed as ``orig.ncu-rep.xz``, unpacked once
    into ~/.cache/warpwise-bench/reports/<sha256>/orig.ncu-rep by bench/advice/reports.py, the file name kept).
    Raises FileNotFoundError when the folder has no report."""
    got = bench_reports.pair_report(pair_dir)
    if got is None:
        raise FileNotFoundError(f"{pair_dir}: no orig.ncu-rep(.xz)")
    return got


@functools.cache
def pair_advice_report(pair_dir: Path) -> Any:
    """The AdviceReport of a bench/advice pair's kernel (``pair.json``'s ``kernel``), analysed from the pair's
    committed report (:func:`pair_report`), cubin and sources with bench/advice/pairs/bench.cuh; of several
    launches, the longest one's. Cached per folder (the analysis takes seconds)."""
    from warpwise.analysis.pipeline import analyze

    meta = json.loads((pair_dir / "pair.json").read_text())
    srcs = [p for p in sorted(pair_dir.iterdir()) if p.suffix in (".cu", ".cuh")]
    srcs.append(ROOT / "bench" / "advice" / "pairs" / "bench.cuh")
    an = analyze(pair_report(pair_dir), sorted(pair_dir.glob("orig.*.cubin")), srcs, kernel=meta["kernel"])
    ks = [k for k in an.kernels if k.advice_report is not None]
    return max(ks, key=lambda k: k.profile.launch.duration_ns).advice_report


def example(name: str, suffix: str) -> Path:
    """Path of examples/<name>/<name><suffix> (suffix like '.cu', '.ncu-rep', '.sm_90.cubin')."""
    return EXAMPLES / name / f"{name}{suffix}"


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    return EXAMPLES
