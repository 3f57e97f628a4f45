"""Mutation run (issue 13 item 6): ``warpwise advise`` on mutants of the examples' reports and cubins,
special files (as report, as cubin and as source), huge sparse files, odd sources (Latin-1, BOM-only
copy, binary data) and hung / crashing tools (nvdisasm, cuobjdump); counts hangs, tracebacks and silent-wrong results.

    python bench/hostile/mutation.py [--reports 170] [--cubins 170] [--seed 13] [--limit-s 60] [--no-extra]

Each case runs the advise sub-command in this process (``run_advise``, stdout/stderr captured) inside a
watchdog thread: *hang* = not finished within ``--limit-s``; *traceback* = an exception escaping
``run_advise``; *silent-wrong* = exit 0 with no kernel, a kernel without the binary given, no samples, or a
SARIF log not marked ``executionSuccessful``; exit 0 on an unusable input (a special file, binary data
as the source); a refusal whose message misnames the file (a symlink loop called "no such file");
*clear failure* = exit 2 with a message naming the mutant (or the tool). A run that exits 0 is compared
with the unmutated example's (samples, lines, advice and estimates): the same is *ok*; different with a
new note is *noted*; different with no note is *changed* and listed — a flipped bit in a report's metric
value is indistinguishable from a measurement, so report mutants may be *changed*; a cubin mutant that
is (the report holds the profiled SASS to compare with) fails the run.

Tools run with ``WARPWISE_TOOL_TIMEOUT_S=10``, reports with ``WARPWISE_REPORT_TIMEOUT_S=20``, the
persistent cache off. Prints a table and one JSON line of counts.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
NAMES = ("stencil", "gather", "intdiv", "noinline", "cdp")
_LAST: dict[str, Any] = {}  # the last successful run's parsed output (for the baselines)


@dataclass
class Case:
    """One advise run: the files it reads, the mutant's name, extra environment."""

    name: str
    source: Path
    report: Path
    binary: Path
    named: str  # what the error message must name
    env: dict[str, str] | None = None
    fmt: str = "json"
    says: str | None = None  # a word the message must hold (what the special file is)
    example: str | None = None  # the example whose unmutated output a successful run is compared with
    must_fail: bool = False  # exit 0 is wrong (a special file, a binary source)


def mutate(data: bytes, rng: random.Random, elf: bool) -> bytes:
    """A few random byte-level changes; for ELF files also header/section-table fields set to extremes."""
    out = bytearray(data)
    if rng.random() < 0.5:  # half the mutants: one or two flipped bits, which often still load
        for _ in range(rng.randint(1, 2)):
            i = rng.randrange(len(out))
            out[i] ^= 1 << rng.randrange(8)
        return bytes(out)
    for _ in range(rng.randint(1, 6)):
        op = rng.choice(["flip", "zero", "ff", "truncate", "dup", "delete"] + (["elf"] * 3 if elf else []))
        i = rng.randrange(len(out)) if out else 0
        if not out:
            break
        if op == "flip":
            out[i] ^= 1 << rng.randrange(8)
        elif op == "zero":
            out[i : i + rng.randint(1, 64)] = bytes(min(64, len(out) - i))[: rng.randint(1, 64)]
        elif op == "ff":
            out[i : i + 8] = b"\xff" * 8
        elif op == "truncate":
            del out[rng.randrange(1, len(out)) :]
        elif op == "dup":
            j = rng.randrange(len(out))
            out[i:i] = out[j : j + rng.randint(1, 256)]
        elif op == "delete":
            del out[i : i + rng.randint(1, 256)]
        elif len(out) >= 64:  # ELF64: e_shoff(0x28) e_shnum(0x3c) e_shstrndx(0x3e), or one section header field
            shoff, shnum = struct.unpack_from("<QH", out, 0x28)[0], struct.unpack_from("<H", out, 0x3C)[0]
            if rng.random() < 0.3 or not (0 < shoff < len(out)) or shnum == 0:
                off, fmt = rng.choice([(0x28, "<Q"), (0x3C, "<H"), (0x3E, "<H"), (0x20, "<Q")])
            else:
                k = rng.randrange(shnum)
                off = shoff + 64 * k + rng.choice([0x18, 0x20, 0x28, 0x2C, 0x38])  # offset, size, link, info, entsize
                fmt = "<Q" if (off - shoff) % 64 in (0x18, 0x20, 0x38) else "<I"
            if off + struct.calcsize(fmt) <= len(out):
                val = rng.choice([0, 1, 0xFFFFFFFF, (1 << (8 * struct.calcsize(fmt))) - 1, rng.randrange(1 << 16)])
                struct.pack_into(fmt, out, off, val & ((1 << (8 * struct.calcsize(fmt))) - 1))
    return bytes(out)


