#!/usr/bin/env bash
# Ground truth of the advice-accuracy benchmark (bench/advice/README.md), on an H200 box:
#  1. builds every pair's orig.cu (and fix.cu) with -lineinfo -O3 -arch=$ARCH plus its pair.json flags, in
#     parallel, into a temporary folder;
#  2. profiles orig with `warpwise profile` (Nsight Compute with warpwise's sections, clocks not locked),
#     which writes bench/advice/pairs/<name>/orig.ncu-rep and orig.<arch>.cubin beside it; the report is then
#     xz-compressed to orig.ncu-rep.xz (bench/advice/reports.py: the committed form, a tenth of the size;
#     accuracy.py and the tests read either form);
#  3. times orig and fix side by side: ROUNDS rounds, each running every program (orig then fix) under one
#     `ncu --clock-control none --metrics gpu__time_duration.sum --csv -k regex:^(<kernels>)` session; every
#     run must print PASS (the programs check their own results, so each round is also a correctness run);
#  4. writes bench/advice/timings_h200.json (merged with the entries of pairs not run now),
#     bench/advice/VERSIONS.txt and bench/advice/logs/, and packs them with the reports and cubins into
#     $OUT/advbench.tar.gz (paths relative to the repository root: `tar xzf` there).
#
#   usage: bash bench/advice/gpu_collect.sh [pair ...]          (default: every pair)
#   env:   OUT=dir  WARPWISE='python3 -m warpwise.server.cli'  ROUNDS=3  ARCH=sm_90  NVCC=nvcc  NCU=ncu  JOBS=nproc
#          DRY=1: build everything with the local nvcc and skip every GPU step (no GPU needed)
#          BUDGET_S=420: no new profile or timing round starts once it would end past this (s since start);
#                  what was measured is still summarized and packed
#          SET=dir: another set of pairs laid out like bench/advice (dir/pairs/<name>/, dir/timings_h200.json)
#          PROFILE=0: keep the committed reports (time only)
#          BUILD_DIR=dir: build there and keep the binaries (default: a temporary folder, removed at exit)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
ARCH=${ARCH:-sm_90}
NVCC=${NVCC:-nvcc}
NCU=${NCU:-ncu}
ROUNDS=${ROUNDS:-3}
DRY=${DRY:-0}
JOBS=${JOBS:-$(nproc)}
BUDGET_S=${BUDGET_S:-420}  # stop starting GPU steps after this many seconds, so the results are always packed
read -r -a WW <<< "${WARPWISE:-warpwise}"
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
here=bench/advice
set=${SET:-$here}  # the benchmark set: $set/pairs/<name>/, $set/timings_h200.json, $set/VERSIONS.txt, $set/logs/
logs=$set/logs/$(date -u +%Y%m%dT%H%MZ)  # one folder per run: a subset re-run keeps the earlier logs
mkdir -p "$logs"
if [ -n "${BUILD_DIR:-}" ]; then  # keep the binaries (e.g. to read their SASS after a DRY run)
  build=$BUILD_DIR; mkdir -p "$build"
else
  build=$(mktemp -d); trap 'rm -rf "$build"' EXIT
