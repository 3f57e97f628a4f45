// First pass of a cell-list (counting-sort) build for a short-range particle code: 8 M particles in a 64^3
// grid of cells, already in cell order from the previous step's sort (as MD and SPH codes keep them), about
// 32 per cell. fix: the lanes of a warp that share a cell are found with __match_any_sync and their leader
// adds the group's size, one atomic per distinct cell per warp instead of one per particle.
#include "bench.cuh"

struct CellGrid {
  float inv_cell;  // cells per unit length
  int dim;         // cells per axis
  __host__ __device__ int cell_of(float x, float y, float z) const {
    const int cx = min(static_cast<int>(x * inv_cell), dim - 1);
    const int cy = min(static_cast<int>(y * inv_cell), dim - 1);
    const int cz = min(static_cast<int>(z * inv_cell), dim - 1);
    return (cz * dim + cy) * dim + cx;
  }
};

struct Positions {
  const float* x;
  const float* y;
  const float* z;
  int n;
};

__global__ void count_cells(Positions p, CellGrid g, int* counts) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= p.n) return;
  const int cell = g.cell_of(p.x[i], p.y[i], p.z[i]);
  const unsigned peers = __match_any_sync(__activemask(), cell);
  if ((threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&counts[cell], __popc(peers));
}

int main() {
  const int dim = 64, cells = dim * dim * dim;
  const float cell_size = 0.5f;
  const CellGrid g{1.0f / cell_size, dim};
  Rng rng(1205);
  std::vector<int> per_cell(cells);
  long total = 0;
  for (auto& k : per_cell) total += (k = 16 + static_cast<int>(rng.next() % 33));  // 16..48, mean 32
  const int n = static_cast<int>(total);
  std::vector<float> hx(n), hy(n), hz(n);
  for (int c = 0, i = 0; c < cells; ++c) {
    const int cx = c % dim, cy = (c / dim) % dim, cz = c / (dim * dim);
    for (int k = 0; k < per_cell[c]; ++k, ++i) {
      hx[i] = (cx + rng.uniform(0.05f, 0.95f)) * cell_size;
      hy[i] = (cy + rng.uniform(0.05f, 0.95f)) * cell_size;
      hz[i] = (cz + rng.uniform(0.05f, 0.95f)) * cell_size;
    }
  }
  float *dx, *dy, *dz;
  int* dc;
  CK(cudaMalloc(&dx, n * sizeof(float)));
  CK(cudaMalloc(&dy, n * sizeof(float)));
  CK(cudaMalloc(&dz, n * sizeof(float)));
  CK(cudaMalloc(&dc, cells * sizeof(int)));
  CK(cudaMemcpy(dx, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dy, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dz, hz.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const Positions p{dx, dy, dz, n};
  std::vector<int> got(cells);
  long bad = 0, checked = 0;
  for (int rep = 0; rep < 3; ++rep) {
    CK(cudaMemset(dc, 0, cells * sizeof(int)));
    count_cells<<<(n + 255) / 256, 256>>>(p, g, dc);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), dc, cells * sizeof(int), cudaMemcpyDeviceToHost));
  std::vector<int> want(cells, 0);
  for (int i = 0; i < n; ++i) ++want[g.cell_of(hx[i], hy[i], hz[i])];
  for (int c = 0; c < cells; ++c, ++checked) bad += got[c] != want[c];
  CK(cudaFree(dx));
  CK(cudaFree(dy));
  CK(cudaFree(dz));
  CK(cudaFree(dc));
  return verdict("cell_count_match", bad, checked);
}
