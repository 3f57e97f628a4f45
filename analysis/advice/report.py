"""Render advice: plain text (GPA Fig. 8), the contract's JSON ``advice`` array, and SARIF 2.1.0.

``map_file`` maps a path recorded in the profile/binary to the local file (the CLI maps by longest path
suffix, DESIGN.md); without it the recorded path is used.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from warpwise.analysis.advice.model import Advice, AdviceReport, Estimate, Hotspot, LaunchEstimate, Location, Scope
from warpwise.analysis.advice.registry import REGISTRY, optimizers

FileMap = Callable[[str], str]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
DOCS_PAGE = "docs/optimizers.md"


def docs_anchor(optimizer: str) -> str:
    """Link target of an optimizer's documentation: ``docs/optimizers.md#<id>`` (the section anchor is the id)."""
    return f"{DOCS_PAGE}#{optimizer}"


def _file(path: str | None, map_file: FileMap | None) -> str | None:
    if path is None:
        return None
    return map_file(path) if map_file is not None else path


def _display(path: str) -> str:
    """A local path as a hint names it: relative to the working folder (the CLI's workspace) when below it."""
    p = Path(path)
    if p.is_absolute():
        try:
            return str(p.relative_to(Path.cwd()))
        except ValueError:
            return path
    return path


def hint_text(text: str, here: str | None, map_file: FileMap | None = None) -> str:
    """A hint as shown at a location in the recorded file ``here``: its line references into other files name
    the file (common.resolve_refs), mapped with ``map_file`` and relative to the working folder."""
    from warpwise.analysis.advice.common import resolve_refs

    return resolve_refs(text, here, lambda f: _display(_file(f, map_file) or f))


# ---- JSON --------------------------------------------------------------------------------------------

def basis_text(a: Advice) -> str:
    """What an estimate rests on, as the reports print it: the matched share of samples, or for estimates
    that do not scale with it, the launch shape (GPA eqs. 6-10) or the traffic after the fix (the roofline of
    analysis/arch/roofline.after_fix), with the matched share beside it."""
    if a.basis:
        return "from the launch shape"
    if "roofline after the fix (SpeedOfLight x traffic)" in a.estimate.equation:
        return f"from the traffic after the fix ({a.share:.1%} of warp samples matched)"
    return f"{a.share:.1%} of warp samples"


def _num(v: float) -> float | int:
    return int(v) if float(v).is_integer() else round(float(v), 6)


def scope_json(s: Scope, map_file: FileMap | None = None) -> dict[str, Any]:
    """Contract ``scope``: kind, file, line (+ end_line, function, name)."""
    return {"kind": s.kind, "file": _file(s.file, map_file), "line": s.line, "end_line": s.end_line,
            "function": s.function, "name": s.name}


def location_json(loc: Location, map_file: FileMap | None = None) -> dict[str, Any]:
    """A def/use location: pc as hex string (section offset), file, line, opcode, function."""
    return {"pc": f"{loc.pc:#x}", "file": _file(loc.file, map_file), "line": loc.line, "opcode": loc.opcode,
            "function": loc.function}


def estimate_json(e: Estimate) -> dict[str, Any]:
    """Contract ``estimate``: formula and inputs (plus the speedup and the GPA equation)."""
    return {"formula": e.formula, "inputs": {k: _num(v) for k, v in e.inputs.items()},
            "speedup": round(e.speedup, 6), "equation": e.equation}


def hotspot_json(h: Hotspot, map_file: FileMap | None = None) -> dict[str, Any]:
    """Contract hotspot: def, use, samples, distance (+ reason and loop context). ``def`` is null for a
    stall the stalled instruction keeps itself (no def instruction to blame)."""
    return {"def": None if h.def_ is None else location_json(h.def_, map_file), "use": location_json(h.use, map_file),
            "samples": _num(h.samples), "distance": h.distance, "reason": h.reason,
            "loop": None if h.loop is None else scope_json(h.loop, map_file)}


