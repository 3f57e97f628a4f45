"""Turn per-file findings into LSP types: diagnostics, hover, inlay hints, code lenses.

The only module besides lsp.py that knows lsprotocol; every position goes through server.positions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from warpwise.server.config import Settings
from warpwise.server.findings import FileFindings, LineFinding
from warpwise.server.linemap import LineMap
from warpwise.server.positions import UTF16, content_extent, units
from warpwise.server.uris import path_to_uri

SOURCE = "warpwise"
_SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning,
             "information": lsp.DiagnosticSeverity.Information, "hint": lsp.DiagnosticSeverity.Hint}
DOCS = Path(__file__).resolve().parent.parent / "docs" / "optimizers.md"


def _pct(x: float) -> str:
    """One decimal, as the CLI report prints it."""
    return f"{100 * x:.1f}%"


#: Position encoding negotiated with the client (set by the server after initialize).
ENCODING = {"value": UTF16}


def _line_range(text_lines: list[str], line: int) -> lsp.Range:
    lt = text_lines[line - 1] if 0 < line <= len(text_lines) else ""
    a, b = content_extent(lt, ENCODING["value"])
    return lsp.Range(lsp.Position(line - 1, a), lsp.Position(line - 1, b))


def _reasons(f: LineFinding, n: int = 3) -> str:
    if f.stats is None or f.stats.samples == 0:
        return ""
    return ", ".join(f"{r} {_pct(v / f.stats.samples)}" for r, v in f.stats.top_reasons(n))


def _instructions(n: int) -> str:
    return f"{n} instruction" + ("" if n == 1 else "s")


def _num(v: Any) -> str:
    """Sample counts with thousands separators, ratios with 4 significant digits, never exponents."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return str(v)
    if float(v).is_integer() and abs(v) >= 1:
        return f"{int(v):,}"
    return f"{v:.4g}" if abs(v) >= 1e-3 else f"{v:.6f}"


def _speedup(adv: Any) -> float:
    return float(getattr(adv, "estimated_speedup", 1.0) or 1.0)


def _optimizer(adv: Any) -> str:
    return str(getattr(adv, "optimizer", "advice"))


def _code_description(opt: str) -> lsp.CodeDescription | None:
    if DOCS.is_file():
        return lsp.CodeDescription(href=f"{DOCS.as_uri()}#{opt}")
    return None


def _mapped(ff: FileFindings, lmap: LineMap) -> list[tuple[int, LineFinding]]:
    out = []
    for f in ff.findings:
        cur = lmap.line(f.line)
        if cur is not None:
            out.append((cur, f))
    return out


def diagnostics(ff: FileFindings, lmap: LineMap, text: str, s: Settings, uri: str) -> list[lsp.Diagnostic]:
    """One diagnostic per hot line (or per advice on it), per def line blamed for stalls elsewhere.

    Lines whose text changed since the profile are skipped; at most ``s.max_diagnostics_per_file``.
    """
    lines = text.split("\n")
    out: list[tuple[float, lsp.Diagnostic]] = []
    for cur, f in _mapped(ff, lmap):
        rng = _line_range(lines, cur)
        kname = f.kernel.profile.name
        related = [lsp.DiagnosticRelatedInformation(
            location=lsp.Location(uri=path_to_uri(b.file, (uri,)), range=_related_range(b.file, b.line, ff, lmap,
                                                                                               lines, uri)),
            message=f"{b.reason} {b.samples:,.0f} samples blamed on {b.opcode} (line {b.line}, "
                    f"{_instructions(b.distance)} earlier)")
            for b in f.blamed_on[:5] if b.file is not None and b.line is not None]
        if f.advice:
            for adv in f.advice:
                opt = _optimizer(adv)
                share = getattr(adv, "share", None)
                share_txt = f"{_pct(share)} of samples, " if isinstance(share, float) else ""
                msg = f"{opt}: {share_txt}estimated {_speedup(adv):.2f}× for {kname}"
                hint = getattr(adv, "hint", "")
                if hint:
                    msg += f" — {hint}"
                out.append((f.share + _speedup(adv), lsp.Diagnostic(
                    range=rng, message=msg, severity=_SEVERITY[s.severity_of(opt)], source=SOURCE, code=opt,
                    code_description=_code_description(opt), related_information=related or None,
                    data={"optimizer": opt, "kernel": f.kernel.profile.mangled, "line": f.line})))
        if f.stats is not None and f.share >= s.min_share:
            msg = (f"{_pct(f.share)} of {kname}'s samples ({f.stats.samples:,}); "
                   f"{_pct(f.stats.latency_samples / max(1, f.stats.samples))} not issued: {_reasons(f)}")
            if f.blamed_on:
                b = f.blamed_on[0]
                msg += f"; mostly waiting on {b.opcode} at line {b.line}"
            out.append((f.share, lsp.Diagnostic(
                range=rng, message=msg, severity=_SEVERITY[s.severity_of("hotLine")], source=SOURCE,
                code="hot_line", related_information=related or None,
                data={"kernel": f.kernel.profile.mangled, "line": f.line})))
        if f.causes and (f.stats is None or f.share < s.min_share or f.causes):
            caused = sum(b.samples for b in f.causes)
            share = caused / max(1, f.kernel.profile.total_samples)
            if share >= s.min_share:
                where = ", ".join(f"line {b.line} ({b.reason} {b.samples:,.0f})" for b in f.causes[:3])
                rel = [lsp.DiagnosticRelatedInformation(
                    location=lsp.Location(uri=path_to_uri(b.file, (uri,)),
                                          range=_related_range(b.file, b.line, ff, lmap, lines, uri)),
                    message=f"stalls {b.samples:,.0f} samples ({b.reason})")
                    for b in f.causes[:5] if b.file is not None and b.line is not None]
                out.append((share, lsp.Diagnostic(
                    range=rng, severity=_SEVERITY[s.severity_of("blamedDef")], source=SOURCE, code="stall_cause",
                    message=f"instructions here cause {_pct(share)} of {kname}'s samples as stalls of their "
                            f"users: {where}", related_information=rel or None,
                    data={"kernel": f.kernel.profile.mangled, "line": f.line})))
    out.sort(key=lambda t: -t[0])
    return [d for _, d in out[: s.max_diagnostics_per_file]]


