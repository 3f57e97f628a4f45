// Free rotation of 1 M rigid bodies (debris / satellite attitude propagation, game physics), a thread per body,
// 128 time steps per launch kept in registers: torque-free Euler equations for the body-frame angular velocity
// (principal inertia per body; explicit Euler), then the orientation quaternion advanced by the exponential map
// q <- q * (cos(|w| dt / 2), sin(|w| dt / 2) w / |w|) and renormalized. Per step one sqrtf for |w|, a sincosf,
// the divisions w / |w| and (I2 - I3) / I1..., a sqrtf and four divisions for the renormalization, built with
// the IEEE forms (precise division, square root and sin/cos). Three launches of 128 steps each (384 steps).
#include <cmath>

#include "bench.cuh"

struct Quat {
  float w, x, y, z;
  __host__ __device__ Quat operator*(const Quat& b) const {
    return {w * b.w - x * b.x - y * b.y - z * b.z, w * b.x + x * b.w + y * b.z - z * b.y,
            w * b.y - x * b.z + y * b.w + z * b.x, w * b.z + x * b.y - y * b.x + z * b.w};
  }
  __host__ __device__ Quat normalized() const {
    const float n = sqrtf(w * w + x * x + y * y + z * z);
    return {w / n, x / n, y / n, z / n};
  }
};

struct Bodies {  // structure of arrays: orientation, body-frame angular velocity, principal moments of inertia
  float4* q;
  float4* omega;   // .w unused
  const float4* inertia;  // .w unused
};

struct RigidStep {
  float dt;
  __host__ __device__ void advance(Quat& q, float& wx, float& wy, float& wz, float i1, float i2, float i3) const {
    const float ax = (i2 - i3) / i1 * wy * wz, ay = (i3 - i1) / i2 * wz * wx, az = (i1 - i2) / i3 * wx * wy;
    wx += dt * ax;
    wy += dt * ay;
    wz += dt * az;
    const float mag = sqrtf(wx * wx + wy * wy + wz * wz);
    float s, c;
    sincosf(0.5f * mag * dt, &s, &c);
    const Quat dq{c, s * wx / mag, s * wy / mag, s * wz / mag};
    q = (q * dq).normalized();
  }
};

__global__ void integrate_bodies(Bodies b, RigidStep step, int n, int steps) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 q4 = b.q[i], w4 = b.omega[i], in = b.inertia[i];
  Quat q{q4.x, q4.y, q4.z, q4.w};
  float wx = w4.x, wy = w4.y, wz = w4.z;
  for (int t = 0; t < steps; ++t) step.advance(q, wx, wy, wz, in.x, in.y, in.z);
  b.q[i] = make_float4(q.w, q.x, q.y, q.z);
  b.omega[i] = make_float4(wx, wy, wz, 0.0f);
}

int main() {
  const int n = 1 << 20, steps = 128, launches = 3;
  std::vector<float4> q(n), w(n), inertia(n);
  Rng rng(777);
  for (int i = 0; i < n; ++i) {
    const Quat r = Quat{rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(0.1f, 1)}.normalized();
    q[i] = make_float4(r.w, r.x, r.y, r.z);
    const float sx = rng.next() & 1 ? 1.0f : -1.0f;
    w[i] = make_float4(sx * rng.uniform(0.5f, 2.0f), rng.uniform(0.5f, 2.0f), -rng.uniform(0.5f, 2.0f), 0.0f);
    inertia[i] = make_float4(rng.uniform(1.0f, 1.5f), rng.uniform(1.6f, 2.2f), rng.uniform(2.3f, 3.0f), 0.0f);
  }
  float4 *dq, *dw, *din;
  CK(cudaMalloc(&dq, n * sizeof(float4)));
  CK(cudaMalloc(&dw, n * sizeof(float4)));
  CK(cudaMalloc(&din, n * sizeof(float4)));
  CK(cudaMemcpy(dq, q.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dw, w.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(din, inertia.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  const Bodies b{dq, dw, din};
  const RigidStep step{1.0f / 240.0f};
  for (int l = 0; l < launches; ++l) {
    integrate_bodies<<<(n + 255) / 256, 256>>>(b, step, n, steps);
    CK_LAUNCH();
  }
  std::vector<float4> gq(n), gw(n);
  CK(cudaMemcpy(gq.data(), dq, n * sizeof(float4), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(gw.data(), dw, n * sizeof(float4), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < n; i += 61) {  // sampled: the host integrates every 61st body in double
    double qw = q[i].x, qx = q[i].y, qy = q[i].z, qz = q[i].w, wx = w[i].x, wy = w[i].y, wz = w[i].z;
    const double i1 = inertia[i].x, i2 = inertia[i].y, i3 = inertia[i].z, dt = step.dt;
    for (int t = 0; t < steps * launches; ++t) {
      const double ax = (i2 - i3) / i1 * wy * wz, ay = (i3 - i1) / i2 * wz * wx, az = (i1 - i2) / i3 * wx * wy;
      wx += dt * ax, wy += dt * ay, wz += dt * az;
      const double mag = std::sqrt(wx * wx + wy * wy + wz * wz), s = std::sin(0.5 * mag * dt), c = std::cos(0.5 * mag * dt);
      const double bw = c, bx = s * wx / mag, by = s * wy / mag, bz = s * wz / mag;
      const double nw = qw * bw - qx * bx - qy * by - qz * bz, nx = qw * bx + qx * bw + qy * bz - qz * by;
      const double ny = qw * by - qx * bz + qy * bw + qz * bx, nz = qw * bz + qx * by - qy * bx + qz * bw;
      const double nn = std::sqrt(nw * nw + nx * nx + ny * ny + nz * nz);
      qw = nw / nn, qx = nx / nn, qy = ny / nn, qz = nz / nn;
    }
    const double want[7] = {qw, qx, qy, qz, wx, wy, wz};
    const float have[7] = {gq[i].x, gq[i].y, gq[i].z, gq[i].w, gw[i].x, gw[i].y, gw[i].z};
    for (int k = 0; k < 7; ++k, ++checked) bad += !close_enough(have[k], want[k], 1e-2, 1e-2);
  }
  CK(cudaFree(dq));
  CK(cudaFree(dw));
  CK(cudaFree(din));
  return verdict("quat_expmap_steps", bad, checked);
}
