#!/usr/bin/env bash
# Verification of the fix for the histo threshold hang (docs/benchmarks.md "Run 6"), one GPU script, < 5 min:
#   1. the DP benchmark's histo group re-run whole (bench/dp/gpu.sh, every histo build on small/large/xl:
#      the regenerated threshold builds carry the fix, so their times and outputs are new);
#   2. a threshold x documents x input sweep of the fixed generated build (bench/dp/generated/histo/tc.cu,
#      coarsen x1) and of the build as generated before the fix (bench/dp/hang/histo_tc_run5.cu), each run
#      under `timeout -s KILL`: does the fix pass everywhere, and how often did the old form hang?
#   3. cuda-gdb attached twice to a hung old-form process: the spinning lanes' PC and the device-runtime
#      code around it (what it waits on).
# Everything goes into $OUT/hang_verify.tar.gz (sweep.tsv: form threshold docs input status wall_ms time).
#
#   OUT=/some/dir bash bench/dp/hang_verify.sh
#   DRY_RUN=1 OUT=/tmp/x bash bench/dp/hang_verify.sh   # no GPU: compile the sweep builds, print the runs
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/warpwise-hang-verify}
NVCC=${NVCC:-nvcc}
ARCH=${ARCH:-sm_90}
JOBS=${JOBS:-$(nproc)}
DRY_RUN=${DRY_RUN:-0}
DEADLINE=${DEADLINE:-255}   # seconds: no sweep run starts later
GDB_TIMEOUT=${GDB_TIMEOUT:-30}
THRESHOLDS=${THRESHOLDS:-128 192 240 248 252 254 255 256 257 258 260 272 320 384 512}
DOCS_LIST=${DOCS_LIST:-32768 49152 65536}
W="$OUT/hang_verify"
mkdir -p "$W/bin" "$W/logs"
START=$(date +%s)
elapsed() { echo $(( $(date +%s) - START )); }

# 1. the histo group of the DP benchmark (no profiles, no diagnostics)
if [ "$DRY_RUN" != 1 ]; then
  ONLY='^histo__' RUN_GROUPS='^histo@' ORDER='^histo@large,^histo@xl,^histo@small' NCU=none DIAG=0 \
    PREV_RAW=bench/dp/results_h200_r5/raw.tsv RUN_TIMEOUT=12 DEADLINE=150 HARD_DEADLINE=160 \
    OUT="$W/dp" bash bench/dp/gpu.sh > "$W/logs/gpu_sh.txt" 2>&1
  rm -rf "$W/dp/bin"
  echo "histo group done at $(elapsed) s" | tee -a "$W/env.txt"
fi

# 2. the sweep builds (compiled after gpu.sh, which uses every core while it compiles)
build_one() {  # name source flags
  # shellcheck disable=SC2086
  timeout -k 5 180 "$NVCC" -O3 -rdc=true -arch="$ARCH" $3 "$2" -o "$W/bin/$1" -lcudadevrt > "$W/logs/$1.build.txt" 2>&1 \
    || echo "BUILD_FAILED $1" >> "$W/logs/build_failures.txt"
}
for t in $THRESHOLDS; do
  for form in fixed:bench/dp/generated/histo/tc.cu run5:bench/dp/hang/histo_tc_run5.cu; do
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    build_one "${form%%:*}_t$t" "${form#*:}" "-DWARPWISE_THRESHOLD=$t -DWARPWISE_CFACTOR=1" &
  done
