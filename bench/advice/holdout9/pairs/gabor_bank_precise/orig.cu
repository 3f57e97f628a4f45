// Generation of a Gabor filter bank for texture features (64 orientations/wavelengths, 256 x 256 taps each, 4 M
// values per launch), as a vision library builds it on the device: each tap is
// exp(-(x'^2 + g^2 y'^2) / (2 s^2)) * cos(2 pi x' / lambda + psi) in the rotated frame. Built without fast math,
// so expf, cosf (with its argument reduction), sincosf and the IEEE divisions are the precise routines; the
// output write is 4 bytes per tap, so the math is the time.
#include "bench.cuh"

struct GaborBank {
  int size;       // taps per side
  int n_theta;    // orientations per wavelength
  float sigma, gamma, psi, lambda0, lambda_step;
  __device__ __host__ float tap(int f, int ix, int iy) const {
    const int o = f % n_theta, l = f / n_theta;
    const float theta = 3.14159265f * o / n_theta, lambda = lambda0 + lambda_step * l;
    float st, ct;
    sincosf(theta, &st, &ct);
    const float x = static_cast<float>(ix - size / 2), y = static_cast<float>(iy - size / 2);
    const float xr = x * ct + y * st, yr = -x * st + y * ct;
    const float env = expf(-(xr * xr + gamma * gamma * yr * yr) / (2.0f * sigma * sigma));
    return env * cosf(6.28318531f * xr / lambda + psi);
  }
};

__global__ void gabor_bank(GaborBank bank, float* __restrict__ out) {
  const int ix = blockIdx.x * blockDim.x + threadIdx.x, iy = blockIdx.y, f = blockIdx.z;
  if (ix < bank.size) out[(static_cast<size_t>(f) * bank.size + iy) * bank.size + ix] = bank.tap(f, ix, iy);
}

int main() {
  const int filters = 64;
  const GaborBank bank{256, 16, 40.0f, 0.6f, 0.3f, 4.0f, 3.0f};
  const size_t n = static_cast<size_t>(filters) * bank.size * bank.size;
  std::vector<float> out(n);
  float* d_out;
  CK(cudaMalloc(&d_out, n * sizeof(float)));
  const dim3 block(256), grid((bank.size + 255) / 256, bank.size, filters);
  for (int rep = 0; rep < 3; ++rep) {
    gabor_bank<<<grid, block>>>(bank, d_out);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  Rng rng(9505);
  for (int s = 0; s < 400000; ++s, ++checked) {  // sampled; fast math's cos error grows with its argument: 2e-3
    const int f = rng.next() % filters, iy = rng.next() % bank.size, ix = rng.next() % bank.size;
    bad += !close_enough(out[(static_cast<size_t>(f) * bank.size + iy) * bank.size + ix], bank.tap(f, ix, iy), 0.0, 2e-3);
  }
  CK(cudaFree(d_out));
  return verdict("gabor_bank_precise", bad, checked);
}