def advice_json(a: Advice, map_file: FileMap | None = None) -> dict[str, Any]:
    """One entry of the contract's ``advice`` array (version 2 adds confidence, upper_bound, cap, why,
    alternatives and launches; analysis/advice/ranking)."""
    return {"optimizer": a.optimizer, "scope": scope_json(a.scope, map_file),
            "matched_samples": _num(a.matched_samples), "share": round(a.share, 6),
            "estimated_speedup": round(a.estimated_speedup, 6), "estimate": estimate_json(a.estimate),
            "hotspots": [hotspot_json(h, map_file) for h in a.hotspots],
            "regions": [{"scope": scope_json(r.scope, map_file), "matched_samples": _num(r.matched_samples),
                         "estimated_speedup": round(r.estimate.speedup, 6), "estimate": estimate_json(r.estimate)}
                        for r in a.regions],
            "hint": hint_text(a.hint, a.scope.file, map_file), "missing": a.missing or None,
            "docs": docs_anchor(a.optimizer),
            "confidence": {"interval": [round(x, 6) for x in a.interval] if a.interval else None,
                           "samples": a.samples, "level": 0.95},
            "upper_bound": a.upper_bound, "rank_value": round(a.rank_value, 6),
            "cap": None if a.cap is None else {"unit": a.cap.unit, "pct": round(a.cap.pct, 2),
                                               "cap": round(a.cap.cap, 6), "binding": a.cap.binding},
            "why": a.why, "basis": a.basis or None,
            "alternatives": [{"optimizer": x.optimizer, "estimated_speedup": round(x.estimated_speedup, 6),
                              "matched_samples": _num(x.matched_samples), "overlap": round(x.overlap, 4),
                              "upper_bound": x.upper_bound, "hint": hint_text(x.hint, a.scope.file, map_file)}
                             for x in a.alternatives],
            "launches": [{"index": list(x.launch), "duration_ns": x.duration_ns, "samples": x.samples,
                          "estimated_speedup": round(x.speedup, 6), "grid": list(x.grid), "block": list(x.block)}
                         for x in a.launches]}


def to_json(advice: Sequence[Advice], map_file: FileMap | None = None, top: int | None = None) -> list[dict[str, Any]]:
    """The contract's ``advice`` array (ranked order kept; ``top`` keeps the first N)."""
    items = list(advice)[: top if top is not None else None]
    return [advice_json(a, map_file) for a in items]


def report_json(report: AdviceReport, map_file: FileMap | None = None, top: int | None = None) -> dict[str, Any]:
    """Advice part of one kernel object of ``advise --format json``: ``advice``, plus ``skipped`` (with
    reasons) and ``notes``. The CLI merges it with the kernel's name, samples, launch, lines and blame."""
    b = report.bound
    return {"advice": to_json(report.advice, map_file, top),
            "skipped": [{"optimizer": s.optimizer, "reason": s.reason, "missing": s.missing} for s in report.skipped],
            "notes": list(report.notes),
            "bound": None if b is None else {"unit": b.unit, "pct": round(b.pct, 2), "cap": round(b.cap, 6),
                                             "text": b.text}}


# ---- text (GPA Fig. 8) -----------------------------------------------------------------------------

def _loc_text(loc: Location | None, map_file: FileMap | None) -> str:
    if loc is None:
        return "(kept by the stalled instruction)"
    f = _file(loc.file, map_file)
    where = f"{f}:{loc.line}" if f and loc.line else "(no line info)"
    return f"{where} {loc.pc:#x} {loc.opcode}"


#: Units of the estimate inputs the formulas name (GPA eqs. 2-10 count warp samples; the launch floor and the
#: launches' weights are times), shown once beside each value so that T (warp samples) and T_ns (ns) are not
#: read as one quantity. Names not listed are ratios or counts without a unit.
_INPUT_UNITS = {"T": "samples", "M": "samples", "A": "samples", "L": "samples", "H": "samples", "M_L": "samples",
                "M_Ll": "samples", "A_nested": "samples", "V": "waves", "ceil(V)": "waves", "sectors": "sectors",
                "index_sectors": "sectors", "dram_bytes": "bytes", "SMs": "SMs", "SMs_new": "SMs",
                # fast math's issue/SFU roofline (code._sfu_roofline): SM cycles and warp-level instructions
                "C": "cycles", "C_issue": "cycles", "C_sfu": "cycles", "I": "instructions",
                "I_removed": "instructions", "I_added": "instructions", "N_mufu": "instructions",
                "inst_removed": "instructions", "inst_executed": "instructions"}