def build_cases(work: Path, n_reports: int, n_cubins: int, seed: int, extra: bool = True) -> list[Case]:
    rng = random.Random(seed)
    cases: list[Case] = []
    ex = {n: (ROOT / "examples" / n / f"{n}.cu", ROOT / "examples" / n / f"{n}.ncu-rep",
              ROOT / "examples" / n / f"{n}.sm_90.cubin") for n in NAMES}
    for i in range(n_reports):
        n = NAMES[i % len(NAMES)]
        src, rep, cub = ex[n]
        p = work / f"r{i:03d}-{n}.ncu-rep"
        p.write_bytes(mutate(rep.read_bytes(), rng, elf=False))
        cases.append(Case(p.name, src, p, cub, p.name, fmt="sarif" if i % 4 == 0 else "json", example=n))
    for i in range(n_cubins):
        n = NAMES[i % len(NAMES)]
        src, rep, cub = ex[n]
        p = work / f"c{i:03d}-{n}.cubin"
        p.write_bytes(mutate(cub.read_bytes(), rng, elf=True))
        cases.append(Case(p.name, src, rep, p, p.name, fmt="sarif" if i % 4 == 0 else "json", example=n))
    if extra:
        cases += extra_cases(work, ex)
    return cases


SAYS = {"fifo": "FIFO", "zero": "character device", "stdin": "character device", "folder": "folder",
        "loop": "loop", "huge": "larger than"}


