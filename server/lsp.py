"""The warpwise language server (pygls 2.x, stdio).

Handlers only route: they turn LSP params into calls on plain analysis code (run in a worker thread)
and turn results into lsprotocol types (STYLE.md #1, #5). Analysis never runs on the event loop;
superseded reloads are dropped by a generation counter.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from warpwise.analysis.confine import set_roots
from warpwise.analysis.pipeline import Analysis, InputError, analyze, covers, executables_in, prefer_reports
from warpwise.analysis.profile.paths import parse_path_map
from warpwise.server import actions, doccache, document, lifecycle, render, stale, workspace
from warpwise.server.config import Settings, parse_settings
from warpwise.server.findings import FileFindings, file_findings
from warpwise.server.linemap import LineMap, line_map
from warpwise.server.uris import forget_resolved, resolved, uri_to_path

log = logging.getLogger("warpwise")

SOURCE_EXTS = (".cu", ".cuh")
COMMANDS = ("warpwise.showReport", "warpwise.reloadProfiles", "warpwise.profile", "warpwise.tuneSchedule",
            "warpwise.profileView", "warpwise.reports", "warpwise.selectReport", "warpwise.currentLine")


@dataclass
class State:
    """What the server knows: settings, analyses by report, and the files it has published to."""

    settings: Settings = field(default_factory=Settings)
    analyses: dict[Path, Analysis] = field(default_factory=dict)
    load_errors: dict[Path, str] = field(default_factory=dict)
    published: set[str] = field(default_factory=set)
    tuned: dict[str, Any] = field(default_factory=dict)  # kernel (mangled) -> TunedKernel
    active: dict[str, Path] = field(default_factory=dict)  # kernel (mangled) -> report the user picked
    # findings per local file for the current analyses: hover/inlay/lens requests reuse them instead of
    # walking every blame edge again; cleared on reload and when the active report changes
    findings: dict[str, FileFindings] = field(default_factory=dict)
    generation: int = 0
    # bumped with every change of ``analyses``/``active`` (each findings.clear()): findings computed from
    # the state before it are not cached after it (a worker that read a partial load must not keep the
    # open file's findings from the partial analyses once the full set is in)
    epoch: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class WarpwiseServer(LanguageServer):
    """pygls server with warpwise's state and a worker pool for analysis."""

    def __init__(self) -> None:
        super().__init__("warpwise", "0.1.0")
        self.state = State()
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="warpwise")
        self.prefetch = ThreadPoolExecutor(max_workers=1, thread_name_prefix="warpwise-prefetch")
        self.debounce: dict[str, asyncio.Task[None]] = {}

    # ---- workspace scanning (worker thread) -------------------------------------------------------
    def roots(self) -> list[Path]:
        """Workspace folders (or the root path) as local paths."""
        folders = [uri_to_path(f.uri) for f in self.workspace.folders.values()]
        if not folders and self.workspace.root_path:
            folders = [Path(self.workspace.root_path)]
        return folders

    def scan(self, patterns: list[str], exts: tuple[str, ...] | None = None) -> list[Path]:
        """Files under the workspace folders matching a glob of ``patterns`` (or ``exts``); see workspace.py."""
        return workspace.scan(self.roots(), patterns, exts)

    def plan(self, open_files: list[Path]) -> tuple[list[Path], list[Path], list[Path]]:
        """(reports, binaries, sources) to analyse, reports covering ``open_files`` first (runs in the pool)."""
        from warpwise.server.tuning import find_tuned

        s = self.state.settings
        set_roots(self.roots())  # line-table/report source paths are read only inside the workspace
        self.state.tuned = find_tuned(self.scan(["**/*.tune.json"]), self.roots())
        # a CSV export only where its .ncu-rep is absent; reports beside the open files first
        reports = [p for p in self.scan(s.profiles) if workspace.is_report(p)]
        reports = workspace.open_first(prefer_reports(reports), open_files)
        binaries = [p for p in self.scan(s.binaries) if workspace.is_binary(p)]
        return reports, binaries, self.scan([], SOURCE_EXTS)

    def analyze_one(self, rep: Path, binaries: list[Path], sources: list[Path]) -> tuple[Analysis | None, str | None]:
        """Analyse one report against the binaries beside it (else every binary); (analysis, error)."""
        near = [b for b in binaries if b.parent == rep.parent] or executables_in(rep.parent) or binaries
        # disassemble the binaries (nvdisasm, a subprocess) while the analysis reads the report; nothing waits
        # for it (an analysis answered from the on-disk cache needs neither), and what has not started is dropped
        prefetch = [self.prefetch.submit(_warm_binary, b) for b in near[:4]]
        path_map = parse_path_map(f"{old}={new}" for old, new in self.state.settings.path_map.items())  # validated
        try:
            return analyze(rep, near, sources, path_map=path_map), None  # cached on disk (analysis/cache)
        except InputError as e:
            return None, str(e)
        except Exception as e:  # never let one bad file stop the server
            log.exception("analysis of %s failed", rep)
            return None, f"{rep}: analysis failed: {e}"
        finally:
            for f in prefetch:
                f.cancel()


