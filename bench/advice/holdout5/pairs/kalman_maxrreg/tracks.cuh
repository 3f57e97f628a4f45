// Track state of a multi-target tracker: a 6-state constant-velocity Kalman filter per track (position and
// velocity in 3D), stored structure-of-arrays so that thread i reads component k of track i at k * n + i.
#pragma once

constexpr int kState = 6, kMeas = 3;

struct TrackSet {
  float* x;  // [kState][n] state means
  float* P;  // [kState * kState][n] covariances (full, row-major per track)
  int n;
};

struct FilterParams {
  float dt;  // frame interval (s)
  float q;   // process noise (acceleration variance)
  float r;   // measurement noise variance (per axis)
};

// One predict + update step of track i with measurement z (3 positions), in registers.
__device__ __forceinline__ void kalman_step(float x[kState], float P[kState * kState], const float z[kMeas],
                                            const FilterParams& f) {
  // predict: x = F x, P = F P F^T + Q with F = [I dt*I; 0 I]
  for (int k = 0; k < 3; ++k) x[k] += f.dt * x[k + 3];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < kState; ++c) P[r * kState + c] += f.dt * P[(r + 3) * kState + c];
  for (int r = 0; r < kState; ++r)
    for (int c = 0; c < 3; ++c) P[r * kState + c] += f.dt * P[r * kState + c + 3];
  const float q3 = f.q * f.dt * f.dt * f.dt / 3.0f, q2 = f.q * f.dt * f.dt / 2.0f, q1 = f.q * f.dt;
  for (int k = 0; k < 3; ++k) {
    P[k * kState + k] += q3;
    P[k * kState + k + 3] += q2;
    P[(k + 3) * kState + k] += q2;
    P[(k + 3) * kState + k + 3] += q1;
  }
  // innovation y = z - H x, S = H P H^T + R (H picks the positions)
  float y[kMeas], S[9];
  for (int k = 0; k < kMeas; ++k) y[k] = z[k] - x[k];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) S[r * 3 + c] = P[r * kState + c] + (r == c ? f.r : 0.0f);
  // S^-1 by cofactors
  const float c00 = S[4] * S[8] - S[5] * S[7], c01 = S[5] * S[6] - S[3] * S[8], c02 = S[3] * S[7] - S[4] * S[6];
  const float inv_det = 1.0f / (S[0] * c00 + S[1] * c01 + S[2] * c02);
  float Si[9] = {c00 * inv_det, (S[2] * S[7] - S[1] * S[8]) * inv_det, (S[1] * S[5] - S[2] * S[4]) * inv_det,
                 c01 * inv_det, (S[0] * S[8] - S[2] * S[6]) * inv_det, (S[2] * S[3] - S[0] * S[5]) * inv_det,
                 c02 * inv_det, (S[1] * S[6] - S[0] * S[7]) * inv_det, (S[0] * S[4] - S[1] * S[3]) * inv_det};
  // gain K = P H^T S^-1 (6 x 3)
  float K[kState * kMeas];
  for (int r = 0; r < kState; ++r)
    for (int c = 0; c < kMeas; ++c) {
      float acc = 0.0f;
      for (int m = 0; m < kMeas; ++m) acc += P[r * kState + m] * Si[m * 3 + c];
      K[r * kMeas + c] = acc;
    }
  // x += K y; P -= K (H P)  (H P = the first three rows of P, read before they change)
  for (int r = 0; r < kState; ++r) x[r] += K[r * 3] * y[0] + K[r * 3 + 1] * y[1] + K[r * 3 + 2] * y[2];
  float HP[kMeas * kState];
  for (int k = 0; k < kMeas * kState; ++k) HP[k] = P[k];
  for (int r = 0; r < kState; ++r)
    for (int c = 0; c < kState; ++c)
      P[r * kState + c] -= K[r * 3] * HP[c] + K[r * 3 + 1] * HP[kState + c] + K[r * 3 + 2] * HP[2 * kState + c];
}
