#!/usr/bin/env bash
# Optional, for the H200 box (no GPU work, only its Python packages): copies a few sm_90 cubins that
# a CUDA 12 toolkit built (from PyTorch's / CuPy's libraries) to $OUT, so that load_cubin can be checked
# on the pre-CUDA-13 e_flags layout (SM in bits 0..7, ELF ABI 7). Finishes in well under a minute.
#   usage: OUT=/some/dir tests/binary/collect_cuda12_cubin.sh
set -uo pipefail
OUT=${OUT:?set OUT}
CUOBJDUMP=${CUOBJDUMP:-$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)}
libs=$(python3 - <<'PY'
import importlib.util, pathlib
for mod in ("torch", "cupy", "triton"):
    spec = importlib.util.find_spec(mod)
    if spec and spec.origin:
        root = pathlib.Path(spec.origin).parent
        for p in sorted(root.rglob("*.so*"), key=lambda p: p.stat().st_size):
            print(p)
PY
)
n=0
for lib in $libs; do
  names=$("$CUOBJDUMP" -lelf "$lib" 2>/dev/null | awk '/sm_90\.cubin|sm_80\.cubin/ {print $NF}' | head -2)
  [ -n "$names" ] || continue
  for name in $names; do
    (cd "$OUT" && timeout 60 "$CUOBJDUMP" -xelf "$name" "$lib" >/dev/null 2>&1)
  done
  echo "$lib: $names"
  n=$((n + 1))
  [ $n -ge 3 ] && break
done
echo "== cubins in $OUT"
for f in "$OUT"/*.cubin; do
  [ -f "$f" ] || continue
  python3 -c "
import struct,sys
b=open(sys.argv[1],'rb').read(64)
print(sys.argv[1].rsplit('/',1)[-1], 'e_flags=%#x' % struct.unpack_from('<I',b,0x30)[0], 'abi=%d' % b[8], 'osabi=%d' % b[7])
" "$f"
done
