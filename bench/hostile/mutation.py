"""Mutation run (issue 13 item 6): ``warpwise advise`` on mutants of the examples' reports and cubins,
special files, a huge file and hung / crashing tools; counts hangs, tracebacks and silent-wrong results.

    python bench/hostile/mutation.py [--reports 170] [--cubins 170] [--seed 13] [--limit-s 60]

Each case runs the advise sub-command in this process (``run_advise``, stdout/stderr captured) inside a
watchdog thread: *hang* = not finished within ``--limit-s``; *traceback* = an exception escaping
``run_advise``; *silent-wrong* = exit 0 with no kernel, a kernel without the binary given, no samples, or a
SARIF log not marked ``executionSuccessful``; *clear failure* = exit 2 with a message naming the mutant
(or the tool). Tools run with ``WARPWISE_TOOL_TIMEOUT_S=10`` and reports with
``WARPWISE_REPORT_TIMEOUT_S=20`` to bound the run. Prints a table and one JSON line of counts.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import struct
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
NAMES = ("stencil", "gather", "intdiv", "noinline", "cdp")


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


def build_cases(work: Path, n_reports: int, n_cubins: int, seed: int) -> list[Case]:
    rng = random.Random(seed)
    cases: list[Case] = []
    ex = {n: (ROOT / "examples" / n / f"{n}.cu", ROOT / "examples" / n / f"{n}.ncu-rep",
              ROOT / "examples" / n / f"{n}.sm_90.cubin") for n in NAMES}
    for i in range(n_reports):
        n = NAMES[i % len(NAMES)]
        src, rep, cub = ex[n]
        p = work / f"r{i:03d}-{n}.ncu-rep"
        p.write_bytes(mutate(rep.read_bytes(), rng, elf=False))
        cases.append(Case(p.name, src, p, cub, p.name, fmt="sarif" if i % 4 == 0 else "json"))
    for i in range(n_cubins):
        n = NAMES[i % len(NAMES)]
        src, rep, cub = ex[n]
        p = work / f"c{i:03d}-{n}.cubin"
        p.write_bytes(mutate(cub.read_bytes(), rng, elf=True))
        cases.append(Case(p.name, src, rep, p, p.name, fmt="sarif" if i % 4 == 0 else "json"))
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
            cases.append(Case(f"special:{p.name}", src, p if is_report else rep, cub if is_report else p, p.name))
    tools = work / "tools"
    tools.mkdir()
    for name, body in (("hang", "sleep 300\n"), ("hang-child", "sleep 300 &\nsleep 300\n"),
                       ("exit-child", "sleep 300 &\nexit 0\n"), ("crash", "kill -SEGV $$\n"),
                       ("garbage", "head -c 100000 /dev/urandom\n")):
        exe = tools / f"nvdisasm-{name}"
        exe.write_text("#!/bin/sh\n" + body)
        exe.chmod(0o755)
        cases.append(Case(f"tool:{name}", src, rep, cub, "nvdisasm", env={"WARPWISE_NVDISASM": str(exe)}))
    return cases


def run_case(case: Case, limit_s: float) -> tuple[str, str]:
    """(outcome, detail) of one case: ok, clear, hang, traceback or silent-wrong."""
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
        if case.fmt == "sarif":
            inv = json.loads(stdout)["runs"][0].get("invocations", [{}])[0]
            if inv.get("executionSuccessful") is not False or not inv.get("toolExecutionNotifications"):
                return "silent-wrong", "exit 2 but SARIF not marked failed"
        return "clear", stderr.strip().splitlines()[0][:160]
    if rc != 0:
        return "silent-wrong", f"exit {rc}: {stderr.strip()[:200]}"
    doc = json.loads(stdout)
    if case.fmt == "sarif":
        inv = doc["runs"][0].get("invocations", [{}])[0]
        if inv.get("executionSuccessful") is not True:
            return "silent-wrong", "exit 0 but SARIF not marked successful"
        return "ok", f"{len(doc['runs'][0]['results'])} results"
    kernels = doc.get("kernels", [])
    if not kernels:
        return "silent-wrong", "exit 0 with no kernel"
    if any(k.get("binary") is None for k in kernels):
        return "silent-wrong", "exit 0 but a kernel has no binary although --binary was given"
    if not any(ln.get("samples", 0) for k in kernels for ln in k.get("lines", [])):
        return "silent-wrong", "exit 0 with no samples"
    return "ok", f"{len(kernels)} kernel(s)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reports", type=int, default=170)
    ap.add_argument("--cubins", type=int, default=170)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--limit-s", type=float, default=60.0)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("WARPWISE_TOOL_TIMEOUT_S", "10")
    os.environ.setdefault("WARPWISE_REPORT_TIMEOUT_S", "20")
    t0, c0 = time.monotonic(), time.process_time()
    counts: Counter[str] = Counter()
    by_kind: dict[str, Counter[str]] = {}
    worst: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ww-mutants-") as d:
        cases = build_cases(Path(d), args.reports, args.cubins, args.seed)
        for c in cases:
            t = time.monotonic()
            outcome, detail = run_case(c, args.limit_s)
            kind = c.name.split(":")[0] if ":" in c.name else ("report" if c.name.startswith("r") else "cubin")
            counts[outcome] += 1
            by_kind.setdefault(kind, Counter())[outcome] += 1
            if outcome in ("hang", "traceback", "silent-wrong"):
                worst.append(f"{c.name}: {outcome}: {detail}")
            if args.verbose:
                print(f"{c.name:28s} {outcome:12s} {time.monotonic() - t:5.1f}s {detail}", flush=True)
    children = os.times()
    cpu = time.process_time() - c0 + children.children_user + children.children_system
    print(f"{'kind':10s} {'cases':>5s} {'ok':>5s} {'clear':>6s} {'hang':>5s} {'tb':>5s} {'wrong':>6s}")
    for kind, c in by_kind.items():
        print(f"{kind:10s} {sum(c.values()):5d} {c['ok']:5d} {c['clear']:6d} {c['hang']:5d} {c['traceback']:5d} "
              f"{c['silent-wrong']:6d}")
    for w in worst:
        print("  ", w)
    summary = {"cases": sum(counts.values()), **{k: counts[k] for k in ("ok", "clear", "hang", "traceback",
                                                                        "silent-wrong")},
               "wall_s": round(time.monotonic() - t0, 1), "cpu_s": round(cpu, 1)}
    print(json.dumps(summary))
    return 1 if counts["hang"] or counts["traceback"] or counts["silent-wrong"] else 0


if __name__ == "__main__":
    sys.exit(main())
