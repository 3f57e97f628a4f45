"""Fuzz targets' budget: the ``ci`` hypothesis profile (default) keeps every target to a few seconds so
the whole folder runs in about a minute; ``HYPOTHESIS_PROFILE=long`` is the local run:

    HYPOTHESIS_PROFILE=long .venv/bin/python -m pytest -q tests/fuzz
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_common = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
           "derandomize": False}
settings.register_profile("ci", max_examples=25, **_common)  # type: ignore[arg-type]
settings.register_profile("long", max_examples=2000, **_common)  # type: ignore[arg-type]
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
