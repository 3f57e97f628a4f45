// The matrix-vector products of one decoder layer of a 7B-class LLM at batch size 1 (token generation),
// fp16 weights and activations, fp32 accumulation: fused QKV (12288 x 4096), MLP up (11008 x 4096) and
// down (4096 x 11008), the same kernel launched three times with different shapes. One warp per output
// row, the lanes striding the row one __half at a time (2-byte loads), a __shfl_xor_sync reduction.
// gemv_fp16_decode_ww, fix: warpwise's first advice on gemv_fp16_decode (kernel_merge) applied as its suggestion
// words it ("merge them into one launch over all the work (a table of the inputs, as multi-tensor launches
// do)"): one launch of gemv_f16 over the blocks of all three products, a table of the three (W, x, y, rows, cols)
// and each product's first block passed by value, each block picking its product from the table. The per-row
// work (2-byte loads, the loop, the reduction) is unchanged. (The three products here read independent inputs;
// in a real decoder the down projection reads the MLP's output, so only QKV and up could share a launch.)
#include <cuda_fp16.h>

#include "bench.cuh"

// orig.cu's kernel body, for one product, with `block` in place of blockIdx.x; the loads of W and x through
// __ldg, as orig.cu's read-only __restrict__ kernel parameters compile them (LDG.E.U16.CONSTANT): pointers taken
// from the table lose that, so without __ldg the loads would change flavour as well as the launch count
__device__ __forceinline__ void gemv_rows(const __half* __restrict__ W, const __half* __restrict__ x,
                                          __half* __restrict__ y, int rows, int cols, int block) {
  const int row = (block * blockDim.x + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const __half* w = W + (size_t)row * cols;
  float acc = 0.0f;
  for (int k = lane; k < cols; k += 32) acc += __half2float(__ldg(&w[k])) * __half2float(__ldg(&x[k]));
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (lane == 0) y[row] = __float2half(acc);
}

struct Gemv {
  const __half* W;
  const __half* x;
  __half* y;
  int rows, cols, first_block;  // first_block: this product's first block in the merged grid
};
struct GemvTable {
  Gemv g[3];
};

// one launch over the blocks of all three products: each block finds its product in the table (selected by
// value with constant indices, so the parameter is not indexed at run time)
__global__ void gemv_f16(GemvTable table) {
  const int b = blockIdx.x;
  const Gemv g = b >= table.g[2].first_block ? table.g[2] : b >= table.g[1].first_block ? table.g[1] : table.g[0];
  gemv_rows(g.W, g.x, g.y, g.rows, g.cols, b - g.first_block);
}

// Seeded random fp16 bit patterns (no host-side float->half conversion, which would take seconds):
// sign, a random 10-bit mantissa and one of three exponents, |v| in [2^(e_lo-15), 2^(e_lo-12)).
static void fill_half(std::vector<__half>& v, Rng& rng, unsigned e_lo) {
  for (auto& h : v) {
    const unsigned r = rng.next();
    const unsigned short bits = (unsigned short)(((r & 1u) << 15) | ((e_lo + (r >> 11) % 3u) << 10) | ((r >> 1) & 0x3ffu));
    h = __ushort_as_half(bits);
  }
}

struct Layer {
  int rows, cols;
};

int main() {
  const Layer layers[3] = {{12288, 4096}, {11008, 4096}, {4096, 11008}};  // qkv, up, down
  Rng rng(4403);
  std::vector<__half> hW[3], hx[3], hy[3];
  __half *dW[3], *dx[3], *dy[3];
  for (int l = 0; l < 3; ++l) {
    const size_t rows = layers[l].rows, cols = layers[l].cols;
    hW[l].resize(rows * cols);
    hx[l].resize(cols);
    hy[l].resize(rows);
    fill_half(hW[l], rng, 8);   // |w| in [2^-7, 2^-4)
    fill_half(hx[l], rng, 13);  // |x| in [0.25, 2)
    CK(cudaMalloc(&dW[l], rows * cols * sizeof(__half)));
    CK(cudaMalloc(&dx[l], cols * sizeof(__half)));
    CK(cudaMalloc(&dy[l], rows * sizeof(__half)));
    CK(cudaMemcpy(dW[l], hW[l].data(), rows * cols * sizeof(__half), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dx[l], hx[l].data(), cols * sizeof(__half), cudaMemcpyHostToDevice));
  }
  {
    const int threads = 256, rows_per_block = threads / 32;
    GemvTable table{};
    int blocks = 0;
    for (int l = 0; l < 3; ++l) {
      table.g[l] = Gemv{dW[l], dx[l], dy[l], layers[l].rows, layers[l].cols, blocks};
      blocks += (layers[l].rows + rows_per_block - 1) / rows_per_block;
    }
    gemv_f16<<<blocks, threads>>>(table);  // one launch: 1536 + 1376 + 512 blocks
    CK_LAUNCH();
  }
  long bad = 0, checked = 0;
  for (int l = 0; l < 3; ++l) {
    const int rows = layers[l].rows, cols = layers[l].cols;
    CK(cudaMemcpy(hy[l].data(), dy[l], rows * sizeof(__half), cudaMemcpyDeviceToHost));
    for (int r = 0; r < rows; r += 13) {
      double want = 0.0, mag = 0.0;
      for (int k = 0; k < cols; ++k) {
        const double p = (double)__half2float(hW[l][(size_t)r * cols + k]) * (double)__half2float(hx[l][k]);
        want += p;
        mag += std::fabs(p);
      }
      // fp32 accumulation error (<< 1e-4 of the magnitude) plus the fp16 rounding of the result (2^-11)
      bad += !close_enough(__half2float(hy[l][r]), want, 1.0 / 1024, 1e-4 * mag);
      ++checked;
    }
    CK(cudaFree(dW[l]));
    CK(cudaFree(dx[l]));
    CK(cudaFree(dy[l]));
  }
  return verdict("gemv_fp16_decode_ww", bad, checked);
}
