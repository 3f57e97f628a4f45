"""Turn per-file findings into LSP types: diagnostics, hover, inlay hints, code lenses.

The only module besides lsp.py that knows lsprotocol; every position goes through server.positions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from warpwise.server.config import DP_LAUNCH, HOT_LINE, STALE, STALL_CAUSE, Settings
from warpwise.server.findings import EditorKernel, FileFindings, LineFinding, advice_primary
from warpwise.server.linemap import LineMap, text_lines
from warpwise.server.positions import UTF16, content_extent, units
from warpwise.server.uris import path_to_uri, resolved, same_file

SOURCE = "warpwise"
_SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning,
             "information": lsp.DiagnosticSeverity.Information, "hint": lsp.DiagnosticSeverity.Hint}
DOCS = Path(__file__).resolve().parent.parent / "docs" / "optimizers.md"


def _pct(x: float) -> str:
    """One decimal, as the CLI report prints it."""
    return f"{100 * x:.1f}%"


#: Position encoding negotiated with the client (set by the server after initialize).
ENCODING = {"value": UTF16}


def _line_range(lines: Sequence[str], line: int) -> lsp.Range:
    lt = lines[line - 1] if 0 < line <= len(lines) else ""
    a, b = content_extent(lt, ENCODING["value"])
    return lsp.Range(lsp.Position(line - 1, a), lsp.Position(line - 1, b))


def _reasons(f: LineFinding, n: int = 3) -> str:
    if f.stats is None or f.stats.samples == 0:
        return ""
    return ", ".join(f"{r} {_pct(v / f.stats.samples)}" for r, v in f.stats.top_reasons(n))


def _instructions(n: int) -> str:
    return f"{n} instruction" + ("" if n == 1 else "s")


def _unit(name: str) -> str:
    """`` samples`` / `` ns`` / ``x`` after an estimate input's value (analysis/advice/report.input_unit)."""
    from warpwise.analysis.advice.report import input_unit, unit_suffix

    return unit_suffix(input_unit(name))


def _inputs_md(inputs: dict[str, Any]) -> str:
    """An estimate's inputs for the hover (``T = 28,464 samples``), a long per-launch series as its range
    (analysis/advice/report.compact_inputs)."""
    from warpwise.analysis.advice.report import compact_inputs

    out = []
    for k, v in compact_inputs(inputs):
        if isinstance(v, tuple):
            out.append(f"{k} = {_num(v[0])}–{_num(v[1])}{_unit(k.removesuffix('_i') + '0')} over {v[2]} launches")
        elif isinstance(v, int | float):
            out.append(f"{k} = {_num(v)}{_unit(k)}")
        else:
            out.append(f"{k} = {v}")  # kept in its place among the others
    return ", ".join(out)


