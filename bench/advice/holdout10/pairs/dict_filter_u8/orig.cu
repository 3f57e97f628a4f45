// Column-store scan of a dictionary-encoded column (query engine, e.g. `WHERE region BETWEEN 'DE' AND 'FR'`
// after dictionary encoding): 128 M one-byte codes in, one selection byte (0/1) out per row, as a
// selection vector for the next operator. One thread per row: a 1-byte load and a 1-byte store per thread,
// 524288 blocks of 256 threads, each warp request moving 32 bytes.
#include "bench.cuh"

struct CodeRange {  // the predicate after dictionary lookup: codes lo..hi (inclusive) qualify
  unsigned char lo, hi;
  __device__ __host__ bool contains(unsigned char c) const { return c >= lo && c <= hi; }
};

__global__ void select_codes(const unsigned char* __restrict__ codes, long n, CodeRange pred,
                             unsigned char* __restrict__ sel) {
  const long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) sel[i] = pred.contains(codes[i]) ? 1 : 0;
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
  const unsigned grid = static_cast<unsigned>((n + block - 1) / block);
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
