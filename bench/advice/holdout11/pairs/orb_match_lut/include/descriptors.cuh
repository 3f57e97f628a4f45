// 256-bit binary feature descriptors (ORB / BRIEF) and the brute-force matcher's result record, shared by the
// host reference and the kernels.
#pragma once
#include <cstdint>

struct Descriptor256 {
  uint32_t w[8];
};

struct Match {  // best and second-best Hamming distance of a query over the train set
  int best_idx;
  int best, second;
};

// The portable popcount the CPU matcher used: one 256-entry table of byte counts.
inline void fill_byte_popcounts(uint8_t table[256]) {
  for (int b = 0; b < 256; ++b) {
    int c = 0;
    for (int v = b; v; v >>= 1) c += v & 1;
    table[b] = static_cast<uint8_t>(c);
  }
}