def _num(v: Any) -> str:
    """Sample counts with thousands separators, ratios with 4 significant digits, never exponents."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return str(v)
    if float(v).is_integer() and abs(v) >= 1:
        return f"{int(v):,}"
    return f"{v:.4g}" if abs(v) >= 1e-3 else f"{v:.6f}"


def _speedup(adv: Any) -> float:
    return float(getattr(adv, "estimated_speedup", 1.0) or 1.0)


def _rank(adv: Any) -> float:
    """What the analysis ranks by (ranking.rank_value: the estimate, an upper bound at its midpoint)."""
    return float(getattr(adv, "rank_value", 0.0) or _speedup(adv))


#: "mostly waiting on X" is said only when X carries at least this share of the line's samples.
WAITING_SHARE = 0.2


def _optimizer(adv: Any) -> str:
    return str(getattr(adv, "optimizer", "advice"))


def _code_description(opt: str) -> lsp.CodeDescription | None:
    if DOCS.is_file():
        return lsp.CodeDescription(href=f"{DOCS.as_uri()}#{opt}")
    return None


@dataclass
class View:
    """Findings of one file seen through the current text: which baseline lines still exist, which
    advice is retired (one of its lines was edited, e.g. by its own quick fix) and how many profiled
    lines of each kernel were edited (the profile is stale for that kernel)."""

    ff: FileFindings
    lmap: LineMap
    retired: set[int] = field(default_factory=set)
    edited: dict[str, int] = field(default_factory=dict)

    _mapped: list[tuple[int, LineFinding]] = field(default_factory=list)
    _stale: list[tuple[int, LineFinding]] = field(default_factory=list)
    _by_line: dict[int, list[LineFinding]] = field(default_factory=dict)
    _stale_by_line: dict[int, list[LineFinding]] = field(default_factory=dict)
    _memo: dict[Any, Any] = field(default_factory=dict)  # per findings (every version): see _per_findings
    _hovers: dict[tuple[str, int], lsp.Hover | None] = field(default_factory=dict)  # (text, line) -> hover

    @classmethod
    def of(cls, ff: FileFindings, lmap: LineMap) -> View:
        """The view of ``ff`` through ``lmap``, computed once per (findings, line map) pair: one LineMap lookup
        per finding and advice line, and the findings placed on their current lines (hover, inlay hints,
        code lenses and diagnostics of one document version share it)."""
        key = (id(ff), id(lmap))
        hit = _VIEWS.get(key)
        if hit is not None and hit.ff is ff and hit.lmap is lmap:
            return hit
        v = cls(ff, lmap, _memo=_per_findings(ff))
        v.retired = {k for k, lines in ff.advice_lines.items() if any(lmap.line(n) is None for n in lines)}
        for f in ff.findings:
            cur = lmap.line(f.line)
            if cur is not None:
                v._mapped.append((cur, f))
                v._by_line.setdefault(cur, []).append(f)
                continue
            if f.stats is not None:
                v.edited[f.kernel.mangled] = v.edited.get(f.kernel.mangled, 0) + 1
            was = lmap.edited_line(f.line)
            if was is not None:
                v._stale.append((was, f))
                v._stale_by_line.setdefault(was, []).append(f)
        if len(_VIEWS) >= 16:  # a few documents, a few versions each; the entries hold their keys' objects
            _VIEWS.clear()
        _VIEWS[key] = v
        return v

    def mapped_at(self, line: int) -> list[LineFinding]:
        """The unchanged findings now on current ``line``."""
        return self._by_line.get(line, [])

    def stale_at(self, line: int) -> list[LineFinding]:
        """The findings of a line edited since profiling that is now current ``line``."""
        return self._stale_by_line.get(line, [])

    def cur(self, line: int | None, file: Path | None = None) -> int | None:
        """Current line of a baseline line of this file (other files' lines are returned unchanged)."""
        if line is None:
            return None
        if file is not None and not self._here(file):
            return line
        return self.lmap.line(line)

    def _here(self, file: Path | str) -> bool:
        """Whether ``file`` is this file (remembered per findings)."""
        key = ("here", str(file))  # a str hashes and compares in C (a Path does it in Python)
        got = self._memo.get(key)
        if got is None:
            got = self._memo[key] = same_file(file, self.ff.path)
        return bool(got)

    def live(self, advice: list[Any]) -> list[Any]:
        """The advice that no edit has retired."""
        return [a for a in advice if id(a) not in self.retired]

    def _local(self, recorded: str) -> Path | None:
        """The local file of a recorded path (remembered per findings: the same for every version)."""
        key = ("local", recorded)
        if key in self._memo:
            return self._memo[key]
        found = None
        for g in self.ff.groups:
            for ka in g.group.launches:
                p = ka.local_path(recorded)
                if p is not None:
                    found = Path(p)
                    break
            if found is not None:
                break
        self._memo[key] = found
        return found

    def relabel(self, text: str) -> str:
        """``line N`` / ``lines 9, 11 and 23`` in an analysis message rewritten to the lines' current numbers
        (this file); a number whose line was edited is kept as it was. A line reference into another file
        (advice.common.line_ref) names that file, relative to the workspace folder, and keeps its number."""
        from warpwise.analysis.advice.common import resolve_refs
        from warpwise.analysis.confine import roots

        def one(m: re.Match[str]) -> str:
            cur = self.lmap.line(int(m.group(0)))
            return str(cur) if cur is not None else m.group(0)

        def sub(m: re.Match[str]) -> str:
            return m.group(1) + re.sub(r"\d+", one, m.group(2))

        def current(t: str) -> str:
            return re.sub(r"\b(lines? )(\d+(?:(?:, | and )\d+)*)\b", sub, t)

        def is_here(recorded: str) -> bool:
            p = self._local(recorded)
            return p is not None and self._here(p)

        def name(recorded: str) -> str:
            p = self._local(recorded)
            if p is None:
                return recorded
            for r in roots():
                try:
                    return str(resolved(p).relative_to(resolved(r)))
                except ValueError:
                    continue
            return str(p)

        return resolve_refs(text, is_here, name, own=current, plain=current)

    def mapped(self) -> list[tuple[int, LineFinding]]:
        """(current line, finding) for every finding whose line is unchanged."""
        return list(self._mapped)

    def stale(self) -> list[tuple[int, LineFinding]]:
        """(current line, finding) for every finding whose line was edited in place since profiling (its
        results describe the old text: shown as stale, see ``stale_text``); deleted lines have none."""
        return list(self._stale)


#: (id(findings), id(line map)) -> its View (View.of)
_VIEWS: dict[tuple[int, int], View] = {}
#: id(findings) -> (findings, what its views remember for every version: local files, same-file tests)
_PER_FINDINGS: dict[int, tuple[FileFindings, dict[Any, Any]]] = {}


def _per_findings(ff: FileFindings) -> dict[Any, Any]:
    hit = _PER_FINDINGS.get(id(ff))
    if hit is None or hit[0] is not ff:
        if len(_PER_FINDINGS) >= 16:
            _PER_FINDINGS.clear()
        hit = _PER_FINDINGS[id(ff)] = (ff, {})  # the entry holds ff: its id is not reused meanwhile
    return hit[1]


def _best(view: View, f: LineFinding, min_gain: float) -> Any | None:
    """The line's best live advice at or above ``min_gain`` (its primary advice only)."""
    for a in view.live(f.advice):
        if _speedup(a) >= min_gain:
            return a
    return None


def _short(hint: str, limit: int = 160) -> str:
    """A hint's first clause (up to "; "), at most ``limit`` characters: the diagnostic stays one glance
    long; the hover and the profile view carry the whole hint."""
    first = hint.split("; ")[0]
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def _line_word(view: View, file: Path | None, line: int | None) -> str:
    cur = view.cur(line, file)
    if cur is None:
        return "an edited line"
    if file is not None and not view._here(file):
        return f"{Path(file).name}:{cur}"
    return f"line {cur}"


def _top_reason(f: LineFinding, digits: int = 1) -> str:
    if f.stats is None or not f.stats.samples:
        return ""
    top = f.stats.top_reasons(1)
    return f"{top[0][0]} {100 * top[0][1] / f.stats.samples:.{digits}f}%" if top else ""


#: Related-information rows per diagnostic. VS Code draws the diagnostic with its rows above warpwise's hover
#: (issue 11: the summary started 870 px down): with the one most useful row (the dominant blame edge, else
#: the line's other advice) the summary starts ~100 px from the hover's top; the row counts the rest, which
#: the hover lists in full (with two rows it started at 124 px in the code-server e2e).
MAX_RELATED = 1


def _related(view: View, f: LineFinding, lines: Sequence[str], skip: Any, min_gain: float,
             doc_uri: str, causes_first: bool = False) -> list[lsp.DiagnosticRelatedInformation]:
    """At most ``MAX_RELATED`` rows, most useful first: the def line carrying most of the line's blamed stalls,
    the line's other advice at or above ``min_gain``, then other blame rows and the lines waiting on this one
    (those first with ``causes_first``: a stall_cause diagnostic); each once. When rows are left out, the last
    kept one says how many (they are all in the hover)."""
    rows: list[tuple[Path, int, str]] = []
    seen: set[tuple[str, int, str]] = set()

    def add(file: Path | None, line: int | None, message: str) -> None:
        if file is None or line is None:
            return
        key = (str(file), line, message)
        if key not in seen:
            seen.add(key)
            rows.append((file, line, message))

    # one row per other location: the blame edges into this line grouped by their def line
    by_def: dict[tuple[str, int], list[Any]] = {}
    for b in f.blamed_on[:8]:
        if b.file is not None and b.line is not None:
            by_def.setdefault((str(b.file), b.line), []).append(b)
    blame_rows = [(Path(file), line, f"{bs[0].reason} {bs[0].samples:,.0f} samples blamed on {bs[0].opcode} at "
                   f"{_line_word(view, Path(file), line)}, {_instructions(bs[0].distance)} earlier")
                  for (file, line), bs in list(by_def.items())[:4] if round(bs[0].samples) > 0]
    by_use: dict[tuple[str, int], list[Any]] = {}
    for b in f.causes:
        if b.file is not None and b.line is not None and (b.line != f.line or Path(b.file) != view.ff.path):
            by_use.setdefault((str(b.file), b.line), []).append(b)
    cause_rows = [(Path(file), line, f"{_line_word(view, Path(file), line)} waits on this line: {bs[0].opcode} "
                   f"{bs[0].samples:,.0f} samples ({bs[0].reason})") for (file, line), bs in list(by_use.items())[:3]
                  if round(bs[0].samples) > 0]
    advice_rows = []
    for a in view.live(f.advice + f.touching):
        if a is skip or _speedup(a) < min_gain:
            continue
        pf, pl = advice_primary(a, f.kernel)
        if pf is not None and pl is not None:
            advice_rows.append((pf, pl, f"also: {_optimizer(a)} {_speedup(a):.2f}×"))
    order = [*blame_rows[:1], *advice_rows, *blame_rows[1:], *cause_rows]
    if causes_first:
        order = [*cause_rows, *order[: len(order) - len(cause_rows)]]
    for file, line, message in order:
        add(file, line, message)
    out: list[lsp.DiagnosticRelatedInformation] = []
    for file, line, message in rows:
        rng = _related_range(view, file, line, lines)
        if rng is None:
            continue
        uri = path_to_uri(file, (doc_uri,))  # the client's own URI for its document (percent-encoding)
        out.append(lsp.DiagnosticRelatedInformation(location=lsp.Location(uri=uri, range=rng), message=message))
    if len(out) > MAX_RELATED:
        rest = len(out) - MAX_RELATED
        out = out[:MAX_RELATED]
        last = out[-1]
        out[-1] = lsp.DiagnosticRelatedInformation(
            location=last.location, message=f"{last.message} (+{rest} more in the hover)")
    return out


def _samples_of(kernel: str) -> str:
    """What a line's share is a share of: the kernel's warp samples, each a sampled warp with its state (Nsight
    Compute's "Warp Stall Sampling (All Samples)": "selected", the warp that issued, counts too, so they are not
    all stalls). "warp samples" is the one term the CLI, hover, inlay, lens and docs use for them."""
    return f"{kernel}'s warp samples"


def estimate_words(speedup: float) -> str:
    """An advice's estimated kernel speedup (x) as the editor shows it: ``est. 2.19× if fixed``, worded so it is
    not read as the line's share of samples printed beside it."""
    return f"est. {speedup:.2f}× if fixed"


def _action(hint: str, limit: int = 40) -> str:
    """The imperative end of an advice hint ("…: write 0.1f" -> "write 0.1f") when it is short; else "" (the
    hover and the profile view carry the whole hint)."""
    tail = hint.rsplit(": ", 1)[-1].strip() if ": " in hint else ""
    return tail if 0 < len(tail) <= limit else ""


def _stale_was(f: LineFinding) -> str:
    """What the profile measured on a line that was edited since (its old text)."""
    g = f.kernel
    was = (f"{_pct(f.share)} of {_samples_of(g.name)}" if f.stats is not None
           else f"caused {_pct(f.caused_share)} of {_samples_of(g.name)} (its users' stalls)")
    return f"the profiled text of this line had {was}"


def stale_text(f: LineFinding) -> str:
    """The one-line message of a finding on a line edited since profiling."""
    return f"stale: edited since profiling — re-profile ({_stale_was(f)})"


def diagnostics(ff: FileFindings, lmap: LineMap, text: str, s: Settings, uri: str) -> list[lsp.Diagnostic]:
    """At most one diagnostic per line per kernel: the line's best finding, in one short line.

    The best finding is the line's best live advice at or above ``s.min_gain`` (``code est. 2.19× if fixed —
    action · line has 94.3% of K's warp samples (top reason)``), else its own samples (code hot_line) or the
    stalls it causes elsewhere (code stall_cause), whichever share is larger. A line edited since profiling
    keeps one diagnostic with code ``stale`` (a hint by default: what the profile measured there is gone until
    it is re-profiled). Every kind obeys ``s.min_share`` (the line's share, or the share it causes if larger),
    its code's severity and ``s.max_diagnostics_per_file`` (heaviest lines first). Retired advice is skipped;
    ``data["advice"]`` lists the line's live advice at or above ``s.min_gain``, best first (their quick fixes
    are offered).
    """
    view = View.of(ff, lmap)
    lines = text_lines(text)
    out: list[tuple[float, lsp.Diagnostic]] = []
    launch_lines: set[tuple[str, int]] = set()
    for cost in ff.launch_costs:
        cur = lmap.line(cost.line)
        if cur is None or cost.share < s.min_share:
            continue
        launch_lines.add((cost.kernel.mangled, cur))
        out.append((cost.share, lsp.Diagnostic(
            range=_line_range(lines, cur), message=launch_cost_short(cost, text), source=SOURCE,
            severity=_SEVERITY[s.severity_of(DP_LAUNCH)], code=DP_LAUNCH,
            data={"kernel": cost.kernel.mangled, "line": cost.line, "report": str(cost.kernel.report)})))
    stale_seen: set[tuple[str, int]] = set()
    for cur, f in view.stale():
        if f.weight < s.min_share or (f.kernel.mangled, cur) in stale_seen:
            continue
        stale_seen.add((f.kernel.mangled, cur))
        out.append((f.weight, lsp.Diagnostic(
            range=_line_range(lines, cur), message=stale_text(f), source=SOURCE,
            severity=_SEVERITY[s.severity_of(STALE)], code=STALE,
            data={"kernel": f.kernel.mangled, "line": f.line, "report": str(f.kernel.report), "stale": True})))
    for cur, f in view.mapped():
        if f.weight < s.min_share or (f.kernel.mangled, cur) in launch_lines:
            continue
        g = f.kernel
        kname = g.name
        best = _best(view, f, s.min_gain)
        data: dict[str, Any] = {"kernel": g.mangled, "line": f.line, "report": str(g.report)}
        # a line is weighed by its own samples or the stalls it causes elsewhere, whichever is larger: say that one
        own = f.stats is not None and f.share >= f.caused_share
        # the line's own top stall reason describes its own samples, not the stalls it causes
        reason = _top_reason(f, 0 if best is not None else 1) if own or best is None else ""
        if best is not None:
            code = _optimizer(best)
            action = _action(view.relabel(str(getattr(best, "hint", "") or "")))
            # the estimate with its action first, then what the line measured, each saying what it is (a new
            # user read "2.19× · 94.3% of blur_rows" as one estimate); two lines of VS Code's hover at most
            msg = f"{code} {estimate_words(_speedup(best))}" + (f" — {action}" if action else "")
            msg += (f" · line has {_pct(f.share)} of {_samples_of(kname)}" + (f" ({reason})" if reason else "")
                    if own else f" · line causes {_pct(f.caused_share)} of {_samples_of(kname)} (its users' stalls)")
            data["optimizer"] = code
            data["advice"] = [{"optimizer": _optimizer(a), "speedup": round(_speedup(a), 4)}
                              for a in view.live(f.advice) if _speedup(a) >= s.min_gain]
        elif f.stats is not None and (f.share >= f.caused_share or not f.causes):
            code = HOT_LINE
            st = f.stats
            msg = (f"line has {_pct(f.share)} of {_samples_of(kname)} · "
                   f"{_pct(st.latency_samples / max(1, st.samples))} of them not issued"
                   + (f" · top {reason}" if reason else ""))
            if f.blamed_on and f.blamed_on[0].samples >= WAITING_SHARE * st.samples:
                b = f.blamed_on[0]
                msg += f" · waits on {b.opcode} at {_line_word(view, b.file, b.line)}"
        elif f.causes:
            code = STALL_CAUSE
            b = f.causes[0]
            msg = (f"line causes {_pct(f.caused_share)} of {_samples_of(kname)} (its users' stalls) · most at "
                   f"{_line_word(view, b.file, b.line)} ({b.reason} {b.samples:,.0f})")
        else:
            continue
        related = _related(view, f, lines, best, s.min_gain, uri, causes_first=code == STALL_CAUSE)
        out.append((f.weight, lsp.Diagnostic(
            range=_line_range(lines, cur), message=msg, severity=_SEVERITY[s.severity_of(code)], source=SOURCE,
            code=code, code_description=_code_description(code) if best is not None else None,
            related_information=related or None, data=data)))
    out.sort(key=lambda t: -t[0])
    return [d for _, d in out[: s.max_diagnostics_per_file]]


def launch_cost_text(cost: Any, text: str, view: View | None = None) -> str:
    """What a device-side launch line costs: child-kernel and device-runtime samples, launches vs the
    pending-launch limit, and where the rewrites are."""
    from warpwise.server.cdp import pending_limit

    g = cost.kernel
    kids = ", ".join(f"{c} {_pct(v / max(1, cost.total))}" for c, v in
                     sorted(cost.children.items(), key=lambda kv: -kv[1])) or "none sampled"
    msg = (f"device-side launch: {_pct(cost.share)} of {g.name}'s warp samples are its children's and the device "
           f"runtime's (child kernels: {kids}; device runtime {_pct(cost.runtime / max(1, cost.total))})")
    limit, where = pending_limit(text)
    if cost.launches is not None:
        set_at = f", set at line {where}" if where is not None else ", the default"
        msg += f"; {cost.launches:,} child launches against a pending-launch limit of {limit:,}{set_at}"
        if cost.launches > limit:
            msg += " — launches past it are dropped"
    return msg + "; try the dynamic-parallelism rewrites (code actions: threshold, coarsen, aggregate)"


def launch_cost_short(cost: Any, text: str) -> str:
    """``launch_cost_text`` in one line, for the diagnostic (the hover carries the long form)."""
    from warpwise.server.cdp import pending_limit

    g = cost.kernel
    kids = ", ".join(c for c, _ in sorted(cost.children.items(), key=lambda kv: -kv[1])[:2]) or "none sampled"
    child = sum(cost.children.values()) / max(1, cost.total)
    msg = (f"device-side launch: children {_pct(child)} ({kids}), device runtime "
           f"{_pct(cost.runtime / max(1, cost.total))} of {g.name}'s warp samples")
    if cost.launches is not None:
        limit, where = pending_limit(text)
        msg += f" · {cost.launches:,} launches, pending limit {limit:,}" + (f" (line {where})" if where else "")
        if cost.launches > limit:
            msg += ", launches past it dropped"
    return msg + " — try the DP rewrites (code actions)"


def _related_range(view: View, file: Path, line: int, lines: Sequence[str]) -> lsp.Range | None:
    if view._here(file):
        cur = view.lmap.line(line)
        return _line_range(lines, cur) if cur is not None else None
    ln = max(0, line - 1)
    return lsp.Range(lsp.Position(ln, 0), lsp.Position(ln, 0))


_BAR = " ▏▎▍▌▋▊▉█"


def bar(fraction: float, width: int = 10) -> str:
    """A text bar of ``width`` cells filled to ``fraction`` (0..1) with eighth-cell resolution."""
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (_BAR[part] if part else "")).ljust(width, "░")


