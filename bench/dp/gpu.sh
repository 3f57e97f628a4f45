#!/usr/bin/env bash
# DP benchmark, one self-contained GPU script: compile every variant listed in
# bench/dp/generated/manifest.json (made here by `python bench/dp/generate.py`, which needs libclang),
# profile the CDP original of each program on its xl input with ncu (the sections warpwise reads,
# analysis/profile/collect.py; the large/small profiles of the same kernels are committed under
# bench/dp/results_h200/profiles), run every build on every input, check it, time it, run the histo
# hang diagnostics, and tar everything into $OUT/dp.tar.gz.
#
#   OUT=/some/dir bash bench/dp/gpu.sh        # -> $OUT/dp.tar.gz (results.csv/json, profiles/, logs/, diag.tsv)
#   DRY_RUN=1 OUT=/tmp/x bash bench/dp/gpu.sh # no GPU: compile 2 builds, print the runs it would make
#   ONLY='^(color|quadtree)__' PROFILE='^color@' ... # a subset: builds whose name matches ONLY, profiles of
#                                                   # example@input matching PROFILE (NCU=none: none)
#
# Needs nvcc (CUDA 12+), ncu (optional: NCU=none skips profiling), python3 (standard library only) and
# sm_90 GPUs (ARCH=sm_XX to change). Each program checks its result against its CPU reference (exact)
# and prints "RESULT <example>@<input> PASS|FAIL time_ms=<median of 5 timed runs, CUDA events> ...
# hash=<FNV of output>"; report.py also requires every variant's hash to equal the original's on the same
# input.
#
# GPUs: the (program, input) groups are spread over the GPUs found (NGPU to force); every variant of one
# group runs on the same GPU, one process at a time per GPU, so the ratios of a group are measured side by
# side. Time budget: under 8 minutes wall; runs stop being started after DEADLINE seconds (the rest are
# reported SKIPPED_DEADLINE), the most important kinds first (CDP, no-CDP, aggregation only, the
# combined pipeline, threshold+coarsen). One H200 may not finish the whole sweep in time; 4 do.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/warpwise-dp}
NVCC=${NVCC:-nvcc}
NCU=${NCU:-ncu}
ARCH=${ARCH:-sm_90}
JOBS=${JOBS:-$(nproc)}
RUN_TIMEOUT=${RUN_TIMEOUT:-25}
ORIG_TIMEOUT=${ORIG_TIMEOUT:-90}  # the CDP originals (seconds per run at xl; every check needs their output)
NCU_TIMEOUT=${NCU_TIMEOUT:-60}
DEADLINE=${DEADLINE:-400}
DIAG_TIMEOUT=${DIAG_TIMEOUT:-6}
DRY_RUN=${DRY_RUN:-0}
mkdir -p "$OUT/bin" "$OUT/logs" "$OUT/profiles"
MANIFEST=${MANIFEST:-bench/dp/generated/manifest.json}
[ -f "$MANIFEST" ] || { echo "missing $MANIFEST: run python bench/dp/generate.py first" >&2; exit 2; }
START=$(date +%s)
elapsed() { echo $(( $(date +%s) - START )); }
if [ -z "${NGPU:-}" ]; then
  NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  [ "${NGPU:-0}" -ge 1 ] 2>/dev/null || NGPU=1
fi
echo "GPUs: $NGPU"

# 1. build list: name <TAB> source <TAB> kind <TAB> inputs (comma-separated) <TAB> defines (last: may be empty)
python3 - "$MANIFEST" > "$OUT/builds.tsv" <<'PY'
import json, sys
for b in json.load(open(sys.argv[1])):
    print(f"{b['example']}__{b['variant']}\t{b['source']}\t{b['kind']}\t{','.join(b['inputs'])}\t{' '.join(b['defines'])}")
