"""The profile view: one page that draws a kernel's profile (heat gutter, stall-reason bars, SASS with
per-instruction samples, blame arrows, ranked advice).

The same page serves the VS Code webview (the extension fills it with ``page_data`` from the server's
``warpwise.profileView`` command) and ``warpwise advise --format html`` (``render_html`` inlines the
assets and the data into one self-contained file, no network). The page's assets live in
``server/webview/`` (package data; the .vsix carries a copy made at build time); ``profile.js`` is the
esbuild bundle of ``vscode-client/webview/profile.mjs`` with its d3 modules.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from warpwise.server.findings import EditorKernel, advice_primary, opcode_of, stall_edges

ASSETS = Path(__file__).resolve().parent / "webview"
PAGE_VERSION = 1
#: Placeholders of webview/profile.html that the CLI and the extension fill in.
CSS_SLOT, JS_SLOT, DATA_SLOT, TITLE_SLOT = "/*WARPWISE_CSS*/", "/*WARPWISE_JS*/", "WARPWISE_DATA", "WARPWISE_TITLE"


def _hint(adv: Any, g: EditorKernel) -> str:
    """The hint as the page shows it under the advice's scope: references into other files name them."""
    from warpwise.analysis.advice.report import hint_text

    scope = getattr(adv, "scope", None)
    ka = g.group.first

    def local(recorded: str) -> str:
        return str(ka.local_path(recorded) or recorded)

    return hint_text(str(getattr(adv, "hint", "") or ""), getattr(scope, "file", None), local)


def _advice(adv: Any, g: EditorKernel) -> dict[str, Any]:
    from warpwise.server.render import confidence_text

    est = getattr(adv, "estimate", None)
    f, line = advice_primary(adv, g)
    scope = getattr(adv, "scope", None)
    return {
        "optimizer": str(getattr(adv, "optimizer", "advice")),
        "speedup": float(getattr(adv, "estimated_speedup", 1.0) or 1.0),
        "formula": getattr(est, "formula", "") if est is not None else "",
        "inputs": {k: float(v) for k, v in (getattr(est, "inputs", {}) or {}).items()
                   if isinstance(v, int | float)},
        "equation": getattr(est, "equation", "") if est is not None else "",
        "confidence": confidence_text(adv),
        "hint": _hint(adv, g),
        "scope": getattr(scope, "name", "") if scope is not None else "",
        "why": str(getattr(adv, "why", "") or ""),
        "upper_bound": bool(getattr(adv, "upper_bound", False)),
        "file": str(f) if f is not None else None,
        "line": line,
    }


def kernel_data(g: EditorKernel) -> dict[str, Any]:
    """The page's model of one kernel group (JSON-ready).

    ``files``: local path -> source lines (the profiled text when the report embeds it); ``lines``: sampled
    lines {file, line, samples, latency, stalls}; ``sass``: instructions with line info {id, file, line, text,
    opcode, samples, stalls}; ``blame``: edges {use, def, reason, samples, distance} between instruction ids
    (stall samples summed over launches); ``advice``: ranked, with estimate, formula, confidence and hint;
    ``notes``: the analysis' notes on the kernel, as the text report prints them (no -lineinfo, -G build,
    samples outside the module such as the CDP device runtime, several launches combined).
    """
    from warpwise.server.findings import baseline_text

    local = g.local
    files: dict[str, list[str]] = {}
    for p in local.values():
        if p is None or str(p) in files:
            continue
        text = baseline_text(g.first, p)
        if text is None:
            from warpwise.server.findings import disk_source

            text = disk_source(p)  # regular file within the source limit (issue 13)
        files[str(p)] = (text or "").replace("\r\n", "\n").split("\n")
    lines = [{"file": str(local.get(ls.file) or ls.file), "line": ls.line, "samples": ls.samples,
              "latency": ls.latency_samples, "stalls": dict(ls.stalls)} for ls in g.lines]
    sass: dict[tuple[str, int], dict[str, Any]] = {}
    for ka in g.launches:
        for (fn, off), s in ka.profile.pcs.items():
            key = (fn, off)
            row = sass.get(key)
            if row is None:
                ins, _, file, line = ka.instruction(fn, off)
                text = ins.text if ins is not None else s.sass
                row = sass[key] = {"id": f"{fn}:{off:#x}", "function": fn, "pc": off,
                                   "file": str(local.get(file) or file) if file else None, "line": line,
                                   "text": text, "opcode": opcode_of(text), "samples": 0, "stalls": {}}
            row["samples"] += s.samples
            for r, v in s.stalls.items():
                row["stalls"][r] = row["stalls"].get(r, 0) + v
    blame: dict[tuple[str, str, str], dict[str, Any]] = {}
    for _ka, e, owner in stall_edges(g):
        use, def_ = f"{owner}:{e.use_offset:#x}", f"{owner}:{e.def_offset:#x}"
        b = blame.setdefault((use, def_, e.reason), {"use": use, "def": def_, "reason": e.reason,
                                                     "samples": 0.0, "distance": e.distance})
        b["samples"] += e.stall_samples
    return {
        "name": g.name, "mangled": g.mangled, "arch": g.arch, "device": g.device,
        "report": str(g.report), "reports": [str(p) for p in g.reports], "launches": len(g.launches),
        "rule": g.rule, "total": g.total_samples,
        "bound": g.bound.text if g.bound is not None else "", "notes": list(g.group.notes), "files": files,
        "lines": lines,
        "sass": sorted((r for r in sass.values() if r["line"] is not None),
                       key=lambda r: (r["function"] != g.mangled, r["function"], r["pc"])),
        "blame": sorted((dict(b, samples=round(b["samples"], 2)) for b in blame.values()),
                        key=lambda b: -b["samples"]),
        "advice": [_advice(a, g) for a in sorted(g.advice, key=lambda a: -float(a.estimated_speedup))],
    }


def page_data(groups: list[EditorKernel]) -> dict[str, Any]:
    """The page's whole model: ``{"version": 1, "kernels": [kernel_data...]}`` (first kernel shown first)."""
    return {"version": PAGE_VERSION, "kernels": [kernel_data(g) for g in groups]}


def asset(name: str) -> str:
    """Text of one page asset (``profile.html``, ``profile.css``, ``profile.js``). Raises FileNotFoundError
    naming the file when the installation lacks it."""
    p = ASSETS / name
    if not p.is_file():
        raise FileNotFoundError(f"{p}: profile-view asset missing from the warpwise installation")
    return p.read_text(encoding="utf-8")


def _script_json(data: dict[str, Any]) -> str:
    """JSON safe inside a <script> element (no ``</`` sequence, no HTML comment openers)."""
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/").replace("<!--", "<\\!--")


def render_html(data: dict[str, Any], title: str = "warpwise profile view") -> str:
    """One self-contained HTML file (CSS, JS and data inline; no network) showing ``data``."""
    fill = {TITLE_SLOT: html.escape(title), CSS_SLOT: asset("profile.css"),
            JS_SLOT: asset("profile.js").replace("</script", "<\\/script"), DATA_SLOT: _script_json(data)}
    # one pass, so nothing inserted (source text, SASS) is ever taken for a placeholder
    return re.sub("|".join(re.escape(k) for k in fill), lambda m: fill[m.group(0)], asset("profile.html"))