def confidence_text(adv: Any) -> str:
    """The estimate's confidence as the advice model states it (analysis/advice/ranking): the 95% interval,
    the samples behind it, "upper bound" for upper-bound estimators and a binding speed-of-light cap."""
    bits: list[str] = []
    interval = getattr(adv, "interval", None)
    if isinstance(interval, tuple | list) and len(interval) == 2:
        bits.append(f"95% interval {float(interval[0]):.2f}–{float(interval[1]):.2f}×")
    samples = getattr(adv, "samples", None)
    if isinstance(samples, int) and not isinstance(samples, bool) and samples > 0:
        bits.append(f"{samples:,} samples")
    if getattr(adv, "upper_bound", False):
        bits.append("upper bound")
    cap = getattr(adv, "cap", None)
    if cap is not None and getattr(cap, "binding", False):
        bits.append(f"capped at {float(cap.cap):.2f}× ({cap.unit} at {float(cap.pct):.0f}% of peak)")
    return ", ".join(bits)


def _kernel_line_label(g: EditorKernel) -> str:
    n = len(g.launches)
    launches = f"{n} launch" + ("" if n == 1 else "es")
    rep = g.report.name + (f" (newest of {len(g.reports)})" if len(g.reports) > 1 and g.report == g.reports[0]
                           else (f" (1 of {len(g.reports)})" if len(g.reports) > 1 else ""))
    return f"{launches} · report {rep}"
