"""Write the examples with warpwise's quick fixes applied (tests/advice/fixed/<name>.cu) and the estimates
the advice gave for them (tests/advice/fixed/estimates.json), for bench/advice/gpu_fix_speedups.sh to compare with the
speedups the fixes achieve on the GPU (GPA Table 3: estimated vs achieved).

Run on a CPU machine from the repository root: ``python tests/advice/make_fixed.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import EXAMPLES, example_report
from warpwise.analysis.advice.quickfix import fixes_for_advice

#: example -> optimizer whose quick fix is applied
FIXES = {"stencil": "strength_reduction", "gather": "loop_unrolling", "noinline": "function_inlining"}
OUT = Path(__file__).resolve().parent / "fixed"


def main() -> int:
    OUT.mkdir(exist_ok=True)
    estimates = {}
    for name, opt in FIXES.items():
        rep = example_report(name)
        adv = next(a for a in rep.candidates if a.optimizer == opt)
        src_path = EXAMPLES / name / f"{name}.cu"
        src = src_path.read_text(encoding="utf-8")
        fixes = fixes_for_advice(adv, lambda p: Path(p).read_text(encoding="utf-8") if Path(p).exists() else None)
        edits = sorted((e for q in fixes for e in q.edits), key=lambda e: -e.start)
        if not edits:
            print(f"{name}: no edit for {opt}", file=sys.stderr)
            return 1
        data = src.encode("utf-8")
        for e in edits:
            data = data[: e.start] + e.new_text.encode("utf-8") + data[e.end:]
        text = data.decode("utf-8").replace('#include "../common.cuh"', '#include "common.cuh"')
        (OUT / f"{name}.cu").write_text(text, encoding="utf-8")
        estimates[name] = {"kernel": rep.kernel, "optimizer": opt, "estimated_speedup": round(adv.estimated_speedup, 4),
                           "fixes": [q.title for q in fixes]}
        print(f"{name}: {opt} {adv.estimated_speedup:.3f}x  {[q.title for q in fixes]}")
    (OUT / "estimates.json").write_text(json.dumps(estimates, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
