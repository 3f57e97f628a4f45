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
from warpwise.analysis.profile.join import join
from warpwise.analysis.profile.model import KernelProfile
from warpwise.analysis.profile.ncu import load_profiles
from warpwise.analysis.program.build import build_program
from warpwise.analysis.program.model import Program

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_CACHE: dict[str, AdviceReport] = {}
_INPUTS: dict[str, tuple[KernelProfile, Program]] = {}


def example_inputs(name: str) -> tuple[KernelProfile, Program]:
    """Profile (joined with its cubin, as ``warpwise advise`` does) and program of examples/<name>."""
    if name not in _INPUTS:
        prof = load_profiles(str(EXAMPLES / name / f"{name}.ncu-rep"))[0]
        cubin = load_cubin(EXAMPLES / name / f"{name}.sm_90.cubin")
        join(prof, cubin)
        _INPUTS[name] = (prof, build_program(cubin))
    return _INPUTS[name]


def example_report(name: str) -> AdviceReport:
    """Advice for the first kernel launch of examples/<name> (the CLI's path: load, join, blame, evaluate)."""
    if name not in _CACHE:
        prof, prog = example_inputs(name)
        _CACHE[name] = evaluate(prof, prog, attribute(prog, prof), prof.arch)
    return _CACHE[name]


@pytest.fixture(scope="session")
def reports() -> dict[str, AdviceReport]:
    return {n: example_report(n) for n in ("stencil", "gather", "intdiv", "noinline", "cdp")}
