// Diagnostics of an N-body / MD step: total kinetic energy and momentum of 16 M particles stored as
// structure of arrays (float vx, vy, vz, m), accumulated in fp64 as physics codes do for conserved
// quantities. Done right: one wave of 256-thread blocks, a grid-stride loop reading four particles per thread
// per array through 16-byte loads, four double accumulators per thread, a warp shuffle reduction of doubles,
// then one double atomicAdd per warp and quantity. 256 MB per launch: DRAM-bound. Launched 3 times.
// Probe (should not pay): 512-thread blocks, the grid still one wave (half the blocks).
#include "bench.cuh"

struct ParticlesSoA {
  const float4 *vx, *vy, *vz, *m;  // four particles per float4
  long count4;
};

struct Totals {  // kinetic energy and momentum
  double ke, px, py, pz;
  __device__ void add(float vx, float vy, float vz, float m) {
    const double dm = m;
    px += dm * vx;
    py += dm * vy;
    pz += dm * vz;
    ke += 0.5 * dm * (static_cast<double>(vx) * vx + static_cast<double>(vy) * vy + static_cast<double>(vz) * vz);
  }
};

__device__ inline double warp_sum(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

__global__ void __launch_bounds__(512) energy_momentum(ParticlesSoA p, double* __restrict__ out) {
  Totals t{0.0, 0.0, 0.0, 0.0};
  for (long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.count4; i += static_cast<long>(gridDim.x) * blockDim.x) {
    const float4 vx = p.vx[i], vy = p.vy[i], vz = p.vz[i], m = p.m[i];
    t.add(vx.x, vy.x, vz.x, m.x);
    t.add(vx.y, vy.y, vz.y, m.y);
    t.add(vx.z, vy.z, vz.z, m.z);
    t.add(vx.w, vy.w, vz.w, m.w);
  }
  t.ke = warp_sum(t.ke);
  t.px = warp_sum(t.px);
  t.py = warp_sum(t.py);
  t.pz = warp_sum(t.pz);
  if (threadIdx.x % 32 == 0) {
    atomicAdd(out + 0, t.ke);
    atomicAdd(out + 1, t.px);
    atomicAdd(out + 2, t.py);
    atomicAdd(out + 3, t.pz);
  }
}

int main() {
  const long n = 16l << 20, n4 = n / 4;
  const int runs = 3;
  std::vector<float> vx(n), vy(n), vz(n), m(n);
  Rng rng(1109);
  for (long i = 0; i < n; ++i) {
    vx[i] = rng.uniform(-1.0f, 1.0f);
    vy[i] = rng.uniform(-1.0f, 1.0f);
    vz[i] = rng.uniform(-1.0f, 1.0f) + 0.01f;
    m[i] = rng.uniform(0.5f, 2.0f);
  }
  float* d[4];
  const std::vector<float>* h[4] = {&vx, &vy, &vz, &m};
  for (int a = 0; a < 4; ++a) {
    CK(cudaMalloc(&d[a], n * sizeof(float)));
    CK(cudaMemcpy(d[a], h[a]->data(), n * sizeof(float), cudaMemcpyHostToDevice));
  }
  double* d_out;
  CK(cudaMalloc(&d_out, 4 * sizeof(double)));
  const ParticlesSoA p{reinterpret_cast<const float4*>(d[0]), reinterpret_cast<const float4*>(d[1]),
                       reinterpret_cast<const float4*>(d[2]), reinterpret_cast<const float4*>(d[3]), n4};
  int sms = 0, per_sm = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, energy_momentum, 512, 0));
  double got[4];
  for (int r = 0; r < runs; ++r) {
    CK(cudaMemset(d_out, 0, 4 * sizeof(double)));
    energy_momentum<<<sms * per_sm, 512>>>(p, d_out);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got, d_out, sizeof(got), cudaMemcpyDeviceToHost));
  double want[4] = {0, 0, 0, 0}, mag[4] = {0, 0, 0, 0};
  for (long i = 0; i < n; ++i) {
    const double dm = m[i];
    const double t[4] = {0.5 * dm * (static_cast<double>(vx[i]) * vx[i] + static_cast<double>(vy[i]) * vy[i] + static_cast<double>(vz[i]) * vz[i]),
                         dm * vx[i], dm * vy[i], dm * vz[i]};
    for (int q = 0; q < 4; ++q) {
      want[q] += t[q];
      mag[q] += std::fabs(t[q]);
    }
  }
  long bad = 0;
  for (int q = 0; q < 4; ++q) bad += !close_enough(got[q], want[q], 0.0, 1e-12 * mag[q]);
  for (float* a : d) CK(cudaFree(a));
  CK(cudaFree(d_out));
  return verdict("kinetic_energy_fp64", bad, 4);
}
