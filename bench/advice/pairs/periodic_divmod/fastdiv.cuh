// Division by a run-time divisor fixed for a whole launch, as a multiply-high and a shift
// (Granlund & Montgomery, "Division by invariant integers using multiplication", PLDI 1994, §4):
// q = (umulhi(n, m) + n) >> l with l = ceil(log2 d), m = floor(2^32 (2^l - d) / d) + 1.
// Exact for every 32-bit n and 1 <= d < 2^31.
#pragma once
#include <cstdint>

struct FastDiv {
  unsigned d, m, l;
  FastDiv() = default;
  explicit FastDiv(unsigned divisor) : d(divisor), m(0), l(0) {
    while ((1ull << l) < divisor) ++l;
    m = static_cast<unsigned>(((1ull << 32) * ((1ull << l) - divisor)) / divisor + 1);
  }
  __host__ __device__ unsigned div(unsigned n) const {
#ifdef __CUDA_ARCH__
    unsigned hi = __umulhi(n, m);
#else
    unsigned hi = static_cast<unsigned>((static_cast<uint64_t>(n) * m) >> 32);
#endif
    return static_cast<unsigned>((static_cast<uint64_t>(hi) + n) >> l);
  }
  __host__ __device__ unsigned mod(unsigned n) const { return n - div(n) * d; }
};
