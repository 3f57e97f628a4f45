"""Advice reports of the committed H200 examples (profile + cubin + blame), computed once per session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The synthetic-SASS helper of the program tests builds the small functions of the rule unit tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "program"))

from warpwise.analysis.advice import AdviceReport, evaluate
from warpwise.analysis.binary.load import load_cubin
from warpwise.analysis.blame.attribute import attribute
from warpwise.analysis.profile.ncu import load_profiles
from warpwise.analysis.program.build import build_program

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_CACHE: dict[str, AdviceReport] = {}


def example_report(name: str) -> AdviceReport:
    """Advice for the first kernel launch of examples/<name>."""
    if name not in _CACHE:
        prof = load_profiles(str(EXAMPLES / name / f"{name}.ncu-rep"))[0]
        prog = build_program(load_cubin(EXAMPLES / name / f"{name}.sm_90.cubin"))
        _CACHE[name] = evaluate(prof, prog, attribute(prog, prof), prof.arch)
    return _CACHE[name]


@pytest.fixture(scope="session")
def reports() -> dict[str, AdviceReport]:
    return {n: example_report(n) for n in ("stencil", "gather", "intdiv", "noinline", "cdp")}