def extra_cases(work: Path, ex: dict[str, tuple[Path, Path, Path]]) -> list[Case]:
    """Special files as report, cubin and source; odd sources; hung / crashing nvdisasm and cuobjdump; a
    report-loader time-out."""
    cases: list[Case] = []
    src, rep, cub = ex["stencil"]
    special = work / "special"
    special.mkdir()
    for suffix, is_report in ((".ncu-rep", True), (".cubin", False)):
        fifo = special / f"fifo{suffix}"
        os.mkfifo(fifo)
        zero = special / f"zero{suffix}"
        zero.symlink_to("/dev/zero")
        stdin = special / f"stdin{suffix}"
        stdin.symlink_to("/dev/stdin")
        folder = special / f"folder{suffix}"
        folder.mkdir()
        loop = special / f"loop{suffix}"
        loop.symlink_to(loop.name)
        huge = special / f"huge{suffix}"
        with open(huge, "wb") as f:  # sparse: 3 GiB of size, no disk
            f.truncate(3 << 30)
        for p in (fifo, zero, stdin, folder, loop, huge):
            cases.append(Case(f"special:{p.name}", src, p if is_report else rep, cub if is_report else p, p.name,
                              says=SAYS[p.stem], must_fail=True))
    # the same as SOURCE (named stencil.cu in their own folders, beside the real report and cubin)
    for kind in ("fifo", "zero", "stdin", "folder", "loop", "huge"):
        d = special / f"src-{kind}"
        d.mkdir()
        s = d / "stencil.cu"
        if kind == "fifo":
            os.mkfifo(s)
        elif kind in ("zero", "stdin"):
            s.symlink_to(f"/dev/{kind}")
        elif kind == "folder":
            s.mkdir()
        elif kind == "loop":
            s.symlink_to(s.name)
        else:
            with open(s, "wb") as f:
                f.truncate(3 << 30)
        # a folder named SOURCE is a folder of sources (none here): exit 2; the sparse file is all NUL bytes
        cases.append(Case(f"source:{kind}", s, rep, cub, "stencil.cu", says={"folder": None, "huge": "NUL byte"}
                          .get(kind, SAYS[kind]), must_fail=True))
    odd = special / "odd"
    odd.mkdir()
    text = src.read_bytes()
    latin1 = odd / "latin1" / "stencil.cu"
    latin1.parent.mkdir()
    latin1.write_bytes(text.replace(b"\n", "\n// température de référence: 25 °C\n".encode("latin-1"), 1))
    bom = odd / "bom" / "stencil.cu"
    bom.parent.mkdir()
    bom.write_bytes(b"\xef\xbb\xbf" + text)
    crlf = odd / "crlf" / "stencil.cu"
    crlf.parent.mkdir()
    crlf.write_bytes(b"\xef\xbb\xbf" + text.replace(b"\n", b"\r\n"))
    for p in (latin1, bom, crlf):  # lines are those of the profiled source: advice as for the original
        cases.append(Case(f"source:{p.parent.name}", p, rep, cub, p.name, example="stencil"))
    blob = odd / "blob" / "stencil.cu"
    blob.parent.mkdir()
    blob.write_bytes(rep.read_bytes()[:4096])
    cases.append(Case("source:report-bytes", blob, rep, cub, "stencil.cu", says="Nsight Compute report",
                      must_fail=True))
    tools = work / "tools"
    tools.mkdir()
    for name, body in (("hang", "sleep 300\n"), ("hang-child", "sleep 300 &\nsleep 300\n"),
                       ("exit-child", "sleep 300 &\nexit 0\n"), ("crash", "kill -SEGV $$\n"),
                       ("garbage", "head -c 100000 /dev/urandom\n")):
        exe = tools / f"nvdisasm-{name}"
        exe.write_text("#!/bin/sh\n" + body)
        exe.chmod(0o755)
        cases.append(Case(f"tool:{name}", src, rep, cub, "nvdisasm", env={"WARPWISE_NVDISASM": str(exe)},
                          must_fail=True))
    # cuobjdump unpacks executables: the same failures, on an executable built here (when nvcc is on PATH)
    nvcc = shutil.which("nvcc")
    exe_path = tools / "stencil-exe"
    if nvcc is not None and subprocess.run([nvcc, "-arch=sm_90", "-lineinfo", "-O3", "-I", str(ROOT / "examples"),
                                            "-o", str(exe_path), str(src)], capture_output=True,
                                           timeout=300).returncode == 0:
        for name, body in (("hang", "sleep 300\n"), ("hang-child", "sleep 300 &\nsleep 300\n"),
                           ("exit-child", "sleep 300 &\nexit 0\n"), ("crash", "kill -SEGV $$\n")):
            tool = tools / f"cuobjdump-{name}"
            tool.write_text("#!/bin/sh\n" + body)
            tool.chmod(0o755)
            cases.append(Case(f"tool:cuobjdump-{name}", src, rep, exe_path, "cuobjdump",
                              env={"WARPWISE_CUOBJDUMP": str(tool)}, must_fail=True))
    cases.append(Case("tool:report-loader-time-limit", src, rep, cub, rep.name,
                      env={"WARPWISE_REPORT_TIMEOUT_S": "0.05"}, says="within", must_fail=True))
    return cases


