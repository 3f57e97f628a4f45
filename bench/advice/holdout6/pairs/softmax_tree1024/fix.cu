// Row softmax of attention scores, 32768 rows of 1024 floats (batch x heads x queries over 1024 keys), one
// 1024-thread block per row and one score per thread, as orig.cu, with each reduction done by warp shuffles:
// every warp reduces its 32 values with __shfl_xor_sync, the 32 warp results meet in shared memory behind one
// barrier and every warp reduces them again (2 barriers per row instead of 23).
#include "bench.cuh"

constexpr int kCols = 1024;

// Reduce one value per thread over the 1024-thread block; every thread gets the result. part: 32 floats of
// shared memory of this reduction's own (so the two reductions of a row need no barrier between them).
template <class Op>
__device__ float block_reduce(float v, float* part, int lane, int warp, Op op) {
#pragma unroll
  for (int d = 16; d > 0; d /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, d));
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = part[lane];
#pragma unroll
  for (int d = 16; d > 0; d /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, d));
  return v;
}

__global__ void softmax_scores(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float part[2][32];
  const size_t row = blockIdx.x;
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const float x = in[row * kCols + t];
  const float m = block_reduce(x, part[0], lane, warp, [](float a, float b) { return fmaxf(a, b); });
  const float e = __expf(x - m);
  const float sum = block_reduce(e, part[1], lane, warp, [](float a, float b) { return a + b; });
  out[row * kCols + t] = e / sum;
}

int main() {
  const int rows = 32768;
  const size_t n = (size_t)rows * kCols;
  std::vector<float> in(n), got(n);
  Rng rng(6401);
  for (auto& v : in) v = rng.uniform(-8.0f, 8.0f);
  float *d_in, *d_out;
  CK(cudaMalloc(&d_in, n * sizeof(float)));
  CK(cudaMalloc(&d_out, n * sizeof(float)));
  CK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    softmax_scores<<<rows, kCols>>>(d_in, d_out);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int r = 0; r < rows; r += 13) {  // every 13th row in full
    const float* x = &in[(size_t)r * kCols];
    double m = x[0], sum = 0.0;
    for (int c = 1; c < kCols; ++c) m = std::max(m, (double)x[c]);
    for (int c = 0; c < kCols; ++c) sum += std::exp(x[c] - m);
    for (int c = 0; c < kCols; ++c, ++checked)
      bad += !close_enough(got[(size_t)r * kCols + c], std::exp(x[c] - m) / sum, 1e-4, 1e-9);
  }
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  return verdict("softmax_tree1024", bad, checked);
}