def _related_range(file: Path | None, line: int | None, ff: FileFindings, lmap: LineMap, lines: list[str],
                   uri: str) -> lsp.Range:
    if file is not None and line is not None and Path(file).resolve() == ff.path.resolve():
        cur = lmap.line(line)
        if cur is not None:
            return _line_range(lines, cur)
    ln = max(0, (line or 1) - 1)
    return lsp.Range(lsp.Position(ln, 0), lsp.Position(ln, 0))


def _where(file: str | Path | None, line: int | None, current: Path) -> str:
    """``line N`` in the current file, ``name.cuh:N`` in another one (a message never cites a bare line of
    another file)."""
    if file is not None and Path(file).resolve() != current.resolve():
        return f"{Path(file).name}:{line}"
    return f"line {line}"


def _function_name(mangled: str) -> str:
    from warpwise.analysis.report import _short

    return _short(mangled)


def hover(ff: FileFindings, lmap: LineMap, text: str, line: int) -> lsp.Hover | None:
    """Markdown hover for the 1-based current ``line``: samples by reason, blame, estimates, SASS."""
    here = [f for cur, f in _mapped(ff, lmap) if cur == line]
    if not here:
        return None
    parts: list[str] = []
    for f in here:
        p = f.kernel.profile
        head = f"**warpwise** · `{p.name}` ({p.arch}, {p.device})"
        parts.append(head)
        if f.stats is not None:
            st = f.stats
            parts.append(f"{_pct(f.share)} of the kernel's samples: **{st.samples:,}** of {p.total_samples:,} "
                         f"({st.latency_samples:,} not issued)\n")
            parts.append("| stall reason | samples | share |\n|---|---:|---:|")
            for r, v in sorted(st.stalls.items(), key=lambda kv: -kv[1]):
                parts.append(f"| {r} | {v:,} | {_pct(v / max(1, st.samples))} |")
            for c in f.kernel.inlined.get((st.file, st.line), [])[:3]:
                parts.append(f"\nInlined into `{_function_name(c.function)}` at "
                             f"{_where(f.kernel.local_path(c.file), c.line, ff.path)} ({c.samples:,} samples)")
            inc = f.kernel.inclusive.get((st.file, st.line))
            if inc is not None:
                parts.append(f"\nInclusive: **{inc:,}** samples with the code inlined here "
                             f"({_pct(inc / max(1, p.total_samples))} of the kernel)")
        if f.blamed_on:
            parts.append("\n**Blamed on** (GPA instruction blamer):")
            for b in f.blamed_on[:6]:
                parts.append(f"- {b.reason}: {b.samples:,.1f} samples ← `{b.opcode}` at "
                             f"{_where(b.file, b.line, ff.path)}, {_instructions(b.distance)} earlier")
        if f.causes:
            parts.append("\n**Stalls caused here** (this line defines what others wait for):")
            for b in f.causes[:6]:
                parts.append(f"- {b.samples:,.1f} samples of {b.reason} at {_where(b.file, b.line, ff.path)} "
                             f"(`{b.opcode}`)")
        for adv in f.advice:
            parts.append(f"\n**{_optimizer(adv)}** — estimated speedup **{_speedup(adv):.2f}×**")
            est = getattr(adv, "estimate", None)
            formula = getattr(est, "formula", None) if est is not None else None
            inputs = getattr(est, "inputs", None) if est is not None else None
            if isinstance(est, dict):
                formula, inputs = est.get("formula"), est.get("inputs")
            if formula:
                vals = ", ".join(f"{k} = {_num(v)}" for k, v in (inputs or {}).items())
                parts.append(f"`{formula}` with {vals}")
            hint = getattr(adv, "hint", "")
            if hint:
                parts.append(hint)
        if f.sass:
            parts.append("\nSASS of this line:\n```sass\n" + "\n".join(f.sass[:24]) +
                         ("\n..." if len(f.sass) > 24 else "") + "\n```")
    if ff.stale:
        parts.append("\n_The file differs from the profiled source: results are shown only on unchanged lines._")
    lines = text.split("\n")
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value="\n".join(parts)),
                     range=_line_range(lines, line))


