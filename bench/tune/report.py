"""Render ``results.json`` of ``bench/tune/run.py`` as a table / a markdown section for docs/benchmarks.md.

python bench/tune/report.py OUT/results.json            # markdown section on stdout
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _ms(v: Any) -> str:
    return f"{v * 1000:.1f}" if isinstance(v, (int, float)) else "–"


def _spread(r: dict[str, Any], which: str) -> str:
    q1, q3 = r.get(f"{which}_q1"), r.get(f"{which}_q3")
    if q1 is None or q3 is None:
        return "–"
    return f"{(q3 - q1) * 1000:.1f}"


def _result(r: dict[str, Any]) -> str:
    if r.get("accepted"):
        return "**tuned**"
    res = str(r.get("result") or "original kept")
    return res.replace("original kept (", "original kept: ").rstrip(")")


def _lines(res: dict[str, Any]) -> list[str]:
    head = (
        "| kernel | result | original µs (IQR) | best candidate µs (IQR) | speedup | moves | legal at start | "
        "evaluated (cache hits) | rejected: tests / errors | stopped | search s | verified samples |"
    )
    out = [head, "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
    for r in res["rows"]:
        if "error" in r:
            out.append(f"| {r['name']} | failed: {r['error'][:120]} | | | | | | | | | | |")
            continue
        sp = r.get("speedup")
        ver = f"{r['verify_samples']} {'passed' if r['verified'] else 'FAILED'}" if r["verify_samples"] else "–"
        moves = r.get("candidate_moves", r["moves"])
        out.append(
            f"| {r['name']} ({r['kind']}) | {_result(r)} | {_ms(r['original_ms'])} ({_spread(r, 'original')}) | "
            f"{_ms(r['tuned_ms'])} ({_spread(r, 'tuned')}) | {f'{sp:.3f}×' if sp else '–'} | {moves} | "
            f"{r['legal_moves_at_start']} | {r['evaluated']} ({r['cache_hits']}) | "
            f"{r['rejected_tests']} / {r['rejected_errors']} | {r['stopped']} | {r['tune_seconds']:.1f} | {ver} |"
        )
    return out


def table(res: dict[str, Any]) -> str:
    """The result table (markdown, also readable in a terminal)."""
    return "\n".join(_lines(res))


def markdown(res: dict[str, Any]) -> str:
    """A docs/benchmarks.md section: setup, table, hook check, and an honest reading of the numbers."""
    env = res.get("env", {})
    dev = next((r.get("device") for r in res["rows"] if r.get("device")), "unknown device")
    tri = env.get("triton", {})
    s = ["## SASS schedule tuning (SIP)", ""]
    if env.get("dry_run"):
        s += ["**Dry run: no GPU, timings are fake. Do not read these numbers as results.**", ""]
    s += [
        f"Device: {dev}. Search: simulated annealing (SIP Alg. 1) over statically legal moves of "
        f"LDG/STG/LDS/STS/LDSM/LDGSTS, cooling over {env.get('iterations')} steps or {env.get('time_limit_s')} s "
        "per kernel (whichever ends first), each candidate evaluated in a restartable GPU worker process, "
        f"seed {env.get('seed')}; every candidate tested on fresh random inputs against the original "
        f"(bitwise), the final schedule on {env.get('verify_samples')} input sets. Times: CUDA events, "
        "original and tuned measured side by side in alternating rounds; median and interquartile range (IQR).",
        "",
    ]
    if tri:
        s += [
            f"Triton {tri.get('triton')}, PyTorch {tri.get('torch')}; attention {tri.get('attn_shape')}, "
            f"GEMM+LeakyReLU {tri.get('gemm_shape')} (float16).",
            "",
        ]
    s += _lines(res)
    s.append("")
    hook = res.get("triton_hook") or {}
    if hook:
        s.append(
            "Triton hook (tuned cubin loaded into the `@triton.jit` kernel, output compared with Triton's "
            "own): " + "; ".join(f"{k}: {v}" for k, v in hook.items())
        )
        s.append("")
    ut = res.get("use_tuned") or {}
    if ut:
        s.append(
            f"Source rewrite end to end (stencil built with -DWARPWISE_TUNED, tuned cubin loaded through the "
            f"driver API, program checks its own result): {ut}"
        )
        s.append("")
    ok = [r for r in res["rows"] if "error" not in r]
    if ok:
        tuned = [r for r in ok if r.get("accepted")]
        s.append(
            f"Reading: the tuned schedule was kept for {len(tuned)} of {len(ok)} kernels"
            + (f" ({', '.join(r['name'] for r in tuned)})" if tuned else "")
            + ". A schedule is accepted only if its median in the final side-by-side measurement lies below "
            "the original's first quartile (faster than three quarters of the original's launches); otherwise "
            "the original is kept and no tuned cubin is written, even when the best candidate's median was "
            "lower. The speedup column shows that best candidate either way. SIP reported 6.2 % (attention) and "
            "12.27 % (GEMM+LeakyReLU) lower duration on an A100 with 33–100 search runs per kernel; this is one "
            "run per kernel on another GPU."
        )
        small = [r for r in ok if r.get("stopped") == "cooled" and r.get("cache_hits", 0) > 10 * max(1, r["evaluated"])]
        if small:
            s.append(
                "Searches that stopped `cooled` with far more cache hits than measured schedules ("
                + ", ".join(f"{r['name']}: {r['evaluated']} measured, {r['cache_hits']} hits" for r in small)
                + ") exhausted a small legal space: cached steps count a tenth of a step, so the temperature "
                "runs down in seconds once the reachable schedules are measured (see docs/tuning.md)."
            )
    for n in res.get("notes", []):
        s.append(f"\nNote: {n}")
    return "\n".join(s) + "\n"


def main() -> int:
    res = json.loads(Path(sys.argv[1]).read_text())
    print(markdown(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
