// Parameter sweep of a damped Duffing oscillator x'' = -delta x' - alpha x - beta x^3: one thread per
// parameter set (512 K of them) integrates 1000 classical RK4 steps in float and stores the final state.
// Fix: the literals of the RK4 update carry the f suffix (0.5f, 6.0f, 2.0f), so it stays in FP32.
#include "bench.cuh"

struct Params {
  float delta, alpha, beta;
};

__device__ __forceinline__ float accel(float x, float v, Params p) {
  return -p.delta * v - p.alpha * x - p.beta * x * x * x;
}

__global__ void duffing_rk4(const Params* __restrict__ params, const float2* __restrict__ state0,
                            float2* __restrict__ state, int n, int steps, float dt) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Params p = params[i];
  float x = state0[i].x, v = state0[i].y;
  for (int s = 0; s < steps; ++s) {
    float k1x = v, k1v = accel(x, v, p);
    float k2x = v + 0.5f * dt * k1v, k2v = accel(x + 0.5f * dt * k1x, v + 0.5f * dt * k1v, p);
    float k3x = v + 0.5f * dt * k2v, k3v = accel(x + 0.5f * dt * k2x, v + 0.5f * dt * k2v, p);
    float k4x = v + dt * k3v, k4v = accel(x + dt * k3x, v + dt * k3v, p);
    x += dt / 6.0f * (k1x + 2.0f * k2x + 2.0f * k3x + k4x);
    v += dt / 6.0f * (k1v + 2.0f * k2v + 2.0f * k3v + k4v);
  }
  state[i] = make_float2(x, v);
}

static void reference(Params p, double x, double v, int steps, double dt, double* xo, double* vo) {
  auto acc = [&](double xx, double vv) { return -p.delta * vv - p.alpha * xx - p.beta * xx * xx * xx; };
  for (int s = 0; s < steps; ++s) {
    double k1x = v, k1v = acc(x, v);
    double k2x = v + 0.5 * dt * k1v, k2v = acc(x + 0.5 * dt * k1x, v + 0.5 * dt * k1v);
    double k3x = v + 0.5 * dt * k2v, k3v = acc(x + 0.5 * dt * k2x, v + 0.5 * dt * k2v);
    double k4x = v + dt * k3v, k4v = acc(x + dt * k3x, v + dt * k3v);
    x += dt / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
    v += dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
  }
  *xo = x;
  *vo = v;
}

int main() {
  const int n = 512 << 10, steps = 1000;
  const float dt = 0.01f;
  std::vector<Params> params(n);
  std::vector<float2> s0(n), s(n);
  Rng rng(3303);
  for (int i = 0; i < n; ++i) {
    // single-well (alpha > 0) and damped: the final state depends smoothly on rounding
    params[i] = {rng.uniform(0.05f, 0.3f), rng.uniform(0.5f, 4.0f), rng.uniform(0.1f, 2.0f)};
    s0[i] = make_float2(rng.uniform(-2.0f, 2.0f), rng.uniform(-1.0f, 1.0f));
  }
  Params* d_p;
  float2 *d_s0, *d_s;
  CK(cudaMalloc(&d_p, n * sizeof(Params)));
  CK(cudaMalloc(&d_s0, n * sizeof(float2)));
  CK(cudaMalloc(&d_s, n * sizeof(float2)));
  CK(cudaMemcpy(d_p, params.data(), n * sizeof(Params), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_s0, s0.data(), n * sizeof(float2), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    duffing_rk4<<<(n + 255) / 256, 256>>>(d_p, d_s0, d_s, n, steps, dt);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(s.data(), d_s, n * sizeof(float2), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < n; i += 257) {
    double x, v;
    reference(params[i], s0[i].x, s0[i].y, steps, dt, &x, &v);
    bad += !close_enough(s[i].x, x, 1e-3, 1e-4) || !close_enough(s[i].y, v, 1e-3, 1e-4);
    ++checked;
  }
  CK(cudaFree(d_p));
  CK(cudaFree(d_s0));
  CK(cudaFree(d_s));
  return verdict("rk4_duffing", bad, checked);
}