def _warm_binary(path: Path) -> None:
    """Load a binary into the pipeline's in-memory cache (errors surface later, in analyze)."""
    from warpwise.analysis.pipeline import _load_binary_cached

    try:
        _load_binary_cached(path)
    except Exception:
        return


def _warm_imports() -> None:
    """Import the analysis stages while the client starts up, so the first analysis does not pay for it."""
    try:
        import warpwise.analysis.advice
        import warpwise.analysis.blame.attribute
        import warpwise.analysis.profile.ncu
        import warpwise.analysis.program.build  # noqa: F401
    except Exception:  # a broken install is reported by the analysis itself
        return


server = WarpwiseServer()
lifecycle.install(server)  # shutdown/exit honoured even while a worker is stuck (issue 13)


def cached_findings(ls: WarpwiseServer, path: Path) -> FileFindings:
    """The findings of ``path`` for the loaded analyses (computed once per reload/save)."""
    key = str(resolved(path))
    with ls.state.lock:
        hit = ls.state.findings.get(key)
        analyses = list(ls.state.analyses.values())
        epoch = ls.state.epoch
        active = dict(ls.state.active)
    if hit is not None:
        return hit
    ff = file_findings(analyses, path, active=active)
    with ls.state.lock:
        if epoch == ls.state.epoch:  # the analyses it was computed from are still the loaded ones
            ls.state.findings[key] = ff
    return ff


def _findings_for(ls: WarpwiseServer, uri: str) -> tuple[FileFindings, LineMap, str] | None:
    """(findings, line map, text) of the open document ``uri`` (on the event loop: the line map of a new
    version is built from the lines its edits left alone, server/document.py)."""
    doc = ls.workspace.get_text_document(uri)
    ff = cached_findings(ls, uri_to_path(uri))
    if not ff.findings:
        return None
    text = doc.source
    plain = doc.plain_lines() if isinstance(doc, document.EditedDocument) else None
    return ff, line_map(ff.baseline, text, plain), text


def compute_diagnostics(ls: WarpwiseServer, uri: str, text: str) -> list[lsp.Diagnostic]:
    """Profile findings plus device-side launch checks for one document (runs in the worker)."""
    diags: list[lsp.Diagnostic] = []
    path = uri_to_path(uri)
    ff = cached_findings(ls, path)
    if ff.findings:
        diags = render.diagnostics(ff, line_map(ff.baseline, text), text, ls.state.settings, uri)
    if "<<<" in text:
        diags.extend(render.launch_diagnostics(text, str(path)))
    return diags


async def publish(ls: WarpwiseServer, uri: str) -> None:
    """Publish one document's diagnostics (an empty list when it lost its findings).

    Computed in the worker; dropped if the document changed meanwhile (a newer publish follows).
    """
    if not uri_to_path(uri).name.endswith(SOURCE_EXTS):
        return
    doc = ls.workspace.get_text_document(uri)
    version, text = doc.version, doc.source
    loop = asyncio.get_running_loop()
    def work() -> list[lsp.Diagnostic] | None:
        if stale.superseded(ls, uri, version):  # a newer version's publish follows
            return None
        return compute_diagnostics(ls, uri, text)

    try:
        diags = await loop.run_in_executor(ls.pool, work)
    except Exception as e:  # a bad file must not stop the server
        log.exception("diagnostics for %s failed", uri)
        ls.window_log_message(lsp.LogMessageParams(type=lsp.MessageType.Error,
                                                   message=f"warpwise: {uri_to_path(uri)}: {e}"))
        return
    if diags is None or stale.superseded(ls, uri, version):
        return
    if diags or uri in ls.state.published:
        ls.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=version))
    if diags:
        ls.state.published.add(uri)
    else:
        ls.state.published.discard(uri)


