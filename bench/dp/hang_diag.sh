#!/usr/bin/env bash
# The histo threshold hang (issue 14; docs/benchmarks.md "The histo hang"), one GPU script: is it warpwise's
# generated code or the device runtime? Builds the generated threshold builds (bench/dp/generated/histo,
# threshold 192/256, coarsen x1) and a hand-written reduction (bench/dp/hang/histo_probe.cu) with one piece
# taken away per build (serial branch, launch, error calls, inlining, -G, ptxas -O0, PTX JIT, __syncwarp,
# fire-and-forget stream), an instrumented copy (progress counters in mapped pinned host memory, dumped by
# the host while the kernel runs), runs each under `timeout -s KILL`, and attaches cuda-gdb (when present)
# to a hung process. Everything goes into $OUT/hang_diag.tar.gz; runs.tsv has one line per run:
#   name <TAB> input <TAB> env <TAB> rc <TAB> PASS|FAIL|HANG|ERROR <TAB> timed runs finished <TAB> wall ms
#   <TAB> time_ms=<median of 5> (generated builds) or min_ms=<fastest timed run> (histo_probe.cu)
#
#   OUT=/some/dir bash bench/dp/hang_diag.sh            # on the H200: < 6 min wall
#   DRY_RUN=1 OUT=/tmp/x bash bench/dp/hang_diag.sh     # no GPU: compile every build, print the runs
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/warpwise-hang}
NVCC=${NVCC:-nvcc}
ARCH=${ARCH:-sm_90}
JOBS=${JOBS:-$(nproc)}
RUN_TIMEOUT=${RUN_TIMEOUT:-5}   # seconds; a passing run takes < 1.5 s
PROBE_POLL=${PROBE_POLL:-4}     # seconds the instrumented build polls before it dumps and exits
DEADLINE=${DEADLINE:-290}       # seconds: no run starts later
GDB_TIMEOUT=${GDB_TIMEOUT:-45}
DRY_RUN=${DRY_RUN:-0}
W="$OUT/hang_diag"
mkdir -p "$W/bin" "$W/logs"
START=$(date +%s)
elapsed() { echo $(( $(date +%s) - START )); }
{
  date -u; "$NVCC" --version | tail -2
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv 2>&1
  echo "cuda-gdb: $(command -v cuda-gdb || ls /usr/local/cuda*/bin/cuda-gdb 2>/dev/null | head -1 || echo none)"
  echo "ptrace_scope: $(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo n/a)"
} > "$W/env.txt" 2>&1

# 1. builds: name <TAB> source <TAB> nvcc flags
GEN=bench/dp/generated/histo
HW=bench/dp/hang/histo_probe.cu
cat > "$W/builds.tsv" <<EOF
gen_t256	$GEN/tc.cu	-DWARPWISE_THRESHOLD=256 -DWARPWISE_CFACTOR=1 -lineinfo
gen_t192	$GEN/tc.cu	-DWARPWISE_THRESHOLD=192 -DWARPWISE_CFACTOR=1
gen_thr256	$GEN/nocdp.cu	-DWARPWISE_THRESHOLD=256
hw_t256	$HW	-DTHR=256 -lineinfo
hw_t192	$HW	-DTHR=192
hw_t512	$HW	-DTHR=512
hw_noerr	$HW	-DTHR=256 -DNOERR
hw_serialnop	$HW	-DTHR=256 -DSERIAL_NOP
hw_launchnop	$HW	-DTHR=256 -DLAUNCH_NOP
hw_noinline	$HW	-DTHR=256 -DNOINLINE
hw_syncwarp	$HW	-DTHR=256 -DSYNCWARP
hw_faf	$HW	-DTHR=256 -DFAF
hw_seq	$HW	-DTHR=256 -DSEQ
hw_G	$HW	-DTHR=256 -G
hw_O0	$HW	-DTHR=256 -Xptxas -O0
probe_t256	$HW	-DTHR=256 -DPROBE
probe_t255	$HW	-DTHR=255 -DPROBE
probe_t257	$HW	-DTHR=257 -DPROBE
probe_t192	$HW	-DTHR=192 -DPROBE
probe_syncwarp	$HW	-DTHR=256 -DPROBE -DSYNCWARP
EOF
# PTX only (compute_90): the driver's JIT compiles it, a different code generator from this nvcc's ptxas
printf 'hw_ptx\t%s\t-DTHR=256 -gencode arch=compute_90,code=compute_90\n' "$HW" >> "$W/builds.tsv"
# issue 14's other open item (bfs@large: coarsen x4 at 1.10x of x1): the grid-aggregated threshold-32 builds
# at coarsening 1, 2, 4, bfs and histo side by side, interleaved rounds (is the gap real, and does x2 sit between?)
for ex in bfs histo; do for c in 1 2 4; do
  printf '%s_tca_grid_t32_c%s\tbench/dp/generated/%s/tca_grid.cu\t-DWARPWISE_THRESHOLD=32 -DWARPWISE_CFACTOR=%s\n' \
    "$ex" "$c" "$ex" "$c" >> "$W/builds.tsv"
