// Ray casting against a flat list of axis-aligned boxes (a broad phase / occlusion query without a BVH, e.g.
// line-of-sight tests against 512 obstacle boxes): 1 M rays, a thread per ray, every ray tested against every
// box with the geometry library's slab test (include/geometry.cuh, __noinline__ there: a CALL per box, the ray
// and box passed by reference), the boxes staged once per block in shared memory; per ray the number of boxes
// hit and the nearest entry distance. Three launches (three batches of rays, here the same rays).
#include "bench.cuh"
#include "geometry.cuh"

struct HitStats {
  int* count;
  float* nearest;
};

constexpr int kBoxes = 512, kThreads = 128;

__global__ void ray_box_hits(const Ray* __restrict__ rays, const Aabb* __restrict__ boxes, HitStats out, int n,
                             float tmax) {
  __shared__ Aabb sbox[kBoxes];
  for (int b = threadIdx.x; b < kBoxes; b += blockDim.x) sbox[b] = boxes[b];
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Ray r = rays[i];
  int hits = 0;
  float best = tmax;
  for (int b = 0; b < kBoxes; ++b) {
    const float t = slab_enter(r, sbox[b], tmax);
    if (t >= 0.0f) {
      ++hits;
      best = fminf(best, t);
    }
  }
  out.count[i] = hits;
  out.nearest[i] = best;
}

int main() {
  const int n = 1 << 20;
  const float tmax = 100.0f;
  std::vector<Ray> rays(n);
  std::vector<Aabb> boxes(kBoxes);
  Rng rng(2024);
  for (auto& b : boxes) {
    const Vec3 c{rng.uniform(-40, 40), rng.uniform(-40, 40), rng.uniform(-40, 40)};
    const Vec3 h{rng.uniform(1, 6), rng.uniform(1, 6), rng.uniform(1, 6)};
    b = Aabb{{c.x - h.x, c.y - h.y, c.z - h.z}, {c.x + h.x, c.y + h.y, c.z + h.z}};
  }
  for (auto& r : rays) {
    Vec3 d{rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1)};
    if (d.x == 0.0f) d.x = 1e-3f;
    if (d.y == 0.0f) d.y = 1e-3f;
    if (d.z == 0.0f) d.z = 1e-3f;
    r = Ray{{rng.uniform(-50, 50), rng.uniform(-50, 50), rng.uniform(-50, 50)}, {1.0f / d.x, 1.0f / d.y, 1.0f / d.z}};
  }
  Ray* drays;
  Aabb* dboxes;
  int* dcount;
  float* dnear;
  CK(cudaMalloc(&drays, n * sizeof(Ray)));
  CK(cudaMalloc(&dboxes, kBoxes * sizeof(Aabb)));
  CK(cudaMalloc(&dcount, n * sizeof(int)));
  CK(cudaMalloc(&dnear, n * sizeof(float)));
  CK(cudaMemcpy(drays, rays.data(), n * sizeof(Ray), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dboxes, boxes.data(), kBoxes * sizeof(Aabb), cudaMemcpyHostToDevice));
  for (int batch = 0; batch < 3; ++batch) {
    ray_box_hits<<<(n + kThreads - 1) / kThreads, kThreads>>>(drays, dboxes, HitStats{dcount, dnear}, n, tmax);
    CK_LAUNCH();
  }
  std::vector<int> count(n);
  std::vector<float> nearest(n);
  CK(cudaMemcpy(count.data(), dcount, n * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(nearest.data(), dnear, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0, hit_rays = 0;
  for (int i = 0; i < n; i += 61, checked += 2) {  // sampled: every 61st ray against all boxes on the host
    int hits = 0;
    float best = tmax;
    for (const auto& b : boxes) {
      const float t = slab_enter(rays[i], b, tmax);
      if (t >= 0.0f) ++hits, best = fminf(best, t);
    }
    hit_rays += hits > 0;
    bad += (count[i] != hits) + (nearest[i] != best);
  }
  if (hit_rays < checked / 8) bad += checked;  // the scene must make most rays hit something
  CK(cudaFree(drays));
  CK(cudaFree(dboxes));
  CK(cudaFree(dcount));
  CK(cudaFree(dnear));
  return verdict("ray_aabb_noinline", bad, checked);
}
