// Channels-last conversion of a batch of activations (32 images, 64 channels, 128 x 128: NCHW -> NHWC,
// 128 MB each way). Per image this is a transpose of a (channels x pixels) matrix: each 32 x 8 block
// reads a 32-channel x 32-pixel tile with coalesced loads into shared memory (padded to 33 columns, so
// the column reads hit 32 banks) and writes it back transposed, 32 consecutive channels per warp store.
#include "bench.cuh"

__global__ void nchw_to_nhwc(const float* __restrict__ in, float* __restrict__ out, int c, int hw) {
  __shared__ float tile[32][33];
  int p0 = blockIdx.x * 32;   // first pixel of the tile
  int ch0 = blockIdx.y * 32;  // first channel of the tile
  int img = blockIdx.z;
  const float* src = in + (size_t)img * c * hw;
  float* dst = out + (size_t)img * hw * c;
  for (int k = threadIdx.y; k < 32; k += 8)  // rows of the tile: channels, 32 pixels each
    tile[k][threadIdx.x] = src[(size_t)(ch0 + k) * hw + p0 + threadIdx.x];
  __syncthreads();
  for (int k = threadIdx.y; k < 32; k += 8)  // rows of the output: pixels, 32 channels each
    dst[(size_t)(p0 + k) * c + ch0 + threadIdx.x] = tile[threadIdx.x][k];
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
    nchw_to_nhwc<<<dim3(hw / 32, c / 32, n), dim3(32, 8)>>>(d_in, d_out, c, hw);  // hw, c: multiples of 32
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
