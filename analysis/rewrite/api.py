"""The public entry point of the rewrites: ``rewrite(source, path, transform, launch_line, ...)``."""

from __future__ import annotations

from .aggregate import aggregate_edits
from .coarsen import coarsen_edits
from .kernel import find_child
from .launches import site_at_line
from .model import TRANSFORMS, RewriteError, TextEdit, Transform
from .parse import parse, require_parses
from .threshold import threshold_edits


def rewrite(source: str, path: str, transform: Transform, launch_line: int, *, granularity: str = "block",
            threshold: int | None = None, factor: int | None = None,
            group_blocks: int | None = None) -> list[TextEdit]:
    """Text edits applying ``transform`` to the device-side launch on 1-based ``launch_line``.

    transform: "threshold" (CGO'22 Fig. 3; ``threshold`` = default _THRESHOLD, child threads),
    "coarsen" (Fig. 6; ``factor`` = default _CFACTOR, original blocks per block) or "aggregate"
    (Fig. 7 / KLAP; ``granularity`` warp | block | multiblock | grid, ``threshold`` = default
    _AGG_THRESHOLD parents for warp/block, ``group_blocks`` = default _AGG_GRANULARITY for multiblock).
    Apply the result with apply_edits(); edits never overlap. Raises RewriteError naming the file and
    line when the file has a parse error (``file:line:col`` and clang's message; parse.blocking_errors),
    no launch starts on that line, or the transform does not apply (with the reason).
    """
    if transform not in TRANSFORMS:
        raise RewriteError(f"{path}: unknown transform `{transform}` (expected threshold, coarsen or aggregate)")
    for name, v in (("threshold", threshold), ("factor", factor), ("group_blocks", group_blocks)):
        if v is not None and v < 1:
            raise RewriteError(f"{path}: {name} must be a positive integer, got {v}")
    p = parse(source, path)
    require_parses(p)
    site = site_at_line(p, launch_line)
    child = find_child(p, site.child_name)
    if transform == "threshold":
        return threshold_edits(p, site, child, threshold)
    if transform == "coarsen":
        return coarsen_edits(p, site, child, factor)
    return aggregate_edits(p, site, child, granularity, threshold, group_blocks)