def _function_name(mangled: str) -> str:
    from warpwise.analysis.report import _short as short_name

    return short_name(mangled)




def hover(ff: FileFindings, lmap: LineMap, text: str, line: int) -> lsp.Hover | None:
    """Markdown hover for the 1-based current ``line``.

    Starts with warpwise's summary per kernel (share, a compact per-reason bar, the top advice with its
    estimate and confidence), then the details: stall table, blame, every estimate's arithmetic, SASS.
    Rendered once per (findings, line map, text, line): the editor asks again for every word of the line the
    pointer rests on."""
    view = View.of(ff, lmap)
    key = (text, line)
    if key in view._hovers:
        return view._hovers[key]
    out = _hover(view, ff, lmap, text, line)
    if len(view._hovers) >= 64:
        view._hovers.clear()
    view._hovers[key] = out
    return out


def _hover(view: View, ff: FileFindings, lmap: LineMap, text: str, line: int) -> lsp.Hover | None:
    from warpwise.analysis.advice.report import PER_LAUNCH_SHOWN, per_launch_text

    here = view.mapped_at(line)
    costs = [c for c in ff.launch_costs if lmap.line(c.line) == line]
    edited = view.stale_at(line)
    entries = [(g, ls) for g, ls in ff.entries if view.cur(ls.line) == line]
    if not here and not costs and not edited and not entries:
        return None
    summary: list[str] = [f"**warpwise** · `{c.kernel.name}` · {launch_cost_text(c, text, view)}" for c in costs]
    for g, ls in entries:  # the signature line: the kernel's entry, not a hot line (LineStats.entry)
        reasons = ", ".join(f"{r} {_pct(v / max(1, ls.samples))}" for r, v in ls.top_reasons(3))
        summary.append(f"**warpwise** · `{g.name}` · kernel entry: {ls.samples:,} of {_samples_of(g.name)} "
                       f"({_pct(ls.samples / max(1, g.total_samples))}) are on this signature line — the prologue "
                       f"(parameter set-up) and warps waiting there at launch, not a line to change ({reasons})")
    for f in edited:
        summary.append(f"**warpwise** · `{f.kernel.name}` · **stale**: this line was edited since profiling, so "
                       f"its findings describe the old text ({_stale_was(f)}). "
                       "Re-profile (warpwise: Profile Program with Nsight Compute) to see the new code's.")
    details: list[str] = []
    for f in here:
        g = f.kernel
        head = f"**warpwise** · `{g.name}` · {_kernel_line_label(g)}"
        if f.stats is not None:
            st = f.stats
            head += (f"  \nthis line: **{_pct(f.share)}** of {_samples_of(g.name)} "
                     f"({st.samples:,} of {g.total_samples:,})")
        elif f.causes:
            head += (f"  \nthis line causes **{_pct(f.caused_share)}** of {_samples_of(g.name)} "
                     "(stalls of its users)")
        summary.append(head)
        if f.stats is not None and f.stats.samples:
            rows = [f"{r:<18} {bar(v / f.stats.samples)} {_pct(v / f.stats.samples):>6}"
                    for r, v in f.stats.top_reasons(3)]
            summary.append("```text\n" + "\n".join(rows) + "\n```")
        live = view.live(f.advice) or view.live(f.touching)
        if live:
            top = max(live, key=_speedup)
            conf = confidence_text(top)
            hint = _short(view.relabel(str(getattr(top, "hint", "") or "")))
            summary.append(f"**{_optimizer(top)}** — estimated **{_speedup(top):.2f}×** for the kernel if fixed" +
                           (f" ({conf})" if conf else "") + (f": {hint}" if hint else ""))
        if g.bound is not None:
            summary.append(f"**{g.bound.unit} bound**: {g.bound.text}")
        if len(g.launches) > 1:
            summary.append(f"_Over {len(g.launches)} launches: {g.rule}._")
        details.append(f"#### `{g.name}` in detail")
        if f.stats is not None:
            st = f.stats
            details.append(f"{st.latency_samples:,} of the line's {st.samples:,} samples not issued\n")
            details.append("| stall reason | samples | share |\n|---|---:|---:|")
            for r, v in sorted(st.stalls.items(), key=lambda kv: -kv[1]):
                details.append(f"| {r} | {v:,} | {_pct(v / max(1, st.samples))} |")
            for c in f.kernel.inlined(st.file, st.line)[:3]:
                details.append(f"\nInlined into `{_function_name(c.function)}` at "
                               f"{_line_word(view, Path(f.kernel.first.local_path(c.file) or c.file), c.line)} "
                               f"({c.samples:,} samples)")
            inc = f.kernel.inclusive(st.file, st.line)
            if inc is not None:
                details.append(f"\nInclusive: **{inc:,}** samples with the code inlined here "
                               f"({_pct(inc / max(1, g.total_samples))} of the kernel)")
        if f.blamed_on:
            details.append("\n**Blamed on** (GPA instruction blamer; distance of the edge with most samples):")
            for b in f.blamed_on[:6]:
                details.append(f"- {b.reason}: {b.samples:,.1f} samples ← `{b.opcode}` at "
                               f"{_line_word(view, b.file, b.line)}, {_instructions(b.distance)} earlier")
        if f.causes:
            details.append("\n**Stalls caused here** (this line defines what others wait for):")
            for b in f.causes[:6]:
                details.append(f"- {b.samples:,.1f} samples of {b.reason} at {_line_word(view, b.file, b.line)} "
                               f"(`{b.opcode}`)")
        # each part of an advice its own paragraph: formula, suggestion, rank, alternatives, launches
        for adv in view.live(f.advice + f.touching):
            conf = confidence_text(adv)
            details.append(f"\n**{_optimizer(adv)}** — estimated speedup **{_speedup(adv):.2f}×**" +
                           (f" ({conf})" if conf else ""))
            est = getattr(adv, "estimate", None)
            formula = getattr(est, "formula", None) if est is not None else None
            inputs = getattr(est, "inputs", None) if est is not None else None
            if isinstance(est, dict):
                formula, inputs = est.get("formula"), est.get("inputs")
            if formula:
                details.append(f"\n`{formula}` with {_inputs_md(inputs or {})}")
            hint = getattr(adv, "hint", "")
            if hint:
                details.append("\n" + view.relabel(hint))
            why = getattr(adv, "why", "")
            if why:
                details.append(f"\n_Ranked: {why}_")
            alts = getattr(adv, "alternatives", []) or []
            if alts:
                details.append("\nOther fixes for the same samples: " + ", ".join(
                    f"{a.optimizer} {a.estimated_speedup:.2f}×" + (" (upper bound)" if a.upper_bound else "")
                    for a in alts))
            launches = getattr(adv, "launches", []) or []
            if len(launches) > PER_LAUNCH_SHOWN:
                # the hover has no place for every launch: the range and the longest launch say enough
                details.append("\nPer launch: " + per_launch_text(launches, sep="×", more=None))
            elif len(launches) > 1:
                details.append("\nPer launch: " + ", ".join(
                    f"grid {'×'.join(map(str, le.grid))} {le.speedup:.2f}× ({le.samples:,} samples)"
                    for le in launches))
        if f.sass:
            details.append("\nSASS of this line:\n```sass\n" + "\n".join(f.sass[:24]) +
                           ("\n..." if len(f.sass) > 24 else "") + "\n```")
    if ff.stale:
        details.append("\n_The file differs from the profiled source: results are shown only on unchanged lines._")
    value = "\n\n".join(summary) + ("\n\n---\n\n" + "\n".join(details) if details else "")
    lines = text_lines(text)
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=value),
                     range=_line_range(lines, line))


