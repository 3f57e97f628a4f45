// Semi-implicit (symplectic) Euler step of 8 M point bodies of a particle/rigid-body physics engine, done right:
// structure of float4 arrays (position + inverse mass, velocity, accumulated force), a one-wave
// grid (occupancy API) with a grid-stride loop, one 16-byte load of each array and one 16-byte store of position
// and velocity per body: v += f * inv_mass * dt, then x += v * dt, about ten FMAs per 80 bytes. 640 MB moved per
// launch: DRAM-bound. Three launches (three steps under the same forces). fix.cu (the probe): 512-thread
// blocks, still one wave.
#include "bench.cuh"

struct BodyState {
  float4* pos_invm;  // xyz position, w inverse mass
  float4* vel;       // xyz velocity, w unused
  const float4* force;
  int n;
};

struct Integrator {
  float dt;
  __host__ __device__ void step(float4& p, float4& v, const float4& f) const {
    const float a = p.w * dt;
    v.x += f.x * a;
    v.y += f.y * a;
    v.z += f.z * a;
    p.x += v.x * dt;
    p.y += v.y * dt;
    p.z += v.z * dt;
  }
};

__global__ void euler_step(BodyState s, Integrator in) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < s.n; i += gridDim.x * blockDim.x) {
    float4 p = s.pos_invm[i], v = s.vel[i];
    const float4 f = s.force[i];
    in.step(p, v, f);
    s.pos_invm[i] = p;
    s.vel[i] = v;
  }
}

constexpr int kThreads = 512;

int main() {
  const int n = 8 << 20;
  std::vector<float4> p(n), v(n), f(n);
  Rng rng(60);
  for (int i = 0; i < n; ++i) {
    p[i] = make_float4(rng.uniform(-10, 10), rng.uniform(-10, 10), rng.uniform(0, 20), rng.uniform(0.1f, 2.0f));
    v[i] = make_float4(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1), 0.0f);
    f[i] = make_float4(rng.uniform(-5, 5), rng.uniform(-5, 5), rng.uniform(-9.8f, 0.5f), 0.0f);
  }
  int sms = 0, per_sm = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, euler_step, kThreads, 0));
  float4 *dp, *dv, *df;
  CK(cudaMalloc(&dp, n * sizeof(float4)));
  CK(cudaMalloc(&dv, n * sizeof(float4)));
  CK(cudaMalloc(&df, n * sizeof(float4)));
  CK(cudaMemcpy(dp, p.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dv, v.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(df, f.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  const Integrator in{1.0f / 120.0f};
  for (int step = 0; step < 3; ++step) {
    euler_step<<<sms * per_sm, kThreads>>>(BodyState{dp, dv, df, n}, in);
    CK_LAUNCH();
  }
  std::vector<float4> gp(n), gv(n);
  CK(cudaMemcpy(gp.data(), dp, n * sizeof(float4), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(gv.data(), dv, n * sizeof(float4), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < n; i += 7) {
    float4 hp = p[i], hv = v[i];
    for (int step = 0; step < 3; ++step) in.step(hp, hv, f[i]);
    const float want[7] = {hp.x, hp.y, hp.z, hp.w, hv.x, hv.y, hv.z};
    const float have[7] = {gp[i].x, gp[i].y, gp[i].z, gp[i].w, gv[i].x, gv[i].y, gv[i].z};
    for (int k = 0; k < 7; ++k, ++checked) bad += !close_enough(have[k], want[k], 1e-5, 1e-5);
  }
  CK(cudaFree(dp));
  CK(cudaFree(dv));
  CK(cudaFree(df));
  return verdict("rigid_euler_soa4", bad, checked);
}
