#!/usr/bin/env bash
# DP benchmark, one self-contained GPU script: compile every variant listed in
# bench/dp/generated/manifest.json (made here by `python bench/dp/generate.py`, which needs libclang),
# profile each multi-round CDP original with ncu at launches spread over one run (bench/dp/schedule.py;
# the sections warpwise reads, analysis/profile/collect.py), run the histo hang diagnostics (compute-sanitizer,
# neighbouring thresholds, GPU utilization while it hangs), run and check the builds of each (program,
# input) group whole, in priority order, while its estimated cost fits the deadline, and tar everything
# into $OUT/dp.tar.gz.
#
#   OUT=/some/dir bash bench/dp/gpu.sh        # -> $OUT/dp.tar.gz (results.csv/json, raw.tsv, profiles/, logs/, diag.tsv)
#   DRY_RUN=1 OUT=/tmp/x bash bench/dp/gpu.sh # no GPU: compile 2 builds, print the runs it would make
#   ONLY='^(color|quadtree)__' PROFILE='^color@' RUN_GROUPS='@small$' ... # a subset: builds whose line
#       matches ONLY, profiles of example@input matching PROFILE (NCU=none: none), groups matching RUN_GROUPS
#   ORDER='^mst@xl,@small$,...' # group order (regexes; default: the groups the last run lacked first)
#
# Needs nvcc (CUDA 12+), ncu (optional: NCU=none skips profiling), compute-sanitizer (optional), python3
# (standard library only) and sm_90 GPUs (ARCH=sm_XX to change). Each program checks its result against
# its CPU reference (exact) and prints "RESULT <example>@<input> PASS|FAIL time_ms=<median of 5 timed
# runs, CUDA events> ... hash=<FNV of output>"; report.py also requires every variant's hash to equal
# the original's on the same input.
#
# GPUs: the (program, input) groups are spread over the GPUs found (NGPU to force); every variant of one
# group runs on the same GPU, one process at a time per GPU, so the ratios of a group are measured side by
# side. Time budget: under 8 minutes wall: profiles start until PROFILE_UNTIL s, diagnostics until
# DIAG_UNTIL s, a group starts only when the previous run's time for it (PREV_RAW) ends before DEADLINE s
# (else its builds are SKIPPED_DEADLINE; bench/dp/report.py merge takes them from the previous run), no
# run starts after HARD_DEADLINE s.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/warpwise-dp}
NVCC=${NVCC:-nvcc}
NCU=${NCU:-ncu}
ARCH=${ARCH:-sm_90}
JOBS=${JOBS:-$(nproc)}
RUN_TIMEOUT=${RUN_TIMEOUT:-20}
ORIG_TIMEOUT=${ORIG_TIMEOUT:-90}  # the CDP originals (seconds per run at xl; every check needs their output)
NCU_TIMEOUT=${NCU_TIMEOUT:-40}
DEADLINE=${DEADLINE:-425}  # seconds: no group starts whose estimate ends later
HARD_DEADLINE=${HARD_DEADLINE:-440}  # seconds: no run starts later (the estimate was wrong)
DIAG_TIMEOUT=${DIAG_TIMEOUT:-8}
DIAG_UNTIL=${DIAG_UNTIL:-225}  # seconds: the histo diagnostics stop here
SANITIZER=${SANITIZER:-compute-sanitizer}
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
ONLY=${ONLY:-}
PROFILE=${PROFILE:-.}  # example@input of the multi-round programs to profile (schedule.py)
SPREAD=${SPREAD:-3}  # launches profiled per multi-round program@input, spread over one run
PROFILE_UNTIL=${PROFILE_UNTIL:-150}  # seconds: no profile is started later
PREV_RAW=${PREV_RAW:-bench/dp/results_h200_xl/raw.tsv}  # the previous run: round counts, group costs
# groups (example@input) in this order, each run whole or not at all (schedule.py); RUN_GROUPS selects them
ORDER=${ORDER:-^mst@xl,@small\$,^sssp@,@large\$,@xl\$}
GROUPS_RE=${RUN_GROUPS:-.}  # (not GROUPS: a bash variable)
if [ -n "$ONLY" ]; then grep -E "$ONLY" "$OUT/builds.tsv" > "$OUT/builds.only" || true; mv "$OUT/builds.only" "$OUT/builds.tsv"; fi
if [ "$DRY_RUN" = 1 ]; then head -2 "$OUT/builds.tsv" > "$OUT/builds.dry" && mv "$OUT/builds.dry" "$OUT/builds.tsv"; fi
# histo diagnostics (issue 14: threshold 256 + coarsen x1 hangs on the large input from 32,768 documents
# on, 192 and 512 do not): thresholds next to 256, and a -lineinfo build for compute-sanitizer (step 3b)
DIAG_THRESHOLDS=${DIAG_THRESHOLDS:-255 256 257}
: > "$OUT/diag_builds.tsv"
if [ -f bench/dp/generated/histo/tc.cu ] && [ "$DRY_RUN" != 1 ] && [ "${DIAG:-1}" = 1 ] && grep -q '^histo__tc' "$OUT/builds.tsv"; then
  for t in $DIAG_THRESHOLDS; do
    printf 'histo__diag_t%s_c1\tbench/dp/generated/histo/tc.cu\tdiag\tlarge\t-DWARPWISE_THRESHOLD=%s -DWARPWISE_CFACTOR=1\n' "$t" "$t" >> "$OUT/diag_builds.tsv"
  done
  # threshold alone (the no-CDP source at 256, no coarsened copy): is coarsening involved at all
  printf 'histo__diag_thr256\tbench/dp/generated/histo/nocdp.cu\tdiag\tlarge\t-DWARPWISE_THRESHOLD=256\n' >> "$OUT/diag_builds.tsv"
  printf 'histo__diag_t256_c1_lineinfo\tbench/dp/generated/histo/tc.cu\tdiag\tlarge\t-DWARPWISE_THRESHOLD=256 -DWARPWISE_CFACTOR=1 -lineinfo\n' >> "$OUT/diag_builds.tsv"
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
{ awk -F'\t' '$3 == "original"' "$OUT/builds.tsv"; cat "$OUT/diag_builds.tsv"; } | compile_list
echo "originals and diagnostic builds compiled at $(elapsed) s"
awk -F'\t' '$3 != "original"' "$OUT/builds.tsv" | compile_list > "$OUT/logs/compile.txt" 2>&1 &
COMPILE_PID=$!

