"""Render analyses as text and as the versioned JSON of DESIGN.md's command-line contract.

The advice part (text/JSON/SARIF per optimizer) comes from warpwise.analysis.advice when present;
this module owns the kernel-level fields (name, samples, launch, lines, blame) and the envelope.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from warpwise.analysis.confine import read_source
from warpwise.analysis.pipeline import Analysis, KernelAnalysis, KernelGroup
from warpwise.analysis.profile.lines import LineStats

#: 2: one ``kernels`` entry per kernel over its launches (``launches`` holds the per-launch detail); advice
#: gains ``confidence``, ``upper_bound``, ``cap``, ``why``, ``alternatives``; kernels gain ``bound``.
JSON_VERSION = 2


def _loc(ka: KernelAnalysis, function: str, offset: int | None, section: str = "") -> dict[str, Any]:
    """A JSON location {function, pc, file, line, opcode} of an instruction of ``ka``.

    ``pc`` is the offset in the function's code section; for samples outside the module
    (``function`` = ``<unattributed>``) it is the absolute address Nsight Compute recorded.
    """
    if offset is None:
        return {"function": None, "pc": None, "file": None, "line": None, "opcode": None}
    ins, s, file, line = ka.instruction(function, offset, section)
    opcode = ins.opcode if ins is not None else (s.sass.split()[0] if s is not None and s.sass else None)
    return {"function": function, "pc": hex(offset), "file": ka.local_path(file), "line": line, "opcode": opcode}


def line_json(ka: KernelAnalysis, ls: LineStats) -> dict[str, Any]:
    """One entry of a kernel's ``lines`` array. A line of an inlined helper has ``inlined_into`` (the call
    sites: function, file, line, samples); a call line has ``inclusive_samples`` (its own + inlined code).
    ``kernel_entry`` is true for the kernel's signature line (its prologue's samples: the kernel's entry, which the
    text report and the editor do not list as a hot line; LineStats.entry)."""
    out: dict[str, Any] = {"file": ka.local_path(ls.file), "line": ls.line, "kernel_entry": ls.entry,
                           "samples": ls.samples,
                           "latency_samples": ls.latency_samples,
                           "stall_reasons": dict(sorted(ls.stalls.items(), key=lambda kv: (-kv[1], kv[0])))}
    sites = ka.inlined.get((ls.file, ls.line))
    if sites:
        out["inlined_into"] = [{"function": c.function, "file": ka.local_path(c.file), "line": c.line,
                                "samples": c.samples} for c in sites]
    if (ls.file, ls.line) in ka.inclusive:
        out["inclusive_samples"] = ka.inclusive[(ls.file, ls.line)]
    return out


def inline_text(ka: KernelAnalysis, file: str, line: int, name_file: Any) -> str:
    """`` [inlined into KERNEL at FILE:LINE]`` for a line of an inlined helper (the call site with most
    samples; ``name_file`` renders a recorded path), else ''."""
    sites = ka.inlined.get((file, line))
    if not sites:
        return ""
    c = sites[0]
    more = f" and {len(sites) - 1} more call site{'s' if len(sites) > 2 else ''}" if len(sites) > 1 else ""
    return f"  [inlined into {_short(c.function)} at {name_file(c.file)}:{c.line}{more}]"


def _edges(kas: list[KernelAnalysis]) -> list[Any]:
    """Blame edges of several launches summed per (function, section, def, use, reason, category)."""
    from dataclasses import replace

    by: dict[tuple[Any, ...], Any] = {}
    for ka in kas:
        if ka.blame is None:
            continue
        for e in ka.blame.edges:
            k = (e.function, e.section, e.def_offset, e.use_offset, e.reason, e.category)
            cur = by.get(k)
            by[k] = e if cur is None else replace(cur, stall_samples=cur.stall_samples + e.stall_samples,
                                                  latency_samples=cur.latency_samples + e.latency_samples)
    return list(by.values())


def blame_json(ka: KernelAnalysis | KernelGroup) -> list[dict[str, Any]]:
    """The ``blame`` array: one entry per def→use edge (summed over a kernel's launches), largest first."""
    kas = ka.launches if isinstance(ka, KernelGroup) else [ka]
    first = kas[0]
    edges = sorted(_edges(kas), key=lambda e: (-e.stall_samples, e.use_offset, e.def_offset or -1, e.reason))
    return [{"use": _loc(first, e.function, e.use_offset, e.section),
             "def": _loc(first, e.function, e.def_offset, e.section),
             "reason": e.reason, "category": e.category, "stall_samples": round(e.stall_samples, 3),
             "latency_samples": round(e.latency_samples, 3), "distance": e.distance}
            for e in edges if e.stall_samples > 0]


def _advice_json(ka: KernelAnalysis, advice: list[Any]) -> list[dict[str, Any]]:
    if not advice:
        return []
    from warpwise.analysis.advice import to_json as advice_to_json

    return advice_to_json(advice, map_file=_mapper(ka))


def _mapper(ka: KernelAnalysis) -> Any:
    """Recorded path -> local path (the recorded one when none matched), for the advice renderers."""
    def map_file(recorded: str) -> str:
        return ka.local_path(recorded) or recorded

    return map_file


def _launch_json(ka: KernelAnalysis) -> dict[str, Any]:
    lc = ka.profile.launch
    return {"grid": list(lc.grid), "block": list(lc.block), "registers_per_thread": lc.registers_per_thread,
            "shared_bytes_per_block": lc.shared_bytes_per_block, "sm_count": lc.sm_count,
            "theoretical_occupancy_pct": round(lc.theoretical_occupancy, 2),
            "achieved_occupancy_pct": round(lc.achieved_occupancy, 2), "duration_ns": lc.duration_ns,
            "throughput_pct": {k: round(v, 2) for k, v in lc.throughput_pct.items()},
            "sampling_interval_cycles": lc.sampling_interval_cycles}


def _bound_json(rep: Any) -> dict[str, Any] | None:
    b = getattr(rep, "bound", None)
    return None if b is None else {"unit": b.unit, "pct": round(b.pct, 2), "cap": round(b.cap, 6), "text": b.text}


def kernel_json(g: KernelGroup | KernelAnalysis) -> dict[str, Any]:
    """One entry of the ``kernels`` array (DESIGN.md contract, version 2): a kernel over its launches.

    ``samples``/``lines``/``blame`` are summed over the launches, ``advice`` is the one ranking over them,
    ``launch`` is the first launch's facts and ``launches`` each launch's facts, samples and own advice."""
    if isinstance(g, KernelAnalysis):
        g = KernelGroup(mangled=g.profile.mangled, name=g.profile.name, launches=[g], lines=g.lines,
                        advice_report=g.advice_report, notes=g.notes)
    ka = g.first
    p = ka.profile
    rep = g.advice_report
    launches = [{"index": list(k.profile.launch_index), **_launch_json(k),
                 "samples": {"total": k.profile.total_samples, "latency": k.profile.latency_samples,
                             "active": k.profile.active_samples},
                 "advice": [{"optimizer": a.optimizer, "estimated_speedup": round(a.estimated_speedup, 6)}
                            for a in k.advice]} for k in g.launches]
    return {
        "name": p.name, "mangled": p.mangled, "arch": p.arch, "device": p.device, "report": p.report,
        "binary": ka.cubin.path if ka.cubin else None,
        "samples": {"total": g.total_samples, "latency": g.latency_samples,
                    "active": g.total_samples - g.latency_samples},
        "launch": _launch_json(ka),
        "launches": launches,
        "bound": _bound_json(rep),
        "lines": [line_json(ka, ls) for ls in g.lines],
        "blame": blame_json(g),
        "advice": _advice_json(ka, g.advice),
        "notes": g.notes,
    }


def to_json(analyses: list[Analysis]) -> dict[str, Any]:
    """The whole ``advise --format json`` object: {"version": 2, "kernels": [...], "errors": [...]}, one
    ``kernels`` entry per kernel of each report (its launches merged)."""
    return {"version": JSON_VERSION,
            "kernels": [kernel_json(g) for a in analyses for g in a.groups],
            "errors": [e for a in analyses for e in a.errors]}


def _source_line(ka: KernelAnalysis, file: str, line: int) -> str:
    """The text of profiled line ``line`` of recorded ``file``: from the source the report embeds
    (--import-source: the profiled version, whose line numbers these are, even when the local file was
    edited since), else from the local file (confined to the roots)."""
    text: str | None = None
    src = ka.profile.source_files.get(file)
    if src is None:
        local = ka.local.get(file)
        src = read_source(local, errors="replace") if local is not None else None
    if src is not None:
        lines = src.splitlines()
        text = lines[line - 1] if 0 < line <= len(lines) else None
    return " ".join(text.split()) if text else ""


def _short(mangled: str) -> str:
    """Readable function name: ``_Z13scale_segmentPKfPfiif`` -> ``scale_segment``; ``$a$_Z4dampfff`` -> ``damp``."""
    import re

    name = mangled.rsplit("$", 1)[-1]
    m = re.match(r"_Z(\d+)", name)
    if m:
        n = int(m.group(1))
        start = m.end()
        return name[start:start + n]
    return name


def _pct(a: float, b: float) -> str:
    return f"{100.0 * a / b:.1f}%" if b else "-"


def _group_ns(g: KernelGroup) -> float:
    """GPU time of a kernel's launches (ns, gpu__time_duration.sum summed; 0 when unknown)."""
    return float(sum(k.profile.launch.duration_ns for k in g.launches))


def render_kernel_text(g: KernelGroup | KernelAnalysis, top: int = 10, root: Path | None = None,
                       share: float | None = None) -> str:
    """Plain-text report of one kernel over its launches: launch facts, sample totals, hot lines, blame,
    the roofline finding, advice. ``share``: the kernel's part of the report's kernel time (0-1), stated in its
    header when given."""
    if isinstance(g, KernelAnalysis):
        g = KernelGroup(mangled=g.profile.mangled, name=g.profile.name, launches=[g], lines=g.lines,
                        advice_report=g.advice_report, notes=g.notes)
    ka = g.first
    p, lc = ka.profile, ka.profile.launch
    T = g.total_samples
    L = g.latency_samples

    def rel(path: str | None) -> str:
        if path is None:
            return "?"
        if root is not None:
            try:
                return str(Path(path).resolve().relative_to(root.resolve()))
            except ValueError:
                pass
        return path

    out = [f"== {p.name}  [{p.mangled}]  {p.arch}  {p.device}".rstrip(),
           f"   report {rel(p.report)}" + (f"   binary {rel(ka.cubin.path)}" if ka.cubin else ""),
           *_launch_lines(g.launches),
           f"   warp samples: {T:,} total, {L:,} latency ({_pct(L, T)}), {T - L:,} active"
           + (f" over {len(g.launches)} launches" if len(g.launches) > 1 else "")]
    if share is not None:
        out.append(f"   GPU time: {_group_ns(g) / 1e3:,.1f} us, {share:.1%} of the profiled kernels' time "
                   "(kernels are listed longest first)")
    sol = ", ".join(f"{k} {v:.0f}%" for k, v in lc.throughput_pct.items() if k != "memory")
    if sol:
        out.append(f"   speed of light: {sol} of peak")
    for n in g.notes:
        out.append(f"   note: {n}")
    hot = [ls for ls in g.lines if not ls.entry]
    for ls in (x for x in g.lines if x.entry):  # the signature line: the kernel's entry, not a line to change
        reasons = ", ".join(f"{r} {_pct(v, ls.samples)}" for r, v in ls.top_reasons(3))
        out.append(f"   kernel entry: {ls.samples:,} warp samples ({_pct(ls.samples, T)}) on the signature line "
                   f"{rel(ka.local_path(ls.file))}:{ls.line} (the prologue: parameter set-up, warps waiting at launch; "
                   f"not listed as a hot line): {reasons}")
    out.append("")
    out.append(f"   Hot lines (top {min(top, len(hot))} of {len(hot)})")
    out.append(f"   {'share':>6} {'samples':>8} {'latency':>8}  location / stall reasons")
    for ls in hot[:top]:
        reasons = ", ".join(f"{r} {_pct(v, ls.samples)}" for r, v in ls.top_reasons(3))
        src = _source_line(ka, ls.file, ls.line)
        funcs = sorted({f for f, _ in ls.pcs if f != p.mangled})
        where = f"  [in {', '.join(_short(f) for f in funcs)}]" if funcs else ""
        where += inline_text(ka, ls.file, ls.line, lambda f: rel(ka.local_path(f)))
        if (ls.file, ls.line) in ka.inclusive:
            inc = ka.inclusive[(ls.file, ls.line)]
            where += f"  (inclusive {inc:,} = {_pct(inc, T)} with the code inlined here)"
        out.append(f"   {_pct(ls.samples, T):>6} {ls.samples:>8,} {_pct(ls.latency_samples, ls.samples):>8}  "
                   f"{rel(ka.local_path(ls.file))}:{ls.line}{where}  {src}")
        out.append(f"   {'':>6} {'':>8} {'':>8}    {reasons}")
        for b in _blame_lines(g, ls, 3):
            out.append(f"   {'':>6} {'':>8} {'':>8}    <- {b}")
    if not g.lines and ka.cubin is not None and not ka.cubin_has_lines:
        out.append("   (no line information: rebuild with -lineinfo to see hot lines; kernel-level advice below)")
    if g.advice_report is not None:
        from warpwise.analysis.advice import render_text as advice_text

        def rel_map(recorded: str) -> str:
            return rel(ka.local_path(recorded))

        out.append("")
        out.append("   Advice (GPA optimizers, ranked by expected gain)")
        body = advice_text(g.advice_report, map_file=rel_map, top=min(top, 5))
        # its header line and notes are already in the kernel's header above
        out.extend("   " + ln if ln else "" for ln in body.splitlines()[1:] if not ln.startswith("  note:"))
    return "\n".join(out)


def _launch_lines(launches: list[KernelAnalysis]) -> list[str]:
    """One line per launch; a run of more than advice.report.PER_LAUNCH_SHOWN consecutive launches of one
    shape (grid, block, registers, shared memory) becomes one line with the ranges of what differs."""
    from warpwise.analysis.advice.report import PER_LAUNCH_SHOWN

    if len(launches) == 1:
        return [_launch_line(launches[0], False)]

    def shape(ka: KernelAnalysis) -> tuple[object, ...]:
        lc = ka.profile.launch
        return (tuple(lc.grid), tuple(lc.block), lc.registers_per_thread, lc.shared_bytes_per_block, lc.sm_count,
                round(lc.theoretical_occupancy))
    runs: list[list[KernelAnalysis]] = []
    for ka in launches:
        if runs and shape(runs[-1][-1]) == shape(ka):
            runs[-1].append(ka)
        else:
            runs.append([ka])
    out: list[str] = []
    for run in runs:
        if len(run) <= PER_LAUNCH_SHOWN:
            out.extend(_launch_line(ka, True) for ka in run)
            continue
        lc = run[0].profile.launch
        first, last = run[0].profile.launch_index, run[-1].profile.launch_index
        us = [ka.profile.launch.duration_ns / 1000 for ka in run]
        ach = [ka.profile.launch.achieved_occupancy for ka in run]
        ws = [ka.profile.total_samples for ka in run]
        out.append(f"   launches {first[0]}.{first[1]}-{last[0]}.{last[1]} ({len(run)}, one shape): {_shape_text(lc)}"
                   f"{min(ach):.0f}-{max(ach):.0f}% achieved  {min(us):.1f}-{max(us):.1f} us each "
                   f"({sum(us):,.1f} us in all)  {min(ws):,}-{max(ws):,} warp samples each")
    return out


def _shape_text(lc: Any) -> str:
    """A launch's shape up to its achieved occupancy: ``grid 8x8x1  block 16x16x1  16 regs/thread  0 B
    shared/block  132 SMs  occupancy 100% theoretical, `` (the launch lines append the achieved part)."""
    return (f"grid {'x'.join(map(str, lc.grid))}  block {'x'.join(map(str, lc.block))}  "
            f"{lc.registers_per_thread} regs/thread  {lc.shared_bytes_per_block} B shared/block  {lc.sm_count} SMs  "
            f"occupancy {lc.theoretical_occupancy:.0f}% theoretical, ")


def _launch_line(ka: KernelAnalysis, numbered: bool) -> str:
    lc = ka.profile.launch
    head = f"   launch {ka.profile.launch_index[0]}.{ka.profile.launch_index[1]}: " if numbered else "   "
    return (f"{head}{_shape_text(lc)}{lc.achieved_occupancy:.0f}% achieved  "
            f"{lc.duration_ns / 1000:.1f} us" + (f"  {ka.profile.total_samples:,} warp samples" if numbered else ""))


def _blame_lines(g: KernelGroup, ls: LineStats, n: int) -> list[str]:
    """Up to ``n`` strongest defs that ``ls``'s stalls are blamed on (over all launches), as text; the
    distance shown is the sample-weighted dominant one of the merged edges."""
    ka = g.first
    edges = _edges(g.launches)
    if not edges:
        return []
    pcs = set(ls.pcs)
    agg: dict[tuple[int | None, str, str, str], tuple[float, int]] = {}
    heavy: dict[tuple[int | None, str, str, str], float] = {}
    for e in edges:
        owner = e.section.removeprefix(".text.") if e.section else e.function
        if (owner, e.use_offset) in pcs and e.stall_samples > 0:
            key = (e.def_offset, e.reason, e.function, e.section)
            s, d = agg.get(key, (0.0, 0))
            if e.stall_samples > heavy.get(key, -1.0):  # the distance of the heaviest merged edge
                heavy[key] = e.stall_samples
                d = e.distance
            agg[key] = (s + e.stall_samples, d)
    from warpwise.analysis.arch.stalls import is_blamed

    # issued ('selected') samples are not stalls; other non-dependency reasons have no producer to blame
    ranked = sorted(((k, v) for k, v in agg.items() if k[1] != "selected"), key=lambda kv: -kv[1][0])[:n]
    out = []
    for (def_off, reason, func, sec), (samples, dist) in ranked:
        if def_off is None:
            why = ("no producer survived pruning; kept by the instruction itself" if is_blamed(reason)
                   else "not a data dependency; stays on this instruction")
            out.append(f"{reason} {_pct(samples, ls.samples)}: {why}")
            continue
        loc = _loc(ka, func, def_off, sec)
        out.append(f"{reason} {_pct(samples, ls.samples)}: {loc['opcode']} at {loc['pc']} "
                   f"({Path(loc['file']).name if loc['file'] else '?'}:{loc['line']}), {dist} instruction"
                   f"{'' if dist == 1 else 's'} earlier")
    return out


def render_text(analyses: list[Analysis], top: int = 10, root: Path | None = None) -> str:
    """The ``advise --format text`` report for all analyses (kernels in report order) plus errors."""
    # kernels by the GPU time their launches took, longest first (stable: report order among equals): a
    # one-thread setup kernel's large upper bounds must not come before the kernel that takes the time
    groups = [g for a in analyses for g in a.groups]
    total = sum(_group_ns(g) for g in groups)
    order = sorted(groups, key=lambda g: -_group_ns(g)) if total > 0 else groups
    parts = [render_kernel_text(g, top, root, share=_group_ns(g) / total if total > 0 and len(groups) > 1 else None)
             for g in order]
    if parts:  # the terms explain the kernel tables; with none shown they explain nothing
        parts.append(LEGEND)
    return "\n\n".join(parts) + "\n"


LEGEND = ("Terms: warp samples = Nsight Compute's PC samples of the kernel's warps, one per sampled warp and its "
          "state ('All Samples': the warp that issued, 'selected', counts too); T = all of the kernel's. "
          "share = the line's warp samples / T. latency = not-issued samples "
          "(Nsight Compute's 'Not-issued Samples': the sampled warp's scheduler issued no instruction that cycle; "
          "GPA's latency samples L); active = A = T - L, samples in which the scheduler issued, from this warp "
          "('selected') or another (so a stalled warp beside one that issued counts as active). "
          "Stall reasons are Nsight Compute's, over all samples of the line, so 'selected' and 'not_selected' "
          "(warps that were ready) count too. In the estimates, T_ns = the launch's duration and f_ns = its "
          "launch floor (an empty kernel's duration for the launch's first wave of CTAs, measured on the H200: "
          "what no change to the code removes); S = the speedup of the rest.")


def to_sarif(analyses: list[Analysis], docs_base: str = "") -> dict[str, Any]:
    """SARIF 2.1.0 log of every kernel's advice (one result per hotspot), paths mapped to local files.
    ``docs_base``: absolute URI the rules' helpUri start with (advice.report.help_uri; none without it)."""
    from warpwise.analysis.advice import to_sarif as advice_sarif

    reports = [g.advice_report for a in analyses for g in a.groups if g.advice_report is not None]
    locals_: dict[str, str] = {}
    for a in analyses:
        for k in a.kernels:
            for recorded, local in k.local.items():
                if local is not None:
                    locals_[recorded] = str(local)
    from warpwise.analysis.profile.paths import normalize

    def map_file(p: str) -> str:
        return locals_.get(p) or locals_.get(normalize(p)) or p

    for a in analyses:  # normalized keys too: the cubin records ./ and ../ segments
        for k in a.kernels:
            for recorded, local in k.local.items():
                if local is not None:
                    locals_.setdefault(normalize(recorded), str(local))
    log = dict(advice_sarif(reports, map_file=map_file, docs_base=docs_base))
    _add_inline_sites(log, analyses, map_file)
    return log


def _add_inline_sites(log: dict[str, Any], analyses: list[Analysis], map_file: Any) -> None:
    """Results on a line of an inlined helper get the call site: "(inlined into K at FILE:LINE)" in the message
    and a related location (SARIF 2.1.0 §3.27.22)."""
    from warpwise.analysis.advice.report import _uri

    sites: dict[tuple[str, int], tuple[str, str, int]] = {}
    for a in analyses:
        for k in a.kernels:
            for (file, line), cs in k.inlined.items():
                if cs:
                    site = (_short(cs[0].function), map_file(cs[0].file), cs[0].line)
                    sites.setdefault((_uri(map_file(file)), line), site)
    if not sites:
        return
    for run in log.get("runs", []):
        for res in run.get("results", []):
            for loc in res.get("locations", [])[:1]:
                phys = loc.get("physicalLocation", {})
                key = (phys.get("artifactLocation", {}).get("uri"), phys.get("region", {}).get("startLine"))
                if key not in sites:
                    continue
                func, file, line = sites[key]
                msg = res.setdefault("message", {})
                msg["text"] = f"{msg.get('text', '')} (inlined into {func} at {Path(file).name}:{line})"
                res.setdefault("relatedLocations", []).append({
                    "id": len(res.get("relatedLocations", [])) + 1,
                    "physicalLocation": {"artifactLocation": {"uri": _uri(file)}, "region": {"startLine": line}},
                    "message": {"text": f"call site in {func}: the helper is inlined here"}})
