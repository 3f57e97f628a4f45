// Embedding lookup (the forward of an embedding layer / index_select): 262144 token ids gather rows of
// 256 floats (1 KB) from a 262144 x 256 table (256 MB) into a 256 MB output. One warp per looked-up row:
// lane 0..31 copy float4 lane and lane + 32 of the row. Each row is one contiguous 1 KB read and write, so
// the kernel is a DRAM stream with a random row order.
#include "bench.cuh"

constexpr int kDim = 256, kVec = kDim / 4;  // floats and float4 per row

__global__ void embed_gather(const float4* __restrict__ table, const int* __restrict__ ids, float4* __restrict__ out,
                             int n_ids) {
  const int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (row >= n_ids) return;
  const float4* src = table + (size_t)ids[row] * kVec;
  float4* dst = out + (size_t)row * kVec;
  dst[lane] = src[lane];
  dst[lane + 32] = src[lane + 32];
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
    embed_gather<<<n_ids / 8, 256>>>(reinterpret_cast<const float4*>(d_table), d_ids, reinterpret_cast<float4*>(d_out),
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