PY
python3 bench/dp/sweep.py > "$OUT/profile_table.tsv"
ONLY=${ONLY:-}
PROFILE=${PROFILE:-@xl$}
if [ -n "$ONLY" ]; then grep -E "$ONLY" "$OUT/builds.tsv" > "$OUT/builds.only" || true; mv "$OUT/builds.only" "$OUT/builds.tsv"; fi
if [ "$DRY_RUN" = 1 ]; then head -2 "$OUT/builds.tsv" > "$OUT/builds.dry" && mv "$OUT/builds.dry" "$OUT/builds.tsv"; fi
# histo diagnostics (issue 14: threshold+coarsen without aggregation timed out on the large input): the
# threshold+coarsen source at more thresholds; run after the sweep, see step 5
DIAG_THRESHOLDS=${DIAG_THRESHOLDS:-64 128 192 256 512 2048}
: > "$OUT/diag_builds.tsv"
if [ -f bench/dp/generated/histo/tc.cu ] && [ "$DRY_RUN" != 1 ] && { [ -z "$ONLY" ] || [[ histo__tc =~ $ONLY ]]; }; then
  for t in $DIAG_THRESHOLDS; do
    printf 'histo__diag_t%s_c1\tbench/dp/generated/histo/tc.cu\tdiag\tlarge\t-DWARPWISE_THRESHOLD=%s -DWARPWISE_CFACTOR=1\n' "$t" "$t" >> "$OUT/diag_builds.tsv"
  done
fi
echo "compiling $(( $(wc -l < "$OUT/builds.tsv") + $(wc -l < "$OUT/diag_builds.tsv") )) binaries with $JOBS jobs ($("$NVCC" --version | tail -1))"

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
{ awk -F'\t' '$3 != "original"' "$OUT/builds.tsv"; cat "$OUT/diag_builds.tsv"; } | compile_list > "$OUT/logs/compile.txt" 2>&1 &
COMPILE_PID=$!

# 3. profile each CDP original on its xl input (PROFILE selects example@input), one profile per GPU at a time
if [ "$NCU" != none ] && [ "$DRY_RUN" != 1 ] && command -v "$NCU" > /dev/null; then
  "$NCU" --version > "$OUT/profiles/ncu_version.txt" 2>&1
  i=0
  while IFS=$'\t' read -r ex parent skip count; do
    [ -x "$OUT/bin/${ex}__original" ] || continue
    for input in xl large small; do
      [[ "$ex@$input" =~ $PROFILE ]] || continue
      echo "$ex $parent $skip $count $input $(( i % NGPU ))"
      i=$(( i + 1 ))
    done
  done < "$OUT/profile_table.tsv" > "$OUT/profile_jobs.txt"
  PROFILERS=()
  for g in $(seq 0 $(( NGPU - 1 ))); do
    (
      while read -r ex parent skip count input gpu; do
        [ "$gpu" = "$g" ] || continue
        if [ "$(elapsed)" -gt 200 ]; then echo "profile $ex@$input skipped (time)"; continue; fi
        CUDA_VISIBLE_DEVICES=$g timeout -k 5 "$NCU_TIMEOUT" "$NCU" --clock-control none --import-source yes \
          --target-processes all --section SourceCounters --section LaunchStats --section Occupancy \
          --section WarpStateStats --section SpeedOfLight -k "regex:^${parent}\$" --launch-skip "$skip" \
          --launch-count "$count" -f -o "$OUT/profiles/${ex}@${input}" "$OUT/bin/${ex}__original" "$input" \
          > "$OUT/logs/${ex}@${input}.ncu.log" 2>&1
        echo "profiled $ex@$input on GPU $g rc=$? at $(elapsed) s"
      done < "$OUT/profile_jobs.txt"
    ) &
    PROFILERS+=($!)
  done
  wait "${PROFILERS[@]}"
fi
wait "$COMPILE_PID"
cat "$OUT/logs/compile.txt"
echo "compiled (and profiled) in $(elapsed) s"

# 4. runs: groups (example@input) to GPUs, the costliest first to the least loaded GPU (cost: a rough
#    weight from the first H200 sweep: the CDP originals of colouring/MST/SSSP/quadtree take seconds)
python3 - "$OUT/builds.tsv" "$NGPU" > "$OUT/groups.tsv" <<'PY'
import sys
rows = [ln.rstrip("\n").split("\t") for ln in open(sys.argv[1]) if ln.strip()]
ngpu = int(sys.argv[2])
groups = {}
for r in rows:
    ex = r[0].split("__")[0]
    for inp in r[3].split(","):
        groups.setdefault((ex, inp), 0)
        groups[(ex, inp)] += 1
heavy = {"color": 3, "mst": 2, "sssp": 3, "quadtree": 4, "bfs": 1.5}
size = {"xl": 3, "large": 2, "small": 1.5}
cost = {g: n * heavy.get(g[0], 1) * size.get(g[1], 1) for g, n in groups.items()}
load = [0.0] * ngpu
for g in sorted(cost, key=lambda k: -cost[k]):
    i = min(range(ngpu), key=lambda j: load[j])
    load[i] += cost[g]
    print(f"{g[0]}\t{g[1]}\t{i}")
