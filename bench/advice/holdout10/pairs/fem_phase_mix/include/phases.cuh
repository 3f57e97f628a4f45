// Constitutive updates of a three-phase voxel microstructure (fibre composite RVE) for a small-strain
// explicit FE code, shared by the host reference and the device kernel: tetrahedral kinematics and one
// stress update per phase (J2 plasticity with Voce hardening for the matrix, Perzyna viscoplastic
// sub-stepping for the fibre, a strain-dependent Prony-series relaxation for the interphase).
#pragma once
#include <cmath>

struct Sym3 {
  float xx, yy, zz, xy, yz, zx;
  __host__ __device__ float tr() const { return xx + yy + zz; }
  __host__ __device__ Sym3 dev() const {
    const float m = tr() / 3.0f;
    return {xx - m, yy - m, zz - m, xy, yz, zx};
  }
  __host__ __device__ float ddot(const Sym3& o) const {  // s : o
    return xx * o.xx + yy * o.yy + zz * o.zz + 2.0f * (xy * o.xy + yz * o.yz + zx * o.zx);
  }
  __host__ __device__ Sym3 scaled(float a, float iso) const { return {a * xx + iso, a * yy + iso, a * zz + iso, a * xy, a * yz, a * zx}; }
};

struct MatrixPhase {  // J2, Voce hardening sy = s0 + Q (1 - exp(-b ep)), 24 fixed Newton steps for the increment
  float mu, K, s0, Q, b;
  __host__ __device__ Sym3 stress(const Sym3& eps, float ep0) const {
    const Sym3 s = eps.dev().scaled(2.0f * mu, 0.0f);
    const float q = sqrtf(1.5f * s.ddot(s));
    float dg = 0.0f;
    for (int it = 0; it < 24; ++it) {
      const float h = expf(-b * (ep0 + dg));
      const float f = q - 3.0f * mu * dg - (s0 + Q * (1.0f - h));
      dg = fmaxf(dg - f / (-3.0f * mu - Q * b * h), 0.0f);
    }
    return s.scaled(1.0f - 3.0f * mu * dg / fmaxf(q, 1e-12f), K * eps.tr());
  }
};

struct FibrePhase {  // Perzyna overstress, rate g0 <q/sy - 1>^m, 16 sub-steps of the relaxation
  float mu, K, sy, g0, m, dt;
  __host__ __device__ Sym3 stress(const Sym3& eps) const {
    Sym3 s = eps.dev().scaled(2.0f * mu, 0.0f);
    for (int k = 0; k < 16; ++k) {
      const float q = sqrtf(1.5f * s.ddot(s));
      const float rate = g0 * powf(fmaxf(q / sy - 1.0f, 0.0f), m);
      s = s.scaled(fmaxf(1.0f - dt * 3.0f * mu * rate / fmaxf(q, 1e-12f), 0.0f), 0.0f);
    }
    return s.scaled(1.0f, K * eps.tr());
  }
};

struct InterPhase {  // shear relaxation G(t) = g_inf + sum g_i exp(-t / tau_i), tau_i shortened by strain
  float mu, K, ginf, g1, tau0, c, dt;
  __host__ __device__ Sym3 stress(const Sym3& eps) const {
    const Sym3 e = eps.dev();
    const float shift = expf(-c * sqrtf(2.0f / 3.0f * e.ddot(e)));
    float g = ginf;
    for (int i = 0; i < 16; ++i) {
      const float tau = tau0 * exp2f(0.5f * i) * shift;
      g += g1 * exp2f(-0.25f * i) * (1.0f - expf(-dt / tau)) * tau / dt;
    }
    return e.scaled(2.0f * mu * g, K * eps.tr());
  }
};

struct Phases {
  MatrixPhase matrix;
  FibrePhase fibre;
  InterPhase inter;
};

// Small strain of a linear tetrahedron from reference positions X and displacements u of its 4 nodes.
__host__ __device__ inline Sym3 tet_strain(const float4 (&X)[4], const float4 (&u)[4]) {
  const float a[3][3] = {{X[1].x - X[0].x, X[2].x - X[0].x, X[3].x - X[0].x},
                         {X[1].y - X[0].y, X[2].y - X[0].y, X[3].y - X[0].y},
                         {X[1].z - X[0].z, X[2].z - X[0].z, X[3].z - X[0].z}};
  const float d[3][3] = {{u[1].x - u[0].x, u[2].x - u[0].x, u[3].x - u[0].x},
                         {u[1].y - u[0].y, u[2].y - u[0].y, u[3].y - u[0].y},
                         {u[1].z - u[0].z, u[2].z - u[0].z, u[3].z - u[0].z}};
  const float c00 = a[1][1] * a[2][2] - a[1][2] * a[2][1], c01 = a[1][2] * a[2][0] - a[1][0] * a[2][2],
              c02 = a[1][0] * a[2][1] - a[1][1] * a[2][0];
  const float inv_det = 1.0f / (a[0][0] * c00 + a[0][1] * c01 + a[0][2] * c02);
  const float ai[3][3] = {{c00 * inv_det, (a[0][2] * a[2][1] - a[0][1] * a[2][2]) * inv_det, (a[0][1] * a[1][2] - a[0][2] * a[1][1]) * inv_det},
                          {c01 * inv_det, (a[0][0] * a[2][2] - a[0][2] * a[2][0]) * inv_det, (a[0][2] * a[1][0] - a[0][0] * a[1][2]) * inv_det},
                          {c02 * inv_det, (a[0][1] * a[2][0] - a[0][0] * a[2][1]) * inv_det, (a[0][0] * a[1][1] - a[0][1] * a[1][0]) * inv_det}};
  float H[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) H[i][j] = d[i][0] * ai[0][j] + d[i][1] * ai[1][j] + d[i][2] * ai[2][j];
  return {H[0][0], H[1][1], H[2][2], 0.5f * (H[0][1] + H[1][0]), 0.5f * (H[1][2] + H[2][1]), 0.5f * (H[2][0] + H[0][2])};
}

__host__ __device__ inline Sym3 phase_stress(const Phases& p, int phase, const Sym3& eps, float ep0) {
  switch (phase) {
    case 0: return p.matrix.stress(eps, ep0);
    case 1: return p.fibre.stress(eps);
    default: return p.inter.stress(eps);
  }
}