done; done
build_one() {  # name source flags
  local arch="-arch=$ARCH"
  case "$3" in *-gencode*) arch="" ;; esac
  # shellcheck disable=SC2086
  timeout -k 5 180 "$NVCC" -O3 -rdc=true $arch $3 "$2" -o "$W/bin/$1" -lcudadevrt > "$W/logs/$1.build.txt" 2>&1 \
    || echo "BUILD_FAILED $1" >> "$W/logs/build_failures.txt"
}
while IFS=$'\t' read -r n s f; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  build_one "$n" "$s" "$f" &
done < "$W/builds.tsv"
wait
echo "built $(ls "$W/bin" | wc -l) of $(wc -l < "$W/builds.tsv") at $(elapsed) s" | tee -a "$W/env.txt"
[ -f "$W/logs/build_failures.txt" ] && cat "$W/logs/build_failures.txt"

# 2. runs: name input env timeout
: > "$W/runs.tsv"
run_one() {  # name input env tmo
  local name=$1 input=$2 envs=$3 tmo=${4:-$RUN_TIMEOUT} tag rc status t0 done_runs
  tag="$name@$input${envs:+.${envs//[^A-Za-z0-9]/_}}"
  if [ "$DRY_RUN" = 1 ]; then echo "would run: $envs $name $input (timeout $tmo s)"; return; fi
  [ "$(elapsed)" -gt "$DEADLINE" ] && { printf '%s\t%s\t%s\t\tSKIPPED_DEADLINE\t\t\n' "$name" "$input" "$envs" >> "$W/runs.tsv"; return; }
  [ -x "$W/bin/$name" ] || { printf '%s\t%s\t%s\t\tBUILD_FAILED\t\t\n' "$name" "$input" "$envs" >> "$W/runs.tsv"; return; }
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  env $envs timeout -s KILL "$tmo" "$W/bin/$name" "$input" > "$W/logs/$tag.out" 2>&1
  rc=$?
  if grep -q '^RESULT.* PASS' "$W/logs/$tag.out"; then status=PASS
  elif grep -q '^RESULT' "$W/logs/$tag.out"; then status=FAIL
  elif [ "$rc" = 137 ] || grep -q '^HANG' "$W/logs/$tag.out"; then status=HANG
  else status=ERROR; fi
  done_runs=$(grep -c '^run ' "$W/logs/$tag.out")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n' "$name" "$input" "$envs" "$rc" "$status" "$done_runs" \
    $(( ($(date +%s%N) - t0) / 1000000 )) "$(grep -oE '(time|min)_ms=[0-9.]+' "$W/logs/$tag.out" | tail -1)" | tee -a "$W/runs.tsv"
}
D32=HISTO_DOCS=32768
# 2a. controls: the generated builds (the known hang and its passing neighbours) and the hand-written copy
run_one gen_t256 large "$D32"
run_one gen_t192 large "$D32"
run_one gen_t256 large HISTO_DOCS=16384
run_one gen_thr256 large "$D32"
run_one hw_t256 large "$D32"
run_one hw_t192 large "$D32"
run_one hw_t512 large "$D32"
run_one hw_t256 large HISTO_DOCS=16384
# 2b. instrumented: where the parent threads and the child grids are while it hangs
for p in probe_t256 probe_t255 probe_t257 probe_t192 probe_syncwarp; do
  run_one "$p" large "$D32 POLL_S=$PROBE_POLL" $(( PROBE_POLL + 6 ))
done
run_one probe_t256 xl "$D32 POLL_S=$PROBE_POLL" $(( PROBE_POLL + 6 ))