def _report_problems(ls: WarpwiseServer, errors: dict[Path, str], analyses: dict[Path, Analysis]) -> None:
    problems = list(errors.values()) + [e for a in analyses.values() for e in a.errors]
    for msg in problems:
        ls.window_log_message(lsp.LogMessageParams(type=lsp.MessageType.Warning, message=msg))
    # a recorded path with several equal local candidates maps to none: tell the user how to choose
    for note in dict.fromkeys(n for a in analyses.values() for k in a.kernels for n in k.ambiguous_paths):
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=f"warpwise: {note}"))
    if problems:  # unreadable reports and unusable binaries alike: a window message, not only a log line
        first = problems[0]
        more = f" (and {len(problems) - 1} more, see the output log)" if len(problems) > 1 else ""
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning,
                                                     message=f"warpwise: {first}{more}"))


def _open_sources(ls: WarpwiseServer) -> dict[Path, str]:
    """Open CUDA documents: local path -> URI."""
    return {uri_to_path(u): u for u in ls.workspace.text_documents if uri_to_path(u).name.endswith(SOURCE_EXTS)}


def _refresh_views(ls: WarpwiseServer) -> None:
    """Ask the client to re-request inlay hints and code lenses (they stay stale otherwise)."""
    caps = ls.client_capabilities.workspace if ls.client_capabilities else None
    if caps is not None and caps.inlay_hint is not None and caps.inlay_hint.refresh_support:
        ls.workspace_inlay_hint_refresh(None)
    if caps is not None and caps.code_lens is not None and caps.code_lens.refresh_support:
        ls.workspace_code_lens_refresh(None)


def _status(ls: WarpwiseServer) -> None:
    from warpwise.server.findings import group_kernels

    with ls.state.lock:
        analyses = dict(ls.state.analyses)
        active = dict(ls.state.active)
    groups = group_kernels(list(analyses.values()), active)
    names = ", ".join(p.name for p in analyses)
    ls.protocol.notify("warpwise/status", {
        "profiles": len(analyses), "kernels": len(groups),
        "choices": sum(1 for g in groups if len(g.reports) > 1),
        "message": names or "no profile found"})


async def reload(ls: WarpwiseServer) -> None:
    """Re-read settings-selected reports in the worker and republish; drops superseded results.

    Reports that likely cover an open file are analysed first and each open file is published as soon as
    a report covering it is in, so the file in front of the user gets its diagnostics before the rest of
    the workspace is analysed (with $/progress for the rest).
    """
    forget_resolved()  # a symlink in the workspace may have changed
    with ls.state.lock:
        ls.state.generation += 1
        gen = ls.state.generation
    loop = asyncio.get_running_loop()
    reports, binaries, sources = await loop.run_in_executor(ls.pool, ls.plan, list(_open_sources(ls)))
    analyses: dict[Path, Analysis] = {}
    errors: dict[Path, str] = {}
    token: str | None = None
    served: set[Path] = set()  # open files already published from the reports analysed so far
    remaining = list(reports)
    try:
        while remaining:
            # files opened meanwhile (didOpen often follows initialized) move their reports forward
            open_docs = _open_sources(ls)
            remaining = workspace.open_first(remaining, [f for f in open_docs if f not in served])
            rep = remaining.pop(0)
            done = len(reports) - len(remaining) - 1
            if token is None and done >= 1 and _progress_ok(ls):
                token = f"warpwise-load-{uuid.uuid4()}"
                await ls.work_done_progress.create_async(token)
                ls.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(
                    title="warpwise: analysing profiles", percentage=int(100 * done / len(reports)), message=rep.name))
            elif token is not None:
                ls.work_done_progress.report(token, lsp.WorkDoneProgressReport(
                    message=rep.name, percentage=int(100 * done / len(reports))))
            got, err = await loop.run_in_executor(ls.pool, ls.analyze_one, rep, binaries, sources)
            if gen != ls.state.generation:
                return  # a newer reload is under way
            if got is not None:
                analyses[rep] = got
            if err is not None:
                errors[rep] = err
            covered = {f for f in open_docs if f not in served and got is not None and covers(got, f)}
            if covered and remaining:
                with ls.state.lock:  # publish what is known so far for the files in front of the user
                    ls.state.analyses = dict(analyses)
                    ls.state.findings.clear()
                    ls.state.epoch += 1
                for f in covered:
                    await publish(ls, open_docs[f])
                served |= covered
                _refresh_views(ls)
    finally:
        if token is not None:
            ls.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message=f"{len(analyses)} profile(s)"))
    with ls.state.lock:
        if gen != ls.state.generation:
            return
        ls.state.analyses = analyses
        ls.state.load_errors = errors
        ls.state.findings.clear()
        ls.state.epoch += 1
    lifecycle.freeze_heap()  # the analyses just loaded are long-lived: keep them out of GC passes
    _report_problems(ls, errors, analyses)
    _status(ls)
    for uri in list(ls.workspace.text_documents):
        await publish(ls, uri)
    _refresh_views(ls)


