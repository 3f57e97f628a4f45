#!/usr/bin/env bash
# Regenerates the examples' fixtures on a GPU box: builds each example with -lineinfo -O3 for the GPU's
# architecture, runs it once (it checks its own result), profiles it with `warpwise profile` (Nsight
# Compute, clocks not locked, SourceCounters/LaunchStats/Occupancy/WarpStateStats/SpeedOfLight), and
# keeps <name>.ncu-rep and <name>.<arch>.cubin next to the source. Writes examples/VERSIONS.txt.
#
#   usage: examples/collect.sh [example ...]     (default: all)
#   env:   ARCH=sm_90  NVCC=nvcc  WARPWISE=warpwise
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
ARCH=${ARCH:-sm_90}
NVCC=${NVCC:-nvcc}
WARPWISE=${WARPWISE:-warpwise}
examples=("$@")
[ ${#examples[@]} -gt 0 ] || examples=(stencil gather intdiv noinline cdp)

for ex in "${examples[@]}"; do
  flags=(-lineinfo -O3 -arch="$ARCH")
  # dynamic parallelism needs relocatable device code and the device runtime
  [ "$ex" = cdp ] && flags+=(-rdc=true -lcudadevrt)
  mkdir -p "$ex/bin"
  echo "== $ex: build"
  "$NVCC" "${flags[@]}" -o "$ex/bin/$ex" "$ex/$ex.cu"
  echo "== $ex: run"
  "./$ex/bin/$ex"
  echo "== $ex: profile"
  rm -f "$ex"/*.cubin
  $WARPWISE profile -o "$ex/$ex.ncu-rep" -- "./$ex/bin/$ex"
done

{
  echo "collected: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader 2>/dev/null || echo unknown)"
  echo "nvcc: $("$NVCC" --version | tail -1)"
  echo "ncu: $(ncu --version | tail -1)"
  echo "flags: -lineinfo -O3 -arch=$ARCH (cdp: -rdc=true -lcudadevrt)"
  echo "ncu: --clock-control none --import-source yes --section SourceCounters LaunchStats Occupancy WarpStateStats SpeedOfLight"
} > VERSIONS.txt
cat VERSIONS.txt
