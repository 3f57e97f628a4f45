// k-nearest-neighbour distances (k = 8) of query points against 2048 reference points held in
// constant memory; each thread keeps its 8 best squared distances sorted in a small array. The
// insertion loop indexes that array with a run-time position, so nvcc keeps it in local memory and
// every candidate's test against best[7] is an LDL. A second kernel turns the distances into a density.
#include <algorithm>

#include "../bench.cuh"

constexpr int kRefs = 2048, kK = 8;
__constant__ float4 c_ref[kRefs];

__global__ void knn8(const float4* __restrict__ q, float* __restrict__ kth, float* __restrict__ mean, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 p = q[i];
  float best[kK];
#pragma unroll
  for (int j = 0; j < kK; ++j) best[j] = 3.0e38f;
  for (int r = 0; r < kRefs; ++r) {
    float4 c = c_ref[r];
    float dx = p.x - c.x, dy = p.y - c.y, dz = p.z - c.z;
    float d = dx * dx + dy * dy + dz * dz;
    if (d < best[kK - 1]) {
      int j = kK - 1;
      while (j > 0 && best[j - 1] > d) {
        best[j] = best[j - 1];
        --j;
      }
      best[j] = d;
    }
  }
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < kK; ++j) s += best[j];
  kth[i] = best[kK - 1];
  mean[i] = s * (1.0f / kK);
}

__global__ void density(const float* __restrict__ kth, float* __restrict__ rho, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) rho[i] = kK / (4.18879f * kth[i] * sqrtf(kth[i]));
}

int main() {
  const int n = 1 << 17;
  std::vector<float4> q(n), ref(kRefs);
  Rng rng(21);
  for (auto& c : ref) c = make_float4(rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0, 1), 0.0f);
  for (auto& p : q) p = make_float4(rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0, 1), 0.0f);
  float4* d_q;
  float *d_kth, *d_mean, *d_rho;
  CK(cudaMalloc(&d_q, n * sizeof(float4)));
  CK(cudaMalloc(&d_kth, n * sizeof(float)));
  CK(cudaMalloc(&d_mean, n * sizeof(float)));
  CK(cudaMalloc(&d_rho, n * sizeof(float)));
  CK(cudaMemcpy(d_q, q.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  CK(cudaMemcpyToSymbol(c_ref, ref.data(), kRefs * sizeof(float4)));
  for (int rep = 0; rep < 3; ++rep) {
    knn8<<<(n + 127) / 128, 128>>>(d_q, d_kth, d_mean, n);
    CK_LAUNCH();
  }
  density<<<(n + 255) / 256, 256>>>(d_kth, d_rho, n);
  CK_LAUNCH();
  std::vector<float> kth(n), mean(n), rho(n);
  CK(cudaMemcpy(kth.data(), d_kth, n * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(mean.data(), d_mean, n * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(rho.data(), d_rho, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < n; i += 97, ++checked) {
    std::vector<double> d(kRefs);
    for (int r = 0; r < kRefs; ++r) {
      double dx = q[i].x - ref[r].x, dy = q[i].y - ref[r].y, dz = q[i].z - ref[r].z;
      d[r] = dx * dx + dy * dy + dz * dz;
    }
    std::partial_sort(d.begin(), d.begin() + kK, d.end());
    double s = 0.0;
    for (int j = 0; j < kK; ++j) s += d[j];
    bad += !close_enough(kth[i], d[kK - 1], 1e-4, 1e-7) || !close_enough(mean[i], s / kK, 1e-4, 1e-7) ||
           !close_enough(rho[i], kK / (4.18879 * d[kK - 1] * std::sqrt(d[kK - 1])), 1e-3, 0.0);
  }
  CK(cudaFree(d_q));
  CK(cudaFree(d_kth));
  CK(cudaFree(d_mean));
  CK(cudaFree(d_rho));
  return verdict("knn_local", bad, checked);
}
