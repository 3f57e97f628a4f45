// Dependent-chain latency microbenchmark for analysis/arch: one thread runs a chain of N dependent
// instructions of one class between two clock64() reads; cycles / N is the class's latency as the
// issuing warp sees it (Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via
// Microbenchmarking", 2018, method). Prints one JSON object: {"<class>": cycles, ...}.
// Build: nvcc -O3 -arch=sm_90 latency.cu -o latency
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

constexpr int N = 512;     // arithmetic chain length (fully unrolled)
constexpr int CHASE = 2048;  // pointer-chase steps

__constant__ unsigned long long c_chain[64];

__global__ void arith(float fb, float fc, double db, double dc, unsigned m, unsigned k, unsigned dv,
                      long long* cyc, float* fout, double* dout, unsigned* uout) {
  float f = fb; double d = db; unsigned u = m;
  long long t0, t1;
  // FFMA
  t0 = clock64();
#pragma unroll
  for (int i = 0; i < N; ++i) f = fmaf(f, fb, fc);
  t1 = clock64(); cyc[0] = t1 - t0;
  // IMAD
  t0 = clock64();
#pragma unroll
  for (int i = 0; i < N; ++i) u = u * m + k;
  t1 = clock64(); cyc[1] = t1 - t0;
  // DFMA
  t0 = clock64();
#pragma unroll
  for (int i = 0; i < N; ++i) d = fma(d, db, dc);
  t1 = clock64(); cyc[2] = t1 - t0;
  // DADD
  double e = d;
  t0 = clock64();
#pragma unroll
  for (int i = 0; i < N; ++i) e = e + dc;
  t1 = clock64(); cyc[3] = t1 - t0;
  // F2F.F64.F32 -> DADD -> F2F.F32.F64
  float g = f;
  t0 = clock64();
#pragma unroll
  for (int i = 0; i < N; ++i) g = static_cast<float>(static_cast<double>(g) + dc);
  t1 = clock64(); cyc[4] = t1 - t0;
  // MUFU.EX2
  float x = fc;
  t0 = clock64();
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(x) : "f"(x));
  t1 = clock64(); cyc[5] = t1 - t0;
  // unsigned division by a runtime value (whole compiled sequence)
  unsigned q = u | 1u;
  t0 = clock64();
#pragma unroll 64
  for (int i = 0; i < N; ++i) q = q / dv + k;
  t1 = clock64(); cyc[6] = t1 - t0;
  // FMUL
  float h = fc;
  t0 = clock64();
#pragma unroll
  for (int i = 0; i < N; ++i) h = h * fb;
  t1 = clock64(); cyc[7] = t1 - t0;
  fout[0] = f + g + x + h; dout[0] = d + e; uout[0] = u + q;
}

__global__ void chase(void** p_l1, void** p_l2, void** p_dram, void** p_far, unsigned n_shared, long long* cyc,
                      void** sink) {
  __shared__ unsigned s[1024];
  for (unsigned i = 0; i < 1024; ++i) s[i] = (i * 97 + 13) % n_shared;
  __syncwarp();
  long long t0, t1;
  // LDS chase
  unsigned j = 0;
  t0 = clock64();
#pragma unroll 16
  for (int i = 0; i < CHASE; ++i) j = s[j];
  t1 = clock64(); cyc[0] = t1 - t0;
  // LDG chase, L1 hit (warm first)
  void** p = p_l1;
  for (int i = 0; i < CHASE; ++i) p = (void**)*p;
  t0 = clock64();
#pragma unroll 16
  for (int i = 0; i < CHASE; ++i) p = (void**)*p;
  t1 = clock64(); cyc[1] = t1 - t0;
  // LDG chase, L2 hit (.cg bypasses L1; warm first)
  void** q = p_l2;
  for (int i = 0; i < CHASE; ++i) q = (void**)__ldcg((unsigned long long*)q);
  t0 = clock64();
#pragma unroll 16
  for (int i = 0; i < CHASE; ++i) q = (void**)__ldcg((unsigned long long*)q);
  t1 = clock64(); cyc[2] = t1 - t0;
  // LDG chase over a large random ring: mostly DRAM
  void** r = p_dram;
  t0 = clock64();
#pragma unroll 16
  for (int i = 0; i < CHASE; ++i) r = (void**)__ldcg((unsigned long long*)r);
  t1 = clock64(); cyc[3] = t1 - t0;
  // LDG chase over a 4 GiB random ring, 32 KiB apart: DRAM, many pages
  void** f = p_far;
  t0 = clock64();
#pragma unroll 16
  for (int i = 0; i < CHASE; ++i) f = (void**)__ldcg((unsigned long long*)f);
  t1 = clock64(); cyc[5] = t1 - t0;
  // LDC chase through constant memory
  unsigned long long c = 0;
  t0 = clock64();
#pragma unroll 16
  for (int i = 0; i < CHASE; ++i) c = c_chain[c & 63];
  t1 = clock64(); cyc[4] = t1 - t0;
  sink[0] = (void*)((unsigned long long)p + (unsigned long long)q + (unsigned long long)r + j + c +
                    (unsigned long long)f);
}

