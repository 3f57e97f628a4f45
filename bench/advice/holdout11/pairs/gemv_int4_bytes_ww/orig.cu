// Batch-1 decode GEMVs of a 7B-class decoder layer with 4-bit weights (W4A32, symmetric int4 with one fp32
// scale per group of 128 weights along K, two weights per byte, low nibble first): y = W x for the QKV
// (12288 x 4096), up (11008 x 4096) and down (4096 x 11008) shapes, one launch each. A warp per output row,
// lanes striding the row one byte (two weights) at a time: 32-byte warp requests, a scale load and two
// conversions per byte.
#include "bench.cuh"

struct QuantMatrix {  // rows x cols int4, row-major, cols / 2 bytes per row; scales rows x cols / GROUP
  const uint8_t* q;
  const float* scale;
  int rows, cols;
};

__device__ inline float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <int GROUP>
__global__ void gemv_w4(QuantMatrix w, const float* __restrict__ x, float* __restrict__ y) {
  const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= w.rows) return;
  const uint8_t* q = w.q + static_cast<long>(row) * (w.cols / 2);
  const float* s = w.scale + static_cast<long>(row) * (w.cols / GROUP);
  float acc = 0.0f;
  for (int b = lane; b < w.cols / 2; b += 32) {
    const int k = 2 * b;
    const uint32_t v = q[b];
    const float sc = s[k / GROUP];
    acc += sc * static_cast<float>(static_cast<int>(v & 15u) - 8) * x[k];
    acc += sc * static_cast<float>(static_cast<int>(v >> 4) - 8) * x[k + 1];
  }
  acc = warp_sum(acc);
  if (lane == 0) y[row] = acc;
}

constexpr int kGroup = 128;

int main() {
  const int shapes[3][2] = {{12288, 4096}, {11008, 4096}, {4096, 11008}};
  Rng rng(1107);
  long bad = 0, checked = 0;
  for (const auto& sh : shapes) {
    const int rows = sh[0], cols = sh[1];
    std::vector<uint8_t> q(static_cast<long>(rows) * cols / 2);
    std::vector<float> scale(static_cast<long>(rows) * cols / kGroup), x(cols), y(rows);
    for (auto& b : q) b = static_cast<uint8_t>(rng.next());
    for (auto& s : scale) s = rng.uniform(0.002f, 0.02f);
    for (auto& v : x) v = rng.uniform(-1.0f, 1.0f);
    uint8_t* d_q;
    float *d_s, *d_x, *d_y;
    CK(cudaMalloc(&d_q, q.size()));
    CK(cudaMalloc(&d_s, scale.size() * sizeof(float)));
    CK(cudaMalloc(&d_x, cols * sizeof(float)));
    CK(cudaMalloc(&d_y, rows * sizeof(float)));
    CK(cudaMemcpy(d_q, q.data(), q.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_s, scale.data(), scale.size() * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_x, x.data(), cols * sizeof(float), cudaMemcpyHostToDevice));
    const QuantMatrix w{d_q, d_s, rows, cols};
    gemv_w4<kGroup><<<(rows + 7) / 8, 256>>>(w, d_x, d_y);
    CK_LAUNCH();
    CK(cudaMemcpy(y.data(), d_y, rows * sizeof(float), cudaMemcpyDeviceToHost));
    for (int r = 0; r < rows; r += 3, ++checked) {
      double want = 0.0, mag = 0.0;
      for (int k = 0; k < cols; ++k) {
        const uint8_t b = q[static_cast<long>(r) * (cols / 2) + k / 2];
        const int v = (k % 2 ? (b >> 4) : (b & 15)) - 8;
        const double t = static_cast<double>(scale[static_cast<long>(r) * (cols / kGroup) + k / kGroup]) * v * x[k];
        want += t;
        mag += std::fabs(t);
      }
      bad += !close_enough(y[r], want, 0.0, 4e-5 * mag + 1e-6);
    }
    CK(cudaFree(d_q));
    CK(cudaFree(d_s));
    CK(cudaFree(d_x));
    CK(cudaFree(d_y));
  }
  return verdict("gemv_int4_bytes_ww", bad, checked);
}
