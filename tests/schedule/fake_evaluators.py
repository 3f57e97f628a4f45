"""Evaluators that fail like a faulting GPU, for the worker-restart tests.

They must live in an importable module: :class:`WorkerEvaluator` builds them inside a spawned child.
"""

from __future__ import annotations

import hashlib
import os

from warpwise.analysis.schedule.evaluate import DryRunEvaluator, EvaluatorError, TestResult


def _bad(candidate: bytes, reference: bytes) -> bool:
    """About a quarter of all candidates (by hash), never the original."""
    return candidate != reference and hashlib.sha256(candidate).digest()[0] % 4 == 0


class CrashingEvaluator(DryRunEvaluator):
    """The process dies (as after a fault that takes the driver down) on some candidates."""

    def test(self, candidate: bytes, reference: bytes, samples: int, seed: int) -> TestResult:
        if _bad(candidate, reference):
            os._exit(3)
        return super().test(candidate, reference, samples, seed)


class StickyEvaluator(DryRunEvaluator):
    """Reports a sticky CUDA error on some candidates; afterwards this process refuses all work, like a
    lost primary context (cuDevicePrimaryCtxRetain fails)."""

    poisoned = False

    def test(self, candidate: bytes, reference: bytes, samples: int, seed: int) -> TestResult:
        if StickyEvaluator.poisoned:
            raise EvaluatorError("cuDevicePrimaryCtxRetain failed: CUDA_ERROR_ILLEGAL_INSTRUCTION", sticky=True)
        if _bad(candidate, reference):
            StickyEvaluator.poisoned = True
            raise EvaluatorError("cuMemcpyDtoH failed: CUDA_ERROR_ILLEGAL_INSTRUCTION", sticky=True)
        return super().test(candidate, reference, samples, seed)


class SlowerEvaluator(DryRunEvaluator):
    """Side by side, the tuned cubin is measured with the given (original, tuned) timings."""

    def __init__(self, pair: tuple[object, object]) -> None:
        super().__init__()
        self.pair = pair

    def time_pair(self, a: bytes, b: bytes, rounds: int, repeats: int, warmup: int):  # type: ignore[no-untyped-def]
        return self.pair
