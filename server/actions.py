"""Code actions: DP rewrites (refactor.rewrite), quick fixes (quickfix) and the tuned-schedule switch.

Edits come from analysis code as UTF-8 byte offsets with 1-based lines/byte columns; this module turns
them into LSP WorkspaceEdits in the negotiated position encoding. Heavy edits are computed in
codeAction/resolve when the client supports it (ruff-lsp's habit, STYLE.md #4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from lsprotocol import types as lsp
from warpwise.server import doccache, render
from warpwise.server.linemap import text_lines
from warpwise.server.positions import utf8_col_to_units
from warpwise.server.uris import resolved, uri_to_path

REWRITE_KIND = lsp.CodeActionKind.RefactorRewrite
# titles name what each rewrite does, never the generated macros' identifiers (issue 11: they were reserved)
TITLES = {"threshold": "Threshold the child launch (run small child grids serially in the parent thread)",
          "coarsen": "Coarsen the child grid (each child block does the work of several)",
          "aggregate": "Aggregate child launches at {g} granularity"}


class ByteEdit(Protocol):
    """What analysis edits look like: UTF-8 byte positions, 1-based line and byte column."""

    line: int
    column: int
    end_line: int
    end_column: int
    new_text: str


def position(lines: Sequence[str], line: int, byte_col: int) -> lsp.Position:
    """LSP position of 1-based ``line`` and 1-based UTF-8 byte column ``byte_col``."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return lsp.Position(line - 1, utf8_col_to_units(text, byte_col - 1, render.ENCODING["value"]))


def to_text_edits(text: str, edits: Sequence[ByteEdit]) -> list[lsp.TextEdit]:
    """LSP text edits for analysis edits on ``text``."""
    lines = text_lines(text)
    return [lsp.TextEdit(range=lsp.Range(position(lines, e.line, e.column), position(lines, e.end_line, e.end_column)),
                         new_text=e.new_text) for e in edits]


def workspace_edit(uri: str, version: int | None, text: str, edits: Sequence[ByteEdit]) -> lsp.WorkspaceEdit:
    """A versioned WorkspaceEdit (the client rejects it if the document changed meanwhile)."""
    return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(
        text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
        edits=list(to_text_edits(text, edits)))])


def wanted(only: Sequence[str] | None, kind: str) -> bool:
    """Whether ``kind`` passes the client's ``context.only`` filter (prefix match, LSP spec)."""
    return not only or any(kind == o or kind.startswith(f"{o}.") for o in only)


Submit = Callable[[Callable[[], None]], Any]


def same_lines(old: str, new: str, first: int, last: int) -> bool:
    """Whether 1-based lines [first, last] read the same in texts ``old`` and ``new`` (at the same numbers)."""
    if old is new:
        return True
    a, b = text_lines(old), text_lines(new)
    return last <= len(a) and last <= len(b) and a[first - 1:last] == b[first - 1:last]


def launches_of(path: str, text: str, submit: Submit | None = None) -> tuple[str, list[Any], Exception | None]:
    """(text they were found in, device-side launches, the parse error when the text does not parse):
    libclang parses each text once (doccache). With ``submit``, a text still being parsed answers from the
    newest parsed older text instead of waiting."""
    from warpwise.analysis.rewrite import find_launches

    def compute() -> list[Any]:
        return find_launches(text, path)

    if submit is None:
        got: tuple[str, Any] | None = (text, doccache.cached("launches", path, text, compute))
    else:
        got = doccache.fresh_or_stale("launches", path, text, compute, submit)
    if got is None:
        return text, [], None
    if isinstance(got[1], doccache.Failed):
        return got[0], [], got[1].error
    return got[0], list(got[1]), None


