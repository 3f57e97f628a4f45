// K-means assignment step as Rodinia's kmeans writes its first CUDA version: 1 M points of 34 features stored
// point-major (features[p * nfeatures + f], the layout the input file and the CPU code use), 5 centroids in
// __constant__, one thread per point computing the squared distance to every centroid and keeping the nearest.
// Lanes of a warp read features 136 bytes apart: every warp load touches 32 sectors, re-read once per centroid.
#include "bench.cuh"

constexpr int kFeatures = 34, kClusters = 5;
__constant__ float c_centroids[kClusters * kFeatures];

__global__ void kmeans_assign(const float* __restrict__ features, int npoints, int* __restrict__ membership) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= npoints) return;
  int best = 0;
  float best_d = 3.402823e38f;
  for (int c = 0; c < kClusters; ++c) {
    float d = 0.0f;
    for (int f = 0; f < kFeatures; ++f) {
      const float diff = features[(size_t)p * kFeatures + f] - c_centroids[c * kFeatures + f];
      d += diff * diff;
    }
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  membership[p] = best;
}

int main() {
  const int npoints = 1 << 20;
  const size_t n = (size_t)npoints * kFeatures;
  std::vector<float> feat(n), cent(kClusters * kFeatures);
  Rng rng(5101);
  for (auto& v : cent) v = rng.uniform(0.0f, 1.0f);
  for (int p = 0; p < npoints; ++p) {  // points scattered around the centroids
    const int c = rng.next() % kClusters;
    for (int f = 0; f < kFeatures; ++f) feat[(size_t)p * kFeatures + f] = cent[c * kFeatures + f] + rng.uniform(-0.4f, 0.4f);
  }
  float* d_feat;
  int* d_mem;
  CK(cudaMalloc(&d_feat, n * sizeof(float)));
  CK(cudaMalloc(&d_mem, npoints * sizeof(int)));
  CK(cudaMemcpy(d_feat, feat.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpyToSymbol(c_centroids, cent.data(), cent.size() * sizeof(float)));
  for (int rep = 0; rep < 3; ++rep) {  // three iterations of Lloyd's loop (centroids kept fixed here)
    kmeans_assign<<<(npoints + 255) / 256, 256>>>(d_feat, npoints, d_mem);
    CK_LAUNCH();
  }
  std::vector<int> mem(npoints);
  CK(cudaMemcpy(mem.data(), d_mem, npoints * sizeof(int), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int p = 0; p < npoints; p += 7) {  // the chosen centroid is a nearest one (ties within rounding allowed)
    double dist[kClusters], best = 1e300;
    for (int c = 0; c < kClusters; ++c) {
      double d = 0.0;
      for (int f = 0; f < kFeatures; ++f) {
        const double diff = (double)feat[(size_t)p * kFeatures + f] - cent[c * kFeatures + f];
        d += diff * diff;
      }
      dist[c] = d;
      best = d < best ? d : best;
    }
    bad += !(mem[p] >= 0 && mem[p] < kClusters && dist[mem[p]] <= best * (1.0 + 1e-5) + 1e-6);
    ++checked;
  }
  CK(cudaFree(d_feat));
  CK(cudaFree(d_mem));
  return verdict("kmeans_rowmajor", bad, checked);
}