done
wait
echo "sweep builds: $(ls "$W/bin" | wc -l) at $(elapsed) s" | tee -a "$W/env.txt"
: > "$W/sweep.tsv"
sweep() {  # form timeout
  local form=$1 tmo=$2 t d inp rc st t0 tag
  for t in $THRESHOLDS; do for d in $DOCS_LIST; do for inp in large xl; do
    tag="${form}_t${t}@$inp.$d"
    if [ "$DRY_RUN" = 1 ]; then echo "would run: HISTO_DOCS=$d ${form}_t$t $inp"; continue; fi
    if [ "$(elapsed)" -gt "$DEADLINE" ]; then printf '%s\t%s\t%s\t%s\tSKIPPED_DEADLINE\t\t\n' "$form" "$t" "$d" "$inp" >> "$W/sweep.tsv"; continue; fi
    t0=$(date +%s%N)
    HISTO_DOCS=$d timeout -s KILL "$tmo" "$W/bin/${form}_t$t" "$inp" > "$W/logs/$tag.out" 2>&1
    rc=$?
    if grep -q '^RESULT.* PASS' "$W/logs/$tag.out"; then st=PASS; elif grep -q '^RESULT' "$W/logs/$tag.out"; then st=FAIL
    elif [ "$rc" = 137 ]; then st=HANG; else st=ERROR; fi
    printf '%s\t%s\t%s\t%s\t%s\t%d\t%s\n' "$form" "$t" "$d" "$inp" "$st" $(( ($(date +%s%N) - t0) / 1000000 )) \
      "$(grep -oE 'time_ms=[0-9.]+' "$W/logs/$tag.out")" >> "$W/sweep.tsv"
  done; done; done
  echo "sweep $form done at $(elapsed) s: $(awk -F'\t' -v f="$form" '$1 == f {n[$5]++} END {for (k in n) printf "%s=%d ", k, n[k]}' "$W/sweep.tsv")" \
    | tee -a "$W/env.txt"
}
sweep fixed 5

# 3. cuda-gdb on a hung old-form process: attach once for the warp, again for the spinning lane's code
GDB=$(command -v cuda-gdb || ls /usr/local/cuda*/bin/cuda-gdb 2>/dev/null | head -1)
if [ "$DRY_RUN" != 1 ] && [ -n "$GDB" ] && [ -x "$W/bin/run5_t256" ]; then
  HISTO_DOCS=32768 "$W/bin/run5_t256" large > "$W/logs/gdb_prog.out" 2>&1 &
  pid=$!
  sleep 3
  if kill -0 "$pid" 2> /dev/null; then
    timeout -s KILL "$GDB_TIMEOUT" "$GDB" -batch -nx -p "$pid" -ex 'set pagination off' -ex 'info cuda kernels' \
      -ex 'info cuda warps' -ex 'info cuda threads' -ex 'detach' > "$W/logs/gdb1.txt" 2>&1
    sm=$(grep -oE 'Device 0 SM [0-9]+' "$W/logs/gdb1.txt" | head -1 | awk '{print $4}')
    line=$(grep -E '^\*? +[0-9]+ +0x[0-9a-f]+ +0x[0-9a-f]+' "$W/logs/gdb1.txt" | head -1)
    wp=$(echo "$line" | tr -d '*' | awk '{print $1}')
    mask=$(echo "$line" | tr -d '*' | awk '{print $2}')
    lane=0
    if [ -n "$mask" ]; then m=$(( mask )); while [ $(( m & 1 )) = 0 ] && [ $lane -lt 32 ]; do m=$(( m >> 1 )); lane=$(( lane + 1 )); done; fi
    echo "sm=$sm warp=$wp active_mask=$mask first_active_lane=$lane" >> "$W/logs/gdb1.txt"
    timeout -s KILL "$GDB_TIMEOUT" "$GDB" -batch -nx -p "$pid" -ex 'set pagination off' \
      -ex "cuda sm ${sm:-0} warp ${wp:-0} lane $lane" -ex 'info cuda lanes' -ex 'bt' -ex 'x/64i $pc-0x200' \
      -ex 'x/32i $pc' -ex 'info registers' -ex 'x/16xw $pc-0x40' -ex 'detach' > "$W/logs/gdb2.txt" 2>&1
    echo "gdb rc=$?" >> "$W/logs/gdb2.txt"
  else
    echo "run5_t256 finished before attach" > "$W/logs/gdb1.txt"
  fi
  kill -KILL "$pid" 2> /dev/null; wait "$pid" 2> /dev/null
  echo "gdb done at $(elapsed) s" | tee -a "$W/env.txt"
fi
sweep run5 3
echo "done at $(elapsed) s" | tee -a "$W/env.txt"
tar -czf "$OUT/hang_verify.tar.gz" -C "$OUT" --exclude=hang_verify/bin --exclude=hang_verify/dp/dp.tar.gz hang_verify
ls -la "$OUT/hang_verify.tar.gz"
