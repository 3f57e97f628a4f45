#!/usr/bin/env bash
# CSV exports of the committed example reports, for the CSV reader's tests (issue 12 item 1), plus one
# live `ncu --csv` run (whose stdout carries ==PROF== lines before the header) and a check of
# `warpwise profile`'s pass-through options. Runs on the GPU box (ncu 2025.3.1; --import needs no GPU,
# the live runs do). Everything goes into ONE $OUT/csv.tar.gz. Each export is independent: a failing
# one leaves its stderr and exit code in the tarball and the rest still run.
#
#   usage: OUT=/tmp/out bench/csv/gpu_export.sh          (from the repo root)
#   env:   NCU=ncu NVCC=nvcc WARPWISE=warpwise DRY_RUN=1 (print the commands only)
set -uo pipefail
OUT=${OUT:?set OUT to the output folder}
NCU=${NCU:-ncu}
NVCC=${NVCC:-nvcc}
WARPWISE=${WARPWISE:-warpwise}
work="$OUT/csv"
mkdir -p "$work"
examples=(stencil gather intdiv noinline cdp)

run() {  # run NAME CMD... : stdout -> NAME, stderr -> NAME.err, exit code -> NAME.rc
  local name=$1; shift
  if [ -n "${DRY_RUN:-}" ]; then echo "$* > $name"; return 0; fi
  timeout 120 "$@" > "$work/$name" 2> "$work/$name.err"
  echo $? > "$work/$name.rc"
}

{ $NCU --version; echo; $NCU --help; } > "$work/ncu-help.txt" 2>&1 || true

for ex in "${examples[@]}"; do
  rep="examples/$ex/$ex.ncu-rep"
  run "$ex.raw.csv"            $NCU --import "$rep" --page raw --csv
  run "$ex.raw.base.csv"       $NCU --import "$rep" --page raw --csv --print-units base
  run "$ex.raw.instances.csv"  $NCU --import "$rep" --page raw --csv --print-metric-instances values
  run "$ex.raw.names.csv"      $NCU --import "$rep" --page raw --csv --print-metric-name name
  run "$ex.details.base.csv"   $NCU --import "$rep" --page details --csv --print-units base
  run "$ex.details.names.csv"  $NCU --import "$rep" --page details --csv --print-metric-name name
  run "$ex.source.sass.csv"    $NCU --import "$rep" --page source --print-source sass --csv
  run "$ex.source.cuda.csv"    $NCU --import "$rep" --page source --print-source cuda --csv
  run "$ex.source.cuda_sass.csv" $NCU --import "$rep" --page source --print-source cuda,sass --csv
  run "$ex.source.sass.base.csv" $NCU --import "$rep" --page source --print-source sass --csv --print-units base
  run "$ex.source.sass.mangled.csv" $NCU --import "$rep" --page source --print-source sass --csv \
      --print-kernel-base mangled
  run "$ex.details.mangled.csv" $NCU --import "$rep" --page details --csv --print-kernel-base mangled
  run "$ex.raw.mangled.csv"     $NCU --import "$rep" --page raw --csv --print-kernel-base mangled
done

# Live exports: ncu writes ==PROF== progress lines to stdout before the CSV header.
if [ -z "${DRY_RUN:-}" ]; then
  bin="$work/bin"; mkdir -p "$bin"
  $NVCC -lineinfo -O3 -arch=sm_90 -o "$bin/stencil" examples/stencil/stencil.cu > "$work/nvcc.log" 2>&1
fi
run "live.stencil.source.csv" $NCU --clock-control none --section SourceCounters --import-source yes \
    -k blur_rows -c 1 --csv --page source --print-source sass "$work/bin/stencil"
run "live.stencil.details.csv" $NCU --clock-control none --section LaunchStats --section Occupancy \
    -k blur_rows -c 1 --csv --page details "$work/bin/stencil"

# warpwise profile with ncu's own options (kernel filter, launch count, short-kernel sampling interval)
run "wp.profile.log" $WARPWISE profile -o "$work/wp/stencil.ncu-rep" -k blur_rows -c 1 --short-kernels \
    -- "$work/bin/stencil"
run "wp.profile.ncu_args.log" $WARPWISE profile -o "$work/wp2/stencil.ncu-rep" --ncu-args --launch-count 1 \
    --kernel-name regex:blur -- "$work/bin/stencil"
[ -z "${DRY_RUN:-}" ] && ls -l "$work"/wp* > "$work/wp.ls.txt" 2>&1
rm -rf "$work/bin"
[ -n "${DRY_RUN:-}" ] && exit 0
tar -czf "$OUT/csv.tar.gz" -C "$OUT" csv && rm -rf "$work"
ls -l "$OUT"