def digest(doc: dict[str, Any], fmt: str) -> tuple[Any, set[str]]:
    """What a successful run concluded, paths aside — (kernels' samples, lines and advice; or SARIF results'
    rules and lines) — and its notes (kernel notes; SARIF notifications)."""
    if fmt == "sarif":
        run = doc["runs"][0]
        res = sorted((r.get("ruleId"), r.get("level"), tuple(loc.get("physicalLocation", {}).get("region", {})
                                                            .get("startLine", 0) for loc in r.get("locations", [])))
                     for r in run["results"])
        notes = {n["message"]["text"] for inv in run.get("invocations", [])
                 for n in inv.get("toolExecutionNotifications", [])}
        return res, notes
    kernels = [(k["name"], k["samples"],
                [(Path(ln["file"] or "").name, ln["line"], ln["samples"]) for ln in k["lines"]],
                [(a["optimizer"], a["scope"]["kind"], a["scope"].get("line"), round(a["estimated_speedup"], 3))
                 for a in k["advice"]]) for k in doc["kernels"]]
    return kernels, {n for k in doc["kernels"] for n in k["notes"]}


def run_case(case: Case, limit_s: float, baselines: dict[tuple[str, str], tuple[Any, set[str]]] | None = None
             ) -> tuple[str, str]:
    """(outcome, detail) of one case: ok, noted, changed, clear, hang, traceback or silent-wrong."""
    from warpwise.analysis import pipeline
    from warpwise.server.cli import build_parser

    pipeline._profile_cache.clear()  # every case reads its files afresh (as a new CLI run would)
    pipeline._binary_cache.clear()

    args = build_parser().parse_args(["advise", str(case.source), "--profile", str(case.report), "--binary",
                                      str(case.binary), "--format", case.fmt])
    out, err = io.StringIO(), io.StringIO()
    result: dict[str, object] = {}

    def target() -> None:
        from warpwise.server.advise_cmd import run_advise

        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                result["rc"] = run_advise(args)
        except BaseException as e:  # what the CLI would print as a traceback
            result["exc"] = f"{type(e).__name__}: {e}"

    saved = {k: os.environ.get(k) for k in (case.env or {})}
    os.environ.update(case.env or {})
    try:
        t = threading.Thread(target=target, daemon=True)
        t.start()
        t.join(limit_s)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    if t.is_alive():
        return "hang", f"not finished after {limit_s:g} s"
    if "exc" in result:
        return "traceback", str(result["exc"])
    rc, stdout, stderr = result["rc"], out.getvalue(), err.getvalue()
    if rc == 2:
        if case.named not in stderr:
            return "silent-wrong", f"exit 2 without naming {case.named}: {stderr.strip()[:200]}"
        if case.says and case.says not in stderr:
            return "silent-wrong", f"exit 2 but the message does not say {case.says!r}: {stderr.strip()[:200]}"
        if case.fmt == "sarif":
            inv = json.loads(stdout)["runs"][0].get("invocations", [{}])[0]
            if inv.get("executionSuccessful") is not False or not inv.get("toolExecutionNotifications"):
                return "silent-wrong", "exit 2 but SARIF not marked failed"
        return "clear", stderr.strip().splitlines()[0][:160]
    if rc != 0:
        return "silent-wrong", f"exit {rc}: {stderr.strip()[:200]}"
    if case.must_fail:
        return "silent-wrong", f"exit 0 although the input is unusable: {stderr.strip()[:200]}"
    doc = json.loads(stdout)
    _LAST["doc"] = doc
    if case.fmt == "sarif":
        inv = doc["runs"][0].get("invocations", [{}])[0]
        if inv.get("executionSuccessful") is not True:
            return "silent-wrong", "exit 0 but SARIF not marked successful"
        detail = f"{len(doc['runs'][0]['results'])} results"
    else:
        kernels = doc.get("kernels", [])
        if not kernels:
            return "silent-wrong", "exit 0 with no kernel"
        if any(k.get("binary") is None for k in kernels):
            return "silent-wrong", "exit 0 but a kernel has no binary although --binary was given"
        if not any(ln.get("samples", 0) for k in kernels for ln in k.get("lines", [])):
            return "silent-wrong", "exit 0 with no samples"
        detail = f"{len(kernels)} kernel(s)"
    base = (baselines or {}).get((case.example or "", case.fmt))
    if base is None:
        return "ok", detail
    got, notes = digest(doc, case.fmt)
    if got == base[0]:
        return "ok", detail
    new_notes = sorted(notes - base[1])
    if new_notes:
        return "noted", f"{detail}; differs from the unmutated run, noted: {new_notes[0][:140]}"
    return "changed", f"{detail}; differs from the unmutated run with no note: {_first_difference(got, base[0])}"


