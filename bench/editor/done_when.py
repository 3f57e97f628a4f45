"""Issue 11's "Done when" counts on the committed inputs: warpwise diagnostics per line per kernel and the
largest share shown (inlay hints), on every example, on a report with three launches of one kernel
(bench/advice/pairs/bs_batches, H200) and on two reports of one kernel (the stencil report and a copy).

    .venv/bin/python bench/editor/done_when.py

Prints one row per case: diagnostics, the most on one line for one kernel (goal 1), the largest inlay share
(goal <= 100%) and the sum of the inlay shares per kernel (<= 100% up to rounding). Exit status 1 when a goal
is missed.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

from lsprotocol import types as lsp
from warpwise.analysis.pipeline import Analysis, analyze
from warpwise.server import render
from warpwise.server.config import Settings
from warpwise.server.findings import file_findings
from warpwise.server.linemap import LineMap

ROOT = Path(__file__).resolve().parents[2]
ALL = lsp.Range(lsp.Position(0, 0), lsp.Position(1_000_000, 0))


def pair_report(d: Path) -> Path:
    """The plain report of a bench/advice pair folder (committed as orig.ncu-rep.xz; bench/advice/reports.py)."""
    spec = importlib.util.spec_from_file_location("advbench_reports", ROOT / "bench" / "advice" / "reports.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    got = mod.pair_report(d)
    if got is None:
        raise FileNotFoundError(f"{d}: no orig.ncu-rep(.xz)")
    return Path(got)


def one(d: Path, name: str, report: Path | None = None) -> tuple[Path, Analysis]:
    """The analysis of ``d``'s report (or ``report``) with its cubins and ``name``.cu."""
    cu = (d / f"{name}.cu").resolve()
    rep = report or next(iter(sorted(d.glob("*.ncu-rep"))))
    return cu, analyze(rep, sorted(d.glob("*.cubin")), [cu])


def check(label: str, cu: Path, analyses: list[Analysis]) -> bool:
    """Print the counts of one case; whether its goals are met."""
    ff = file_findings(analyses, cu)
    text = cu.read_text()
    lmap = LineMap(ff.baseline, text)
    s = Settings(min_share=0.0)  # every line, not only those above the default 2%
    ds = render.diagnostics(ff, lmap, text, s, cu.as_uri())
    per = Counter((d.range.start.line, (d.data or {}).get("kernel")) for d in ds if d.source == "warpwise")
    hints = [str(h.label) for h in render.inlay_hints(ff, lmap, text, s, ALL)]
    shares = [float(part.split("%")[0]) for h in hints for part in h.split(" | ") if part[:1].isdigit()]
    worst = max(per.values(), default=0)
    top = max(shares, default=0.0)
    print(f"{label:<34} diagnostics {len(ds):>3}  most per line per kernel {worst}  largest share {top:5.1f}%  "
          f"sum of shares {sum(shares):5.1f}%")
    return worst <= 1 and top <= 100.0


def main() -> int:
    ok = True
    for name in ("cdp", "gather", "intdiv", "noinline", "stencil", "dp"):
        d = ROOT / "examples" / name
        if (d / f"{name}.cu").is_file() and any(d.glob("*.ncu-rep")):
            cu, a = one(d, name)
            ok &= check(f"examples/{name}", cu, [a])
    bs = ROOT / "bench" / "advice" / "pairs" / "bs_batches"
    cu, a = one(bs, "orig", pair_report(bs))
    ok &= check(f"bs_batches ({len(a.kernels)} launches)", cu, [a])
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        src = ROOT / "examples" / "stencil"
        for f in src.iterdir():
            if f.suffix in (".cu", ".cubin", ".ncu-rep"):
                shutil.copy(f, d / f.name)
        shutil.copy(d / "stencil.ncu-rep", d / "stencil-rerun.ncu-rep")
        os.utime(d / "stencil-rerun.ncu-rep", (1_000_000, 1_000_000))
        cu = (d / "stencil.cu").resolve()
        cubins = sorted(d.glob("*.cubin"))
        both = [analyze(r, cubins, [cu]) for r in sorted(d.glob("*.ncu-rep"))]
        ok &= check("two reports of blur_rows", cu, both)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
