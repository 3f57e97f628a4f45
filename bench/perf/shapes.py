"""Kernel shapes for the scaling benchmarks, written here (nothing fetched): each builds a cubin of about
a requested number of SASS instructions with the local nvcc/ptxas (``-arch=sm_90 -O3 -lineinfo``).

- ``generator``: the repository's straight-line generator (FMA-with-load statements, a small loop with an
  early exit every 16 statements; bench/blame_scale.py's original shape).
- ``ptx_loops``: PTX in which one register is redefined in many skippable loops (zero-trip loops with a
  runtime trip count): reaching definitions' worst case, every later block is reached by every earlier
  def of that register.
- ``gemm``: a CUTLASS-style templated tiled GEMM (shared-memory double buffer, a fully unrolled
  TM×TN×KT register-tile FFMA main loop, predicated epilogue), several tile configurations per cubin.
- ``scan``: CUB-style block reduce / scan templates (warp shuffles, shared-memory inter-warp scan,
  ITEMS-per-thread unrolled loads) instantiated for many (type, operator, block size, items) tuples.

Cubins are cached under ``$XDG_CACHE_HOME/warpwise-bench`` by source hash so repeated benchmark runs do not
recompile (compile time is not part of any measured ratio).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

SHAPES = ("generator", "ptx_loops", "gemm", "scan")


#: Statements per generator kernel: nvcc's optimizer is super-linear in one function's size (one 36k-statement
#: kernel did not build in 20 minutes, 9k statements take about a minute), so larger sizes are several kernels
#: of at most this many statements (about 50k SASS instructions) in one file; sizes up to 50k are unchanged.
GENERATOR_UNITS_PER_KERNEL = 10000


def generator_source(units: int) -> str:
    """``units`` statements of the generator shape (CUDA); kernels ``big``, ``big1``, ... of at most
    GENERATOR_UNITS_PER_KERNEL statements each."""
    parts = []
    for k, first in enumerate(range(0, units, GENERATOR_UNITS_PER_KERNEL)):
        parts.append(_generator_kernel("big" if k == 0 else f"big{k}",
                                       min(GENERATOR_UNITS_PER_KERNEL, units - first)))
    return "\n".join(parts)


def _generator_kernel(name: str, units: int) -> str:
    lines = [
        f'extern "C" __global__ void {name}(const float* __restrict__ in, float* __restrict__ out, int n, int s) {{',
        "  int t = blockIdx.x * blockDim.x + threadIdx.x;",
        "  float a0=in[t], a1=in[t+1], a2=in[t+2], a3=in[t+3], a4=0.f, a5=1.f, a6=2.f, a7=3.f;",
    ]
    for i in range(units):
        a = [f"a{(i + k) % 8}" for k in range(5)]
        if i % 16 == 15:
            lines.append("#pragma unroll 1")
            lines.append(f"  for (int q = 0; q < (s & {3 + i % 5}); ++q) {{"
                         f" {a[4]} = fmaf({a[4]}, in[(t + q + {i}) & (n-1)], {a[2]});"
                         f" if ({a[4]} > {i % 7}.5f) break; }}")
        else:
            lines.append(f"  {a[0]} = fmaf({a[1]}, in[(t + {i}*s) & (n-1)], {a[2]});")
    lines.append("  out[t] = a0+a1+a2+a3+a4+a5+a6+a7;\n}\n")
    return "\n".join(lines)


#: Loops per PTX kernel: ptxas needs > 9 GiB and many minutes for one 200k-instruction function of this
#: shape, so larger sizes are several kernels of about 50k instructions in one module.
PTX_LOOPS_PER_KERNEL = 3000


def ptx_loops_source(units: int) -> str:
    """``units`` skippable loops, each redefining the same accumulator %f1 (PTX for ptxas); kernels ``big``,
    ``big1``, ... of at most PTX_LOOPS_PER_KERNEL loops each."""
    head = """.version 8.0
