// Per-image mean luminance of a batch of 16 RGBA8 frames (1024 x 1024), as an auto-exposure pass computes it:
// 32 x 8-thread blocks over each frame (blockIdx.z = frame), every thread converts its pixel (Frame::luma) and
// adds it to its frame's float accumulator with one global atomicAdd: 1 M atomics on each of 16 addresses per
// launch, serialized at L2.
#include "bench.cuh"

struct Frame {
  const uchar4* px;
  int w, h;
  __device__ __host__ float luma(int x, int y) const {
    const uchar4 c = px[static_cast<long>(y) * w + x];
    return 0.2126f * c.x + 0.7152f * c.y + 0.0722f * c.z;
  }
};

__global__ void frame_luma_sum(const uchar4* __restrict__ frames, int w, int h, float* __restrict__ sums) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  const Frame f{frames + static_cast<long>(blockIdx.z) * w * h, w, h};
  if (x < w && y < h) atomicAdd(&sums[blockIdx.z], f.luma(x, y));
}

int main() {
  const int batch = 16, w = 1024, h = 1024;
  const long px = static_cast<long>(w) * h;
  std::vector<uchar4> img(batch * px);
  Rng rng(9808);
  for (auto& c : img) {
    const unsigned r = rng.next();
    c = make_uchar4(r & 255, (r >> 8) & 255, (r >> 16) & 255, 255);
  }
  uchar4* d_img;
  float* d_sums;
  CK(cudaMalloc(&d_img, img.size() * sizeof(uchar4)));
  CK(cudaMalloc(&d_sums, batch * sizeof(float)));
  CK(cudaMemcpy(d_img, img.data(), img.size() * sizeof(uchar4), cudaMemcpyHostToDevice));
  const dim3 block(32, 8), grid(w / 32, h / 8, batch);
  for (int rep = 0; rep < 3; ++rep) {
    CK(cudaMemset(d_sums, 0, batch * sizeof(float)));
    frame_luma_sum<<<grid, block>>>(d_img, w, h, d_sums);
    CK_LAUNCH();
  }
  std::vector<float> sums(batch);
  CK(cudaMemcpy(sums.data(), d_sums, batch * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int b = 0; b < batch; ++b) {
    const Frame f{img.data() + b * px, w, h};
    double want = 0.0;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) want += f.luma(x, y);
    bad += !close_enough(sums[b] / px, want / px, 1e-3, 0.0);  // float accumulation order differs: 0.1%
  }
  CK(cudaFree(d_img));
  CK(cudaFree(d_sums));
  return verdict("image_means_atomic", bad, batch);
}
