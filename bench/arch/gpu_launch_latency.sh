#!/usr/bin/env bash
# Launch floor by grid shape and DRAM latency under load on this GPU (analysis/arch: the launch-shape
# estimates): builds bench/arch/launch_latency.cu and runs it under Nsight Compute (clocks not locked, as
# warpwise profiles), reading each launch's duration, DRAM bytes read and DRAM throughput % of peak.
# Writes $OUT/launch_latency.csv (ncu), $OUT/launch_latency.launches.txt (what each launch was) and
# $OUT/launch_latency.txt (GPU, driver, tool versions).  usage: OUT=dir bash bench/arch/gpu_launch_latency.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$(mktemp -d)}
NVCC=${NVCC:-nvcc}
NCU=${NCU:-ncu}
mkdir -p "$OUT"
build=$(mktemp -d); trap 'rm -rf "$build"' EXIT
"$NVCC" -O3 -arch="${ARCH:-sm_90}" -o "$build/launch_latency" "$root/bench/arch/launch_latency.cu"
if [ -n "${DRY:-}" ]; then echo "built $build/launch_latency (dry run)"; exit 0; fi
timeout 300 "$NCU" --clock-control none --csv \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed \
  "$build/launch_latency" > "$OUT/launch_latency.raw"
grep -v '^==PROF==' "$OUT/launch_latency.raw" | grep '^"' > "$OUT/launch_latency.csv" || true
grep -E '^[0-9]+ ' "$OUT/launch_latency.raw" > "$OUT/launch_latency.launches.txt" || true
{
  echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader)"
  echo "nvcc: $("$NVCC" --version | tail -1)"
  echo "ncu: $("$NCU" --version | tail -1)"
  echo "collected: $(date -u +%Y-%m-%dT%H:%MZ)"
} > "$OUT/launch_latency.txt"
echo "wrote $OUT/launch_latency.csv"