.target sm_90
.address_size 64
.file 1 "ptx_loops.cu"
"""
    parts = []
    for k, first in enumerate(range(0, units, PTX_LOOPS_PER_KERNEL)):
        parts.append(_ptx_loops_kernel("big" if k == 0 else f"big{k}", min(PTX_LOOPS_PER_KERNEL, units - first)))
    return head + "\n".join(parts)


def _ptx_loops_kernel(name: str, units: int) -> str:
    out = [f""".visible .entry {name}(.param .u64 pin, .param .u64 pout, .param .u32 pn, .param .u32 ps)
{{
 .reg .pred %p<4>; .reg .b32 %r<16>; .reg .f32 %f<16>; .reg .b64 %rd<12>;
 ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout]; ld.param.u32 %r1, [pn]; ld.param.u32 %r2, [ps];
 cvta.to.global.u64 %rd3, %rd1; cvta.to.global.u64 %rd4, %rd2;
 mov.u32 %r3, %tid.x; mul.wide.u32 %rd5, %r3, 4; add.s64 %rd6, %rd3, %rd5;
 ld.global.f32 %f1, [%rd6]; ld.global.f32 %f2, [%rd6+4]; ld.global.f32 %f3, [%rd6+8];
"""]
    for k in range(units):
        # one source line per loop (a PTX module without .loc gives an empty .debug_line, which the loader
        # rejects as a corrupt line table)
        out.append(f""" .loc 1 {k + 10} 1
 and.b32 %r4, %r2, {k % 7 + 1};
 mov.u32 %r5, 0;
 setp.eq.s32 %p1, %r4, 0;
 @%p1 bra SKIP{k};
LOOP{k}:
 .pragma "nounroll";
 fma.rn.f32 %f1, %f1, %f2, %f3;
 add.s32 %r5, %r5, 1;
 setp.lt.s32 %p2, %r5, %r4;
 @%p2 bra LOOP{k};
SKIP{k}:
 add.s32 %r6, %r3, {k * 4};
 and.b32 %r6, %r6, %r1;
 mul.wide.u32 %rd7, %r6, 4;
 add.s64 %rd8, %rd3, %rd7;
 ld.global.f32 %f4, [%rd8];
 fma.rn.f32 %f2, %f2, %f4, %f3;
""")
    out.append(" add.s64 %rd9, %rd4, %rd5; st.global.f32 [%rd9], %f1; st.global.f32 [%rd9+4], %f2; ret;\n}\n")
    return "".join(out)


_GEMM = r"""
template <int TM, int TN, int KT>
struct Tile {
  static constexpr int BM = 16 * TM, BN = 16 * TN;
};

template <int TM, int TN, int KT, int V>
__global__ void __launch_bounds__(256) gemm_tiled(const float* __restrict__ A, const float* __restrict__ B,
                                                  float* __restrict__ C, int M, int N, int K, float alpha) {
  constexpr int BM = Tile<TM, TN, KT>::BM, BN = Tile<TM, TN, KT>::BN;
  __shared__ float As[2][KT][BM];  // double buffer: 8 * KT * (BM + BN) bytes <= 48 KiB
  __shared__ float Bs[2][KT][BN];
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;
  int stage = 0;
  for (int k0 = 0; k0 < K; k0 += KT) {
#pragma unroll
    for (int q = threadIdx.x; q < KT * BM; q += 256) {
      int kk = q / BM, mm = q % BM;
      As[stage][kk][mm] = (row0 + mm < M && k0 + kk < K) ? A[(row0 + mm) * K + k0 + kk] : 0.f;
    }
#pragma unroll
    for (int q = threadIdx.x; q < KT * BN; q += 256) {
      int kk = q / BN, nn = q % BN;
      Bs[stage][kk][nn] = (col0 + nn < N && k0 + kk < K) ? B[(k0 + kk) * N + col0 + nn] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < KT; ++kk) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[stage][kk][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[stage][kk][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    stage ^= 1;
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      int r = row0 + ty + 16 * i, c = col0 + tx + 16 * j;
      if (r < M && c < N) C[r * N + c] = alpha * acc[i][j] + (K > 4096 ? C[r * N + c] * V : 0.f);
    }
}
"""

_SCAN = r"""
template <typename T> struct Sum { __device__ T operator()(T a, T b) const { return a + b; } };
template <typename T> struct Max { __device__ T operator()(T a, T b) const { return a > b ? a : b; } };
template <typename T> struct Min { __device__ T operator()(T a, T b) const { return a < b ? a : b; } };

template <typename T, typename Op>
__device__ __forceinline__ T warp_inclusive_scan(T v, Op op) {
  int lane = threadIdx.x & 31;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    T n = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v = op(v, n);
  }
  return v;
}

template <typename T, typename Op, int BLOCK>
__device__ __forceinline__ T block_exclusive_scan(T v, Op op, T identity, T* warp_tot) {
  T inc = warp_inclusive_scan(v, op);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 31) warp_tot[warp] = inc;
  __syncthreads();
  if (warp == 0) {
    T w = lane < BLOCK / 32 ? warp_tot[lane] : identity;
    w = warp_inclusive_scan(w, op);
    if (lane < BLOCK / 32) warp_tot[lane] = w;
  }
  __syncthreads();
  T prefix = warp > 0 ? warp_tot[warp - 1] : identity;
  T exc = __shfl_up_sync(0xffffffffu, inc, 1);
  exc = lane == 0 ? identity : exc;
  return op(prefix, exc);
}

template <typename T, typename Op, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK) block_scan(const T* __restrict__ in, T* __restrict__ out, int n,
                                                    T identity) {
  __shared__ T warp_tot[BLOCK / 32];
  Op op;
  T items[ITEMS];
  int base = (blockIdx.x * BLOCK + threadIdx.x) * ITEMS;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) items[i] = base + i < n ? in[base + i] : identity;
  T run = identity;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) run = op(run, items[i]);
  T pre = block_exclusive_scan<T, Op, BLOCK>(run, op, identity, warp_tot);
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    pre = op(pre, items[i]);
    if (base + i < n) out[base + i] = pre;
  }
}

