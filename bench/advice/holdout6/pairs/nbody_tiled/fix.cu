// All-pairs gravitational accelerations of 32768 bodies as in GPU Gems 3, chapter 31 (Nyland, Harris, Prins),
// with its small-N variant (q = 4 threads per body), as orig.cu, with blocks of 128 bodies x 4 (512 threads)
// and tiles of 128 sources per quarter instead of 64: half as many barriers per interaction. A plausible
// tuning change for an issue-bound kernel that should not pay.
#include "bench.cuh"

constexpr int kQ = 4, kBodies = 128, kThreads = kBodies * kQ;  // threads per body, bodies per block

__device__ inline float3 body_body(float4 bi, float4 bj, float3 a, float eps2) {
  const float3 r = make_float3(bj.x - bi.x, bj.y - bi.y, bj.z - bi.z);
  const float d2 = r.x * r.x + r.y * r.y + r.z * r.z + eps2;
  const float inv = rsqrtf(d2);
  const float s = bj.w * inv * inv * inv;
  return make_float3(a.x + r.x * s, a.y + r.y * s, a.z + r.z * s);
}

__global__ void nbody_accel(const float4* __restrict__ pos, float4* __restrict__ acc, int n, float eps2) {
  __shared__ float4 tile[kQ][kBodies + 1];  // +1: the quarters' rows start in different banks
  const int part = threadIdx.x % kQ, slot = threadIdx.x / kQ;
  const int i = blockIdx.x * kBodies + slot;
  const float4 me = pos[i];
  const float4* src = pos + part * (n / kQ);
  float3 a = make_float3(0.0f, 0.0f, 0.0f);
  for (int t = 0; t < n / kQ / kBodies; ++t) {
    tile[part][slot] = src[t * kBodies + slot];
    __syncthreads();
#pragma unroll 8
    for (int j = 0; j < kBodies; ++j) a = body_body(me, tile[part][j], a, eps2);
    __syncthreads();
  }
#pragma unroll
  for (int d = 1; d < kQ; d *= 2) {
    a.x += __shfl_xor_sync(0xffffffffu, a.x, d);
    a.y += __shfl_xor_sync(0xffffffffu, a.y, d);
    a.z += __shfl_xor_sync(0xffffffffu, a.z, d);
  }
  if (part == 0) acc[i] = make_float4(a.x, a.y, a.z, 0.0f);
}

int main() {
  const int n = 32768;
  const float eps2 = 1e-4f;
  std::vector<float4> pos(n), got(n);
  Rng rng(7121);
  for (auto& p : pos)
    p = make_float4(rng.uniform(-1.0f, 1.0f), rng.uniform(-1.0f, 1.0f), rng.uniform(-1.0f, 1.0f),
                    rng.uniform(0.5f, 1.5f) / n);
  float4 *d_pos, *d_acc;
  CK(cudaMalloc(&d_pos, n * sizeof(float4)));
  CK(cudaMalloc(&d_acc, n * sizeof(float4)));
  CK(cudaMemcpy(d_pos, pos.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    nbody_accel<<<n / kBodies, kThreads>>>(d_pos, d_acc, n, eps2);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_acc, n * sizeof(float4), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < n; i += 509) {  // each component within 1e-4 of the sum of its terms' magnitudes
    double a[3] = {0, 0, 0}, mag[3] = {0, 0, 0};
    for (int j = 0; j < n; ++j) {
      const double r[3] = {(double)pos[j].x - pos[i].x, (double)pos[j].y - pos[i].y, (double)pos[j].z - pos[i].z};
      const double d2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + eps2, s = pos[j].w / (d2 * std::sqrt(d2));
      for (int c = 0; c < 3; ++c) {
        a[c] += r[c] * s;
        mag[c] += std::fabs(r[c] * s);
      }
    }
    const float g[3] = {got[i].x, got[i].y, got[i].z};
    for (int c = 0; c < 3; ++c, ++checked) bad += std::fabs(g[c] - a[c]) > 1e-4 * mag[c];
  }
  CK(cudaFree(d_pos));
  CK(cudaFree(d_acc));
  return verdict("nbody_tiled", bad, checked);
}