def _progress_ok(ls: WarpwiseServer) -> bool:
    caps = ls.client_capabilities.window if ls.client_capabilities else None
    return bool(caps is not None and caps.work_done_progress)


async def _load_settings(ls: WarpwiseServer) -> None:
    caps = ls.client_capabilities.workspace if ls.client_capabilities else None
    if caps is None or not caps.configuration:
        return
    try:
        res = await ls.workspace_configuration_async(
            lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="warpwise")]))
    except Exception as e:
        log.warning("workspace/configuration failed: %s", e)
        return
    settings, problems = parse_settings(res[0] if res else None)
    ls.state.settings = settings
    set_log_level(settings.python_log_level())
    for p in problems:
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=p))


@server.feature(lsp.INITIALIZE)
def initialize(ls: WarpwiseServer, params: lsp.InitializeParams) -> None:
    """pygls has just made the workspace: open documents take edits in O(edit) (server/document.py)."""
    document.install(ls.workspace)


@server.feature(lsp.INITIALIZED)
async def initialized(ls: WarpwiseServer, params: lsp.InitializedParams) -> None:
    """Read settings, watch profile/binary files when the client allows it, then analyse."""
    enc = ls.workspace.position_encoding
    render.ENCODING["value"] = str(getattr(enc, "value", enc) or "utf-16")
    await _load_settings(ls)
    caps = ls.client_capabilities.workspace if ls.client_capabilities else None
    if caps is not None and caps.did_change_watched_files is not None and \
            caps.did_change_watched_files.dynamic_registration:
        watchers = [lsp.FileSystemWatcher(glob_pattern=g) for g in ("**/*.ncu-rep", "**/*.cubin")]
        try:
            await ls.client_register_capability_async(lsp.RegistrationParams(registrations=[lsp.Registration(
                id="warpwise-watch", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=lsp.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))]))
        except Exception as e:
            log.info("file watching not registered: %s", e)
    await reload(ls)


@server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: WarpwiseServer, params: lsp.DidChangeConfigurationParams) -> None:
    """Settings changed: re-read them and re-analyse."""
    await _load_settings(ls)
    await reload(ls)


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
async def did_change_watched(ls: WarpwiseServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    """A report or binary changed on disk: re-analyse."""
    await reload(ls)


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: WarpwiseServer, params: lsp.DidOpenTextDocumentParams) -> None:
    """Publish the opened document's diagnostics."""
    await publish(ls, params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: WarpwiseServer, params: lsp.DidChangeTextDocumentParams) -> None:
    """Debounced republish so results follow the text being edited."""
    uri = params.text_document.uri
    stale.changed(uri)
    prev = ls.debounce.pop(uri, None)
    if prev is not None:
        prev.cancel()

    async def later() -> None:
        await asyncio.sleep(0.15)
        await publish(ls, uri)

    ls.debounce[uri] = asyncio.ensure_future(later())


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: WarpwiseServer, params: lsp.DidSaveTextDocumentParams) -> None:
    """Republish on save. The findings (and their baseline: the profiled text, or the file as it was when
    first analysed when the report embeds no source) are kept, so saving an edit never makes the edited
    lines look profiled again; a reload (new report) computes them afresh."""
    await publish(ls, params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: WarpwiseServer, params: lsp.DidCloseTextDocumentParams) -> None:
    """Clear a closed document's diagnostics."""
    uri = params.text_document.uri
    stale.forget(uri)
    if uri in ls.state.published:
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        ls.state.published.discard(uri)


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: WarpwiseServer, params: lsp.HoverParams) -> lsp.Hover | None:
    """Per-reason breakdown, blame chain, estimates and SASS of the hovered line."""
    got = _findings_for(ls, params.text_document.uri)
    if got is None:
        return None
    ff, lmap, text = got
    return render.hover(ff, lmap, text, params.position.line + 1)


