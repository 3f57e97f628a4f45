// Fractal value noise for a procedural texture: 8 octaves per pixel, each through a lattice-noise
// helper that a profiling session once marked __noinline__ to see it in the call stack. Every octave
// now pays a call: argument moves, the ABI's register rules and no scheduling across the call.
#include "../bench.cuh"

__host__ __device__ inline unsigned hash2(unsigned x, unsigned y, unsigned seed) {
  unsigned h = x * 0x8da6b343u ^ y * 0xd8163841u ^ seed * 0xcb1ab31fu;
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  return h;
}

__host__ __device__ inline float lattice(unsigned x, unsigned y, unsigned seed) {
  return (hash2(x, y, seed) & 0xffffffu) * (1.0f / 16777216.0f);
}

__device__ __noinline__ float value_noise(float x, float y, unsigned seed) {
  float fx = floorf(x), fy = floorf(y);
  unsigned ix = (unsigned)(int)fx, iy = (unsigned)(int)fy;
  float tx = x - fx, ty = y - fy;
  tx = tx * tx * (3.0f - 2.0f * tx);
  ty = ty * ty * (3.0f - 2.0f * ty);
  float a = lattice(ix, iy, seed), b = lattice(ix + 1, iy, seed);
  float c = lattice(ix, iy + 1, seed), d = lattice(ix + 1, iy + 1, seed);
  float top = a + tx * (b - a), bottom = c + tx * (d - c);
  return top + ty * (bottom - top);
}

__global__ void fbm_texture(float* __restrict__ out, int w, int h, unsigned seed) {
  int px = blockIdx.x * blockDim.x + threadIdx.x, py = blockIdx.y * blockDim.y + threadIdx.y;
  if (px >= w || py >= h) return;
  float x = px * (1.0f / 64.0f), y = py * (1.0f / 64.0f), amp = 0.5f, sum = 0.0f;
  for (int o = 0; o < 8; ++o) {
    sum += amp * value_noise(x, y, seed + o);
    x *= 2.0f;
    y *= 2.0f;
    amp *= 0.5f;
  }
  out[(size_t)py * w + px] = sum;
}

static float value_noise_ref(float x, float y, unsigned seed) {
  float fx = std::floor(x), fy = std::floor(y);
  unsigned ix = (unsigned)(int)fx, iy = (unsigned)(int)fy;
  float tx = x - fx, ty = y - fy;
  tx = tx * tx * (3.0f - 2.0f * tx);
  ty = ty * ty * (3.0f - 2.0f * ty);
  float a = lattice(ix, iy, seed), b = lattice(ix + 1, iy, seed);
  float c = lattice(ix, iy + 1, seed), d = lattice(ix + 1, iy + 1, seed);
  float top = a + tx * (b - a), bottom = c + tx * (d - c);
  return top + ty * (bottom - top);
}

int main() {
  const int w = 4096, h = 2048;
  const unsigned seed = 2026;
  const size_t n = (size_t)w * h;
  std::vector<float> img(n);
  float* d_img;
  CK(cudaMalloc(&d_img, n * sizeof(float)));
  dim3 block(32, 8), grid(w / 32, h / 8);
  for (int rep = 0; rep < 3; ++rep) {
    fbm_texture<<<grid, block>>>(d_img, w, h, seed);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(img.data(), d_img, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (size_t i = 0; i < n; i += 29, ++checked) {
    int px = (int)(i % w), py = (int)(i / w);
    float x = px * (1.0f / 64.0f), y = py * (1.0f / 64.0f), amp = 0.5f, sum = 0.0f;
    for (int o = 0; o < 8; ++o) {
      sum += amp * value_noise_ref(x, y, seed + o);
      x *= 2.0f;
      y *= 2.0f;
      amp *= 0.5f;
    }
    bad += !close_enough(img[i], sum, 1e-4, 1e-5);  // the device contracts to FMA, the host may not
  }
  CK(cudaFree(d_img));
  return verdict("noise_noinline", bad, checked);
}
