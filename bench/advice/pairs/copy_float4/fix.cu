// Device-to-device copy of a 256 MB buffer with 16-byte vector loads and stores and a grid-stride loop
// over one wave of blocks: the kernel moves bytes at DRAM bandwidth and does nothing else.
// PROBE: warpwise's top advice applied (#pragma unroll 2 on the copy loop, its quick fix), timed beside
// the original to show whether that advice pays at the bandwidth roofline.
#include "../bench.cuh"

__global__ void copy_vec4(const float4* __restrict__ src, float4* __restrict__ dst, size_t n4) {
#pragma unroll 2
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x)
    dst[i] = src[i];
}

int main() {
  const size_t n = 64u << 20, n4 = n / 4;
  std::vector<float> h(n), back(n);
  Rng rng(28);
  for (auto& v : h) v = rng.uniform(1.0f, 2.0f);
  float *d_src, *d_dst;
  CK(cudaMalloc(&d_src, n * sizeof(float)));
  CK(cudaMalloc(&d_dst, n * sizeof(float)));
  CK(cudaMemcpy(d_src, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (int rep = 0; rep < 3; ++rep) {
    copy_vec4<<<sms * 4, 512>>>(reinterpret_cast<const float4*>(d_src), reinterpret_cast<float4*>(d_dst), n4);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(back.data(), d_dst, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (size_t i = 0; i < n; ++i) bad += back[i] != h[i];
  CK(cudaFree(d_src));
  CK(cudaFree(d_dst));
  return verdict("copy_float4", bad, (long)n);
}