@server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT)
def inlay_hints(ls: WarpwiseServer, params: lsp.InlayHintParams) -> list[lsp.InlayHint]:
    """Share of stalls and best estimate at the end of hot lines."""
    if not ls.state.settings.inlay_hints:
        return []
    got = _findings_for(ls, params.text_document.uri)
    if got is None:
        return []
    ff, lmap, text = got
    return render.inlay_hints(ff, lmap, text, ls.state.settings, params.range)


@server.feature(lsp.TEXT_DOCUMENT_CODE_LENS)
def code_lens(ls: WarpwiseServer, params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
    """One lens per profiled kernel defined in the file."""
    got = _findings_for(ls, params.text_document.uri)
    if got is None:
        return []
    ff, lmap, text = got
    return render.code_lenses(ff, lmap, text, params.text_document.uri, ls.state.settings)


def _client_supports_resolve(ls: WarpwiseServer) -> tuple[bool, bool]:
    td = ls.client_capabilities.text_document if ls.client_capabilities else None
    ca = td.code_action if td is not None else None
    if ca is None:
        return False, False
    props = ca.resolve_support.properties if ca.resolve_support is not None else []
    return "edit" in props, bool(ca.disabled_support)


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
    code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.RefactorRewrite], resolve_provider=True))
async def code_action(ls: WarpwiseServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """Quick fixes for diagnostics in range, DP rewrites on device-side launches in range."""
    uri = params.text_document.uri
    doc = ls.workspace.get_text_document(uri)
    text, version = doc.source, doc.version
    resolve, disabled_ok = _client_supports_resolve(ls)
    only = params.context.only
    first, last = params.range.start.line + 1, params.range.end.line + 1
    loop = asyncio.get_running_loop()

    def work() -> list[lsp.CodeAction]:
        if stale.superseded(ls, uri, version):  # queued behind newer edits: the editor asks again
            return []
        out = actions.quickfix_actions(uri, version, text, str(uri_to_path(uri)), params.context.diagnostics,
                                       only, ls.state.analyses, submit=ls.pool.submit)
        if "<<<" in text:
            out += actions.rewrite_actions(uri, version, text, str(uri_to_path(uri)), first, last, only,
                                           resolve, disabled_ok,
                                           [k.profile for a in ls.state.analyses.values() for k in a.kernels],
                                           submit=ls.pool.submit)
            out += actions.tuned_actions(uri, version, text, str(uri_to_path(uri)), first, last, only,
                                         ls.state.tuned)
        return out

    # usually every result it needs is remembered (the document was parsed, its fixes computed): answered
    # on the event loop, no thread hand-off; otherwise (the first request on a document, a launch in range)
    # in the worker, dropped there if the document changed meanwhile — but not while the user types: then
    # it answers from what is remembered and the parse waits for a pause (stale.typing, doccache)
    if params.context.diagnostics:
        with ls.state.lock:
            ready = str(resolved(uri_to_path(uri))) in ls.state.findings
        if ready:
            _findings_for(ls, uri)  # the quick fixes' line map of this version, from the document's lines
    typing = stale.typing(uri)
    try:
        with doccache.inline(defer=typing):
            return work()
    except doccache.Pending:
        if typing:
            return []  # heavy work on a text that is changing: the editor asks again once it settles
    return await loop.run_in_executor(ls.pool, work)


@server.feature(lsp.CODE_ACTION_RESOLVE)
async def code_action_resolve(ls: WarpwiseServer, action: lsp.CodeAction) -> lsp.CodeAction:
    """Compute a rewrite's edit on demand; a refused rewrite reports its reason to the user."""
    data = action.data if isinstance(action.data, dict) else {}
    if action.edit is not None or "transform" not in data:
        return action
    doc = ls.workspace.get_text_document(data["uri"])
    loop = asyncio.get_running_loop()
    try:
        action.edit = await loop.run_in_executor(ls.pool, actions.resolve_rewrite, data, doc.source)
    except Exception as e:
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Error, message=f"warpwise: {e}"))
    return action


