// int8 embedding vectors packed four per 32-bit word (little-endian byte order, as the quantizer writes them),
// shared by the host reference and the search kernel.
#pragma once
#include <cstdint>

struct Int8Vectors {
  const int* words;  // count x kWords, row-major
  int count;
  static constexpr int kDim = 256;
  static constexpr int kWords = kDim / 4;
  __host__ __device__ const int* row(int v) const { return words + static_cast<long>(v) * kWords; }
};

// Signed dot product of two packed words, byte by byte (the portable version of dp4a).
__host__ __device__ inline int dot_bytes(int a, int b) {
  int s = 0;
  for (int k = 0; k < 4; ++k) {
    const int ak = static_cast<signed char>((a >> (8 * k)) & 0xff);
    const int bk = static_cast<signed char>((b >> (8 * k)) & 0xff);
    s += ak * bk;
  }
  return s;
}
