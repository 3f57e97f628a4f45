// One Lloyd iteration of k-means (k = 16, 4-D features) over 4 M points, assignment and update fused in one
// kernel as GPU ports of Rodinia's kmeans do: each thread finds its point's nearest centroid (centroids in
// __constant__) and adds the point and a count to that cluster's global accumulators with five atomicAdds. The
// 80 accumulator addresses receive 20 M atomics per launch, about 260 K each: the atomics serialize at L2.
#include "bench.cuh"

constexpr int K = 16;
__constant__ float4 c_centroids[K];

struct ClusterSums {
  float* sum;         // [K][4]
  unsigned* count;    // [K]
};

__device__ __forceinline__ int nearest(float4 p) {
  int best = 0;
  float bd = 3.0e38f;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const float4 c = c_centroids[k];
    const float dx = p.x - c.x, dy = p.y - c.y, dz = p.z - c.z, dw = p.w - c.w;
    const float d = dx * dx + dy * dy + dz * dz + dw * dw;
    if (d < bd) bd = d, best = k;
  }
  return best;
}

__global__ void kmeans_step(const float4* __restrict__ pts, int n, ClusterSums acc) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 p = pts[i];
  const int k = nearest(p);
  atomicAdd(&acc.sum[4 * k + 0], p.x);
  atomicAdd(&acc.sum[4 * k + 1], p.y);
  atomicAdd(&acc.sum[4 * k + 2], p.z);
  atomicAdd(&acc.sum[4 * k + 3], p.w);
  atomicAdd(&acc.count[k], 1u);
}

int main() {
  const int n = 1 << 22;
  std::vector<float4> pts(n), cent(K);
  Rng rng(8109);
  for (int k = 0; k < K; ++k) cent[k] = make_float4(rng.uniform(-8, 8), rng.uniform(-8, 8), rng.uniform(-8, 8), rng.uniform(-8, 8));
  for (int i = 0; i < n; ++i) {  // blobs around perturbed centroids
    const float4 c = cent[rng.next() % K];
    pts[i] = make_float4(c.x + rng.uniform(-2, 2), c.y + rng.uniform(-2, 2), c.z + rng.uniform(-2, 2), c.w + rng.uniform(-2, 2));
  }
  for (int k = 0; k < K; ++k) cent[k].x += 0.5f, cent[k].w -= 0.5f;  // the current (not converged) centroids
  CK(cudaMemcpyToSymbol(c_centroids, cent.data(), K * sizeof(float4)));
  float4* d_pts;
  float* d_sum;
  unsigned* d_count;
  CK(cudaMalloc(&d_pts, n * sizeof(float4)));
  CK(cudaMalloc(&d_sum, 4 * K * sizeof(float)));
  CK(cudaMalloc(&d_count, K * sizeof(unsigned)));
  CK(cudaMemcpy(d_pts, pts.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  const ClusterSums acc{d_sum, d_count};
  for (int rep = 0; rep < 3; ++rep) {
    CK(cudaMemset(d_sum, 0, 4 * K * sizeof(float)));
    CK(cudaMemset(d_count, 0, K * sizeof(unsigned)));
    kmeans_step<<<(n + 255) / 256, 256>>>(d_pts, n, acc);
    CK_LAUNCH();
  }
  std::vector<float> got_sum(4 * K);
  std::vector<unsigned> got_count(K);
  CK(cudaMemcpy(got_sum.data(), d_sum, 4 * K * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(got_count.data(), d_count, K * sizeof(unsigned), cudaMemcpyDeviceToHost));
  std::vector<double> want_sum(4 * K, 0.0), abs_sum(4 * K, 0.0);
  std::vector<long> want_count(K, 0);
  for (int i = 0; i < n; ++i) {
    const float* p = &pts[i].x;
    int best = 0;
    float bd = 3.0e38f;
    for (int k = 0; k < K; ++k) {
      const float* c = &cent[k].x;
      float d = 0.0f;
      for (int j = 0; j < 4; ++j) d += (p[j] - c[j]) * (p[j] - c[j]);
      if (d < bd) bd = d, best = k;
    }
    ++want_count[best];
    for (int j = 0; j < 4; ++j) want_sum[4 * best + j] += p[j], abs_sum[4 * best + j] += std::fabs(p[j]);
  }
  long bad = 0;  // near-tie assignments may differ in the last bit of a distance: a tiny slack
  for (int k = 0; k < K; ++k) {
    bad += std::labs(static_cast<long>(got_count[k]) - want_count[k]) > 64;
    for (int j = 0; j < 4; ++j) bad += !close_enough(got_sum[4 * k + j], want_sum[4 * k + j], 0.0, 1e-4 * abs_sum[4 * k + j] + 1000.0);
  }
  CK(cudaFree(d_pts));
  CK(cudaFree(d_sum));
  CK(cudaFree(d_count));
  return verdict("kmeans_atomics", bad, 5 * K);
}