def _first_difference(a: Any, b: Any) -> str:
    """Where two digests first differ (for the listing)."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                return f"[{i}] " + _first_difference(x, y)
        return f"length {len(a)} vs {len(b)}"
    return f"{str(a)[:120]} vs {str(b)[:120]}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reports", type=int, default=170)
    ap.add_argument("--cubins", type=int, default=170)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--limit-s", type=float, default=60.0)
    ap.add_argument("--no-extra", action="store_true", help="mutants only: no special files, odd sources, tools")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    os.environ["WARPWISE_NO_CACHE"] = "1"  # every case reads its files afresh (no persistent analysis cache)
    os.environ.setdefault("WARPWISE_TOOL_TIMEOUT_S", "10")
    os.environ.setdefault("WARPWISE_REPORT_TIMEOUT_S", "20")
    t0, c0 = time.monotonic(), time.process_time()
    counts: Counter[str] = Counter()
    by_kind: dict[str, Counter[str]] = {}
    worst: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ww-mutants-") as d:
        cases = build_cases(Path(d), args.reports, args.cubins, args.seed, extra=not args.no_extra)
        baselines: dict[tuple[str, str], tuple[Any, set[str]]] = {}
        for n in sorted({c.example for c in cases if c.example}):
            for fmt in sorted({c.fmt for c in cases if c.example == n}):
                src, rep, cub = (ROOT / "examples" / n / f"{n}{x}" for x in (".cu", ".ncu-rep", ".sm_90.cubin"))
                base = Case(f"base:{n}", src, rep, cub, n, fmt=fmt)
                outcome, detail = run_case(base, args.limit_s)
                assert outcome == "ok", f"the unmutated {n} run: {outcome}: {detail}"
                baselines[n, fmt] = digest(_LAST["doc"], fmt)
        for c in cases:
            t = time.monotonic()
            outcome, detail = run_case(c, args.limit_s, baselines)
            kind = c.name.split(":")[0] if ":" in c.name else ("report" if c.name.startswith("r") else "cubin")
            counts[outcome] += 1
            by_kind.setdefault(kind, Counter())[outcome] += 1
            if outcome in ("hang", "traceback", "silent-wrong", "changed"):
                worst.append(f"{c.name}: {outcome}: {detail}")
            if args.verbose:
                print(f"{c.name:28s} {outcome:12s} {time.monotonic() - t:5.1f}s {detail}", flush=True)
    children = os.times()
    cpu = time.process_time() - c0 + children.children_user + children.children_system
    print(f"{'kind':10s} {'cases':>5s} {'ok':>5s} {'noted':>6s} {'changed':>8s} {'clear':>6s} {'hang':>5s} {'tb':>5s} "
          f"{'wrong':>6s}")
    for kind, c in by_kind.items():
        print(f"{kind:10s} {sum(c.values()):5d} {c['ok']:5d} {c['noted']:6d} {c['changed']:8d} {c['clear']:6d} "
              f"{c['hang']:5d} {c['traceback']:5d} {c['silent-wrong']:6d}")
    for w in worst:
        print("  ", w)
    summary = {"cases": sum(counts.values()), **{k: counts[k] for k in ("ok", "noted", "changed", "clear", "hang",
                                                                        "traceback", "silent-wrong")},
               "changed_cubins": by_kind.get("cubin", Counter())["changed"],
               "wall_s": round(time.monotonic() - t0, 1), "cpu_s": round(cpu, 1)}
    print(json.dumps(summary))
    # a cubin mutant whose SASS or line table changed the advice with no note is wrong: the report holds the
    # profiled SASS to compare with; a changed metric in a report mutant is indistinguishable from a measurement
    bad = counts["hang"] + counts["traceback"] + counts["silent-wrong"] + summary["changed_cubins"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
