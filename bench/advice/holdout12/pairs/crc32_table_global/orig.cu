// CRC-32 (IEEE 802.3, reflected, table-driven) of 2 M fixed-size 64-byte packet records, a thread per record,
// as a storage/network checksum offload. Each record is read with four 16-byte loads; the bytes go through
// the classic byte-at-a-time loop crc = table[(crc ^ b) & 0xff] ^ (crc >> 8), the 256-entry table read from
// global memory (const __restrict__): 64 dependent, data-dependent table loads per record, 32 different
// entries per warp load.
#include "bench.cuh"

struct Crc32Table {
  unsigned entry[256];
  void build() {
    for (unsigned i = 0; i < 256; ++i) {
      unsigned c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      entry[i] = c;
    }
  }
};

struct Records {
  const uint4* words;  // 4 uint4 per record
  int count;
};

__device__ __forceinline__ unsigned crc_word(const unsigned* table, unsigned crc, unsigned w) {
#pragma unroll
  for (int b = 0; b < 4; ++b) crc = table[(crc ^ (w >> (8 * b))) & 0xffu] ^ (crc >> 8);
  return crc;
}

__global__ void crc32_records(Records r, const unsigned* __restrict__ table, unsigned* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= r.count) return;
  unsigned crc = 0xffffffffu;
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const uint4 v = r.words[static_cast<long>(i) * 4 + q];
    crc = crc_word(table, crc, v.x);
    crc = crc_word(table, crc, v.y);
    crc = crc_word(table, crc, v.z);
    crc = crc_word(table, crc, v.w);
  }
  out[i] = ~crc;
}

int main() {
  const int count = 2 << 20;
  Rng rng(1207);
  std::vector<unsigned> data(static_cast<long>(count) * 16);
  for (auto& w : data) w = rng.next() ^ (rng.next() << 16);
  Crc32Table t;
  t.build();
  uint4* dd;
  unsigned *dt, *dout;
  CK(cudaMalloc(&dd, data.size() * sizeof(unsigned)));
  CK(cudaMalloc(&dt, sizeof(t.entry)));
  CK(cudaMalloc(&dout, count * sizeof(unsigned)));
  CK(cudaMemcpy(dd, data.data(), data.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dt, t.entry, sizeof(t.entry), cudaMemcpyHostToDevice));
  const Records r{dd, count};
  for (int rep = 0; rep < 3; ++rep) {
    crc32_records<<<count / 256, 256>>>(r, dt, dout);
    CK_LAUNCH();
  }
  std::vector<unsigned> got(count);
  CK(cudaMemcpy(got.data(), dout, count * sizeof(unsigned), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < count; i += 13, ++checked) {
    unsigned crc = 0xffffffffu;  // bitwise CRC-32 over the record's bytes in memory order
    for (int k = 0; k < 64; ++k) {
      crc ^= (data[static_cast<long>(i) * 16 + k / 4] >> (8 * (k % 4))) & 0xffu;
      for (int b = 0; b < 8; ++b) crc = (crc & 1u) ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
    }
    bad += got[i] != ~crc;
  }
  CK(cudaFree(dd));
  CK(cudaFree(dt));
  CK(cudaFree(dout));
  return verdict("crc32_table_global", bad, checked);
}
