"""GPA's optimizers and estimators (Zhou et al., CGO'21, §5, Table 2, eqs. 2–10) and advice reports.

Entry points: :func:`advise` / :func:`evaluate` (one kernel launch -> ranked advice), the renderers
:func:`render_text`, :func:`to_json`, :func:`to_sarif`, and the quick-fix finders in :mod:`.quickfix`.
"""

from warpwise.analysis.advice.advise import advise, evaluate, rank
from warpwise.analysis.advice.model import (
    Advice,
    AdviceReport,
    Estimate,
    Hotspot,
    Location,
    RegionEstimate,
    Scope,
    Skipped,
)
from warpwise.analysis.advice.registry import OPTIMIZER_IDS, REGISTRY, optimizers
from warpwise.analysis.advice.report import render_text, report_json, to_json, to_sarif

__all__ = [
    "OPTIMIZER_IDS", "REGISTRY", "Advice", "AdviceReport", "Estimate", "Hotspot", "Location", "RegionEstimate",
    "Scope", "Skipped", "advise", "evaluate", "optimizers", "rank", "render_text", "report_json", "to_json",
    "to_sarif",
]
