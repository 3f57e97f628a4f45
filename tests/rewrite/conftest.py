"""Fixtures of the rewrite tests."""

from __future__ import annotations

import pytest
from rewrite_helpers import find_nvcc


@pytest.fixture(scope="session")
def nvcc() -> str:
    path = find_nvcc()
    if path is None:
        pytest.skip("nvcc not found (PATH, PyPI nvidia-cuda-nvcc, cuda-pathfinder)")
    return path