def input_unit(name: str) -> str:
    """The unit of estimate input ``name`` as the reports print it after the value (``""`` for none):
    ``samples`` (warp samples), ``ns`` (``*_ns``), ``x`` (speedups and caps: ``S_i``, ``C_unit``), ``% of
    peak`` (``unit_pct``), ``waves``, ``sectors``..."""
    if name in _INPUT_UNITS:
        return _INPUT_UNITS[name]
    if name.endswith("_ns"):
        return "ns"
    if name.endswith("_pct"):
        return "% of peak"
    if name.startswith("C_") or (name[:1] == "S" and name[1:].isdigit()):
        return "x"
    if name.startswith("wavefronts"):
        return "wavefronts"
    return ""


def input_value_text(name: str, v: float, sep: str = "=") -> str:
    """``T=28464 samples``, ``f_ns=2267 ns``, ``C_sm=1.077x``: one estimate input with its unit."""
    num = f"{v:.4g}" if not float(v).is_integer() else f"{int(v)}"
    unit = input_unit(name)
    return f"{name}{sep}{num}{unit_suffix(unit)}"


def unit_suffix(unit: str) -> str:
    """How a unit follows its number: ``1.077x``, ``92.84% of peak``, ``2267 ns``."""
    return "" if not unit else unit if unit[0] in "x%" else f" {unit}"


PER_LAUNCH_SHOWN = 6
"""Most launches whose per-launch values (``t_i``, ``S_i``, the per-launch estimates) the text report and the
hover list one by one; a kernel launched more often gets their range instead (the JSON keeps every launch)."""

_SERIES = re.compile(r"([tS])(\d+)")  # the per-launch series of advice/launches.py: t_i (ns), S_i (x)


