// Shared helpers for the warpwise examples: error checking and event timing.
#pragma once
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                       \
  do {                                                                                    \
    cudaError_t err_ = (call);                                                            \
    if (err_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                  \
                   cudaGetErrorString(err_));                                             \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

// Checks the launch itself and the kernel's completion.
#define CHECK_LAUNCH()                 \
  do {                                 \
    CHECK(cudaGetLastError());         \
    CHECK(cudaDeviceSynchronize());    \
  } while (0)

// Deterministic pseudo-random numbers (xorshift), so host and device agree on inputs.
static inline unsigned ww_rand(unsigned long long* s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return static_cast<unsigned>(*s >> 11);
}