def rewrite_actions(uri: str, version: int | None, text: str, path: str, first_line: int, last_line: int,
                    only: Sequence[str] | None, resolve: bool, disabled_ok: bool,
                    profiles: Sequence[Any] | None = None, submit: Submit | None = None) -> list[lsp.CodeAction]:
    """refactor.rewrite actions for device-side launches on lines [first_line, last_line] (1-based): first
    the profile-guided combination (the measured default without a profile of the parent in
    ``profiles``), then its nearest alternatives, then each single transform.

    Launches come from :func:`launches_of`; one found in an older text is offered only while its statement's
    lines read the same now (the edit itself is computed on the current text). A file that does not parse
    gets disabled actions that say why."""
    if not wanted(only, REWRITE_KIND):
        return []
    from warpwise.analysis.rewrite import GRANULARITIES
    from warpwise.analysis.rewrite.threshold import LOOP_THRESHOLD_REFUSAL

    found_in, launches, error = launches_of(path, text, submit)
    if error is not None:  # the file does not parse: say why on each launch, never offer a rewrite
        doccache.worker_only()  # a token scan of the text
        return _withheld_actions(text, path, str(error), first_line, last_line) if disabled_ok else []
    out: list[lsp.CodeAction] = []
    for ln in launches:
        if not (first_line <= ln.line <= last_line):
            continue
        doccache.worker_only()  # the plan (and edits without resolve) look at the launch's code
        if found_in is not text and not same_lines(found_in, text, ln.line,
                                                   ln.line + found_in.count("\n", ln.start, ln.end)):
            continue
        out += _plan_actions(uri, version, text, path, ln.line, ln.child, profiles, resolve)
        variants = [("threshold", None), ("coarsen", None)] + [("aggregate", g) for g in GRANULARITIES]
        for transform, gran in variants:
            title = TITLES[transform].format(g=gran) + f" — {ln.child}"
            data = {"uri": uri, "version": version, "transform": transform, "line": ln.line,
                    "granularity": gran or "block"}
            reason = ln.refusals.get(transform)
            if transform == "threshold" and ln.in_loop and not reason:
                reason = LOOP_THRESHOLD_REFUSAL
            action = lsp.CodeAction(title=title, kind=REWRITE_KIND, data=data)
            if reason:
                if not disabled_ok:
                    continue
                action.disabled = lsp.CodeActionDisabled(reason=reason)
            elif not resolve:
                action.edit = resolve_rewrite(data, text)
            out.append(action)
    return out


PLAN_ALTERNATIVES = 3  # alternatives offered as actions after the profile-guided one


def _plan_actions(uri: str, version: int | None, text: str, path: str, line: int, child: str,
                  profiles: Sequence[Any] | None, resolve: bool) -> list[lsp.CodeAction]:
    from warpwise.analysis.rewrite import RewriteError
    from warpwise.analysis.rewrite.plan import plan_launch

    try:
        plan = plan_launch(text, path, line, profiles)
    except RewriteError:
        return []  # no transform applies: the single-transform actions below carry the reasons
    except Exception:  # a profile the plan cannot read must not cost the other actions
        plan = plan_launch(text, path, line, None)
    head = "Profile-guided DP rewrite" if plan.facts else "DP rewrite (default, no profile)"
    out = []
    for i, ch in enumerate([plan.choice, *plan.alternatives[:PLAN_ALTERNATIVES]]):
        title = f"{head if i == 0 else 'Alternative DP rewrite'}: {ch.label} — {child}"
        data = {"uri": uri, "version": version, "transform": "plan", "line": line, "threshold": ch.threshold,
                "factor": ch.factor, "granularity": ch.granularity}
        action = lsp.CodeAction(title=title, kind=REWRITE_KIND, data=data, is_preferred=i == 0 or None)
        if not resolve:
            action.edit = resolve_rewrite(data, text)
        out.append(action)
    return out


def _withheld_actions(text: str, path: str, reason: str, first_line: int, last_line: int) -> list[lsp.CodeAction]:
    """Disabled rewrite actions, with ``reason``, for the device-side launches a token scan finds on the lines."""
    from warpwise.analysis.rewrite.parse import parse, token_launches

    out = []
    for t in token_launches(parse(text, path)):
        if t.device_side and first_line <= t.line <= last_line:
            for transform in ("threshold", "coarsen", "aggregate"):
                title = TITLES[transform].format(g="block") + f" — {t.child}"
                out.append(lsp.CodeAction(title=title, kind=REWRITE_KIND,
                                          disabled=lsp.CodeActionDisabled(reason=reason)))
    return out