# 3. profiles (bench/dp/schedule.py): each multi-round program at SPREAD launches of its parent spread evenly
#    over one run (a systematic sample: launch floor(i*R/SPREAD) of R, one ncu process per launch, -c 1;
#    R from the previous run's RESULT lines, else read from launch 0's own output); profiles/<ex>@<input>.l<k>.
#    The single-launch programs' committed profiles stand (their window is the whole run). No profile is
#    started after PROFILE_UNTIL seconds; the plan then reads the committed one (plan_eval.py says which).
ncu_one() {  # ex parent input skip gpu
  CUDA_VISIBLE_DEVICES=$5 timeout -k 5 "$NCU_TIMEOUT" "$NCU" --clock-control none --import-source yes \
    --target-processes all --section SourceCounters --section LaunchStats --section Occupancy \
    --section WarpStateStats --section SpeedOfLight -k "regex:^${2}\$" --launch-skip "$4" \
    --launch-count 1 -f -o "$OUT/profiles/${1}@${3}.l${4}" "$OUT/bin/${1}__original" "$3" \
    > "$OUT/logs/${1}@${3}.l${4}.ncu.log" 2>&1
  echo "profiled $1@$3 launch $4 on GPU $5 rc=$? at $(elapsed) s"
}
if [ "$NCU" != none ] && [ "$DRY_RUN" != 1 ] && command -v "$NCU" > /dev/null; then
  "$NCU" --version > "$OUT/profiles/ncu_version.txt" 2>&1
  python3 bench/dp/schedule.py profiles "$PREV_RAW" "$SPREAD" "$PROFILE" > "$OUT/profile_jobs.txt"
  PROFILERS=()
  for g in $(seq 0 $(( NGPU - 1 ))); do
    (
      i=0
      while IFS=$'\t' read -r ex parent input skips; do
        i=$(( i + 1 )); [ $(( (i - 1) % NGPU )) = "$g" ] || continue
        [ -x "$OUT/bin/${ex}__original" ] || continue
        if [ "$skips" = "?" ]; then  # R unknown: launch 0 first, R from the program's RESULT line
          [ "$(elapsed)" -gt "$PROFILE_UNTIL" ] && { echo "profile $ex@$input skipped (time)"; continue; }
          ncu_one "$ex" "$parent" "$input" 0 "$g"
          r=$(grep -o -E '(rounds|levels)=[0-9]+' "$OUT/logs/${ex}@${input}.l0.ncu.log" | tail -1 | cut -d= -f2)
          skips=$(python3 -c "import sys; sys.path.insert(0, 'bench/dp'); from schedule import spread; \
print(','.join(map(str, spread(int(sys.argv[1]), int(sys.argv[2])))))" "${r:-1}" "$SPREAD" | cut -d, -f2-)
          [ "${r:-1}" -gt 1 ] || skips=""
        fi
        for skip in ${skips//,/ }; do
          if [ "$(elapsed)" -gt "$PROFILE_UNTIL" ]; then echo "profile $ex@$input launch $skip skipped (time)"; continue; fi
          ncu_one "$ex" "$parent" "$input" "$skip" "$g"
        done
      done < "$OUT/profile_jobs.txt"
    ) &
    PROFILERS+=($!)
  done
  wait "${PROFILERS[@]}"
fi
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

# 3b. histo diagnostics on GPU 0, before the sweep (stopped at DIAG_UNTIL): is the threshold-256 run hung or
#     slow (a DIAG_LONG-second run, GPU utilization and clocks sampled while it runs: a spinning kernel
#     shows ~100%, a device runtime waiting on nothing 0%), is it 256 alone (255, 257), is it repeatable,
#     does compute-sanitizer memcheck (memory errors, device-side launch errors) see anything before it hangs
DIAG_LONG=${DIAG_LONG:-25}  # 0: no long run
SAN_TIMEOUT=${SAN_TIMEOUT:-40}
MEMCHECK=${MEMCHECK:-1}
SYNCCHECK=${SYNCCHECK:-0}
DIAG_RUNS=${DIAG_RUNS:-histo__diag_t255_c1:32768 histo__diag_t257_c1:32768 histo__diag_thr256:32768}
: > "$OUT/diag.tsv"
if [ -s "$OUT/diag_builds.tsv" ] && [ "$DRY_RUN" != 1 ]; then
  for run in $DIAG_RUNS; do  # build:documents
    name=${run%%:*} docs=${run##*:}
    [ -x "$OUT/bin/$name" ] || { printf '%s\tlarge\tBUILD_FAILED\t\t\n' "$name" >> "$OUT/diag.tsv"; continue; }
    [ "$(elapsed)" -gt "$DIAG_UNTIL" ] && break
    run_one "$name" large "$DIAG_TIMEOUT" 0 "HISTO_DOCS=$docs" | sed "s/^/docs=$docs /" >> "$OUT/diag.tsv"
  done
  if [ "$SYNCCHECK" = 1 ] && [ -x "$OUT/bin/histo__diag_t256_c1_lineinfo" ] && [ "$(elapsed)" -le "$DIAG_UNTIL" ] && command -v "$SANITIZER" > /dev/null; then
    t0=$(date +%s)  # warp-synchronous errors (a divergent warp in the launch path) on the run that passes
    HISTO_DOCS=16384 CUDA_VISIBLE_DEVICES=0 timeout -k 5 "$SAN_TIMEOUT" "$SANITIZER" --tool synccheck --print-limit 50 \
      "$OUT/bin/histo__diag_t256_c1_lineinfo" large > "$OUT/logs/histo_t256_synccheck_16k.txt" 2>&1
    printf 'synccheck docs=16384 histo__diag_t256_c1_lineinfo\tlarge\t%s\t%s\t%d\n' "$?" \
      "$(grep -c '=========' "$OUT/logs/histo_t256_synccheck_16k.txt") sanitizer lines" $(( ($(date +%s) - t0) * 1000 )) >> "$OUT/diag.tsv"
  fi
  if [ "$MEMCHECK" = 1 ] && [ -x "$OUT/bin/histo__diag_t256_c1_lineinfo" ] && [ "$(elapsed)" -le "$DIAG_UNTIL" ] && command -v "$SANITIZER" > /dev/null; then
    "$SANITIZER" --version > "$OUT/logs/sanitizer_version.txt" 2>&1
    t0=$(date +%s)
    HISTO_DOCS=32768 CUDA_VISIBLE_DEVICES=0 timeout -k 5 "$SAN_TIMEOUT" "$SANITIZER" --tool memcheck --print-limit 50 \
      --show-backtrace device --check-device-heap yes "$OUT/bin/histo__diag_t256_c1_lineinfo" large \
      > "$OUT/logs/histo_t256_memcheck.txt" 2>&1
    printf 'memcheck docs=32768 histo__diag_t256_c1_lineinfo\tlarge\t%s\t%s\t%d\n' "$?" \
      "$(grep -c '=========' "$OUT/logs/histo_t256_memcheck.txt") sanitizer lines" $(( ($(date +%s) - t0) * 1000 )) >> "$OUT/diag.tsv"
  fi
  if [ "$DIAG_LONG" != 0 ] && [ -x "$OUT/bin/histo__diag_t256_c1" ] && [ "$(elapsed)" -le "$DIAG_UNTIL" ]; then
    ( prev=0; for s in 3 6 12; do sleep $(( s - prev )); prev=$s
        nvidia-smi -i 0 --query-gpu=timestamp,utilization.gpu,clocks.sm,power.draw,memory.used --format=csv,noheader \
          2>&1 | sed "s/^/t=${s}s /"; done ) > "$OUT/diag_smi.txt" &
    SMI=$!
    run_one histo__diag_t256_c1 large "$DIAG_LONG" 0 "HISTO_DOCS=32768" | sed "s/^/long docs=32768 /" >> "$OUT/diag.tsv"
    kill "$SMI" 2> /dev/null; wait "$SMI" 2> /dev/null
  fi
  if [ "$MEMCHECK" = 1 ] && [ -x "$OUT/bin/histo__diag_t256_c1_lineinfo" ] && [ "$(elapsed)" -le "$DIAG_UNTIL" ] && command -v "$SANITIZER" > /dev/null; then
    t0=$(date +%s)  # the same under memcheck on 16,384 documents (the run that passes): what memcheck says there
    HISTO_DOCS=16384 CUDA_VISIBLE_DEVICES=0 timeout -k 5 "$SAN_TIMEOUT" "$SANITIZER" --tool memcheck --print-limit 50 \
      "$OUT/bin/histo__diag_t256_c1_lineinfo" large > "$OUT/logs/histo_t256_memcheck_16k.txt" 2>&1
    printf 'memcheck docs=16384 histo__diag_t256_c1_lineinfo\tlarge\t%s\t%s\t%d\n' "$?" \
      "$(grep -c '=========' "$OUT/logs/histo_t256_memcheck_16k.txt") sanitizer lines" $(( ($(date +%s) - t0) * 1000 )) >> "$OUT/diag.tsv"
  fi
  cat "$OUT/diag.tsv"
fi

wait "$COMPILE_PID"
cat "$OUT/logs/compile.txt"
echo "compiled (and profiled) in $(elapsed) s"

# 4. runs: groups (example@input) in ORDER, to the least loaded GPU (schedule.py), each with its estimated cost;
#    a group starts only when its estimate fits before DEADLINE, and then runs whole (its ratios side by side)
python3 bench/dp/schedule.py groups "$OUT/builds.tsv" "$PREV_RAW" "$NGPU" "$ORDER" > "$OUT/groups.tsv"
worker() {  # gpu: its groups in order; in a group, the kinds in priority order, one run at a time
  local g=$1 kind ex inp gg est name src k inputs defs skip
  while IFS=$'\t' read -r ex inp gg est; do
    [ "$gg" = "$g" ] || continue
    skip=""
    [[ "$ex@$inp" =~ $GROUPS_RE ]] || skip=NOT_SELECTED
    [ -z "$skip" ] && [ $(( $(elapsed) + ${est%.*} )) -gt "$DEADLINE" ] && skip=SKIPPED_DEADLINE
    [ -z "$skip" ] && echo "group $ex@$inp on GPU $g at $(elapsed) s (estimate ${est} s)" >&2
    for kind in original nocdp agg tca tc; do
      while IFS=$'\t' read -r name src k inputs defs; do
        [ "$k" = "$kind" ] && [ "${name%%__*}" = "$ex" ] || continue
        [[ ",$inputs," == *",$inp,"* ]] || continue
        if [ -n "$skip" ]; then printf '%s\t%s\t%s\t\t\n' "$name" "$inp" "$skip"; continue; fi
        if [ ! -x "$OUT/bin/$name" ]; then printf '%s\t%s\tBUILD_FAILED\t\t\n' "$name" "$inp"; continue; fi
        if [ "$(elapsed)" -gt "$HARD_DEADLINE" ]; then printf '%s\t%s\tSKIPPED_DEADLINE\t\t\n' "$name" "$inp"; continue; fi
        if [ "$DRY_RUN" = 1 ]; then echo "would run on GPU $g: $OUT/bin/$name $inp" >&2
          printf '%s\t%s\tDRY_RUN\t\t\n' "$name" "$inp"; continue; fi
        run_one "$name" "$inp" "$([ "$k" = original ] && echo "$ORIG_TIMEOUT" || echo "$RUN_TIMEOUT")" "$g"
      done < "$OUT/builds.tsv"
    done
  done < "$OUT/groups.tsv" > "$OUT/raw.$g.tsv"
}
for g in $(seq 0 $(( NGPU - 1 ))); do worker "$g" & done
wait
cat "$OUT"/raw.[0-9]*.tsv > "$OUT/raw.tsv"
echo "ran in $(elapsed) s total"

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>/dev/null || true

# 6. CSV/JSON + summary table, then one tarball (binaries left out)
sed -i "/\tNOT_SELECTED\t/d" "$OUT/raw.tsv"
python3 bench/dp/report.py collect --manifest "$MANIFEST" --raw "$OUT/raw.tsv" --out "$OUT" | tee "$OUT/summary.txt"
tar -czf "$OUT/dp.tar.gz" -C "$OUT" --exclude=bin --exclude=dp.tar.gz .
echo "wrote $OUT/dp.tar.gz ($(du -h "$OUT/dp.tar.gz" | cut -f1)) at $(elapsed) s"
