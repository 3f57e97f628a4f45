#!/usr/bin/env bash
# Achieved speedup of the fixes of the bundled examples' current top advice, on a GPU box (GPA Table 3's
# method: estimated vs achieved). Every (example, variant) of bench/advice/example_fixes/variants.txt is built
# with -lineinfo -O3 -arch=$ARCH plus its flags, in parallel; then ROUNDS rounds each run every program in
# turn under ONE `ncu --clock-control none --target-processes all --metrics gpu__time_duration.sum` session
# (clocks not locked, as the profiles were taken). Every program checks its own result and prints its error
# (max |err| or mismatches), so a fix that changes numerical results (fast math) shows by how much.
# Writes $OUT/summary.{json,txt} (median over rounds of orig-run / variant-run, spread = min-max of those
# ratios), $OUT/logs/ and $OUT/sass/<example>.<variant>.sass (cuobjdump -sass of each build).
#
#   usage: bash bench/advice/gpu_example_fixes.sh
#   env:   OUT=dir  ROUNDS=5  ARCH=sm_90  NVCC=nvcc  NCU=ncu  JOBS=nproc  BUDGET_S=240 (no round starts that
#          would end past it)  DRY=1 (build only; no GPU needed)
#          BUILD_DIR=dir: build there and keep the binaries (default: a temporary folder, removed at exit, so
#          that $OUT holds only what is worth bringing back)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
ARCH=${ARCH:-sm_90}
NVCC=${NVCC:-nvcc}
NCU=${NCU:-ncu}
ROUNDS=${ROUNDS:-5}
JOBS=${JOBS:-$(nproc)}
BUDGET_S=${BUDGET_S:-240}
OUT=${OUT:-$(mktemp -d)}
here=bench/advice
logs=$OUT/logs
if [ -n "${BUILD_DIR:-}" ]; then
  build=$BUILD_DIR
else
  build=$(mktemp -d)
  trap 'rm -rf "$build"' EXIT
fi
mkdir -p "$logs" "$build" "$OUT/sass"
t0=$(date +%s)
elapsed() { echo $(( $(date +%s) - t0 )); }

grep -v '^#' "$here/example_fixes/variants.txt" | grep -v '^ *$' > "$build/variants.txt"
echo "== build $(wc -l < "$build/variants.txt") programs ($JOBS in parallel)"
export NVCC ARCH build
# shellcheck disable=SC2016
xargs -P "$JOBS" -L 1 bash -c '
  ex=$0 v=$1 src=$4; shift 4  # bash -c: $0 example, $1 variant, $2 kernel, $3 optimizer, $4 source, the rest flags
  if "$NVCC" -lineinfo -O3 -arch="$ARCH" -I examples "$@" -o "$build/$ex.$v" "$src" > "$build/$ex.$v.build.txt" 2>&1; then
    echo "built $ex/$v"
  else
    echo "BUILD FAILED $ex/$v"; cat "$build/$ex.$v.build.txt"
  fi' < "$build/variants.txt" | tee "$logs/build.txt"
[ "${DRY:-0}" = 1 ] && exit 0
while read -r ex v _; do
  [ -x "$build/$ex.$v" ] && cuobjdump -sass "$build/$ex.$v" > "$OUT/sass/$ex.$v.sass" 2>&1 || true
done < "$build/variants.txt"

mapfile -t kernels < <(awk '{print $3}' "$build/variants.txt" | sort -u)
regex="regex:^($(IFS='|'; echo "${kernels[*]}"))"
done_rounds=0 round_s=0
for r in $(seq 1 "$ROUNDS"); do
  if [ $(( $(elapsed) + round_s )) -gt "$BUDGET_S" ]; then
    echo "STOPPED after $done_rounds rounds: another (~$round_s s) would pass BUDGET_S=$BUDGET_S s"; break
  fi
  rs=$(date +%s)
  runner=$build/round$r.sh
  : > "$logs/pids.r$r.txt"
  while read -r ex v _; do
    [ -x "$build/$ex.$v" ] || continue
    echo "timeout 60 bash -c 'echo \"\$0 \$1 \$\$\" >> \"\$2\"; exec \"\$3\"' $ex $v '$logs/pids.r$r.txt' '$build/$ex.$v' > '$logs/$ex.$v.r$r.out' 2>&1 || echo \"$ex/$v exit \$?\""
  done < "$build/variants.txt" > "$runner"
  timeout $(( BUDGET_S + 30 - $(elapsed) )) "$NCU" --clock-control none --target-processes all \
    --metrics gpu__time_duration.sum --csv -k "$regex" bash "$runner" > "$logs/timing.r$r.csv" 2> "$logs/timing.r$r.err" \
    || echo "ncu round $r exit $?"
  done_rounds=$r round_s=$(( $(date +%s) - rs ))
  echo "round $r done in $round_s s ($(elapsed) s since start)"
done
{
  echo "collected: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader 2>/dev/null || echo unknown)"
  echo "nvcc: $("$NVCC" --version | tail -1)"
  echo "ncu: $("$NCU" --version | tail -1)"
  echo "timing: ncu --clock-control none --target-processes all --metrics gpu__time_duration.sum -k '$regex', $done_rounds rounds"
} > "$OUT/VERSIONS.txt"
python3 "$here/example_fixes/summarize.py" "$logs" "$build/variants.txt" "$done_rounds" "$OUT" | tee "$OUT/summary.txt"
echo "== done in $(elapsed) s"
