// Hash-join probe: 4 M probe keys looked up in an open-addressing hash table (linear probing, MurmurHash3
// finalizer, 16 M slots at load 0.25) built from 4 M (key, payload) rows, one thread per probe key, the probe
// launched 3 times (three batches of probe keys). Fix: each slot holds its key and payload together (uint2,
// 128 MB), so a probe reads one 8-byte slot, one random 32-byte sector per hit instead of two.
#include "bench.cuh"
#include "murmur.cuh"

struct HashTable {  // slots[s] = (key, payload); key == kEmptyKey marks an empty slot
  const uint2* slots;
  unsigned mask;  // slots - 1 (slots a power of two)
  __device__ unsigned find(unsigned key) const {
    for (unsigned s = fmix32(key) & mask;; s = (s + 1) & mask) {
      const uint2 e = slots[s];
      if (e.x == key) return e.y;
      if (e.x == kEmptyKey) return kEmptyKey;
    }
  }
};

__global__ void probe_table(HashTable table, const unsigned* __restrict__ probes, unsigned* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = table.find(probes[i]);
}

int main() {
  const int rows = 4 << 20, slots = 16 << 20, batches = 3;
  std::vector<unsigned> keys(slots, kEmptyKey), vals(slots, 0), build(rows);
  Rng rng(1103);
  for (int r = 0; r < rows; ++r) {  // distinct keys: an odd multiplier is a bijection on 32 bits
    build[r] = static_cast<unsigned>(r) * 2654435761u + 12345u;
    unsigned s = fmix32(build[r]) & (slots - 1);
    while (keys[s] != kEmptyKey) s = (s + 1) & (slots - 1);
    keys[s] = build[r];
    vals[s] = static_cast<unsigned>(r);
  }
  std::vector<unsigned> probes(static_cast<long>(rows) * batches), got(probes.size());
  std::vector<unsigned> want(probes.size());
  for (size_t q = 0; q < probes.size(); ++q) {  // 7 of 8 probes hit
    const unsigned r = rng.next() % rows;
    const bool hit = (q % 8) != 7;
    probes[q] = hit ? build[r] : build[r] + 1u;  // +1: not a build key (multiplier odd, offsets apart)
    want[q] = hit ? r : kEmptyKey;
  }
  std::vector<uint2> table_slots(slots);
  for (int s = 0; s < slots; ++s) table_slots[s] = make_uint2(keys[s], vals[s]);
  uint2* d_slots;
  unsigned *d_probes, *d_out;
  CK(cudaMalloc(&d_slots, slots * sizeof(uint2)));
  CK(cudaMalloc(&d_probes, probes.size() * sizeof(unsigned)));
  CK(cudaMalloc(&d_out, probes.size() * sizeof(unsigned)));
  CK(cudaMemcpy(d_slots, table_slots.data(), slots * sizeof(uint2), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_probes, probes.data(), probes.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
  const HashTable table{d_slots, static_cast<unsigned>(slots - 1)};
  for (int b = 0; b < batches; ++b) {
    const long off = static_cast<long>(b) * rows;
    probe_table<<<(rows + 255) / 256, 256>>>(table, d_probes + off, d_out + off, rows);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_out, got.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (size_t q = 0; q < got.size(); ++q) bad += got[q] != want[q];
  CK(cudaFree(d_slots));
  for (unsigned* p : {d_probes, d_out}) CK(cudaFree(p));
  return verdict("hash_probe_split", bad, static_cast<long>(got.size()));
}