def resolve_rewrite(data: dict[str, Any], text: str) -> lsp.WorkspaceEdit:
    """Compute the edit of a rewrite action. Raises RewriteError with the reason when it cannot apply."""
    from warpwise.analysis.rewrite import rewrite

    if data.get("transform") == "plan":
        from warpwise.analysis.rewrite.plan import Choice, plan_edits

        choice = Choice(int(data["threshold"]), int(data["factor"]), data.get("granularity"))
        return workspace_edit(data["uri"], data.get("version"), text,
                              plan_edits(text, str(uri_to_path(data["uri"])), int(data["line"]), choice))

    edits = rewrite(text, str(uri_to_path(data["uri"])), data["transform"], int(data["line"]),
                    granularity=data.get("granularity") or "block")
    return workspace_edit(data["uri"], data.get("version"), text, edits)


def fixes_of(adv: Any, path: str, text: str, source_of: Callable[[str], str | None],
             submit: Submit | None = None) -> tuple[str, list[Any]]:
    """(text they were computed on, quick fixes of advice ``adv``) for document ``text``: computed once per
    (advice, text) (doccache; the entry holds ``adv`` so its id is not reused meanwhile). With ``submit``, a
    text still being computed answers from the newest older one."""
    from warpwise.analysis.advice.quickfix import fixes_for_advice

    def compute() -> tuple[Any, list[Any]]:
        return adv, fixes_for_advice(adv, source_of)

    kind = ("fixes", id(adv))
    if submit is None:
        got: tuple[str, Any] | None = (text, doccache.cached(kind, path, text, compute))
    else:
        got = doccache.fresh_or_stale(kind, path, text, compute, submit)
    if got is None or isinstance(got[1], doccache.Failed) or got[1][0] is not adv:
        return text, []
    return got[0], list(got[1][1])


def _advice_of(data: dict[str, Any]) -> list[tuple[str, float | None]]:
    """(optimizer, estimate) of every advice a diagnostic's line offers, best first: ``data["advice"]``
    (render.diagnostics) or, from older diagnostics, the one ``data["optimizer"]``."""
    got: list[tuple[str, float | None]] = []
    for a in data.get("advice") or []:
        if isinstance(a, dict) and isinstance(a.get("optimizer"), str):
            sp = a.get("speedup")
            got.append((a["optimizer"], float(sp) if isinstance(sp, int | float) else None))
    if not got and isinstance(data.get("optimizer"), str):
        got.append((data["optimizer"], None))
    return got


def quickfix_actions(uri: str, version: int | None, text: str, path: str, diagnostics: Sequence[lsp.Diagnostic],
                     only: Sequence[str] | None, analyses: Any, submit: Submit | None = None) -> list[lsp.CodeAction]:
    """quickfix actions for every advice of the warpwise advice diagnostics in the request (mechanical, safe
    edits), the line's best advice first; titles name the advice and its estimate (``strength_reduction
    2.19×: write 0.1f``); only the best advice's first edit is preferred.

    Fixes are computed on the current text; a fix whose line moved or changed since the profile is not
    offered (it could land on the wrong code), so an edit never touches text the profile did not see.
    With ``submit`` (while the user types), fixes computed on an older text of the document are offered
    only when every line their edits touch reads the same now, at the same line numbers.
    """
    if not wanted(only, lsp.CodeActionKind.QuickFix):
        return []
    mine = [d for d in diagnostics if d.source == render.SOURCE and isinstance(d.data, dict)
            and _advice_of(d.data)]
    if not mine:
        return []

    from warpwise.server.findings import baseline_text
    from warpwise.server.linemap import line_map

    here = resolved(path)
    out: list[lsp.CodeAction] = []
    seen: set[tuple[str, int, str]] = set()
    preferred_given = False
    for d in mine:
        data: dict[str, Any] = d.data if isinstance(d.data, dict) else {}
        kernel = data.get("kernel")
        for opt, speedup in _advice_of(data):
            for a in list(analyses.values()):
                for ka in a.kernels:
                    if ka.profile.mangled != kernel:
                        continue
                    base = baseline_text(ka, here) or text
                    lmap = line_map(base, text)

                    def source_of(recorded: str, ka: Any = ka) -> str | None:
                        local = ka.local.get(recorded)
                        return text if local is not None and local.resolve() == here else None

                    for adv in ka.advice:
                        if adv.optimizer != opt:
                            continue
                        found_in, fixes = fixes_of(adv, path, text, source_of, submit)
                        est = speedup if speedup is not None else float(adv.estimated_speedup)
                        for fix in fixes:
                            key = (fix.kind, fix.line, fix.title)
                            if key in seen or lmap.line(fix.line) != fix.line:
                                continue
                            if found_in is not text and not all(same_lines(found_in, text, e.line, e.end_line)
                                                                for e in fix.edits):
                                continue
                            seen.add(key)
                            title = f"{opt} {est:.2f}×: {fix.title}"
                            prefer = bool(fix.edits) and not preferred_given
                            preferred_given = preferred_given or prefer
                            action = lsp.CodeAction(title=title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[d],
                                                    is_preferred=prefer or None)
                            if fix.edits:
                                action.edit = workspace_edit(uri, version, text, fix.edits)
                            else:
                                action.command = lsp.Command(title=title, command="warpwise.explain",
                                                             arguments=[fix.explanation or fix.title])
                            out.append(action)
    return out


