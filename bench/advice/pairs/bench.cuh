// Host helpers shared by the advice-accuracy benchmark programs: CUDA error checks, a seeded random
// generator (no zero values unless asked), and a PASS/FAIL verdict that sets the exit code.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(call)                                                                                  \
  do {                                                                                            \
    cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                   \
                   cudaGetErrorString(e_));                                                       \
      std::exit(2);                                                                               \
    }                                                                                             \
  } while (0)

// After a launch: launch-configuration errors first, then errors raised while the kernel ran.
#define CK_LAUNCH()                   \
  do {                                \
    CK(cudaGetLastError());           \
    CK(cudaDeviceSynchronize());      \
  } while (0)

// PCG-style 64-bit LCG; deterministic per seed so orig and fix see the same inputs.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 2862933555777941757ull + 3037000493ull) {}
  uint32_t next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(s >> 33);  // 31 random bits
  }
  float uniform(float lo, float hi) { return lo + (hi - lo) * (static_cast<float>(next()) / 2147483648.0f); }
};

inline bool close_enough(double got, double want, double rtol, double atol) {
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

inline int verdict(const char* name, long bad, long checked) {
  if (bad == 0) {
    std::printf("%s: PASS (%ld values checked)\n", name, checked);
    return 0;
  }
  std::printf("%s: FAIL (%ld of %ld values differ)\n", name, bad, checked);
  return 1;
}