# 3. cuda-gdb on a hung process: kernels, blocks, and where each thread group's PC is
GDB=$(command -v cuda-gdb || ls /usr/local/cuda*/bin/cuda-gdb 2>/dev/null | head -1)
gdb_cmds=(-ex 'set pagination off' -ex 'set print thread-events off' -ex 'set cuda break_on_launch none'
  -ex 'info cuda devices' -ex 'info cuda kernels' -ex 'info cuda blocks' -ex 'info cuda sms'
  -ex 'info cuda warps' -ex 'info cuda threads' -ex 'bt' -ex 'x/6i $pc' -ex 'info cuda lanes')
gdb_attach() {  # name
  local name=$1 pid
  [ -n "$GDB" ] && [ -x "$W/bin/$name" ] || { echo "no cuda-gdb or no $name" > "$W/logs/gdb_$name.txt"; return; }
  [ "$(elapsed)" -gt "$DEADLINE" ] && return
  HISTO_DOCS=32768 "$W/bin/$name" large > "$W/logs/gdb_$name.prog.out" 2>&1 &
  pid=$!
  sleep 3
  if ! kill -0 "$pid" 2> /dev/null; then echo "finished before attach" > "$W/logs/gdb_$name.txt"; return; fi
  timeout -s KILL "$GDB_TIMEOUT" "$GDB" -batch -nx -p "$pid" "${gdb_cmds[@]}" -ex 'detach' \
    > "$W/logs/gdb_$name.txt" 2>&1
  echo "gdb rc=$?" >> "$W/logs/gdb_$name.txt"
  kill -KILL "$pid" 2> /dev/null; wait "$pid" 2> /dev/null
  echo "gdb $name done at $(elapsed) s"
}
gdb_run() {  # name: started under cuda-gdb, the program interrupted (SIGINT) after 6 s
  local name=$1 tpid gpid ipid
  [ -n "$GDB" ] && [ -x "$W/bin/$name" ] || return
  [ "$(elapsed)" -gt "$DEADLINE" ] && return
  HISTO_DOCS=32768 timeout -s KILL "$GDB_TIMEOUT" "$GDB" -batch -nx -ex 'run' "${gdb_cmds[@]}" -ex 'kill' \
    --args "$W/bin/$name" large > "$W/logs/gdbrun_$name.txt" 2>&1 &
  tpid=$!
  sleep 6
  gpid=$(pgrep -P "$tpid" | head -1)                      # timeout -> cuda-gdb -> the program
  ipid=$( [ -n "$gpid" ] && pgrep -P "$gpid" | head -1)
  [ -n "$ipid" ] && kill -INT "$ipid"
  wait "$tpid"
  echo "gdb rc=$? (inferior pid ${ipid:-none})" >> "$W/logs/gdbrun_$name.txt"
}
if [ "$DRY_RUN" != 1 ]; then
  gdb_attach gen_t256
  grep -q 'Parent' "$W/logs/gdb_gen_t256.txt" 2> /dev/null || gdb_attach hw_t256
fi

# 4. one piece taken away at a time (hand-written, threshold 256, 32,768 documents)
for v in hw_noerr hw_serialnop hw_launchnop hw_noinline hw_syncwarp hw_faf hw_seq hw_G hw_O0 hw_ptx; do
  run_one "$v" large "$D32"
done
# 5. bfs@large and histo@large, coarsening 1/2/4, three interleaved rounds (each line: the median of 5 runs)
for r in 1 2 3; do for ex in bfs histo; do for c in 1 2 4; do
  run_one "${ex}_tca_grid_t32_c$c" large "ROUND=$r" 20
done; done; done
# the pending-launch limit: the device runtime's default (2048), 4096, 1 M
for p in 0 4096 1048576; do run_one hw_t256 large "$D32 PENDING=$p"; done
# the xl input, the first (warm-up) launch alone, and the same build again (deterministic?)
run_one hw_t256 xl "$D32"
run_one hw_t256 large "$D32 RUNS=0"
run_one gen_t256 large "$D32"
for v in hw_syncwarp hw_noinline hw_faf hw_seq; do run_one "$v" xl "$D32"; done
if [ "$DRY_RUN" != 1 ] && ! grep -q 'Parent' "$W/logs/gdb_gen_t256.txt" "$W/logs/gdb_hw_t256.txt" 2> /dev/null; then
  gdb_run gen_t256
fi
echo "done at $(elapsed) s" | tee -a "$W/env.txt"
tar -czf "$OUT/hang_diag.tar.gz" -C "$OUT" --exclude=hang_diag/bin hang_diag
ls -la "$OUT/hang_diag.tar.gz"
