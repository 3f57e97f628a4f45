// Channels-last conversion of a batch of activations (32 images, 64 channels, 128 x 128: NCHW -> NHWC,
// 128 MB each way), one thread per element in input order: the loads are coalesced, but consecutive
// threads write elements 64 floats (256 bytes) apart, so every warp store touches 32 sectors.
#include "bench.cuh"

__global__ void nchw_to_nhwc(const float* __restrict__ in, float* __restrict__ out, int c, int hw) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;  // pixel within the image
  int ch = blockIdx.y;
  int img = blockIdx.z;
  if (p >= hw) return;
  out[((size_t)img * hw + p) * c + ch] = in[((size_t)img * c + ch) * hw + p];
}

int main() {
  const int n = 32, c = 64, h = 128, w = 128, hw = h * w;
  const size_t total = (size_t)n * c * hw;
  std::vector<float> in(total), out(total);
  Rng rng(404);
  for (auto& v : in) v = rng.uniform(-1.0f, 1.0f);
  float *d_in, *d_out;
  CK(cudaMalloc(&d_in, total * sizeof(float)));
  CK(cudaMalloc(&d_out, total * sizeof(float)));
  CK(cudaMemcpy(d_in, in.data(), total * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    nchw_to_nhwc<<<dim3(hw / 256, c, n), 256>>>(d_in, d_out, c, hw);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(out.data(), d_out, total * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int img = 0; img < n; ++img)
    for (int ch = 0; ch < c; ++ch)
      for (int p = 0; p < hw; ++p)
        bad += out[((size_t)img * hw + p) * c + ch] != in[((size_t)img * c + ch) * hw + p];
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  return verdict("nchw_to_nhwc", bad, (long)total);
}