def inlay_hints(ff: FileFindings, lmap: LineMap, text: str, s: Settings, rng: lsp.Range) -> list[lsp.InlayHint]:
    """``23.0% of warp samples · est. 1.14× if fixed`` at the end of each hot line inside ``rng``: the line's
    share of its kernel's warp samples and its best live estimate (one label per kernel, ``|``-separated and led by
    the kernel's name when several kernels run the line); the tooltip says the same with the kernel's name."""
    view = View.of(ff, lmap)
    lines = text_lines(text)
    per_line: dict[int, list[tuple[float, str, str, str]]] = {}
    for cur, f in view.mapped():
        if f.stats is None or f.share < s.min_share:
            continue
        if not (rng.start.line <= cur - 1 <= rng.end.line):
            continue
        # the best live estimate of advice on the line or pointing at it (a fix may lie on its def line)
        best = max((a for a in view.live(f.advice + f.touching) if _speedup(a) >= s.min_gain), key=_rank,
                   default=None)
        # within VS Code's editor.inlayHints.maximumLength (43 characters by default; longer labels end in "…")
        label = f"{_pct(f.share)} of warp samples" + (
            f" · {estimate_words(_speedup(best))}" if best is not None else "")
        tip = f"this line has {_pct(f.share)} of {_samples_of(f.kernel.name)}" + (
            f"; its best advice ({_optimizer(best)}) is estimated to make {f.kernel.name} "
            f"{_speedup(best):.2f}× faster if fixed" if best is not None else "")
        per_line.setdefault(cur, []).append((f.share, label, f.kernel.name, tip))
    for cur, f in view.stale():
        if f.stats is not None and f.share >= s.min_share and rng.start.line <= cur - 1 <= rng.end.line:
            per_line.setdefault(cur, []).append((f.share, f"stale (was {_pct(f.share)} of warp samples)",
                                                 f.kernel.name, f"edited since profiling: {_stale_was(f)}"))
    for cost in ff.launch_costs:
        cur = lmap.line(cost.line)
        if cur is not None and cost.share >= s.min_share and rng.start.line <= cur - 1 <= rng.end.line:
            child = sum(cost.children.values()) / max(1, cost.total)
            runtime = _pct(cost.runtime / max(1, cost.total))
            label = f"children {_pct(child)} · runtime {runtime}"
            tip = (f"{_pct(child)} of {_samples_of(cost.kernel.name)} are its child kernels', {runtime} the "
                   "device runtime's")
            per_line[cur] = [(cost.share, label, cost.kernel.name, tip)] + [
                x for x in per_line.get(cur, []) if x[0] >= s.min_share]
    out: list[lsp.InlayHint] = []
    for cur, labels in sorted(per_line.items()):
        ranked = sorted(labels, key=lambda t: -t[0])
        several = len({k for _, _, k, _ in ranked}) > 1
        label = " | ".join(f"{k}: {lab}" if several else lab for _, lab, k, _ in ranked)
        tooltip = "\n".join(f"warpwise: {tip}" for _, _, _, tip in ranked)
        end = units(lines[cur - 1], ENCODING["value"]) if cur - 1 < len(lines) else 0
        out.append(lsp.InlayHint(position=lsp.Position(cur - 1, end), label=label, padding_left=True,
                                 tooltip=tooltip))
    return out