@server.command("warpwise.explain")
def cmd_explain(ls: WarpwiseServer, *args: Any) -> None:
    """Show an explanation (e.g. what --use_fast_math changes) to the user."""
    text = str(args[0]) if args else ""
    ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Info, message=f"warpwise: {text}"))


@server.command("warpwise.reloadProfiles")
async def cmd_reload(ls: WarpwiseServer, *args: Any) -> str:
    """Re-scan the workspace for reports and binaries."""
    await reload(ls)
    return f"{len(ls.state.analyses)} profile(s) loaded"


@server.command("warpwise.showReport")
def cmd_show_report(ls: WarpwiseServer, *args: Any) -> str:
    """The text report of every kernel (or those covering the given URI)."""
    from warpwise.analysis.report import render_text

    with ls.state.lock:
        analyses = list(ls.state.analyses.values())
    uri = args[0] if args and isinstance(args[0], str) else None
    if uri:
        path = uri_to_path(uri)
        picked = [a for a in analyses if any(p is not None and p.resolve() == path.resolve()
                                             for k in a.kernels for p in k.local.values())]
        analyses = picked or analyses
    if not analyses:
        return "warpwise: no profile loaded. Record one with `warpwise profile -o app.ncu-rep -- ./app`."
    roots = ls.roots()
    return render_text(analyses, top=20, root=roots[0] if roots else None)


def _groups(ls: WarpwiseServer) -> list[Any]:
    from warpwise.server.findings import group_kernels

    with ls.state.lock:
        analyses = list(ls.state.analyses.values())
        active = dict(ls.state.active)
    return group_kernels(analyses, active)


@server.command("warpwise.reports")
def cmd_reports(ls: WarpwiseServer, *args: Any) -> list[dict[str, Any]]:
    """Every kernel with the reports that hold it (newest first) and the active one, for the picker.

    Optional argument ``{kernel}``: only that kernel (mangled name)."""
    want = args[0].get("kernel") if args and isinstance(args[0], dict) else None
    out = []
    for g in _groups(ls):
        if want and g.mangled != want:
            continue
        with ls.state.lock:
            per = {p: [k for k in a.kernels if k.profile.mangled == g.mangled] for p, a in ls.state.analyses.items()}
        out.append({"kernel": g.mangled, "name": g.name, "active": str(g.report), "reports": [
            {"path": str(p), "launches": len(per.get(p, [])),
             "samples": sum(k.profile.total_samples for k in per.get(p, []))} for p in g.reports]})
    return out


@server.command("warpwise.selectReport")
async def cmd_select_report(ls: WarpwiseServer, *args: Any) -> str:
    """Make ``{kernel, report}`` the active report of a kernel, then republish every open file."""
    arg = args[0] if args and isinstance(args[0], dict) else {}
    kernel, report = arg.get("kernel"), arg.get("report")
    if not isinstance(kernel, str) or not isinstance(report, str):
        return "warpwise.selectReport needs {kernel, report}"
    with ls.state.lock:
        if Path(report) not in ls.state.analyses:
            return f"{report} is not a loaded report"
        ls.state.active[kernel] = Path(report)
        ls.state.findings.clear()
        ls.state.epoch += 1
    for uri in list(ls.workspace.text_documents):
        await publish(ls, uri)
    _refresh_views(ls)
    _status(ls)
    return f"{Path(report).name} is now the active report of {kernel}"


