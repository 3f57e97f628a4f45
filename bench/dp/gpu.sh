#!/usr/bin/env bash
# DP benchmark on one GPU: compile every variant listed in bench/dp/generated/manifest.json (made here
# by `python bench/dp/generate.py`, which needs libclang), profile each CDP original with ncu (the
# sections warpwise reads, analysis/profile/collect.py), run every build on every input, check it, time
# it, and tar everything into $OUT/dp.tar.gz.
#
#   OUT=/some/dir bash bench/dp/gpu.sh        # -> $OUT/dp.tar.gz (results.csv/json, profiles/, logs/)
#   DRY_RUN=1 OUT=/tmp/x bash bench/dp/gpu.sh # no GPU: compile 2 builds, print the commands it would run
#   ONLY='^(color|quadtree)__' PROFILE='^color@' ... # a subset: builds whose name matches ONLY, profiles of
#                                                   # example@input matching PROFILE (NCU=none: none)
#
# Needs nvcc (CUDA 12+), ncu (optional: NCU=none skips profiling), python3 (standard library only) and
# an sm_90 GPU (ARCH=sm_XX to change). Each program checks its result against its CPU reference (exact)
# and prints "RESULT <example>@<input> PASS|FAIL time_ms=<median of 5 timed runs, CUDA events> ...
# hash=<FNV of output>"; report.py also requires every variant's hash to equal the original's on the same
# input. Time budget (8 minutes wall on one H200 with 16 cores): profiling overlaps the compilation; runs
# stop being started after DEADLINE seconds (the rest are reported SKIPPED_DEADLINE), most important
# kinds first.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/warpwise-dp}
NVCC=${NVCC:-nvcc}
NCU=${NCU:-ncu}
ARCH=${ARCH:-sm_90}
JOBS=${JOBS:-$(nproc)}
RUN_TIMEOUT=${RUN_TIMEOUT:-20}
NCU_TIMEOUT=${NCU_TIMEOUT:-45}
DEADLINE=${DEADLINE:-430}
DRY_RUN=${DRY_RUN:-0}
mkdir -p "$OUT/bin" "$OUT/logs" "$OUT/profiles"
MANIFEST=${MANIFEST:-bench/dp/generated/manifest.json}
[ -f "$MANIFEST" ] || { echo "missing $MANIFEST: run python bench/dp/generate.py first" >&2; exit 2; }
START=$(date +%s)
elapsed() { echo $(( $(date +%s) - START )); }

# 1. build list: name <TAB> source <TAB> kind <TAB> inputs (comma-separated) <TAB> defines (last: may be empty)
python3 - "$MANIFEST" > "$OUT/builds.tsv" <<'PY'
import json, sys
for b in json.load(open(sys.argv[1])):
    print(f"{b['example']}__{b['variant']}\t{b['source']}\t{b['kind']}\t{','.join(b['inputs'])}\t{' '.join(b['defines'])}")
PY
python3 bench/dp/sweep.py > "$OUT/profile_table.tsv"
ONLY=${ONLY:-}
PROFILE=${PROFILE:-.}
if [ -n "$ONLY" ]; then grep -E "$ONLY" "$OUT/builds.tsv" > "$OUT/builds.only" || true; mv "$OUT/builds.only" "$OUT/builds.tsv"; fi
if [ "$DRY_RUN" = 1 ]; then head -2 "$OUT/builds.tsv" > "$OUT/builds.dry" && mv "$OUT/builds.dry" "$OUT/builds.tsv"; fi
echo "compiling $(wc -l < "$OUT/builds.tsv") binaries with $JOBS jobs ($("$NVCC" --version | tail -1))"

export NVCC ARCH OUT
compile_list() {  # stdin: builds.tsv lines
  xargs -P "$JOBS" -d '\n' -I{} bash -c '
    IFS=$'"'"'\t'"'"' read -r name src kind inputs defs <<< "{}"
    # shellcheck disable=SC2086
    if ! "$NVCC" -O3 -rdc=true -arch="$ARCH" $defs "$src" -o "$OUT/bin/$name" -lcudadevrt > "$OUT/logs/$name.build.log" 2>&1; then
      echo "BUILD FAILED: $name (see logs/$name.build.log)"
    fi'
}
# 2. the originals first (they are profiled while the rest compile)
awk -F'\t' '$3 == "original"' "$OUT/builds.tsv" | compile_list
echo "originals compiled at $(elapsed) s"
awk -F'\t' '$3 != "original"' "$OUT/builds.tsv" | compile_list > "$OUT/logs/compile.txt" 2>&1 &
COMPILE_PID=$!

