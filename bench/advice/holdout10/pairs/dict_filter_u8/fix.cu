// Column-store scan of a dictionary-encoded column (query engine, e.g. `WHERE region BETWEEN 'DE' AND 'FR'`
// after dictionary encoding): 128 M one-byte codes in, one selection byte (0/1) out per row, as a
// selection vector for the next operator. Fix: each thread takes 16 rows through one 16-byte load and one
// 16-byte store (uint4), 32768 blocks of 256 threads; the predicate per byte is unchanged.
#include "bench.cuh"

struct CodeRange {  // the predicate after dictionary lookup: codes lo..hi (inclusive) qualify
  unsigned char lo, hi;
  __device__ __host__ bool contains(unsigned char c) const { return c >= lo && c <= hi; }
};

__device__ unsigned select_word(unsigned w, CodeRange pred) {  // four codes in, four selection bytes out
  unsigned out = 0;
#pragma unroll
  for (int b = 0; b < 4; ++b) out |= (pred.contains((w >> (8 * b)) & 255) ? 1u : 0u) << (8 * b);
  return out;
}

__global__ void select_codes(const unsigned char* __restrict__ codes, long n, CodeRange pred,
                             unsigned char* __restrict__ sel) {
  const long v = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;  // n is a multiple of 16
  if (v < n / 16) {
    const uint4 c = reinterpret_cast<const uint4*>(codes)[v];
    reinterpret_cast<uint4*>(sel)[v] =
        make_uint4(select_word(c.x, pred), select_word(c.y, pred), select_word(c.z, pred), select_word(c.w, pred));
  }
}

int main() {
  const long n = 128L << 20;
  std::vector<unsigned char> codes(n), sel(n);
  Rng rng(10101);
  for (long i = 0; i < n; i += 4) {
    const unsigned r = rng.next();
    codes[i] = r & 255; codes[i + 1] = (r >> 8) & 255; codes[i + 2] = (r >> 16) & 255; codes[i + 3] = (r >> 23) & 255;
  }
  const CodeRange pred{37, 141};
  unsigned char *d_codes, *d_sel;
  CK(cudaMalloc(&d_codes, n));
  CK(cudaMalloc(&d_sel, n));
  CK(cudaMemcpy(d_codes, codes.data(), n, cudaMemcpyHostToDevice));
  const int block = 256;
  const unsigned grid = static_cast<unsigned>((n / 16 + block - 1) / block);
  for (int rep = 0; rep < 3; ++rep) {
    CK(cudaMemset(d_sel, 0xff, n));
    select_codes<<<grid, block>>>(d_codes, n, pred, d_sel);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(sel.data(), d_sel, n, cudaMemcpyDeviceToHost));
  long bad = 0;
  for (long i = 0; i < n; ++i) bad += sel[i] != (pred.contains(codes[i]) ? 1 : 0);
  CK(cudaFree(d_codes));
  CK(cudaFree(d_sel));
  return verdict("dict_filter_u8", bad, n);
}