def byte_offset_edits(text: str, edits: Sequence[Any]) -> list[lsp.TextEdit]:
    """LSP edits for edits given as UTF-8 byte offsets ``start``/``end`` into ``text``."""
    data = text.encode("utf-8")
    lines = text.split("\n")

    def pos(off: int) -> lsp.Position:
        before = data[:off].decode("utf-8", errors="ignore")
        line = before.count("\n")
        col_bytes = len(before.rsplit("\n", 1)[-1].encode("utf-8"))
        return lsp.Position(line, utf8_col_to_units(lines[line] if line < len(lines) else "", col_bytes,
                                                    render.ENCODING["value"]))

    return [lsp.TextEdit(range=lsp.Range(pos(e.start), pos(e.end)), new_text=e.new_text) for e in edits]


def tuned_actions(uri: str, version: int | None, text: str, path: str, first_line: int, last_line: int,
                  only: Sequence[str] | None, tuned: dict[str, Any]) -> list[lsp.CodeAction]:
    """"Use the tuned SASS schedule" on host-side launches of kernels that have an accepted tuning result.

    The cubin path is written absolute (the helper's cuModuleLoad resolves relative paths against the
    program's working directory). A launch that already loads that cubin gets no action; one that loads
    another path gets "Update the tuned SASS schedule ..." (its guard is replaced, never doubled).
    """
    if not tuned or not wanted(only, REWRITE_KIND):
        return []
    doccache.worker_only()  # scans the text for the kernels' launches
    from warpwise.analysis.schedule.use_tuned import (
        UseTunedError,
        existing_guard,
        find_launches,
        source_name,
        use_tuned_edits,
    )
    from warpwise.server.tuning import launch_cubin_path, verified_cubin

    out: list[lsp.CodeAction] = []
    for mangled, t in tuned.items():
        checked = verified_cubin(t)  # the cubin's SHA-256 still matches its manifest (issue 13)
        if checked is None:
            continue
        cubin = launch_cubin_path(checked)
        for ln in find_launches(text, source_name(mangled)):
            if not (first_line <= ln.line <= last_line):
                continue
            guard = existing_guard(text, ln)
            if guard is not None and guard.cubin == cubin:
                continue
            try:
                edits = use_tuned_edits(text, mangled, cubin, line=ln.line)
            except UseTunedError:
                continue
            gain = f"{t.speedup:.3f}×, verified on {t.verified_samples:,} random inputs"
            if guard is None:
                title = (f"Use the tuned SASS schedule of {source_name(mangled)} ({gain}) under WARPWISE_TUNED, "
                         f"loaded from {cubin}")
            else:
                title = f"Update the tuned SASS schedule of {source_name(mangled)} to {cubin} ({gain})"
            doc = lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            change = lsp.TextDocumentEdit(text_document=doc, edits=list(byte_offset_edits(text, edits)))
            out.append(lsp.CodeAction(title=title, kind=REWRITE_KIND,
                                      edit=lsp.WorkspaceEdit(document_changes=[change])))
    return out