# 3. profile each CDP original on each input: the parent kernel, ncu's sections for warpwise
if [ "$NCU" != none ] && [ "$DRY_RUN" != 1 ] && command -v "$NCU" > /dev/null; then
  "$NCU" --version > "$OUT/profiles/ncu_version.txt" 2>&1
  while IFS=$'\t' read -r ex parent skip count; do
    [ -x "$OUT/bin/${ex}__original" ] || continue
    for input in large small; do
      [[ "$ex@$input" =~ $PROFILE ]] || continue
      if [ "$(elapsed)" -gt 200 ]; then echo "profile $ex@$input skipped (time)"; continue; fi
      timeout -k 5 "$NCU_TIMEOUT" "$NCU" --clock-control none --import-source yes --target-processes all \
        --section SourceCounters --section LaunchStats --section Occupancy --section WarpStateStats \
        --section SpeedOfLight -k "regex:^${parent}\$" --launch-skip "$skip" --launch-count "$count" \
        -f -o "$OUT/profiles/${ex}@${input}" "$OUT/bin/${ex}__original" "$input" \
        > "$OUT/logs/${ex}@${input}.ncu.log" 2>&1
      echo "profiled $ex@$input rc=$? at $(elapsed) s"
    done
  done < "$OUT/profile_table.tsv"
fi
wait "$COMPILE_PID"
cat "$OUT/logs/compile.txt"
echo "compiled (and profiled) in $(elapsed) s"

# 4. run one at a time (timings need the GPU to themselves), most important kinds first
: > "$OUT/raw.tsv"
for kind in original nocdp agg tca tc; do
  while IFS=$'\t' read -r name src k inputs defs; do
    [ "$k" = "$kind" ] || continue
    for input in ${inputs//,/ }; do
      if [ ! -x "$OUT/bin/$name" ]; then
        printf '%s\t%s\tBUILD_FAILED\t\n' "$name" "$input" >> "$OUT/raw.tsv"
        continue
      fi
      if [ "$(elapsed)" -gt "$DEADLINE" ]; then
        printf '%s\t%s\tSKIPPED_DEADLINE\t\n' "$name" "$input" >> "$OUT/raw.tsv"
        continue
      fi
      if [ "$DRY_RUN" = 1 ]; then
        echo "would run: $OUT/bin/$name $input"
        printf '%s\t%s\tDRY_RUN\t\n' "$name" "$input" >> "$OUT/raw.tsv"
        continue
      fi
      timeout -k 5 "$RUN_TIMEOUT" "$OUT/bin/$name" "$input" > "$OUT/logs/$name@$input.run.out" 2> "$OUT/logs/$name@$input.run.err"
      rc=$?
      line=$(grep '^RESULT' "$OUT/logs/$name@$input.run.out" | tail -1)
      [ "$rc" = 124 ] && line="TIMEOUT"
      printf '%s\t%s\t%s\t%s\n' "$name" "$input" "$rc" "${line:-NO_RESULT}" >> "$OUT/raw.tsv"
    done
  done < "$OUT/builds.tsv"
done
echo "ran in $(elapsed) s total"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>/dev/null || true

# 5. CSV/JSON + summary table, then one tarball (binaries left out)
python3 bench/dp/report.py collect --manifest "$MANIFEST" --raw "$OUT/raw.tsv" --out "$OUT" | tee "$OUT/summary.txt"
tar -czf "$OUT/dp.tar.gz" -C "$OUT" --exclude=bin --exclude=dp.tar.gz .
echo "wrote $OUT/dp.tar.gz ($(du -h "$OUT/dp.tar.gz" | cut -f1)) at $(elapsed) s"
