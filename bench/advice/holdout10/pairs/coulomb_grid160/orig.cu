// Direct Coulomb summation of the electrostatic potential on a lattice (ion placement / cionize-style
// potential maps in molecular modelling): 8192 point charges staged once per block in 128 KB of dynamic
// shared memory (so one 1024-thread block fits per SM), then a grid-stride loop over the lattice points,
// each summing q / sqrt(r^2 + eps) over every charge. The launcher hard-codes 160 blocks, "2 per SM" on the
// 80-SM GPU it was tuned for; on 132 SMs that is one full wave and a second wave of 28 blocks with the same
// work each, while 104 SMs idle. Three lattices of different sizes (512 K, 768 K, 1 M points).
#include "bench.cuh"

struct Lattice {  // points (i, j, k) at origin + h * (i, j, k), i fastest
  int nx, ny, nz;
  float h, ox, oy, oz;
  __host__ __device__ long size() const { return static_cast<long>(nx) * ny * nz; }
  __host__ __device__ float3 point(long p) const {
    const int i = static_cast<int>(p % nx), j = static_cast<int>((p / nx) % ny), k = static_cast<int>(p / (static_cast<long>(nx) * ny));
    return make_float3(ox + h * i, oy + h * j, oz + h * k);
  }
};

constexpr int kAtoms = 8192;
constexpr float kSoft2 = 0.01f;  // softening (A^2) so a lattice point on a charge stays finite

__global__ void __launch_bounds__(1024, 1) direct_coulomb(const float4* __restrict__ atoms, Lattice lat,
                                                          float* __restrict__ pot) {
  extern __shared__ float4 q[];  // x, y, z, charge
  for (int j = threadIdx.x; j < kAtoms; j += blockDim.x) q[j] = atoms[j];
  __syncthreads();
  const long n = lat.size();
  for (long p = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x; p < n; p += static_cast<long>(gridDim.x) * blockDim.x) {
    const float3 r = lat.point(p);
    float v = 0.0f;
    for (int j = 0; j < kAtoms; ++j) {
      const float4 a = q[j];
      const float dx = r.x - a.x, dy = r.y - a.y, dz = r.z - a.z;
      v += a.w * rsqrtf(dx * dx + dy * dy + dz * dz + kSoft2);
    }
    pot[p] = v;
  }
}

int main() {
  const Lattice lats[3] = {{64, 64, 128, 0.5f, 0.0f, 0.0f, 0.0f},
                           {96, 64, 128, 0.5f, 0.0f, 0.0f, 0.0f},
                           {128, 64, 128, 0.5f, 0.0f, 0.0f, 0.0f}};
  std::vector<float4> atoms(kAtoms);
  Rng rng(10303);
  for (auto& a : atoms) a = make_float4(rng.uniform(0, 64), rng.uniform(0, 32), rng.uniform(0, 64), rng.uniform(-1, 1));
  const long cap = lats[2].size();
  std::vector<float> pot(cap);
  float4* d_atoms;
  float* d_pot;
  CK(cudaMalloc(&d_atoms, kAtoms * sizeof(float4)));
  CK(cudaMalloc(&d_pot, cap * sizeof(float)));
  CK(cudaMemcpy(d_atoms, atoms.data(), kAtoms * sizeof(float4), cudaMemcpyHostToDevice));
  const int smem = kAtoms * sizeof(float4);
  CK(cudaFuncSetAttribute(direct_coulomb, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const int blocks = 160;  // 2 blocks per SM on the 80-SM GPU this launcher was tuned for
  long bad = 0, checked = 0;
  for (const Lattice& lat : lats) {
    CK(cudaMemset(d_pot, 0, cap * sizeof(float)));
    direct_coulomb<<<blocks, 1024, smem>>>(d_atoms, lat, d_pot);
    CK_LAUNCH();
    CK(cudaMemcpy(pot.data(), d_pot, lat.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (long p = 0; p < lat.size(); p += 1531, ++checked) {
      const float3 r = lat.point(p);
      double want = 0.0, mag = 0.0;
      for (const float4& a : atoms) {
        const double dx = r.x - a.x, dy = r.y - a.y, dz = r.z - a.z;
        const double t = a.w / std::sqrt(dx * dx + dy * dy + dz * dz + kSoft2);
        want += t;
        mag += std::fabs(t);
      }
      bad += !close_enough(pot[p], want, 0.0, 1e-4 * mag);  // 8192-term float sum
    }
  }
  CK(cudaFree(d_atoms));
  CK(cudaFree(d_pot));
  return verdict("coulomb_grid160", bad, checked);
}
