// Image pre-processing for an inference pipeline, eager style: normalize (scale + bias), clamp, then a
// quadratic tone curve, each a separate launch of the generic element-wise kernel (ops.cuh) over a 32 M-float
// tensor (a batch of 32 1024 x 1024 planes): three passes that each read and write 128 MB, with the
// intermediate results going through DRAM.
#include "bench.cuh"
#include "ops.cuh"

__global__ void apply_ops(const float* __restrict__ in, float* __restrict__ out, size_t n, OpList ops) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = in[i];
  for (int k = 0; k < ops.n; ++k) v = apply_one(ops.ops[k], v);
  out[i] = v;
}

static OpList single(Op op) {
  OpList l{};
  l.ops[0] = op;
  l.n = 1;
  return l;
}

int main() {
  const size_t n = (size_t)32 << 20;
  const Op norm{kScaleBias, 1.0f / 58.4f, -0.45f}, clamp{kClamp, -2.0f, 2.0f}, tone{kGamma, 0.1f, 0.9f};
  std::vector<float> x(n), y(n);
  Rng rng(5404);
  for (auto& v : x) v = rng.uniform(0.0f, 255.0f);
  float *d_x, *d_t, *d_y;
  CK(cudaMalloc(&d_x, n * sizeof(float)));
  CK(cudaMalloc(&d_t, n * sizeof(float)));
  CK(cudaMalloc(&d_y, n * sizeof(float)));
  CK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const unsigned blocks = (unsigned)((n + 255) / 256);
  // one launch per op: x -> t -> y -> y
  apply_ops<<<blocks, 256>>>(d_x, d_t, n, single(norm));
  CK_LAUNCH();
  apply_ops<<<blocks, 256>>>(d_t, d_y, n, single(clamp));
  CK_LAUNCH();
  apply_ops<<<blocks, 256>>>(d_y, d_t, n, single(tone));
  CK_LAUNCH();
  CK(cudaMemcpy(y.data(), d_t, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (size_t i = 0; i < n; i += 13, ++checked) {
    const float want = apply_one(tone, apply_one(clamp, apply_one(norm, x[i])));
    bad += !close_enough(y[i], want, 1e-5, 1e-6);
  }
  for (float* p : {d_x, d_t, d_y}) CK(cudaFree(p));
  return verdict("pointwise_chain_ww", bad, checked);
}
