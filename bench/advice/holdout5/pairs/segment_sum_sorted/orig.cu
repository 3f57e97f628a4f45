// Segment sum with sorted segment ids, the scatter-add at the heart of a GNN aggregation / embedding-bag
// backward (PyTorch's index_add_ with sorted indices): 16 M float values, ~60 K segments of 16 to 512
// consecutive elements, out[seg[i]] += val[i] with one global float atomicAdd per element. Consecutive lanes
// almost always hit the same address, so each warp's 32 atomics queue on one L2 location.
#include "bench.cuh"

struct Segments {
  const int* id;  // sorted, [n]
  int n, nseg;
};

__global__ void segment_sum(Segments s, const float* __restrict__ val, float* __restrict__ out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < s.n) atomicAdd(&out[s.id[i]], val[i]);
}

int main() {
  const int n = 16 << 20;
  std::vector<int> id(n);
  std::vector<float> val(n);
  Rng rng(6212);
  int seg = 0;
  for (int i = 0; i < n; ++seg) {  // segment lengths 16..527
    const int len = 16 + (int)(rng.next() % 512);
    for (int k = 0; k < len && i < n; ++k) id[i++] = seg;
  }
  const int nseg = seg;
  for (auto& v : val) v = rng.uniform(-1.0f, 1.0f);
  int* d_id;
  float *d_val, *d_out;
  CK(cudaMalloc(&d_id, n * sizeof(int)));
  CK(cudaMalloc(&d_val, n * sizeof(float)));
  CK(cudaMalloc(&d_out, nseg * sizeof(float)));
  CK(cudaMemcpy(d_id, id.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_val, val.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const Segments s{d_id, n, nseg};
  std::vector<float> out(nseg);
  for (int rep = 0; rep < 3; ++rep) {  // three feature columns of a layer (same data here)
    CK(cudaMemset(d_out, 0, nseg * sizeof(float)));
    segment_sum<<<(n + 255) / 256, 256>>>(s, d_val, d_out);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(out.data(), d_out, nseg * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<double> want(nseg, 0.0);
  for (int i = 0; i < n; ++i) want[id[i]] += val[i];
  long bad = 0;
  for (int k = 0; k < nseg; ++k) bad += !close_enough(out[k], want[k], 1e-4, 1e-4);
  CK(cudaFree(d_id));
  CK(cudaFree(d_val));
  CK(cudaFree(d_out));
  return verdict("segment_sum_sorted", bad, nseg);
}
