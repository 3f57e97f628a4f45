// Decoding an 8 M-pixel float RGBA frame from sRGB to linear light (the first step of a compositing pipeline:
// the decoder and resampler hand over sRGB-encoded floats), as orig.cu, with the transfer function's literals
// written as floats (0.055f, 1.055f, 2.4f, ...) and powf: the functor stays in single precision.
#include "bench.cuh"

struct SrgbDecode {
  float exposure;
  __host__ __device__ float operator()(float c) const {
    return exposure * (c <= 0.04045f ? c / 12.92f : powf((c + 0.055f) / 1.055f, 2.4f));
  }
};

template <class Transfer>
__device__ float4 map_rgb(const Transfer& f, float4 p) {
  return make_float4(f(p.x), f(p.y), f(p.z), p.w);  // alpha is linear already
}

__global__ void linearize(const float4* __restrict__ in, float4* __restrict__ out, int pixels, SrgbDecode decode) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < pixels) out[i] = map_rgb(decode, in[i]);
}

int main() {
  const int pixels = 4096 * 2048;
  std::vector<float4> in(pixels), got(pixels);
  Rng rng(6708);
  for (auto& p : in) p = make_float4(rng.uniform(0.0f, 1.0f), rng.uniform(0.0f, 1.0f), rng.uniform(0.0f, 1.0f), 1.0f);
  float4 *d_in, *d_out;
  CK(cudaMalloc(&d_in, pixels * sizeof(float4)));
  CK(cudaMalloc(&d_out, pixels * sizeof(float4)));
  CK(cudaMemcpy(d_in, in.data(), pixels * sizeof(float4), cudaMemcpyHostToDevice));
  const SrgbDecode decode{1.25f};
  for (int rep = 0; rep < 3; ++rep) {
    linearize<<<(pixels + 255) / 256, 256>>>(d_in, d_out, pixels, decode);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_out, pixels * sizeof(float4), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  auto want = [](double c) { return 1.25 * (c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4)); };
  for (int i = 0; i < pixels; i += 3, checked += 4) {
    bad += !close_enough(got[i].x, want(in[i].x), 1e-5, 1e-7) + !close_enough(got[i].y, want(in[i].y), 1e-5, 1e-7) +
           !close_enough(got[i].z, want(in[i].z), 1e-5, 1e-7) + (got[i].w != in[i].w);
  }
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  return verdict("srgb_double_pow", bad, checked);
}
