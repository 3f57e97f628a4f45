// Sub-cycled push of a 1D two-species plasma whose loader stores particles as electron-ion pairs
// (index 2p an electron, 2p+1 its ion, for charge neutrality). Threads are mapped to particles so that
// each warp pushes one species: of every 64 consecutive particles, the first warp of the pair takes the
// 32 electrons and the second the 32 ions, so no warp runs both pushes.
#include "bench.cuh"

constexpr int kSubsteps = 64;

// Anharmonic confining fields (normalised units); both pushes cost about the same.
__device__ __forceinline__ void push_electron(float& x, float& v, float dt) {
  for (int s = 0; s < kSubsteps; ++s) {
    float x2 = x * x;
    float e = -x * (1.0f + x2 * (0.30f + x2 * (-0.020f + x2 * 0.0010f)));
    v = v * 0.9995f + 1.8f * e * dt;
    x += v * dt;
  }
}

__device__ __forceinline__ void push_ion(float& x, float& v, float dt) {
  for (int s = 0; s < kSubsteps; ++s) {
    float x2 = x * x;
    float e = -x * (0.70f + x2 * (-0.10f + x2 * (0.012f + x2 * -0.0004f)));
    v = v * 0.9999f + 0.05f * e * dt + 0.001f * x2 * dt;
    x += v * dt;
  }
}

__global__ void push(float* __restrict__ x, float* __restrict__ v, int n, float dt) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int species = (t >> 5) & 1;                   // uniform per warp
  int p = (t >> 6) * 64 + 2 * (t & 31) + species;  // n is a multiple of 64
  if (p >= n) return;
  float xp = x[p], vp = v[p];
  if (species)
    push_ion(xp, vp, dt);
  else
    push_electron(xp, vp, dt);
  x[p] = xp;
  v[p] = vp;
}

// the same pushes on the host (float, in the order the kernel evaluates them)
static void host_push(float& x, float& v, float dt, bool ion) {
  for (int s = 0; s < kSubsteps; ++s) {
    float x2 = x * x;
    if (ion) {
      float e = -x * (0.70f + x2 * (-0.10f + x2 * (0.012f + x2 * -0.0004f)));
      v = v * 0.9999f + 0.05f * e * dt + 0.001f * x2 * dt;
    } else {
      float e = -x * (1.0f + x2 * (0.30f + x2 * (-0.020f + x2 * 0.0010f)));
      v = v * 0.9995f + 1.8f * e * dt;
    }
    x += v * dt;
  }
}

int main() {
  const int n = 8 << 20;  // 4 M electron-ion pairs
  const float dt = 0.01f;
  std::vector<float> x(n), v(n);
  Rng rng(45);
  for (int p = 0; p < n; ++p) {
    x[p] = rng.uniform(-1.5f, 1.5f);
    v[p] = (p & 1) ? rng.uniform(-0.05f, 0.05f) : rng.uniform(-1.0f, 1.0f);
  }
  float *d_x, *d_v;
  CK(cudaMalloc(&d_x, n * sizeof(float)));
  CK(cudaMalloc(&d_v, n * sizeof(float)));
  CK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_v, v.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    push<<<(n + 255) / 256, 256>>>(d_x, d_v, n, dt);
    CK_LAUNCH();
  }
  std::vector<float> gx(n), gv(n);
  CK(cudaMemcpy(gx.data(), d_x, n * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(gv.data(), d_v, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int p = 0; p < n; p += 61, ++checked) {  // sampled (both species: 61 is odd)
    float xp = x[p], vp = v[p];
    for (int rep = 0; rep < 3; ++rep) host_push(xp, vp, dt, p & 1);
    bad += !close_enough(gx[p], xp, 1e-3, 1e-4) || !close_enough(gv[p], vp, 1e-3, 1e-4);
  }
  CK(cudaFree(d_x));
  CK(cudaFree(d_v));
  return verdict("plasma_species", bad, checked);
}