@server.command("warpwise.profileView")
async def cmd_profile_view(ls: WarpwiseServer, *args: Any) -> dict[str, Any]:
    """The profile view's data (profile_view.page_data) for ``{uri, kernel}`` or a URI: the kernels whose
    samples lie in that file (the named kernel first), or every kernel without an argument."""
    from warpwise.server.profile_view import page_data

    arg = args[0] if args else None
    uri = arg.get("uri") if isinstance(arg, dict) else (arg if isinstance(arg, str) else None)
    kernel = arg.get("kernel") if isinstance(arg, dict) else None
    groups = _groups(ls)
    if uri:
        path = uri_to_path(uri).resolve()
        groups = [g for g in groups if any(p is not None and p.resolve() == path for p in g.local.values())] or groups
    if kernel:
        groups.sort(key=lambda g: g.mangled != kernel)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(ls.pool, page_data, groups)


@server.command("warpwise.currentLine")
def cmd_current_line(ls: WarpwiseServer, *args: Any) -> dict[str, Any]:
    """Where profiled line ``{file, line}`` is in the text the editor has now (the diagnostics' line map):
    ``{"line": N, "stale": bool}``; ``stale`` when the line was edited since profiling (N is where the edit
    is), the profiled number itself when the line was deleted or the file has no findings."""
    arg = args[0] if args and isinstance(args[0], dict) else {}
    file, line = arg.get("file"), arg.get("line")
    if not isinstance(file, str) or not isinstance(line, int) or isinstance(line, bool) or line < 1:
        return {"line": None, "stale": False, "error": "warpwise.currentLine needs {file, line}"}
    path = Path(file)
    if not any(p is not None and p.resolve() == path.resolve() for g in _groups(ls) for p in g.local.values()):
        return {"line": line, "stale": False}  # not a profiled file: nothing to map (and nothing is read)
    ff = cached_findings(ls, path)
    doc = next((d for u, d in ls.workspace.text_documents.items() if uri_to_path(u).resolve() == path.resolve()),
               None)
    if doc is not None:
        text = doc.source
    elif not ff.baseline:
        return {"line": line, "stale": False}
    else:
        from warpwise.server.findings import disk_source

        disk = disk_source(path)  # regular file within the source limit (issue 13)
        if disk is None:
            return {"line": line, "stale": False}
        text = disk
    lmap = line_map(ff.baseline or text, text)
    cur = lmap.line(line)
    if cur is not None:
        return {"line": cur, "stale": False}
    return {"line": lmap.edited_line(line) or line, "stale": True}


@server.command("warpwise.profile")
async def cmd_profile(ls: WarpwiseServer, *args: Any) -> str:
    """Run the configured command under Nsight Compute, with $/progress, then reload."""
    from warpwise.analysis.profile.collect import ProfileError, profile

    s = ls.state.settings
    if not s.profile_command:
        msg = "set warpwise.profile.command to the program (and arguments) to profile"
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=f"warpwise: {msg}"))
        return msg
    roots = ls.roots()
    out = (roots[0] if roots else Path.cwd()) / s.profile_output
    from warpwise.analysis.output import report_output_problem

    if (problem := report_output_problem(out)) is not None:  # never a FIFO/device/folder/link as the report
        msg = f"warpwise.profile.output {problem}"
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Error, message=f"warpwise: {msg}"))
        return msg
    token = f"warpwise-profile-{uuid.uuid4()}"
    await ls.work_done_progress.create_async(token)
    ls.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(title="warpwise: profiling", cancellable=False,
                                                                 message=" ".join(s.profile_command)))
    loop = asyncio.get_running_loop()
    try:
        res = await loop.run_in_executor(ls.pool, lambda: profile(s.profile_command, out, ncu=s.ncu_path))
        msg = f"profiled into {res.report}"
    except ProfileError as e:
        msg = f"profiling failed: {e}"
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Error, message=f"warpwise: {msg}"))
    finally:
        ls.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message="done"))
    await reload(ls)
    return msg


def _tune_target(ls: WarpwiseServer, args: tuple[Any, ...]) -> tuple[str, Path] | str:
    """(kernel, cubin) to tune from the command's arguments ({uri, kernel} or a URI), or why not."""
    arg = args[0] if args else None
    uri = arg.get("uri") if isinstance(arg, dict) else (arg if isinstance(arg, str) else None)
    want = arg.get("kernel") if isinstance(arg, dict) else None
    with ls.state.lock:
        kernels = [k for a in ls.state.analyses.values() for k in a.kernels]
    if uri:
        path = uri_to_path(uri).resolve()
        kernels = [k for k in kernels if any(p is not None and p.resolve() == path for p in k.local.values())]
    if want:
        kernels = [k for k in kernels if want in (k.profile.mangled, k.profile.name)]
    kernels = [k for k in kernels if k.cubin is not None and str(k.cubin.path).endswith(".cubin")]
    if not kernels:
        return "no profiled kernel with a .cubin found for this file (tuning needs the kernel's cubin)"
    best = max(kernels, key=lambda k: k.profile.total_samples)
    return best.profile.mangled, Path(str(best.cubin.path)) if best.cubin else Path()


