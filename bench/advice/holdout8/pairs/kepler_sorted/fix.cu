// Two-body propagation of a 4 M-object orbit catalogue (kernel in include/kepler.cuh, found through -I as the
// Makefile does): 85% near-circular orbits (e < 0.05) and 15% transfer / Molniya orbits (e 0.6-0.9) in catalogue
// order, i.e. mixed at random. Fix: the catalogue is sorted by eccentricity once on the host (the elements change
// slowly, the screening propagates them every step), so a warp's lanes need about the same number of iterations;
// the kernel is the same, results are mapped back through the permutation.
#include "bench.cuh"
#include "kepler.cuh"

#include <algorithm>

int main() {
  const int count = 1 << 22;
  std::vector<float> a(count), e(count), n(count), m0(count);
  std::vector<float2> got(count);
  Rng rng(8106);
  for (int i = 0; i < count; ++i) {
    const bool eccentric = rng.next() % 100 < 15;
    e[i] = eccentric ? rng.uniform(0.6f, 0.9f) : rng.uniform(0.0f, 0.05f);
    a[i] = eccentric ? rng.uniform(24000.0f, 42000.0f) : rng.uniform(6700.0f, 8000.0f);
    n[i] = static_cast<float>(std::sqrt(398600.4418 / (static_cast<double>(a[i]) * a[i] * a[i])));
    m0[i] = rng.uniform(0.0f, 6.2831853f);
  }
  std::vector<int> order(count);  // sorted by eccentricity: warps of similar convergence
  for (int i = 0; i < count; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return e[x] < e[y]; });
  std::vector<float> sa(count), se(count), sn(count), sm(count);
  for (int k = 0; k < count; ++k) sa[k] = a[order[k]], se[k] = e[order[k]], sn[k] = n[order[k]], sm[k] = m0[order[k]];
  float *d_a, *d_e, *d_n, *d_m;
  float2* d_pos;
  CK(cudaMalloc(&d_a, count * sizeof(float)));
  CK(cudaMalloc(&d_e, count * sizeof(float)));
  CK(cudaMalloc(&d_n, count * sizeof(float)));
  CK(cudaMalloc(&d_m, count * sizeof(float)));
  CK(cudaMalloc(&d_pos, count * sizeof(float2)));
  CK(cudaMemcpy(d_a, sa.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_e, se.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_n, sn.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_m, sm.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  const OrbitCatalogue cat{count, 256, 1e-5f, d_a, d_e, d_n, d_m};
  const float t[3] = {600.0f, 1200.0f, 1800.0f};  // three screening epochs, seconds
  for (int rep = 0; rep < 3; ++rep) {
    propagate_orbits<<<(count + 255) / 256, 256>>>(cat, t[rep], d_pos);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_pos, count * sizeof(float2), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int k = 0; k < count; k += 11, ++checked) {  // exact solve in double at the last epoch
    const int i = order[k];
    double m = std::fmod(static_cast<double>(n[i]) * t[2] + m0[i], 2.0 * M_PI);
    double E = M_PI;  // Newton from pi converges for every e < 1 (Charles & Tatum 1998)
    for (int it = 0; it < 50; ++it) E = E - (E - e[i] * std::sin(E) - m) / (1.0 - e[i] * std::cos(E));
    const double x = a[i] * (std::cos(E) - e[i]), y = a[i] * std::sqrt(1.0 - static_cast<double>(e[i]) * e[i]) * std::sin(E);
    const double tol = 2e-3 * a[i];  // float mean anomaly at t and the 1e-5 stopping rule
    bad += !(std::fabs(got[k].x - x) <= tol && std::fabs(got[k].y - y) <= tol);
  }
  CK(cudaFree(d_a));
  CK(cudaFree(d_e));
  CK(cudaFree(d_n));
  CK(cudaFree(d_m));
  CK(cudaFree(d_pos));
  return verdict("kepler_sorted", bad, checked);
}