template <typename T, typename Op, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK) block_reduce(const T* __restrict__ in, T* __restrict__ out, int n,
                                                      T identity) {
  __shared__ T warp_tot[BLOCK / 32];
  Op op;
  T run = identity;
  for (int base = (blockIdx.x * BLOCK + threadIdx.x) * ITEMS; base < n; base += gridDim.x * BLOCK * ITEMS) {
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) run = op(run, base + i < n ? in[base + i] : identity);
  }
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) run = op(run, __shfl_down_sync(0xffffffffu, run, d));
  if ((threadIdx.x & 31) == 0) warp_tot[threadIdx.x >> 5] = run;
  __syncthreads();
  if (threadIdx.x < 32) {
    run = threadIdx.x < BLOCK / 32 ? warp_tot[threadIdx.x] : identity;
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) run = op(run, __shfl_down_sync(0xffffffffu, run, d));
    if (threadIdx.x == 0) out[blockIdx.x] = run;
  }
}
"""

# (TM, TN, KT) tile configurations, each about 2.4k..10k SASS instructions
_GEMM_CONFIGS = [(4, 4, 16), (8, 4, 16), (4, 8, 16), (8, 8, 8), (8, 8, 16), (4, 4, 32), (8, 4, 8), (4, 8, 12),
                 (8, 8, 12), (4, 4, 40), (6, 6, 16), (2, 8, 32), (8, 2, 32), (6, 4, 24), (4, 6, 24), (8, 6, 12)]
_SCAN_TYPES = ("float", "int", "unsigned", "double", "long long")
_SCAN_OPS = ("Sum", "Max", "Min")
_SCAN_SIZES = ((128, 4), (256, 8), (512, 4), (256, 16), (128, 12), (1024, 2), (256, 24), (64, 32))


def gemm_source(units: int) -> str:
    """``units`` instantiations of the tiled GEMM (cycling through tile configurations, repeated with a
    different epilogue scale when more are asked for than configurations exist)."""
    out = [_GEMM]
    for u in range(units):
        tm, tn, kt = _GEMM_CONFIGS[u % len(_GEMM_CONFIGS)]
        v = 1 + u // len(_GEMM_CONFIGS)
        out.append(f"template __global__ void gemm_tiled<{tm}, {tn}, {kt}, {v}>(const float*, const float*, float*, "
                   "int, int, int, float);")
    return "\n".join(out) + "\n"


def scan_source(units: int) -> str:
    """``units`` block scan/reduce instantiations over (type, operator, block size, items per thread)."""
    out = [_SCAN]
    combos = [(k, t, o, b, i) for (b, i) in _SCAN_SIZES for t in _SCAN_TYPES for o in _SCAN_OPS
              for k in ("block_scan", "block_reduce")]
    for u in range(units):
        k, t, o, b, i = combos[u % len(combos)]
        if u >= len(combos):
            i += u // len(combos)
        out.append(f"template __global__ void {k}<{t}, {o}<{t}>, {b}, {i}>(const {t}*, {t}*, int, {t});")
    return "\n".join(out) + "\n"


SOURCES: dict[str, tuple[str, Callable[[int], str]]] = {
    "generator": (".cu", generator_source),
    "ptx_loops": (".ptx", ptx_loops_source),
    "gemm": (".cu", gemm_source),
    "scan": (".cu", scan_source),
}
#: first guess of SASS instructions per unit (nvcc 13.0, sm_90); each build is then rescaled once
PER_UNIT = {"generator": 5.6, "ptx_loops": 17.0, "gemm": 1680.0, "scan": 255.0}


def cache_dir() -> Path:
    """Where built benchmark cubins are kept (not committed; safe to delete)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    d = Path(base, "warpwise-bench")
    d.mkdir(parents=True, exist_ok=True)
    return d


