// Level-synchronous breadth-first search (top-down) on a directed power-law graph: 1 M vertices in CSR,
// out-degrees Pareto-distributed (shape 1.5, minimum 4, capped at 4096; mean ~11, ~11.8 M edges), random
// targets. One launch per level: a thread per vertex; a vertex of the current frontier (level == cur) walks its
// adjacency list and labels every unvisited neighbour cur + 1 (racing writers store the same value); the host
// loops until a level labels nothing. Each thread's loop runs its vertex's degree, so the warps holding a hub
// (hundreds to thousands of edges) keep 31 lanes idle while one walks it. Three searches from three sources
// (about 8-9 launches each, of very different frontier sizes).
#include <algorithm>
#include <cmath>

#include "bench.cuh"

struct Csr {
  const int* row;  // [n + 1]
  const int* col;  // [edges]
  int n;
  __host__ __device__ int begin(int v) const { return row[v]; }
  __host__ __device__ int end(int v) const { return row[v + 1]; }
};

struct Levels {
  int* level;    // -1: not reached
  int* changed;  // set when a launch labels a vertex
  __device__ void visit(int u, int next) const {
    if (level[u] < 0) {
      level[u] = next;
      *changed = 1;
    }
  }
};

__global__ void bfs_expand(Csr g, Levels lv, int cur) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= g.n || lv.level[v] != cur) return;
  for (int e = g.begin(v); e < g.end(v); ++e) lv.visit(g.col[e], cur + 1);
}

int main() {
  const int n = 1 << 20;
  std::vector<int> row(n + 1, 0);
  Rng rng(2011);
  for (int v = 0; v < n; ++v) {
    const double u = (rng.next() + 1.0) / 2147483649.0;  // (0, 1]
    row[v + 1] = row[v] + static_cast<int>(std::min(4096.0, std::floor(4.0 / std::pow(u, 1.0 / 1.5))));
  }
  const int edges = row[n];
  std::vector<int> col(edges);
  for (auto& c : col) c = static_cast<int>(rng.next() % n);
  int *drow, *dcol, *dlevel, *dchanged;
  CK(cudaMalloc(&drow, (n + 1) * sizeof(int)));
  CK(cudaMalloc(&dcol, edges * sizeof(int)));
  CK(cudaMalloc(&dlevel, n * sizeof(int)));
  CK(cudaMalloc(&dchanged, sizeof(int)));
  CK(cudaMemcpy(drow, row.data(), (n + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dcol, col.data(), edges * sizeof(int), cudaMemcpyHostToDevice));
  const Csr g{drow, dcol, n};
  const Levels lv{dlevel, dchanged};
  const int sources[3] = {7, n / 3, n - 5};
  long bad = 0, checked = 0;
  std::vector<int> got(n), want(n), frontier, next;
  for (int src : sources) {
    std::vector<int> init(n, -1);
    init[src] = 0;
    CK(cudaMemcpy(dlevel, init.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    for (int cur = 0;; ++cur) {
      CK(cudaMemset(dchanged, 0, sizeof(int)));
      bfs_expand<<<(n + 255) / 256, 256>>>(g, lv, cur);
      CK_LAUNCH();
      int changed = 0;
      CK(cudaMemcpy(&changed, dchanged, sizeof(int), cudaMemcpyDeviceToHost));
      if (!changed) break;
    }
    CK(cudaMemcpy(got.data(), dlevel, n * sizeof(int), cudaMemcpyDeviceToHost));
    std::fill(want.begin(), want.end(), -1);  // host BFS with a queue
    want[src] = 0;
    frontier.assign(1, src);
    for (int cur = 0; !frontier.empty(); ++cur, frontier.swap(next)) {
      next.clear();
      for (int v : frontier)
        for (int e = row[v]; e < row[v + 1]; ++e)
          if (want[col[e]] < 0) want[col[e]] = cur + 1, next.push_back(col[e]);
    }
    for (int v = 0; v < n; ++v, ++checked) bad += got[v] != want[v];
  }
  CK(cudaFree(drow));
  CK(cudaFree(dcol));
  CK(cudaFree(dlevel));
  CK(cudaFree(dchanged));
  return verdict("bfs_levels_powerlaw", bad, checked);
}
