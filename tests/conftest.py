"""Shared fixtures: paths of the committed H200 examples (see examples/VERSIONS.txt)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# Tests never touch the user's real cache (~/.cache/warpwise): the persistent analysis cache is off unless a
# test turns it on, and points at a throwaway directory (inherited by servers the tests start).
os.environ.setdefault("WARPWISE_NO_CACHE", "1")
os.environ.setdefault("WARPWISE_CACHE_DIR", tempfile.mkdtemp(prefix="warpwise-test-cache-"))

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
NAMES = ("stencil", "gather", "intdiv", "noinline", "cdp")


def example(name: str, suffix: str) -> Path:
    """Path of examples/<name>/<name><suffix> (suffix like '.cu', '.ncu-rep', '.sm_90.cubin')."""
    return EXAMPLES / name / f"{name}{suffix}"


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    return EXAMPLES
