"""The binary package's names (analysis/binary/__init__.py): the loaders are imported on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_loaders_are_the_load_modules_and_imported_on_first_use() -> None:
    code = ("import sys; import warpwise.analysis.binary as b; "
            "before = 'warpwise.analysis.binary.load' in sys.modules or 'elftools' in sys.modules; "
            "f = b.load_cubin; from warpwise.analysis.binary.load import load_binary, load_cubin; "
            "print(before, f is load_cubin, b.load_binary is load_binary, b.Cubin.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["False", "True", "True", "Cubin"]


def test_unknown_name_is_an_attribute_error() -> None:
    import warpwise.analysis.binary as b

    with pytest.raises(AttributeError, match="no attribute 'load_elf'"):
        b.load_elf  # noqa: B018