@server.command("warpwise.tuneSchedule")
async def cmd_tune(ls: WarpwiseServer, *args: Any) -> str:
    """Tune a kernel's SASS schedule on the GPU (SIP) in a child process, with cancellable $/progress."""
    from warpwise.server.tuning import HARNESS_GLOBS, find_harness, find_tuned, tune_command

    target = _tune_target(ls, args)
    if isinstance(target, str):
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=f"warpwise: {target}"))
        return target
    kernel, cubin = target
    harness = find_harness(ls.scan(list(HARNESS_GLOBS)), kernel)
    if harness is None:
        msg = (f"no harness for {kernel}: write {kernel}.harness.json (or any .json in a harness/ folder) "
               "describing its arguments (see docs/tuning.md) in the workspace")
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=f"warpwise: {msg}"))
        return msg
    outdir = cubin.parent / "warpwise-tuned"
    cmd = tune_command(sys.executable, cubin, kernel, harness, outdir, ls.state.settings)
    token = f"warpwise-tune-{uuid.uuid4()}"
    await ls.work_done_progress.create_async(token)
    ls.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(title="warpwise: tuning schedule", cancellable=True,
                                                                 message=kernel))
    cancelled = ls.work_done_progress.tokens.get(token)
    proc = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.STDOUT, start_new_session=True)
    lifecycle.track_group(proc.pid)  # shutdown/exit/lost client kill the tuner's whole group (issue 13)
    last = ""
    assert proc.stdout is not None
    try:
        while True:
            try:
                raw = await asyncio.wait_for(proc.stdout.readline(), timeout=0.5)
            except TimeoutError:
                raw = None
            if cancelled is not None and cancelled.cancelled():
                lifecycle.kill_group(proc.pid)  # the tuner and anything it started (its own session)
                await proc.wait()
                ls.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message="cancelled"))
                return "tuning cancelled"
            if raw is None:
                continue
            if not raw:
                break
            last = raw.decode(errors="replace").strip() or last
            ls.work_done_progress.report(token, lsp.WorkDoneProgressReport(message=last[:120]))
        rc = await proc.wait()
    finally:
        lifecycle.kill_group(proc.pid)  # leftovers of the group (the tuner's GPU worker) end with it
        lifecycle.untrack_group(proc.pid)
    ls.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message="done" if rc == 0 else "failed"))
    msg = f"tuning {kernel}: {last}" if rc == 0 else f"tuning {kernel} failed (exit {rc}): {last}"
    ls.window_show_message(lsp.ShowMessageParams(
        type=lsp.MessageType.Info if rc == 0 else lsp.MessageType.Error, message=f"warpwise: {msg}"))
    ls.state.tuned = find_tuned(ls.scan(["**/*.tune.json"]), ls.roots())
    return msg


#: sys.setswitchinterval of the server (seconds).
SWITCH_INTERVAL_S = 0.001


def set_log_level(level: int) -> None:
    """Log at ``level`` (WARNING by default): pygls logs every JSON-RPC payload at INFO/DEBUG, which only
    warpwise.trace.server or warpwise.logLevel asks for."""
    logging.getLogger().setLevel(level)
    for name in ("pygls", "warpwise"):
        logging.getLogger(name).setLevel(level)


def serve() -> None:
    """Run the server on stdio until the client exits (stderr logging at WARNING until settings say more)."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    set_log_level(logging.WARNING)
    # the event loop takes the interpreter back from a busy worker (a parse, an analysis) within 1 ms, not
    # the default 5 ms, each time a message arrives: requests stay quick while background work runs
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    threading.Thread(target=_warm_imports, name="warpwise-imports", daemon=True).start()
    lifecycle.serve_stdio(server)  # stdin read on the event loop (no thread hop per message line)
