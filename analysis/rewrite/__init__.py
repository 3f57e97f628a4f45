"""Source-to-source dynamic-parallelism (CDP) rewrites on .cu files via libclang (CGO'22 framework).

Public API (plain dataclasses; positions are UTF-8 byte offsets and 1-based lines/byte columns):
``find_launches``, ``rewrite``, ``pipeline`` (several transforms in pass order), ``apply_edits``,
``launch_diagnostics``, and the types ``Launch``, ``TextEdit``, ``LaunchDiagnostic``, ``Span``,
``RewriteError``. The profile-guided choice of a combination is in ``warpwise.analysis.rewrite.plan``
(``plan_launch``, ``plan_edits``); whole-program host facts in ``.program``.
"""

from .api import pipeline, rewrite
from .diagnostics import launch_diagnostics
from .edits import apply_edits
from .launches import find_launches
from .model import GRANULARITIES, TRANSFORMS, Launch, LaunchDiagnostic, RewriteError, Span, TextEdit, Transform

__all__ = ["GRANULARITIES", "TRANSFORMS", "Launch", "LaunchDiagnostic", "RewriteError", "Span", "TextEdit", "Transform",
           "apply_edits", "find_launches", "launch_diagnostics", "pipeline", "rewrite"]
