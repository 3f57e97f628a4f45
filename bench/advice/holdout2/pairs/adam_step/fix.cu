// One Adam optimizer step over 16 M fp32 parameters (a mid-sized model's update, PyTorch's default
// hyper-parameters), one thread per parameter: reads parameter, gradient and both moments, writes
// parameter and moments (28 bytes per parameter, 448 MB per step). The plausible change that gains
// nothing: four parameters per thread with float4 loads and stores (a quarter of the memory
// instructions, the same bytes); the scalar original already streams at the DRAM roofline.
#include "bench.cuh"

__global__ void adam_update(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m,
                            float* __restrict__ v, int n, float lr, float beta1, float beta2, float eps,
                            float bias1, float bias2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;  // four parameters
  if (4 * i >= n) return;  // n is a multiple of 4
  float4 gi = reinterpret_cast<const float4*>(g)[i], mi = reinterpret_cast<float4*>(m)[i];
  float4 vi = reinterpret_cast<float4*>(v)[i], pi = reinterpret_cast<float4*>(p)[i];
  float* gs = &gi.x;
  float* ms = &mi.x;
  float* vs = &vi.x;
  float* ps = &pi.x;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    ms[k] = beta1 * ms[k] + (1.0f - beta1) * gs[k];
    vs[k] = beta2 * vs[k] + (1.0f - beta2) * gs[k] * gs[k];
    ps[k] -= lr * (ms[k] / bias1) / (sqrtf(vs[k] / bias2) + eps);
  }
  reinterpret_cast<float4*>(m)[i] = mi;
  reinterpret_cast<float4*>(v)[i] = vi;
  reinterpret_cast<float4*>(p)[i] = pi;
}

int main() {
  const int n = 16 << 20;
  const float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  const int step = 10;  // bias corrections of step 10
  const float bias1 = 1.0f - std::pow(beta1, (float)step), bias2 = 1.0f - std::pow(beta2, (float)step);
  std::vector<float> p(n), g(n), m(n), v(n), p_out(n), m_out(n), v_out(n);
  Rng rng(1010);
  for (int i = 0; i < n; ++i) {
    p[i] = rng.uniform(-1.0f, 1.0f);
    g[i] = rng.uniform(-0.01f, 0.01f);
    m[i] = rng.uniform(-0.01f, 0.01f);
    v[i] = rng.uniform(1e-6f, 1e-4f);
  }
  float *d_p, *d_g, *d_m, *d_v;
  for (float** d : {&d_p, &d_g, &d_m, &d_v}) CK(cudaMalloc(d, n * sizeof(float)));
  CK(cudaMemcpy(d_p, p.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_g, g.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_m, m.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_v, v.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {  // three steps with the same gradient
    adam_update<<<n / 1024, 256>>>(d_p, d_g, d_m, d_v, n, lr, beta1, beta2, eps, bias1, bias2);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(p_out.data(), d_p, n * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(m_out.data(), d_m, n * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(v_out.data(), d_v, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int i = 0; i < n; ++i) {
    double pi = p[i], mi = m[i], vi = v[i];
    for (int rep = 0; rep < 3; ++rep) {
      mi = beta1 * mi + (1.0 - beta1) * g[i];
      vi = beta2 * vi + (1.0 - beta2) * (double)g[i] * g[i];
      pi -= lr * (mi / bias1) / (std::sqrt(vi / bias2) + eps);
    }
    // float rounding of p (|p| <= ~1) and m (~0.01) over three steps; a wrong update is ~3e-3 per step
    bad += !close_enough(p_out[i], pi, 1e-6, 1e-6) || !close_enough(m_out[i], mi, 1e-5, 1e-8) ||
           !close_enough(v_out[i], vi, 1e-5, 1e-12);
  }
  for (float* d : {d_p, d_g, d_m, d_v}) CK(cudaFree(d));
  return verdict("adam_step", bad, n);
}