def compile_source(kind: str, text: str, nvcc: str | None = None, timeout_s: float = 3600) -> Path:
    """Build ``text`` (``.cu`` or ``.ptx``) into a cached sm_90 cubin; returns its path.

    Raises subprocess.CalledProcessError / TimeoutExpired when the compiler fails or takes longer than
    ``timeout_s`` (the generator's 200k cubin, four 50k-instruction kernels, took 26 minutes wall on the
    loaded 2-core machine)."""
    suffix = SOURCES[kind][0]
    h = hashlib.sha1(text.encode()).hexdigest()[:16]
    out = cache_dir() / f"{kind}-{h}.cubin"
    if out.is_file():
        return out
    src = cache_dir() / f"{kind}-{h}{suffix}"
    src.write_text(text)
    tmp = out.with_suffix(".tmp")
    if suffix == ".ptx":
        ptxas = shutil.which("ptxas") or str(Path(nvcc or shutil.which("nvcc") or "nvcc").with_name("ptxas"))
        cmd = [ptxas, "-arch=sm_90", "-O3", "-lineinfo", "-o", str(tmp), str(src)]
    else:
        cmd = [nvcc or shutil.which("nvcc") or "nvcc", "-cubin", "-arch=sm_90", "-O3", "-lineinfo", "-o", str(tmp),
               str(src)]
    # own process group, killed whole on timeout: nvcc's ptxas child outlives a killed nvcc otherwise
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, err = p.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise
    if p.returncode != 0:
        raise subprocess.CalledProcessError(p.returncode, cmd, stderr=err)
    os.replace(tmp, out)
    return out


def count_instructions(cubin: Path) -> int:
    """SASS instructions of all functions in ``cubin`` (from the ELF section sizes: 16 bytes each)."""
    from elftools.elf.elffile import ELFFile

    with cubin.open("rb") as fh:
        elf = ELFFile(fh)
        return sum(s["sh_size"] // 16 for s in elf.iter_sections() if s.name.startswith(".text."))


def build(kind: str, size: int, nvcc: str | None = None) -> tuple[Path, int]:
    """A cubin of shape ``kind`` with about ``size`` SASS instructions: (path, instructions)."""
    make = SOURCES[kind][1]
    units = max(1, round(size / PER_UNIT[kind]))
    path = compile_source(kind, make(units), nvcc)
    n = count_instructions(path)
    if abs(n - size) > 0.15 * size and units > 1:
        units = max(1, round(units * size / max(1, n)))
        path = compile_source(kind, make(units), nvcc)
        n = count_instructions(path)
    return path, n
