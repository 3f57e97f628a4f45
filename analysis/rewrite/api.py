"""The public entry point of the rewrites: ``rewrite(source, path, transform, launch_line, ...)``."""

from __future__ import annotations

from .aggregate import aggregate_edits
from .coarsen import coarsen_edits
from .kernel import find_child
from .launches import site_at_line
from .model import TRANSFORMS, RewriteError, TextEdit, Transform
from .parse import parse, require_parses
from .threshold import LOOP_THRESHOLD_REFUSAL, threshold_edits


def rewrite(source: str, path: str, transform: Transform, launch_line: int, *, granularity: str = "block",
            threshold: int | None = None, factor: int | None = None,
            group_blocks: int | None = None, launch_in_loop_ok: bool = False) -> list[TextEdit]:
    """Text edits applying ``transform`` to the device-side launch on 1-based ``launch_line``.

    transform: "threshold" (CGO'22 Fig. 3; ``threshold`` = default WARPWISE_THRESHOLD, child threads),
    "coarsen" (Fig. 6; ``factor`` = default WARPWISE_CFACTOR, original blocks per block) or "aggregate"
    (Fig. 7 / KLAP; ``granularity`` warp | block | multiblock | grid, ``threshold`` = default
    WARPWISE_AGG_THRESHOLD parents for warp/block, ``group_blocks`` = default WARPWISE_AGG_GRANULARITY for multiblock).
    Apply the result with apply_edits(); edits never overlap. Raises RewriteError naming the file and
    line when the file has a parse error (``file:line:col`` and clang's message; parse.blocking_errors),
    no launch starts on that line, or the transform does not apply (with the reason) — among them a threshold of
    a launch inside a loop of the parent (threshold.LOOP_THRESHOLD_REFUSAL) unless ``launch_in_loop_ok``: a
    pipeline that aggregates afterwards, or a build that never launches.
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
        if site.in_loop and not launch_in_loop_ok:
            raise RewriteError(f"{path}:{launch_line}: cannot apply threshold alone: {LOOP_THRESHOLD_REFUSAL}")
        return threshold_edits(p, site, child, threshold)
    if transform == "coarsen":
        return coarsen_edits(p, site, child, factor)
    return aggregate_edits(p, site, child, granularity, threshold, group_blocks)


def pipeline(source: str, path: str, launch_line: int, steps: list[tuple[str, str | None]], *,
             threshold: int | None = None, factor: int | None = None, launch_in_loop_ok: bool = False) -> str:
    """The source after applying ``steps`` [(transform, granularity)] in order to the launch on
    ``launch_line`` and then to the launch that replaces it (after coarsening: of ``ww_<child>_coarse``;
    a recursive child's copies hold launches too, the one in the original parent is followed).

    ``threshold``/``factor``: defaults of WARPWISE_THRESHOLD / WARPWISE_CFACTOR. A threshold of a launch in a loop
    of the parent needs an aggregation step after it (or ``launch_in_loop_ok``, see :func:`rewrite`). Raises
    RewriteError with the refusal of the first step that does not apply.
    """
    from .edits import apply_edits
    from .launches import find_launches

    launches = [la for la in find_launches(source, path) if la.line == launch_line]
    if len(launches) != 1:
        site_at_line(parse(source, path), launch_line)  # raises the precise error
        raise RewriteError(f"{path}:{launch_line}: {len(launches)} launches start on this line")
    child, parent = launches[0].child, launches[0].parent
    line = launch_line
    for i, (transform, granularity) in enumerate(steps):
        loop_ok = launch_in_loop_ok or any(t == "aggregate" for t, _ in steps[i + 1:])
        edits = rewrite(source, path, transform, line, granularity=granularity or "block",  # type: ignore[arg-type]
                        threshold=threshold if transform == "threshold" else None,
                        factor=factor if transform == "coarsen" else None, launch_in_loop_ok=loop_ok)
        source = apply_edits(source, edits)
        if transform == "coarsen":
            child = f"ww_{child.removeprefix('ww_')}_coarse"
        nxt = [la for la in find_launches(source, path) if la.child == child and la.parent == parent]
        if len(nxt) != 1 and (transform, granularity) != steps[-1]:
            raise RewriteError(f"{path}: after {transform}, expected one launch of `{child}` in `{parent}`, "
                               f"found {len(nxt)}")
        line = nxt[0].line if nxt else line
    return source


def one_edit(old: str, new: str) -> list[TextEdit]:
    """A single TextEdit turning ``old`` into ``new``: the bytes between their common prefix and suffix
    (so everything outside the changed region, line endings included, is untouched)."""
    a, b = old.encode("utf-8"), new.encode("utf-8")
    i = 0
    n = min(len(a), len(b))
    while i < n and a[i] == b[i]:
        i += 1
    while i > 0 and (a[i] & 0xC0) == 0x80:  # do not split a UTF-8 sequence
        i -= 1
    j = 0
    while j < n - i and a[len(a) - 1 - j] == b[len(b) - 1 - j]:
        j += 1
    while j > 0 and (a[len(a) - j] & 0xC0) == 0x80:
        j -= 1
    line = a.count(b"\n", 0, i) + 1
    col = i - (a.rfind(b"\n", 0, i) + 1) + 1
    end = len(a) - j
    eline = a.count(b"\n", 0, end) + 1
    ecol = end - (a.rfind(b"\n", 0, end) + 1) + 1
    return [TextEdit(i, end, b[i:len(b) - j].decode("utf-8"), line, col, eline, ecol)]
