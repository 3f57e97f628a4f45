#!/usr/bin/env bash
# Reachable DRAM bandwidth per read/write mix on this GPU (analysis/arch/roofline.ACHIEVABLE_DRAM): builds
# bench/arch/dram_mix.cu and runs it under Nsight Compute (clocks not locked, as warpwise profiles), reading
# each launch's DRAM throughput % of peak and DRAM bytes read and written. Writes $OUT/dram_mix.csv and
# $OUT/dram_mix.txt (GPU, driver, tool versions).  usage: OUT=dir bash bench/arch/gpu_dram_mix.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$(mktemp -d)}
NVCC=${NVCC:-nvcc}
NCU=${NCU:-ncu}
mkdir -p "$OUT"
build=$(mktemp -d); trap 'rm -rf "$build"' EXIT
"$NVCC" -O3 -arch="${ARCH:-sm_90}" -o "$build/dram_mix" "$root/bench/arch/dram_mix.cu"
timeout 300 "$NCU" --clock-control none --csv \
  --metrics gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
  "$build/dram_mix" > "$OUT/dram_mix.csv"
{
  echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader)"
  echo "nvcc: $("$NVCC" --version | tail -1)"
  echo "ncu: $("$NCU" --version | tail -1)"
  echo "collected: $(date -u +%Y-%m-%dT%H:%MZ)"
} > "$OUT/dram_mix.txt"
echo "wrote $OUT/dram_mix.csv"
