// Direct-sum gravitational accelerations of 65536 bodies (a first port of a CPU N-body code: no tiling), bodies
// stored as an array of structures {x, y, z, m}, one thread per body looping over all others. Each warp reads the
// same body j at a time (a broadcast 16-byte load that hits L1), so the time goes to the interaction math:
// softened distance, a precise sqrtf and an IEEE division m / (d2 * r) per pair, built without -use_fast_math.
#include "bench.cuh"

struct Body {
  float x, y, z, m;
};

__global__ void gravity_direct(const Body* __restrict__ bodies, float4* __restrict__ acc, int n, float eps2) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Body bi = bodies[i];
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (int j = 0; j < n; ++j) {
    const Body bj = bodies[j];
    const float dx = bj.x - bi.x, dy = bj.y - bi.y, dz = bj.z - bi.z;
    const float d2 = dx * dx + dy * dy + dz * dz + eps2;
    const float r = sqrtf(d2);
    const float s = bj.m / (d2 * r);
    ax += dx * s;
    ay += dy * s;
    az += dz * s;
  }
  acc[i] = make_float4(ax, ay, az, 0.0f);
}

int main() {
  const int n = 65536;
  const float eps2 = 1e-4f;
  std::vector<Body> b(n);
  std::vector<float4> got(n);
  Rng rng(8102);
  for (int i = 0; i < n; ++i) b[i] = {rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(0.5f, 1.5f) / n};
  Body* d_b;
  float4* d_acc;
  CK(cudaMalloc(&d_b, n * sizeof(Body)));
  CK(cudaMalloc(&d_acc, n * sizeof(float4)));
  CK(cudaMemcpy(d_b, b.data(), n * sizeof(Body), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    gravity_direct<<<(n + 255) / 256, 256>>>(d_b, d_acc, n, eps2);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_acc, n * sizeof(float4), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < n; i += 2039, ++checked) {  // 33 sampled bodies, each against all n
    double a[3] = {0, 0, 0}, mag = 0;
    for (int j = 0; j < n; ++j) {
      const double dx = b[j].x - b[i].x, dy = b[j].y - b[i].y, dz = b[j].z - b[i].z;
      const double d2 = dx * dx + dy * dy + dz * dz + eps2;
      const double s = b[j].m / (d2 * std::sqrt(d2));
      a[0] += dx * s, a[1] += dy * s, a[2] += dz * s;
      mag += std::sqrt(d2) * s;  // sum of |term|: the scale of the rounding error
    }
    const float g3[3] = {got[i].x, got[i].y, got[i].z};
    for (int k = 0; k < 3; ++k) bad += !close_enough(g3[k], a[k], 1e-3, 1e-4 * mag);
  }
  CK(cudaFree(d_b));
  CK(cudaFree(d_acc));
  return verdict("nbody_direct_prefetch", bad, checked * 3);
}