fi
t0=$(date +%s)

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for d in "$set"/pairs/*/; do [ -f "$d/pair.json" ] && names+=("$(basename "$d")"); done
fi

declare -A kernel kind
# one build job per program: "name variant flags..."
jobs_file=$build/jobs.txt
: > "$jobs_file"
for n in "${names[@]}"; do
  [ -f "$set/pairs/$n/pair.json" ] || { echo "no pair $n ($set/pairs/$n/pair.json missing)" >&2; exit 2; }
  mapfile -t meta < <(python3 "$here/ncu_times.py" meta "$set/pairs/$n")
  kernel[$n]=${meta[0]}
  kind[$n]=${meta[1]}
  mkdir -p "$build/$n"
  echo "$n orig${meta[2]:+ ${meta[2]}}" >> "$jobs_file"  # no trailing blank: xargs -L would join lines
  [ -f "$set/pairs/$n/fix.cu" ] && echo "$n fix${meta[3]:+ ${meta[3]}}" >> "$jobs_file"
done

echo "== build ${#names[@]} programs ($JOBS in parallel)"
export NVCC ARCH build here set
# shellcheck disable=SC2016
xargs -P "$JOBS" -L 1 bash -c '
  n=$0 v=$1; shift  # bash -c: $0 is the pair, $1 the variant, the rest its nvcc flags
  if "$NVCC" -lineinfo -O3 -arch="$ARCH" -I "$here/pairs" "$@" -o "$build/$n/$v" "$set/pairs/$n/$v.cu" > "$build/$n/$v.build.txt" 2>&1; then
    [ -s "$build/$n/$v.build.txt" ] && { echo "WARN $n/$v: compiler output:"; cat "$build/$n/$v.build.txt"; }
    echo "built $n/$v"
  else
    echo "BUILD FAILED $n/$v"; cat "$build/$n/$v.build.txt"
  fi' < "$jobs_file" | tee "$logs/build.txt"

ok=()
for n in "${names[@]}"; do
  if [ -x "$build/$n/orig" ] && { [ ! -f "$set/pairs/$n/fix.cu" ] || [ -x "$build/$n/fix" ]; }; then ok+=("$n"); fi
done
echo "== built: ${#ok[@]} of ${#names[@]}"

if [ "$DRY" = 1 ]; then
  for n in "${ok[@]}"; do
    echo "DRY $n: ${WW[*]} profile -o $set/pairs/$n/orig.ncu-rep -- $build/$n/orig; python3 $here/reports.py compress $set/pairs/$n/orig.ncu-rep"
    echo "DRY $n: $NCU --clock-control none --metrics gpu__time_duration.sum --csv -k regex:^${kernel[$n]} <bin> x $ROUNDS rounds"
  done
  [ ${#ok[@]} -eq ${#names[@]} ] && echo "DRY run: every program built" || { echo "DRY run: build failures" >&2; exit 1; }
  exit 0
fi

elapsed() { echo $(( $(date +%s) - t0 )); }
echo "== profile (warpwise profile)"
for n in "${ok[@]}"; do
  if [ "${PROFILE:-1}" = 0 ]; then echo "kept the committed profile of $n (PROFILE=0)"; continue; fi
  if [ "$(elapsed)" -gt $((BUDGET_S / 2)) ]; then echo "SKIPPED profile of $n: half of BUDGET_S=$BUDGET_S s spent"; continue; fi
  rm -f "$set/pairs/$n"/orig.ncu-rep "$set/pairs/$n"/orig.ncu-rep.xz "$set/pairs/$n"/orig.*.cubin
  s=$SECONDS
  if timeout 180 "${WW[@]}" profile -o "$set/pairs/$n/orig.ncu-rep" -- "$build/$n/orig" > "$logs/$n.profile.txt" 2>&1; then
    printf 'profiled %-22s %4d s\n' "$n" $((SECONDS - s))
    python3 "$here/reports.py" compress "$set/pairs/$n/orig.ncu-rep" >> "$logs/$n.profile.txt" 2>&1 \
      || echo "COMPRESS FAILED $n: the plain orig.ncu-rep is packed instead"
  else
    echo "PROFILE FAILED $n (see $logs/$n.profile.txt)"; tail -5 "$logs/$n.profile.txt"
  fi
done

echo "== time ($ROUNDS rounds, orig then fix)"
# One ncu session per round runs every program in turn (one ncu start-up per round instead of one per
# program). Each program runs as `bash -c 'echo ... $$; exec prog'`, so the PID written to pids.r<round>.txt
# is the PID ncu reports for that program's kernels.
kernels=()
for n in "${ok[@]}"; do kernels+=("${kernel[$n]}"); done
regex="regex:^($(IFS='|'; echo "${kernels[*]}"))"
for n in "${ok[@]}"; do rm -f "$logs/$n".*.r*.out; done
done_rounds=0 round_s=0
for r in $(seq 1 "$ROUNDS"); do
  if [ $(( $(elapsed) + round_s )) -gt "$BUDGET_S" ]; then
    echo "STOPPED after $done_rounds rounds: another round (~$round_s s) would pass BUDGET_S=$BUDGET_S s"; break
  fi
  rs=$(date +%s)
  runner=$build/round$r.sh
  : > "$logs/pids.r$r.txt"
  {
    echo "cd '$root'"
    for n in "${ok[@]}"; do
      variants=(orig); [ -f "$set/pairs/$n/fix.cu" ] && variants+=(fix)
      for v in "${variants[@]}"; do
        echo "timeout 60 bash -c 'echo \"\$0 \$1 \$\$\" >> \"\$2\"; exec \"\$3\"' $n $v '$logs/pids.r$r.txt' '$build/$n/$v' > '$logs/$n.$v.r$r.out' 2>&1 || echo \"$n/$v exit \$?\""
      done
    done
  } > "$runner"
  timeout $(( BUDGET_S + 60 - $(elapsed) )) "$NCU" --clock-control none --target-processes all --metrics gpu__time_duration.sum --csv -k "$regex" \
    bash "$runner" > "$logs/timing.r$r.csv" 2> "$logs/timing.r$r.err" || echo "ncu round $r exit $?"
  for n in "${ok[@]}"; do
    variants=(orig); [ -f "$set/pairs/$n/fix.cu" ] && variants+=(fix)
    for v in "${variants[@]}"; do
      grep -q ": PASS" "$logs/$n.$v.r$r.out" || { echo "NO PASS $n/$v round $r:"; tail -3 "$logs/$n.$v.r$r.out"; }
    done
  done
  done_rounds=$r round_s=$(( $(date +%s) - rs ))
  echo "round $r done in $round_s s ($(elapsed) s since start)"
done

# a subset run adds its section to VERSIONS.txt; a full run starts it afresh
[ $# -gt 0 ] && [ -f "$set/VERSIONS.txt" ] && { cat "$set/VERSIONS.txt"; echo "---"; } > "$build/versions.prev"
{
  [ -f "$build/versions.prev" ] && cat "$build/versions.prev"
  echo "collected: $(date -u +%Y-%m-%dT%H:%MZ) (logs: $logs)"
  echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader 2>/dev/null || echo unknown)"
  echo "nvcc: $("$NVCC" --version | tail -1)"
  echo "ncu: $("$NCU" --version | tail -1)"
  echo "build: -lineinfo -O3 -arch=$ARCH plus each pair.json's nvcc_flags (fix: plus fix_nvcc_flags)"
  echo "profile: ${WW[*]} profile (ncu --clock-control none --import-source yes, warpwise's sections, default PC sampling interval)"
  echo "timing: ncu --clock-control none --target-processes all --metrics gpu__time_duration.sum --csv -k '$regex', one session per round over every program, $done_rounds of $ROUNDS rounds, orig then fix"
  echo "pairs run: ${ok[*]}"
} > "$set/VERSIONS.txt"
nvidia-smi > "$logs/nvidia-smi.txt" 2>&1 || true

echo "== summary"
python3 "$here/ncu_times.py" summarize "$logs" "$set/timings_h200.json" "$done_rounds" "${ok[@]}" | tee "$logs/summary.txt" || true

files=("$set/timings_h200.json" "$set/VERSIONS.txt" "$logs")
for n in "${ok[@]}"; do
  for f in "$set/pairs/$n"/orig.ncu-rep.xz "$set/pairs/$n"/orig.ncu-rep "$set/pairs/$n"/orig.*.cubin; do
    [ -f "$f" ] && files+=("$f")
  done
done
tarball=$OUT/$([ "$set" = "$here" ] && echo advbench || basename "$set").tar.gz
tar czf "$tarball" "${files[@]}"
echo "== wrote $tarball ($(du -h "$tarball" | cut -f1)) in $(( $(date +%s) - t0 )) s"
