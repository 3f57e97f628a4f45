"""Shared fixtures: paths of the committed H200 examples (see examples/VERSIONS.txt)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
NAMES = ("stencil", "gather", "intdiv", "noinline", "cdp")


def example(name: str, suffix: str) -> Path:
    """Path of examples/<name>/<name><suffix> (suffix like '.cu', '.ncu-rep', '.sm_90.cubin')."""
    return EXAMPLES / name / f"{name}{suffix}"


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    return EXAMPLES
