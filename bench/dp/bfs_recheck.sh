#!/usr/bin/env bash
# Issue 14's last open figure (docs/benchmarks.md, "bfs@large"): the profile-guided BFS build (aggregate per
# grid, threshold 32, coarsen x4) against the sweep's best there (the same at coarsen x1) and no-CDP, measured
# side by side: ROUNDS interleaved rounds, each build's run printing time_ms = the median of its 5 timed
# runs; every run's output checked (RESULT ... PASS). Writes $OUT/bfs_recheck/{runs.tsv,env.txt,logs/}.
#
#   OUT=/some/dir bash bench/dp/bfs_recheck.sh          # on the H200: ~1-2 min wall
#   DRY_RUN=1 OUT=/tmp/x bash bench/dp/bfs_recheck.sh   # no GPU: builds only
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/warpwise-bfs}
NVCC=${NVCC:-nvcc}
ARCH=${ARCH:-sm_90}
ROUNDS=${ROUNDS:-9}
INPUTS=${INPUTS:-large}
RUN_TIMEOUT=${RUN_TIMEOUT:-20}
DRY_RUN=${DRY_RUN:-0}
W="$OUT/bfs_recheck"
mkdir -p "$W/bin" "$W/logs"
{ date -u; "$NVCC" --version | tail -2; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv 2>&1; } \
  > "$W/env.txt" 2>&1
G=bench/dp/generated/bfs
builds=(
  "tca_grid_t32_c1|$G/tca_grid.cu|-DWARPWISE_THRESHOLD=32 -DWARPWISE_CFACTOR=1"
  "tca_grid_t32_c2|$G/tca_grid.cu|-DWARPWISE_THRESHOLD=32 -DWARPWISE_CFACTOR=2"
  "tca_grid_t32_c4|$G/tca_grid.cu|-DWARPWISE_THRESHOLD=32 -DWARPWISE_CFACTOR=4"
  "nocdp|$G/nocdp.cu|"
)
for b in "${builds[@]}"; do
  IFS='|' read -r name src flags <<< "$b"
  # shellcheck disable=SC2086
  timeout -k 5 180 "$NVCC" -O3 -rdc=true -arch="$ARCH" $flags "$src" -o "$W/bin/$name" -lcudadevrt \
    > "$W/logs/$name.build.txt" 2>&1 &
done
wait
ls "$W/bin" >> "$W/env.txt"
[ "$DRY_RUN" = 1 ] && { echo "built: $(ls "$W/bin" | tr '\n' ' ')"; exit 0; }
printf 'round\tbuild\tinput\trc\tstatus\ttime_ms\n' > "$W/runs.tsv"
for r in $(seq 1 "$ROUNDS"); do
  for input in $INPUTS; do
    for b in "${builds[@]}"; do
      name=${b%%|*}
      log="$W/logs/$name@$input.r$r.out"
      timeout -s KILL "$RUN_TIMEOUT" "$W/bin/$name" "$input" > "$log" 2>&1
      rc=$?
      status=ERROR
      grep -q '^RESULT.* PASS' "$log" && status=PASS
      [ "$status" = ERROR ] && grep -q '^RESULT' "$log" && status=FAIL
      t=$(grep -oE 'time_ms=[0-9.]+' "$log" | tail -1 | cut -d= -f2)
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$name" "$input" "$rc" "$status" "$t" | tee -a "$W/runs.tsv"
    done
  done
done
