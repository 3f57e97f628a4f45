#!/usr/bin/env bash
# Estimated vs achieved speedup of warpwise's quick fixes (GPA Table 3 method) on a GPU box.
# Builds each example and its fixed copy (tests/advice/fixed/<name>.cu, written on a CPU machine by
# tests/advice/make_fixed.py), times the kernel with Nsight Compute (gpu__time_duration.sum, clocks not
# locked, as the profiles were taken) REPS times each, and prints median durations, the achieved speedup
# and the estimate from tests/advice/fixed/estimates.json. Outputs go to $OUT (default: a temp dir).
#
#   usage: bench/advice/gpu_fix_speedups.sh          env: ARCH=sm_90 NVCC=nvcc REPS=5 OUT=dir
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
ARCH=${ARCH:-sm_90}
NVCC=${NVCC:-nvcc}
REPS=${REPS:-5}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
fixed="$root/tests/advice/fixed"
declare -A kernel=([stencil]=blur_rows [gather]=spmv_ell [noinline]=advance)

for ex in stencil gather noinline; do
  for variant in original fixed; do
    src="$root/examples/$ex/$ex.cu"
    [ "$variant" = fixed ] && src="$fixed/$ex.cu"
    bin="$OUT/$ex.$variant"
    "$NVCC" -lineinfo -O3 -arch="$ARCH" -I "$root/examples" -o "$bin" "$src"
    "$bin" > "$OUT/$ex.$variant.run.txt"   # the example checks its own result (exit 1 on mismatch)
    for r in $(seq 1 "$REPS"); do
      ncu --clock-control none --metrics gpu__time_duration.sum --csv -k "regex:^${kernel[$ex]}" \
        "$bin" > "$OUT/$ex.$variant.$r.csv" 2> "$OUT/$ex.$variant.$r.err"
    done
  done
done

python3 - "$OUT" "$fixed/estimates.json" "$REPS" <<'PY'
import csv, json, statistics, sys
out, est_path, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
est = json.load(open(est_path))
scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3, "second": 1e6, "s": 1e6}
def duration_us(path):
    lines = [l for l in open(path) if l.startswith('"')]
    for row in csv.DictReader(lines):
        if row.get("Metric Name") == "gpu__time_duration.sum":
            return float(row["Metric Value"].replace(",", "")) * scale[row["Metric Unit"]]
    raise SystemExit(f"{path}: no gpu__time_duration.sum row")
rows = []
for ex, e in est.items():
    t = {v: statistics.median(duration_us(f"{out}/{ex}.{v}.{r}.csv") for r in range(1, reps + 1))
         for v in ("original", "fixed")}
    achieved = t["original"] / t["fixed"]
    err = abs(e["estimated_speedup"] - achieved) / achieved
    rows.append((ex, e["optimizer"], t["original"], t["fixed"], achieved, e["estimated_speedup"], err))
json.dump([dict(zip(("example", "optimizer", "original_us", "fixed_us", "achieved", "estimated", "error"), r))
           for r in rows], open(f"{out}/summary.json", "w"), indent=1)
print(f"{'example':10s} {'optimizer':20s} {'orig us':>9s} {'fixed us':>9s} {'achieved':>9s} {'estimate':>9s} {'error':>7s}")
for ex, opt, a, b, ach, es, err in rows:
    print(f"{ex:10s} {opt:20s} {a:9.1f} {b:9.1f} {ach:8.3f}x {es:8.3f}x {err:6.1%}")
PY
