// Direct-sum gravitational accelerations of 32768 tracer particles in the field of 8192 bodies (one step
// of a star-cluster code), one thread per tracer, Plummer softening. The force law is written as m_j r / (r^2 + eps^2)^1.5 with
// rsqrtf: 1 / (r^2 + eps^2)^1.5 is the cube of one reciprocal square root, all in FP32 (MUFU.RSQ and
// three multiplies instead of the FP64 pow routine).
#include "bench.cuh"

__global__ void accelerations(const float4* __restrict__ tracer, const float4* __restrict__ body,
                              float3* __restrict__ acc, int n, int m, float eps2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 bi = tracer[i];
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (int j = 0; j < m; ++j) {
    float4 bj = body[j];  // the same body for every lane: one broadcast load per warp
    float dx = bj.x - bi.x, dy = bj.y - bi.y, dz = bj.z - bi.z;
    float d2 = dx * dx + dy * dy + dz * dz + eps2;
    float inv = rsqrtf(d2);
    float s = bj.w * inv * inv * inv;
    ax += s * dx;
    ay += s * dy;
    az += s * dz;
  }
  acc[i] = make_float3(ax, ay, az);
}

int main() {
  const int n = 32768, m = 8192;
  const float eps2 = 1e-4f;
  std::vector<float4> tracer(n), body(m);
  std::vector<float3> acc(n);
  Rng rng(303);
  for (auto& b : body) b = make_float4(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(0.5f, 1.5f) / m);
  for (auto& t : tracer) t = make_float4(rng.uniform(-1.2f, 1.2f), rng.uniform(-1.2f, 1.2f), rng.uniform(-1.2f, 1.2f), 0.0f);
  float4 *d_tracer, *d_body;
  float3* d_acc;
  CK(cudaMalloc(&d_tracer, n * sizeof(float4)));
  CK(cudaMalloc(&d_body, m * sizeof(float4)));
  CK(cudaMalloc(&d_acc, n * sizeof(float3)));
  CK(cudaMemcpy(d_tracer, tracer.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_body, body.data(), m * sizeof(float4), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    accelerations<<<n / 256, 256>>>(d_tracer, d_body, d_acc, n, m, eps2);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(acc.data(), d_acc, n * sizeof(float3), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < n; i += 61) {  // sampled reference: a full one is 268 M interactions
    double ax = 0, ay = 0, az = 0, mag = 0;
    for (int j = 0; j < m; ++j) {
      double dx = (double)body[j].x - tracer[i].x, dy = (double)body[j].y - tracer[i].y, dz = (double)body[j].z - tracer[i].z;
      double d2 = dx * dx + dy * dy + dz * dz + eps2;
      double s = body[j].w / (d2 * std::sqrt(d2));
      ax += s * dx;
      ay += s * dy;
      az += s * dz;
      mag += s * std::sqrt(d2 - eps2);
    }
    double tol = 1e-4 * mag;
    bad += !close_enough(acc[i].x, ax, 0.0, tol) + !close_enough(acc[i].y, ay, 0.0, tol) + !close_enough(acc[i].z, az, 0.0, tol);
    checked += 3;
  }
  CK(cudaFree(d_tracer));
  CK(cudaFree(d_body));
  CK(cudaFree(d_acc));
  return verdict("nbody_pow_double", bad, checked);
}