def inlay_hints(ff: FileFindings, lmap: LineMap, text: str, s: Settings, rng: lsp.Range) -> list[lsp.InlayHint]:
    """``23% · 1.14×`` at the end of each hot line inside ``rng`` (share of samples, best estimate)."""
    lines = text.split("\n")
    out: list[lsp.InlayHint] = []
    best: dict[int, tuple[float, float]] = {}
    for cur, f in _mapped(ff, lmap):
        if f.stats is None or f.share < s.min_share:
            continue
        if not (rng.start.line <= cur - 1 <= rng.end.line):
            continue
        sp = max((_speedup(a) for a in f.advice), default=0.0)
        share, old = best.get(cur, (0.0, 0.0))
        best[cur] = (share + f.share, max(old, sp))
    for cur, (share, sp) in sorted(best.items()):
        label = f"{_pct(share)}" + (f" · {sp:.2f}×" if sp > 1.0 else "")
        end = units(lines[cur - 1], ENCODING["value"]) if cur - 1 < len(lines) else 0
        out.append(lsp.InlayHint(position=lsp.Position(cur - 1, end), label=label, padding_left=True,
                                 tooltip="warpwise: share of the kernel's samples · best estimated speedup"))
    return out


def code_lenses(ff: FileFindings, lmap: LineMap, text: str, uri: str) -> list[lsp.CodeLens]:
    """A lens above each profiled kernel's definition: samples, top advice, open report."""
    out: list[lsp.CodeLens] = []
    seen: set[str] = set()
    for f in ff.findings:
        ka = f.kernel
        if ka.profile.mangled in seen:
            continue
        line = kernel_line(ka, ff.path)
        cur = lmap.line(line) if line else None
        if cur is None:
            continue
        seen.add(ka.profile.mangled)
        top = max(ka.advice, key=_speedup, default=None)
        title = f"warpwise: {ka.profile.total_samples:,} samples"
        if top is not None:
            title += f" · top: {_optimizer(top)} {_speedup(top):.2f}×"
        title += " · show report"
        out.append(lsp.CodeLens(range=lsp.Range(lsp.Position(cur - 1, 0), lsp.Position(cur - 1, 0)),
                                command=lsp.Command(title=title, command="warpwise.showReport", arguments=[uri])))
    return out


def kernel_line(ka: Any, path: Path) -> int | None:
    """1-based line of the kernel's first instruction in ``path`` (its signature line), if known."""
    first = min((s for s in ka.profile.pcs.values() if s.function == ka.profile.mangled and s.line is not None),
                key=lambda s: s.offset, default=None)
    if first is None or first.file is None:
        return None
    local = ka.local.get(first.file)
    if local is None or local.resolve() != path.resolve():
        return None
    return int(first.line)


def launch_diagnostics(text: str, path: str) -> list[lsp.Diagnostic]:
    """Warnings on device-side launches whose errors go unchecked or may exceed the pending-launch limit.

    A file that does not parse gets one information diagnostic with the reason ("parse failed at
    FILE:LINE:COL: ...", rewrites withheld) and the unchecked-launch warnings of a token scan.
    """
    from warpwise.analysis.rewrite import RewriteError
    from warpwise.analysis.rewrite import launch_diagnostics as find
    from warpwise.analysis.rewrite.parse import CODE_PARSE_FAILED, fallback_launch_diagnostics

    try:
        found = find(text, path)
    except RewriteError:
        found = fallback_launch_diagnostics(text, path) or []
    lines = text.split("\n")
    out = []
    for d in found:
        lt = lines[d.line - 1] if 0 < d.line <= len(lines) else ""
        from warpwise.server.positions import utf8_col_to_units

        a = utf8_col_to_units(lt, d.column - 1, ENCODING["value"])
        b = utf8_col_to_units(lt, min(d.end_column - 1, len(lt.encode("utf-8"))), ENCODING["value"])
        severity = (lsp.DiagnosticSeverity.Information if d.code == CODE_PARSE_FAILED
                    else lsp.DiagnosticSeverity.Warning)
        out.append(lsp.Diagnostic(range=lsp.Range(lsp.Position(d.line - 1, a), lsp.Position(d.line - 1, b)),
                                  message=d.message, severity=severity, source=SOURCE, code=d.code))
    return out
