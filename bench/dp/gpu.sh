#!/usr/bin/env bash
# DP benchmark on one GPU: compile every variant listed in bench/dp/generated/manifest.json (made
# here by `python bench/dp/generate.py`, which needs libclang), run each, check it, time it.
#
#   OUT=/some/dir bash bench/dp/gpu.sh        # writes $OUT/results.csv, results.json, logs/, prints a table
#
# Needs nvcc (CUDA 12+), python3 (standard library only) and an sm_90 GPU (ARCH=sm_XX to change).
# Each program checks its result against its CPU reference (exact: integer-valued data) and prints
# "RESULT <example> PASS|FAIL time_ms=<median of 5 timed runs, CUDA events> ... hash=<FNV of output>";
# report.py also requires every variant's hash to equal the original's. Ends in well under 8 minutes.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/warpwise-dp}
NVCC=${NVCC:-nvcc}
ARCH=${ARCH:-sm_90}
JOBS=${JOBS:-$(nproc)}
RUN_TIMEOUT=${RUN_TIMEOUT:-30}
mkdir -p "$OUT/bin" "$OUT/logs"
MANIFEST=${MANIFEST:-bench/dp/generated/manifest.json}
[ -f "$MANIFEST" ] || { echo "missing $MANIFEST: run python bench/dp/generate.py first" >&2; exit 2; }
START=$(date +%s)

# 1. build list: name <TAB> source <TAB> defines
python3 - "$MANIFEST" > "$OUT/builds.tsv" <<'PY'
import json, sys
for b in json.load(open(sys.argv[1])):
    print(f"{b['example']}__{b['variant']}\t{b['source']}\t{' '.join(b['defines'])}")
PY
echo "compiling $(wc -l < "$OUT/builds.tsv") binaries with $JOBS jobs ($("$NVCC" --version | tail -1))"

# 2. compile in parallel
export NVCC ARCH OUT
cut -f1-3 "$OUT/builds.tsv" | xargs -P "$JOBS" -d '\n' -I{} bash -c '
  IFS=$'"'"'\t'"'"' read -r name src defs <<< "{}"
  # shellcheck disable=SC2086
  if ! "$NVCC" -O3 -rdc=true -arch="$ARCH" $defs "$src" -o "$OUT/bin/$name" -lcudadevrt > "$OUT/logs/$name.build.log" 2>&1; then
    echo "BUILD FAILED: $name (see logs/$name.build.log)"
  fi'
echo "compiled in $(( $(date +%s) - START )) s"

# 3. run one at a time (timings need the GPU to themselves); stop starting runs after DEADLINE s
DEADLINE=${DEADLINE:-420}
: > "$OUT/raw.tsv"
while IFS=$'\t' read -r name src defs; do
  if [ ! -x "$OUT/bin/$name" ]; then
    printf '%s\tBUILD_FAILED\t\n' "$name" >> "$OUT/raw.tsv"
    continue
  fi
  if [ $(( $(date +%s) - START )) -gt "$DEADLINE" ]; then
    printf '%s\tSKIPPED_DEADLINE\t\n' "$name" >> "$OUT/raw.tsv"
    continue
  fi
  timeout "$RUN_TIMEOUT" "$OUT/bin/$name" > "$OUT/logs/$name.run.out" 2> "$OUT/logs/$name.run.err"
  rc=$?
  line=$(grep '^RESULT' "$OUT/logs/$name.run.out" | tail -1)
  [ "$rc" = 124 ] && line="TIMEOUT"
  printf '%s\t%s\t%s\n' "$name" "$rc" "${line:-NO_RESULT}" >> "$OUT/raw.tsv"
done < "$OUT/builds.tsv"
echo "ran in $(( $(date +%s) - START )) s total"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>/dev/null || true

# 4. CSV/JSON + summary table
python3 bench/dp/report.py collect --manifest "$MANIFEST" --raw "$OUT/raw.tsv" --out "$OUT"