def code_lenses(ff: FileFindings, lmap: LineMap, text: str, uri: str, s: Settings | None = None) -> list[lsp.CodeLens]:
    """Lenses above each profiled kernel's definition: the active report and launch count, samples and top
    live advice (opens the profile view), the text report, a report picker when several reports hold the
    kernel, and "profile is stale · re-profile" once a profiled line was edited."""
    s = s or Settings()
    view = View.of(ff, lmap)
    out: list[lsp.CodeLens] = []
    for g in ff.groups:
        key = ("kernel_line", g.mangled)
        if key not in view._memo:  # a scan of the kernel's PCs: once per findings
            view._memo[key] = kernel_line(g.first, ff.path)
        line = view._memo[key]
        cur = lmap.line(line) if line else None
        if cur is None:
            continue
        rng = lsp.Range(lsp.Position(cur - 1, 0), lsp.Position(cur - 1, 0))
        arg = {"uri": uri, "kernel": g.mangled}
        edited = view.edited.get(g.mangled, 0)
        top = next((a for a in view.live(g.advice) if _speedup(a) >= s.min_gain), None)
        title = f"warpwise: {g.name} · {_kernel_line_label(g)} · {g.total_samples:,} warp samples"
        if g.bound is not None:
            title += f" · {g.bound.unit} bound ({g.bound.pct:.0f}% of peak)"
        if top is not None:
            title += f" · top: {_optimizer(top)} {_speedup(top):.2f}×"
        out.append(lsp.CodeLens(range=rng, command=lsp.Command(title=title, command="warpwise.showProfileView",
                                                               arguments=[arg])))
        out.append(lsp.CodeLens(range=rng, command=lsp.Command(title="show report", command="warpwise.showReport",
                                                               arguments=[uri])))
        if len(g.reports) > 1:
            out.append(lsp.CodeLens(range=rng, command=lsp.Command(
                title=f"choose report ({len(g.reports)})", command="warpwise.chooseReport", arguments=[arg])))
        if edited:
            out.append(lsp.CodeLens(range=rng, command=lsp.Command(
                title=f"profile is stale ({edited} profiled line{'' if edited == 1 else 's'} edited) · re-profile",
                command="warpwise.profile", arguments=[])))
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
    lines = text_lines(text)
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
