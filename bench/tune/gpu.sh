#!/usr/bin/env bash
# SASS schedule tuning benchmark on a GPU box (H200): tunes SIP's two Triton workloads (fused attention,
# GEMM+LeakyReLU, compiled here for the local GPU) and two CUDA examples (stencil, gather), measures
# original vs tuned side by side, writes $OUT/results.json, $OUT/benchmarks_section.md, per-kernel
# manifests (+ tuned cubins where a schedule was accepted) + logs, and prints a table last.
# Finishes in < 7 minutes (budget 390 s; each kernel's search cools over TIME_LIMIT s).
#
#   usage: bench/tune/gpu.sh
#   env:   OUT=dir (default bench/tune/out)  DRY_RUN=1 (no GPU: fake timings, CUDA kernels only)
#          PYTHON=python3  ITERATIONS=1500  VERIFY_SAMPLES=10000  TIME_LIMIT=50 (search s/kernel)
#          BUDGET=390 (s for everything in run.py)  SEED=1
# Needs: python3 with numpy + cuda-python (cuda.bindings) [+ torch + triton for the Triton kernels],
# nvdisasm (next to nvcc, or the nvidia-cuda-nvdisasm wheel), pyelftools (installed, or the wheel in
# bench/tune/wheels/ is put on PYTHONPATH). warpwise itself is used from this source tree.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
OUT=${OUT:-$here/out}
PY=${PYTHON:-python3}
mkdir -p "$OUT"

shim=$(mktemp -d)
trap 'rm -rf "$shim"' EXIT
mkdir -p "$shim/warpwise"
ln -s "$repo/analysis" "$shim/warpwise/analysis"
ln -s "$repo/server" "$shim/warpwise/server"
printf '"""warpwise from the source tree (bench shim)."""\n' > "$shim/warpwise/__init__.py"
export PYTHONPATH="$shim${PYTHONPATH:+:$PYTHONPATH}"
if ! "$PY" -c "import elftools" 2>/dev/null; then
  for w in "$here"/wheels/pyelftools-*.whl; do [ -f "$w" ] && export PYTHONPATH="$PYTHONPATH:$w"; done
fi
if command -v nvcc >/dev/null 2>&1; then export PATH="$(dirname "$(command -v nvcc)"):$PATH"; fi
for d in /usr/local/cuda/bin /usr/local/cuda-13.0/bin; do [ -x "$d/nvdisasm" ] && export PATH="$PATH:$d"; done

"$PY" - <<'PYCHECK'
import importlib, shutil, sys
import os
need = ("elftools", "warpwise.analysis.schedule.tune") + (() if os.environ.get("DRY_RUN") == "1" else ("numpy",))
missing = [m for m in need if importlib.util.find_spec(m) is None]
try:
    from warpwise.analysis.binary.tools import find_tool
    print("nvdisasm:", find_tool("nvdisasm"))
except Exception as e:
    missing.append(f"nvdisasm ({e})")
try:
    from cuda.bindings import driver  # noqa: F401
except Exception as e:
    try:
        from cuda import cuda  # noqa: F401  (cuda-python < 12.6)
    except Exception:
        print(f"cuda.bindings.driver: {e} (only a dry run can work)")
if missing:
    sys.exit(f"gpu.sh: missing {missing}")
PYCHECK

{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"; } > "$OUT/gpu.txt"
args=(--out "$OUT" --iterations "${ITERATIONS:-1500}" --verify-samples "${VERIFY_SAMPLES:-10000}"
      --time-limit "${TIME_LIMIT:-50}" --budget "${BUDGET:-390}" --seed "${SEED:-1}")
[ "${DRY_RUN:-0}" = 1 ] && args+=(--dry-run)
"$PY" "$here/run.py" "${args[@]}"
"$PY" "$here/report.py" "$OUT/results.json" > "$OUT/benchmarks_section.md"
echo "wrote $OUT/results.json and $OUT/benchmarks_section.md"
