// Weight dequantization, fixed: one wave of blocks (SMs x resident blocks per SM), each staging the codebook
// once and converting codes in a grid-stride loop, so the codebook load and the barrier are paid once per block
// instead of once per 256 codes.
#include "bench.cuh"

constexpr int kCodes = 256;

struct QuantTensor {
  const unsigned char* codes;
  const float* codebook;  // kCodes entries
  size_t n;
};

__global__ void dequant_codebook(QuantTensor t, float* __restrict__ out) {
  __shared__ float cb[kCodes];
  cb[threadIdx.x] = t.codebook[threadIdx.x];  // blockDim.x == kCodes
  __syncthreads();
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < t.n; i += (size_t)gridDim.x * blockDim.x)
    out[i] = cb[t.codes[i]];
}

int main() {
  const size_t n = (size_t)64 << 20;
  std::vector<unsigned char> codes(n);
  std::vector<float> cb(kCodes), out(n);
  Rng rng(5606);
  for (size_t i = 0; i < n; i += 3) {  // three codes per 31-bit draw
    const uint32_t r = rng.next();
    for (size_t k = 0; k < 3 && i + k < n; ++k) codes[i + k] = (unsigned char)(r >> (8 * k));
  }
  for (int k = 0; k < kCodes; ++k) cb[k] = -1.0f + 2.0f * k / (kCodes - 1) + rng.uniform(-0.002f, 0.002f);
  unsigned char* d_codes;
  float *d_cb, *d_out;
  CK(cudaMalloc(&d_codes, n));
  CK(cudaMalloc(&d_cb, kCodes * sizeof(float)));
  CK(cudaMalloc(&d_out, n * sizeof(float)));
  CK(cudaMemcpy(d_codes, codes.data(), n, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_cb, cb.data(), kCodes * sizeof(float), cudaMemcpyHostToDevice));
  const QuantTensor t{d_codes, d_cb, n};
  int sms = 0, per_sm = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, dequant_codebook, kCodes, 0));
  for (int layer = 0; layer < 3; ++layer) {  // three weight tensors of a layer (same data here)
    dequant_codebook<<<sms * per_sm, kCodes>>>(t, d_out);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (size_t i = 0; i < n; i += 3, ++checked) bad += out[i] != cb[codes[i]];
  CK(cudaFree(d_codes));
  CK(cudaFree(d_cb));
  CK(cudaFree(d_out));
  return verdict("dequant_lut_perblock", bad, checked);
}