// A ring of pointers `stride_elems` apart over `bytes`; returns its start and, in *mid, the node halfway
// round, so a second (measured) pass can start where the warm-up pass left no lines in the caches.
static void** ring(size_t bytes, size_t stride_elems, bool random, void*** mid = nullptr) {
  size_t n = bytes / sizeof(void*);
  void** d;
  CK(cudaMalloc(&d, bytes));
  std::vector<unsigned long long> h(n, 0);
  size_t m = n / stride_elems;
  std::vector<size_t> order(m);
  for (size_t i = 0; i < m; ++i) order[i] = i;
  if (random) {
    unsigned long long s = 12345;
    for (size_t i = m - 1; i > 0; --i) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; size_t k = s % (i + 1); std::swap(order[i], order[k]); }
  }
  for (size_t i = 0; i < m; ++i) {
    size_t from = order[i] * stride_elems, to = order[(i + 1) % m] * stride_elems;
    h[from] = (unsigned long long)(d + to);
  }
  CK(cudaMemcpy(d, h.data(), bytes, cudaMemcpyHostToDevice));
  if (mid) *mid = d + order[m / 2] * stride_elems;
  return d;
}

int main() {
  long long *cyc, hc[8];
  float* fo; double* dout; unsigned* uo; void** sink;
  CK(cudaMalloc(&cyc, 8 * sizeof(long long)));
  CK(cudaMalloc(&fo, 4)); CK(cudaMalloc(&dout, 8)); CK(cudaMalloc(&uo, 4)); CK(cudaMalloc(&sink, 8));
  unsigned long long hcc[64];
  for (int i = 0; i < 64; ++i) hcc[i] = (i * 37 + 5) % 64;
  CK(cudaMemcpyToSymbol(c_chain, hcc, sizeof(hcc)));
  const char* an[8] = {"FFMA", "IMAD", "DFMA", "DADD", "F2F_F64_F32+DADD+F2F_F32_F64", "MUFU.EX2", "UDIV_runtime_sequence", "FMUL"};
  printf("{\n");
  for (int rep = 0; rep < 2; ++rep) {  // first run warms the instruction cache
    arith<<<1, 1>>>(1.0001f, 0.5f, 1.0000001, 0.25, 3u, 7u, 13u, cyc, fo, dout, uo);
    CK(cudaDeviceSynchronize());
  }
  CK(cudaMemcpy(hc, cyc, sizeof(hc), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 8; ++i) printf("  \"%s\": %.2f,\n", an[i], (double)hc[i] / N);
  void** l1 = ring(8 << 10, 16, false);        // 8 KiB, 128 B stride: fits L1
  void** l2 = ring(4 << 20, 16, false);        // 4 MiB: fits L2, not L1 (loads bypass L1 anyway)
  void **dram_mid, **far_mid;
  void** dram = ring(1ull << 30, 64, true, &dram_mid);    // 1 GiB random ring, 512 B stride
  void** far = ring(4ull << 30, 4096, true, &far_mid);    // 4 GiB random ring, 32 KiB stride
  const char* cn[6] = {"LDS", "LDG_L1_hit", "LDG_L2_hit", "LDG_DRAM", "LDC", "LDG_DRAM_4GiB_32KiB"};
  // pass 0 warms the instruction cache and the L1/L2 rings; pass 1 is measured. The DRAM rings start
  // pass 1 halfway round, so none of its nodes were touched by pass 0 (which would leave them in L2).
  chase<<<1, 1>>>(l1, l2, dram, far, 1024, cyc, sink);
  CK(cudaDeviceSynchronize());
  chase<<<1, 1>>>(l1, l2, dram_mid, far_mid, 1024, cyc, sink);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(hc, cyc, 6 * sizeof(long long), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 6; ++i) printf("  \"%s\": %.2f%s\n", cn[i], (double)hc[i] / CHASE, i == 5 ? "" : ",");
  printf("}\n");
  return 0;
}
