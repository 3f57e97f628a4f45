// MurmurHash3's 32-bit finalizer (public-domain algorithm by Austin Appleby), shared by the host table
// builder and the device probe.
#pragma once

__host__ __device__ inline unsigned fmix32(unsigned h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

constexpr unsigned kEmptyKey = 0xffffffffu;