def compact_inputs(inputs: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """An estimate's inputs as shown to a person: per-launch series ``t0..t{n-1}`` / ``S0..S{n-1}`` of more
    than PER_LAUNCH_SHOWN entries become one ``(name + "_i", (min, max, n))`` entry where the series began;
    every other input (numeric or not) stays ``(name, value)`` in its order. Shapes: n inputs in, at most n
    entries out."""
    series: dict[str, list[float]] = {}
    for k, v in inputs.items():
        m = _SERIES.fullmatch(k)
        if m and isinstance(v, int | float):
            series.setdefault(m.group(1), []).append(float(v))
    # a series folds only when it is the whole run 0..n-1 (what launches.py writes), never a stray numbered input
    long = {b for b, vs in series.items() if len(vs) > PER_LAUNCH_SHOWN
            and all(f"{b}{i}" in inputs for i in range(len(vs)))}
    out: list[tuple[str, Any]] = []
    for k, v in inputs.items():
        m = _SERIES.fullmatch(k)
        if m and m.group(1) in long and isinstance(v, int | float):
            if m.group(2) == "0":
                vs = series[m.group(1)]
                out.append((f"{m.group(1)}_i", (min(vs), max(vs), len(vs))))
            continue
        out.append((k, v))
    return out


def _inputs_text(e: Estimate) -> str:
    def one(k: str, v: float | tuple[float, float, int]) -> str:
        if isinstance(v, tuple):
            unit = unit_suffix(input_unit(k.removesuffix("_i") + "0"))
            return f"{k}={v[0]:.4g}-{v[1]:.4g}{unit} over {v[2]} launches"
        return input_value_text(k, v)
    return ", ".join(one(k, v) for k, v in compact_inputs(e.inputs))


def per_launch_text(launches: Sequence[LaunchEstimate], sep: str = "x",
                    more: str | None = "each launch in --format json") -> str:
    """The per-launch estimates of a finding in one line: each launch (``0.1 1.054x (2.5 us)``) up to
    PER_LAUNCH_SHOWN launches, else their range and the longest launch's (``48 launches, 1.000-1.142x; longest
    0.43 1.000x (2.7 us)``), then ``more`` (where the rest is; None: nothing). ``sep`` is the times sign (``x``
    in text, ``×`` in Markdown)."""
    if len(launches) <= PER_LAUNCH_SHOWN:
        return ", ".join(f"{x.launch[0]}.{x.launch[1]} {x.speedup:.3f}{sep} ({x.duration_ns / 1000:.1f} us)"
                         for x in launches)
    s = [x.speedup for x in launches]
    lo = max(launches, key=lambda x: x.duration_ns)
    return (f"{len(launches)} launches, {min(s):.3f}-{max(s):.3f}{sep}; longest {lo.launch[0]}.{lo.launch[1]} "
            f"{lo.speedup:.3f}{sep} ({lo.duration_ns / 1000:.1f} us)" + (f"; {more}" if more else ""))


def render_text(reports: AdviceReport | Sequence[AdviceReport], map_file: FileMap | None = None,
                top: int | None = None, show_skipped: bool = False) -> str:
    """GPA-style report (Fig. 8): per kernel, ranked optimizers with share of samples, estimated speedup,
    the estimate's formula and inputs, the suggestion, and up to 5 hotspots (def → use locations, loop
    context, distance, samples)."""
    reps = [reports] if isinstance(reports, AdviceReport) else list(reports)
    optimizers()  # registers the optimizers (titles) also when the advice came from the on-disk cache
    out: list[str] = []
    for r in reps:
        out.append(f"Kernel {r.kernel} ({r.arch}): {r.total} samples, {r.latency} latency, {r.active} active")
        for n in r.notes:
            out.append(f"  note: {n}")
        if r.bound is not None:
            out.append(f"  bound: {r.bound.text}")
        items = r.advice[: top if top is not None else None]
        if not items:
            out.append("  nothing to gain above the reporting threshold" if r.bound is not None
                       else "  no optimizer matched")
        for i, a in enumerate(items, 1):
            opt = REGISTRY.get(a.optimizer)
            title = opt.title if opt else a.optimizer
            ci = f" (sampling 95% {a.interval[0]:.3f}-{a.interval[1]:.3f}x)" if a.interval else ""
            out.append(f"{i}. {title} [{a.optimizer}]: {basis_text(a)}, "
                       f"{'upper bound' if a.upper_bound else 'estimated speedup'} {a.estimated_speedup:.3f}x{ci}")
            if a.why:
                out.append(f"   why: {a.why}")
            out.append(f"   estimate: {a.estimate.formula} with {_inputs_text(a.estimate)} ({a.estimate.equation})")
            sc = a.scope
            f = _file(sc.file, map_file)
            span = f"{f}:{sc.line}" + (f"-{sc.end_line}" if sc.end_line and sc.end_line != sc.line else "") \
                if f and sc.line else "(no line info)"
            out.append(f"   scope: {sc.name or sc.kind} at {span}")
            if a.hint:
                out.append(f"   suggestion: {hint_text(a.hint, sc.file, map_file)}")
            if a.missing:
                out.append(f"   missing: {a.missing}")
            if a.alternatives:
                alts = "; ".join(f"{x.optimizer} {x.estimated_speedup:.3f}x"
                                 + (" (upper bound)" if x.upper_bound else "") for x in a.alternatives)
                out.append(f"   alternatives for the same samples: {alts}")
            if len(a.launches) > 1:
                out.append(f"   per launch: {per_launch_text(a.launches)}")
            for j, h in enumerate(a.hotspots, 1):
                loop = f" in {h.loop.name}" if h.loop is not None else ""
                out.append(f"   {j}) {h.samples:.0f} samples ({h.reason}), distance {h.distance}{loop}")
                out.append(f"      from {_loc_text(h.def_, map_file)}")
                out.append(f"      to   {_loc_text(h.use, map_file)}")
        if show_skipped:
            for s in r.skipped:
                out.append(f"   - {s.optimizer}: {'missing data: ' if s.missing else ''}{s.reason}")
        out.append("")
    return "\n".join(out)


# ---- SARIF 2.1.0 --------------------------------------------------------------------------------------

def _uri(path: str) -> str:
    p = Path(path)
    if p.is_absolute():
        return p.as_uri()
    return PurePosixPath(*p.parts).as_posix()


def _physical(file: str, line: int) -> dict[str, Any]:
    return {"artifactLocation": {"uri": _uri(file)}, "region": {"startLine": line}}


def _kernel_line(rep: AdviceReport) -> tuple[str | None, int | None]:
    ks = rep.kernel_scope
    return (None, None) if ks is None else (ks.file, ks.line)


def _sarif_location(map_file: FileMap | None, *cands: tuple[str | None, int | None]) -> dict[str, Any] | None:
    """The first candidate (recorded file, line) that has both, as a SARIF location; None if none has."""
    for file, line in cands:
        f = _file(file, map_file)
        if f and line:
            return {"physicalLocation": _physical(f, line)}
    return None


def help_uri(optimizer: str, docs_base: str = "") -> str | None:
    """The rule's ``helpUri``: ``docs_base`` + ``docs/optimizers.md#<id>`` when ``docs_base`` is an absolute
    URI (SARIF 2.1.0 §3.49.12: helpUri must be an absolute URI, RFC 3986), else None: the rule then has
    no helpUri (a ``file:`` URI of the installed package means nothing to a CI reader or another machine)."""
    if not docs_base or not is_absolute_uri(docs_base):
        return None
    return f"{docs_base}{docs_anchor(optimizer)}"


def is_absolute_uri(uri: str) -> bool:
    """RFC 3986 §4.3 absolute-URI: a scheme, then a hierarchical part (``https://host/...``, ``file:///...``)."""
    from urllib.parse import urlparse

    u = urlparse(uri)
    return bool(u.scheme) and len(u.scheme) > 1 and (bool(u.netloc) or u.path.startswith("/")) and not u.fragment


def sarif_rules(docs_base: str = "") -> list[dict[str, Any]]:
    """One SARIF reportingDescriptor per registered optimizer, in contract order (rule index = position)."""
    rules = []
    for opt in optimizers():
        uri = help_uri(opt.id, docs_base)
        rules.append({
            "id": opt.id, "name": "".join(w.capitalize() for w in opt.id.split("_")),
            "shortDescription": {"text": opt.title},
            "fullDescription": {"text": opt.detects},
            "help": {"text": f"{opt.detects} Fix: {opt.fix}",
                     "markdown": f"**{opt.title}** — {opt.detects}\n\nTypical fix: {opt.fix}\n\n"
                                 + (f"[Details]({uri})" if uri else
                                    f"Details: `{docs_anchor(opt.id)}` in warpwise's documentation")},
            **({"helpUri": uri} if uri else {}),
            "defaultConfiguration": {"level": "note"},
            "properties": {"family": opt.family, "gpaPaper": opt.in_paper},
        })
    return rules


def _suggestion(hint: str) -> str:
    """`` Suggestion: HINT`` after a SARIF message's sentences ('' for no hint): the hint starts lower case or with an
    identifier (``damp is called ...``), so it is labelled rather than capitalized after the full stop."""
    return f" Suggestion: {hint}" if hint else ""


def to_sarif(reports: AdviceReport | Sequence[AdviceReport], map_file: FileMap | None = None,
             top: int | None = None, tool_version: str = "0.1.0", docs_base: str = "") -> dict[str, Any]:
    """A SARIF 2.1.0 log: one run, one rule per optimizer id, one result per source line of an advice's
    hotspots (ruleId = optimizer; the line's hotspots summed) located at the stalled uses' line, with the
    blamed defs as related locations. Advice without hotspots
    (parallel optimizers) gives one result at its scope. A result without a line of its own is placed at the
    advice's scope, else at the kernel's first line (``AdviceReport.kernel_scope``), else left out: PR
    annotations need a location (JSON and text keep such advice). ``docs_base`` prefixes the docs links
    (e.g. a repository URL ending in ``/``)."""
    reps = [reports] if isinstance(reports, AdviceReport) else list(reports)
    rules = sarif_rules(docs_base)
    index = {r["id"]: i for i, r in enumerate(rules)}
    results: list[dict[str, Any]] = []
    for rep in reps:
        for a in rep.advice[: top if top is not None else None]:
            base_props = {"kernel": rep.kernel, "estimatedSpeedup": round(a.estimated_speedup, 6),
                          "share": round(a.share, 6), "formula": a.estimate.formula,
                          "inputs": {k: _num(v) for k, v in a.estimate.inputs.items()},
                          "interval": [round(x, 6) for x in a.interval] if a.interval else None,
                          "upperBound": a.upper_bound, "samplesBehind": a.samples, "why": a.why,
                          "basis": a.basis or None}
            head = f"{REGISTRY[a.optimizer].title if a.optimizer in REGISTRY else a.optimizer}: " \
                   f"{'upper bound' if a.upper_bound else 'estimated speedup'} " \
                   f"{a.estimated_speedup:.3f}x ({basis_text(a)})."
            if a.hotspots:
                # one result per source line of the advice (PR annotations: a line's hotspots are one finding),
                # the line's hotspots summed, their blamed defs as related locations
                by_line: dict[tuple[str | None, int | None], list[Hotspot]] = {}
                for h in a.hotspots:
                    by_line.setdefault((h.use.file, h.use.line) if h.use.file and h.use.line else
                                       (a.scope.file, a.scope.line), []).append(h)
                for (file, line), hs in by_line.items():
                    # the result sits at the hotspot's line: references are resolved against that file
                    at = file or a.scope.file
                    n = sum(h.samples for h in hs)
                    reasons = ", ".join(dict.fromkeys(h.reason for h in hs))
                    h0 = hs[0]
                    res: dict[str, Any] = {
                        "ruleId": a.optimizer, "ruleIndex": index.get(a.optimizer, -1), "level": "note",
                        "message": {"text": f"{head} {n:.0f} samples ({reasons}) on this line"
                                            f"{f' in {len(hs)} instructions' if len(hs) > 1 else ''}."
                                            f"{_suggestion(hint_text(a.hint, at, map_file))}"},
                        "properties": {**base_props, "samples": _num(n), "distance": h0.distance,
                                       "reason": h0.reason, "pc": f"{h0.use.pc:#x}",
                                       "pcs": [f"{h.use.pc:#x}" for h in hs]},
                    }
                    loc = _sarif_location(map_file, (file, line), (a.scope.file, a.scope.line), _kernel_line(rep))
                    if loc is None:
                        continue
                    res["locations"] = [loc]
                    related: list[dict[str, Any]] = []
                    seen: set[tuple[str, int]] = set()
                    for h in hs:
                        if h.def_ is None:
                            continue
                        df = _file(h.def_.file, map_file)
                        if df and h.def_.line and (df, h.def_.line) not in seen:
                            seen.add((df, h.def_.line))
                            related.append({"id": len(related) + 1, "physicalLocation": _physical(df, h.def_.line),
                                            "message": {"text": f"blamed def {h.def_.opcode} at {h.def_.pc:#x}"}})
                    if related:
                        res["relatedLocations"] = related
                    results.append(res)
            else:
                res = {"ruleId": a.optimizer, "ruleIndex": index.get(a.optimizer, -1), "level": "note",
                       "message": {"text": f"{head}{_suggestion(hint_text(a.hint, a.scope.file, map_file))}"},
                       "properties": base_props}
                loc = _sarif_location(map_file, (a.scope.file, a.scope.line), _kernel_line(rep))
                if loc is None:
                    continue
                res["locations"] = [loc]
                results.append(res)
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION,
            "runs": [{"tool": {"driver": {"name": "warpwise", "version": tool_version, "rules": rules}},
                      "results": results}]}


