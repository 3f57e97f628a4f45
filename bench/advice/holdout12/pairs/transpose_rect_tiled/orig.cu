// Out-of-place transpose of a non-square 8192 x 2048 float matrix (rows x cols) into 2048 x 8192, done right:
// 32 x 32 tiles staged in shared memory padded to 33 columns (no bank conflicts), 32 x 8-thread blocks, each
// thread moving 4 elements, coalesced 128-byte reads and writes. 128 MB moved per launch: DRAM-bound.
#include "bench.cuh"

struct Matrix {
  float* data;
  int rows, cols;
  __host__ __device__ float& at(int r, int c) const { return data[static_cast<long>(r) * cols + c]; }
};

constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;

__global__ void transpose_tiled(Matrix in, Matrix out) {
  __shared__ float tile[kTile][kTile + 1];
  const int c0 = blockIdx.x * kTile, r0 = blockIdx.y * kTile;
  for (int dy = threadIdx.y; dy < kTile; dy += blockDim.y) tile[dy][threadIdx.x] = in.at(r0 + dy, c0 + threadIdx.x);
  __syncthreads();
  for (int dy = threadIdx.y; dy < kTile; dy += blockDim.y) out.at(c0 + dy, r0 + threadIdx.x) = tile[threadIdx.x][dy];
}

int main() {
  const int rows = 8192, cols = 2048;
  const long n = static_cast<long>(rows) * cols;
  Rng rng(1210);
  std::vector<float> h(n), got(n);
  for (auto& v : h) v = rng.uniform(-1.0f, 1.0f);
  float *din, *dout;
  CK(cudaMalloc(&din, n * sizeof(float)));
  CK(cudaMalloc(&dout, n * sizeof(float)));
  CK(cudaMemcpy(din, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const Matrix in{din, rows, cols}, out{dout, cols, rows};
  const dim3 block(kTile, kRowsPerPass), grid(cols / kTile, rows / kTile);
  for (int rep = 0; rep < 3; ++rep) {
    transpose_tiled<<<grid, block>>>(in, out);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int r = 0; r < rows; r += 3)
    for (int c = 0; c < cols; ++c, ++checked) bad += got[static_cast<long>(c) * rows + r] != h[static_cast<long>(r) * cols + c];
  CK(cudaFree(din));
  CK(cudaFree(dout));
  return verdict("transpose_rect_tiled", bad, checked);
}
