#!/usr/bin/env bash
# Runs docs/cli.md's PyTorch-extension and Triton examples of `warpwise profile` on the GPU box (issue 12
# item 4: never run before). The extension and the Triton kernel are written here (bench/python/ext,
# bench/python/triton). Each step is independent: its stdout/stderr/exit code land in the tarball and the
# next step still runs. Everything goes into ONE $OUT/python.tar.gz (reports, the cubins warpwise saved,
# the cubins of the extension and of Triton's cache, logs); `warpwise advise` is then run off the box.
#
#   usage: OUT=/tmp/out bench/python/gpu_python.sh        (from the repo root; < 8 min on the H200)
#   env:   WARPWISE=warpwise PYTHON=python3 NCU=ncu DRY_RUN=1 (print the commands only)
#   WARPWISE must work from any folder (the steps run in the build folders): absolute paths only.
set -uo pipefail
OUT=${OUT:?set OUT to the output folder}
WARPWISE=${WARPWISE:-warpwise}
PY=${PYTHON:-python3}
NCU=${NCU:-ncu}
here=$(cd "$(dirname "$0")" && pwd)
work="$OUT/python"
mkdir -p "$work"

step() {  # step NAME DIR TIMEOUT CMD... : run CMD in DIR; NAME.out / NAME.err / NAME.rc
  local name=$1 dir=$2 limit=$3; shift 3
  if [ -n "${DRY_RUN:-}" ]; then echo "(cd $dir && $*)"; return 0; fi
  if [ "$SECONDS" -gt 400 ]; then echo "skipped: past 400 s" > "$work/$name.rc"; return 0; fi  # < 8 min in all
  local t0=$SECONDS
  (cd "$dir" && timeout -k 10 "$limit" "$@") > "$work/$name.out" 2> "$work/$name.err"
  echo "$? $((SECONDS - t0))s" > "$work/$name.rc"
}

# What the box has
step env.python "$work" 60 "$PY" -c 'import sys, torch; print(sys.version); print("torch", torch.__version__,
    "cuda", torch.version.cuda, "available", torch.cuda.is_available(),
    torch.cuda.get_device_name(0) if torch.cuda.is_available() else "-")'
step env.triton "$work" 60 "$PY" -c 'import triton; print("triton", triton.__version__)'
step env.setuptools "$work" 60 "$PY" -c 'import setuptools; print("setuptools", setuptools.__version__)'
step env.ninja "$work" 30 ninja --version
step env.nvcc "$work" 30 nvcc --version
step env.ncu "$work" 30 "$NCU" --version
step env.cuobjdump "$work" 30 cuobjdump --version

# PyTorch extension, built three ways side by side: (A) as docs/cli.md said (NVCC_FLAGS=-lineinfo), (B) with
# nvcc's own environment variable (NVCC_APPEND_FLAGS=-lineinfo), (C) with -lineinfo in setup.py's
# extra_compile_args; the cubins of each are extracted to see which carries line info (.debug_line).
for v in A B C; do
  [ -n "${DRY_RUN:-}" ] || { rm -rf "$work/ext$v"; cp -r "$here/ext" "$work/ext$v"; }
done
if [ -n "${DRY_RUN:-}" ]; then
  echo "build A: TORCH_CUDA_ARCH_LIST=9.0 NVCC_FLAGS=-lineinfo $PY setup.py build_ext --inplace"
  echo "build B: TORCH_CUDA_ARCH_LIST=9.0 NVCC_APPEND_FLAGS=-lineinfo $PY setup.py build_ext --inplace"
  echo "build C: TORCH_CUDA_ARCH_LIST=9.0 WARPWISE_EXT_LINEINFO=1 $PY setup.py build_ext --inplace"
else
  (TORCH_CUDA_ARCH_LIST=9.0 NVCC_FLAGS=-lineinfo MAX_JOBS=8 step build.A "$work/extA" 180 \
      "$PY" setup.py build_ext --inplace) &
  (TORCH_CUDA_ARCH_LIST=9.0 NVCC_APPEND_FLAGS=-lineinfo MAX_JOBS=8 step build.B "$work/extB" 180 \
      "$PY" setup.py build_ext --inplace) &
  (TORCH_CUDA_ARCH_LIST=9.0 WARPWISE_EXT_LINEINFO=1 MAX_JOBS=8 step build.C "$work/extC" 180 \
      "$PY" setup.py build_ext --inplace) &
  wait
fi
for v in A B C; do
  d="$work/ext$v"
  step "cubins.$v" "$d" 60 bash -c 'mkdir -p cubins && cd cubins && cuobjdump -xelf all ../my_ext*.so &&
      for f in *.cubin; do echo "== $f"; cuobjdump -elf "$f" | grep -E -o "\.(nv_debug_line_sass|debug_line)\b" |
      sort | uniq -c; done'
done
# the docs' command, in the first build whose cubins carry line info (B, C, A; else B)
ext=B
if [ -z "${DRY_RUN:-}" ]; then
  for v in A C B; do grep -q debug_line "$work/cubins.$v.out" 2>/dev/null && ext=$v; done
fi
step profile.ext "$work/ext$ext" 90 bash -c "$WARPWISE profile -o ext.ncu-rep -k regex:my_ext_ -c 3 \
    --binary my_ext*.so -- $PY bench.py"
step ls.ext "$work/ext$ext" 30 ls -l

# Triton: (1) the docs' command, (2) warpwise's own --nvtx-include and cubin saving (no --no-cubins)
[ -n "${DRY_RUN:-}" ] || { rm -rf "$work/tri"; cp -r "$here/triton" "$work/tri"; }
step profile.tri1 "$work/tri" 90 env TRITON_CACHE_DIR="$work/tri/triton-cache" $WARPWISE profile -o tri.ncu-rep \
    -k regex:_fused_ --no-cubins --ncu-args --nvtx --nvtx-include "forward/" -- "$PY" train_step.py
step profile.tri2 "$work/tri" 90 env TRITON_CACHE_DIR="$work/tri/triton-cache2" $WARPWISE profile -o tri2.ncu-rep \
    -k regex:_fused_ --nvtx-include "forward/" -- "$PY" train_step.py
step ls.tri "$work/tri" 30 bash -c 'ls -lR'
[ -n "${DRY_RUN:-}" ] && exit 0

# keep reports, cubins, sources and logs; drop build trees and Triton's other cache files
keep="$OUT/python-keep"
mkdir -p "$keep"
cp "$work"/*.out "$work"/*.err "$work"/*.rc "$keep"/ 2>/dev/null
for v in A B C; do
  mkdir -p "$keep/ext$v"
  cp "$work/ext$v"/*.ncu-rep "$work/ext$v"/*.cubin "$keep/ext$v"/ 2>/dev/null
  cp -r "$work/ext$v/cubins" "$keep/ext$v/" 2>/dev/null
done
mkdir -p "$keep/tri"
cp "$work/tri"/*.ncu-rep "$work/tri"/*.cubin "$keep/tri"/ 2>/dev/null
(cd "$work/tri" && find triton-cache triton-cache2 -name '*.cubin' -o -name '*.json' 2>/dev/null |
    tar -cf - -T - 2>/dev/null) | tar -xf - -C "$keep/tri" 2>/dev/null
rm -rf "$work" && mv "$keep" "$work"
tar -czf "$OUT/python.tar.gz" -C "$OUT" python && rm -rf "$work"
ls -l "$OUT"