PY
run_one() {  # name input timeout gpu extra-env -> one raw line
  local name=$1 input=$2 tmo=$3 gpu=$4 envs=${5:-} t0 rc line  # raw line: ... <TAB> wall ms
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  env CUDA_VISIBLE_DEVICES="$gpu" $envs timeout -k 5 "$tmo" "$OUT/bin/$name" "$input" \
    > "$OUT/logs/$name@$input${envs:+.${envs//[^A-Za-z0-9]/_}}.run.out" 2> "$OUT/logs/$name@$input.run.err"
  rc=$?
  line=$(grep '^RESULT' "$OUT/logs/$name@$input${envs:+.${envs//[^A-Za-z0-9]/_}}.run.out" | tail -1)
  [ "$rc" = 124 ] && line="TIMEOUT"
  printf '%s\t%s\t%s\t%s\t%d\n' "$name" "$input" "$rc" "${line:-NO_RESULT}" $(( ($(date +%s%N) - t0) / 1000000 ))
}
worker() {  # gpu: its groups, kinds in priority order, one run at a time
  local g=$1 kind ex inp gg name src k inputs defs
  for kind in original nocdp agg tca tc; do
    while IFS=$'\t' read -r ex inp gg; do
      [ "$gg" = "$g" ] || continue
      while IFS=$'\t' read -r name src k inputs defs; do
        [ "$k" = "$kind" ] && [ "${name%%__*}" = "$ex" ] || continue
        [[ ",$inputs," == *",$inp,"* ]] || continue
        if [ ! -x "$OUT/bin/$name" ]; then printf '%s\t%s\tBUILD_FAILED\t\t\n' "$name" "$inp"; continue; fi
        if [ "$(elapsed)" -gt "$DEADLINE" ]; then printf '%s\t%s\tSKIPPED_DEADLINE\t\t\n' "$name" "$inp"; continue; fi
        if [ "$DRY_RUN" = 1 ]; then echo "would run on GPU $g: $OUT/bin/$name $inp" >&2
          printf '%s\t%s\tDRY_RUN\t\t\n' "$name" "$inp"; continue; fi
        run_one "$name" "$inp" "$([ "$k" = original ] && echo "$ORIG_TIMEOUT" || echo "$RUN_TIMEOUT")" "$g"
      done < "$OUT/builds.tsv"
    done < "$OUT/groups.tsv"
  done > "$OUT/raw.$g.tsv"
}
for g in $(seq 0 $(( NGPU - 1 ))); do worker "$g" & done
wait
cat "$OUT"/raw.[0-9]*.tsv > "$OUT/raw.tsv"
echo "ran in $(elapsed) s total"

# 5. histo diagnostics on GPU 0 (time permitting): thresholds around the one that timed out, then
#    threshold 256 on fewer documents; each run is cut at DIAG_TIMEOUT seconds (rc 124 = still running)
: > "$OUT/diag.tsv"
if [ -s "$OUT/diag_builds.tsv" ]; then
  while IFS=$'\t' read -r name src k inputs defs; do
    [ -x "$OUT/bin/$name" ] || { printf '%s\tlarge\tBUILD_FAILED\t\t\n' "$name" >> "$OUT/diag.tsv"; continue; }
    [ "$(elapsed)" -gt 455 ] && break
    run_one "$name" large "$DIAG_TIMEOUT" 0 >> "$OUT/diag.tsv"
  done < "$OUT/diag_builds.tsv"
  for docs in 4096 16384 32768; do
    [ -x "$OUT/bin/histo__diag_t256_c1" ] || break
    [ "$(elapsed)" -gt 455 ] && break
    run_one histo__diag_t256_c1 large "$DIAG_TIMEOUT" 0 "HISTO_DOCS=$docs" | sed "s/^/docs=$docs /" >> "$OUT/diag.tsv"
  done
  cat "$OUT/diag.tsv"
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>/dev/null || true

# 6. CSV/JSON + summary table, then one tarball (binaries left out)
python3 bench/dp/report.py collect --manifest "$MANIFEST" --raw "$OUT/raw.tsv" --out "$OUT" | tee "$OUT/summary.txt"
tar -czf "$OUT/dp.tar.gz" -C "$OUT" --exclude=bin --exclude=dp.tar.gz .
echo "wrote $OUT/dp.tar.gz ($(du -h "$OUT/dp.tar.gz" | cut -f1)) at $(elapsed) s"
