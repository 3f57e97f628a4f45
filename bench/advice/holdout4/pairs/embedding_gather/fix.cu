// Embedding lookup (orig.cu's program) with four rows per warp, all eight 16-byte loads of a lane issued
// before its stores: the plausible "more bytes in flight per warp" change, which should gain nothing on a
// kernel that already streams at the DRAM roofline.
#include "bench.cuh"

constexpr int kDim = 256, kVec = kDim / 4;  // floats and float4 per row

constexpr int kRowsPerWarp = 4;

__global__ void embed_gather(const float4* __restrict__ table, const int* __restrict__ ids, float4* __restrict__ out,
                             int n_ids) {
  const int row0 = ((blockIdx.x * blockDim.x + threadIdx.x) >> 5) * kRowsPerWarp, lane = threadIdx.x & 31;
  if (row0 >= n_ids) return;  // n_ids is a multiple of kRowsPerWarp
  float4 v[kRowsPerWarp][2];
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const float4* src = table + (size_t)ids[row0 + r] * kVec;
    v[r][0] = src[lane];
    v[r][1] = src[lane + 32];
  }
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    float4* dst = out + (size_t)(row0 + r) * kVec;
    dst[lane] = v[r][0];
    dst[lane + 32] = v[r][1];
  }
}

int main() {
  const int vocab = 262144, n_ids = 262144;
  std::vector<float> table((size_t)vocab * kDim), out((size_t)n_ids * kDim);
  std::vector<int> ids(n_ids);
  Rng rng(4412);
  for (auto& v : table) v = rng.uniform(-1.0f, 1.0f);
  for (auto& id : ids) id = (int)(rng.next() % vocab);
  float *d_table, *d_out;
  int* d_ids;
  CK(cudaMalloc(&d_table, table.size() * sizeof(float)));
  CK(cudaMalloc(&d_out, out.size() * sizeof(float)));
  CK(cudaMalloc(&d_ids, n_ids * sizeof(int)));
  CK(cudaMemcpy(d_table, table.data(), table.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_ids, ids.data(), n_ids * sizeof(int), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    embed_gather<<<n_ids / (8 * kRowsPerWarp), 256>>>(reinterpret_cast<const float4*>(d_table), d_ids, reinterpret_cast<float4*>(d_out),
                                     n_ids);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int r = 0; r < n_ids; r += 5) {
    for (int k = 0; k < kDim; ++k) bad += out[(size_t)r * kDim + k] != table[(size_t)ids[r] * kDim + k];
    checked += kDim;
  }
  CK(cudaFree(d_table));
  CK(cudaFree(d_out));
  CK(cudaFree(d_ids));
  return verdict("embedding_gather", bad, checked);
}
