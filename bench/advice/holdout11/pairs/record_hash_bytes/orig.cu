// Hash-join build side, hashing step: 1 M fixed-width string keys of 64 bytes (zero-padded names, a CHAR(64)
// column) hashed with 32-bit FNV-1a into a hash and a partition number, one thread per key, the key read
// byte by byte as the CPU code does (`key[i]` in the FNV loop): 64 one-byte loads per thread, lanes 64 bytes
// apart. Launched 3 times (three column chunks).
#include "bench.cuh"

struct FixedStrings {  // count keys of W bytes each, back to back
  const uint8_t* bytes;
  long count;
  template <int W>
  __device__ const uint8_t* key(long r) const { return bytes + r * W; }
};

struct Fnv1a {
  uint32_t h = 2166136261u;
  __host__ __device__ void add(uint32_t byte) { h = (h ^ byte) * 16777619u; }
};

template <int W>
__global__ void hash_keys(FixedStrings keys, uint32_t* __restrict__ hash, uint16_t* __restrict__ part, int parts) {
  const long r = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= keys.count) return;
  const uint8_t* k = keys.key<W>(r);
  Fnv1a f;
#pragma unroll 16
  for (int i = 0; i < W; ++i) f.add(k[i]);
  hash[r] = f.h;
  part[r] = static_cast<uint16_t>((f.h >> 16) % parts);
}

constexpr int kWidth = 64;

int main() {
  const long n = 1 << 20;
  const int chunks = 3, parts = 1000;
  std::vector<uint8_t> bytes(n * kWidth * chunks, 0);
  Rng rng(1108);
  for (long r = 0; r < n * chunks; ++r) {  // printable names of 8-64 characters, zero-padded
    const int len = 8 + static_cast<int>(rng.next() % 57);
    for (int i = 0; i < len; ++i) bytes[r * kWidth + i] = static_cast<uint8_t>('a' + rng.next() % 26);
  }
  uint8_t* d_bytes;
  uint32_t* d_hash;
  uint16_t* d_part;
  CK(cudaMalloc(&d_bytes, bytes.size()));
  CK(cudaMalloc(&d_hash, n * chunks * sizeof(uint32_t)));
  CK(cudaMalloc(&d_part, n * chunks * sizeof(uint16_t)));
  CK(cudaMemcpy(d_bytes, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  for (int c = 0; c < chunks; ++c) {
    const FixedStrings keys{d_bytes + c * n * kWidth, n};
    hash_keys<kWidth><<<static_cast<int>((n + 255) / 256), 256>>>(keys, d_hash + c * n, d_part + c * n, parts);
    CK_LAUNCH();
  }
  std::vector<uint32_t> hash(n * chunks);
  std::vector<uint16_t> part(n * chunks);
  CK(cudaMemcpy(hash.data(), d_hash, hash.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(part.data(), d_part, part.size() * sizeof(uint16_t), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (long r = 0; r < n * chunks; r += 5, ++checked) {
    Fnv1a f;
    for (int i = 0; i < kWidth; ++i) f.add(bytes[r * kWidth + i]);
    bad += hash[r] != f.h || part[r] != (f.h >> 16) % parts;
  }
  CK(cudaFree(d_bytes));
  CK(cudaFree(d_hash));
  CK(cudaFree(d_part));
  return verdict("record_hash_bytes", bad, checked);
}
