// Pre-processing of a batch of 16 RGB8 images (128 x 128, interleaved HWC) into a normalized planar float NCHW
// tensor, ((x / 255) - mean[c]) / std[c], as an inference front end ported from a per-image CPU loop does it:
// one launch per image and colour plane (48 launches of 16 K pixels, 8 x 8 blocks of 16 x 16 threads each).
// The program runs the batch once.
#include "bench.cuh"

struct PlaneJob {
  const unsigned char* hwc;  // this image, interleaved RGB
  float* plane;              // this image's output plane c
  int c;
  float mean, inv_std;
  __device__ __host__ float value(unsigned char v) const { return (v * (1.0f / 255.0f) - mean) * inv_std; }
};

__global__ void normalize_plane(PlaneJob job, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) job.plane[y * w + x] = job.value(job.hwc[3 * (y * w + x) + job.c]);
}

int main() {
  const int batch = 16, w = 128, h = 128, px = w * h;
  const float mean[3] = {0.485f, 0.456f, 0.406f}, stdv[3] = {0.229f, 0.224f, 0.225f};
  std::vector<unsigned char> img(static_cast<size_t>(batch) * px * 3);
  std::vector<float> out(static_cast<size_t>(batch) * 3 * px);
  Rng rng(9404);
  for (auto& v : img) v = static_cast<unsigned char>(rng.next() % 256);
  unsigned char* d_img;
  float* d_out;
  CK(cudaMalloc(&d_img, img.size()));
  CK(cudaMalloc(&d_out, out.size() * sizeof(float)));
  CK(cudaMemcpy(d_img, img.data(), img.size(), cudaMemcpyHostToDevice));
  const dim3 block(16, 16), grid(w / 16, h / 16);
  for (int b = 0; b < batch; ++b)
    for (int c = 0; c < 3; ++c) {
      const PlaneJob job{d_img + static_cast<size_t>(b) * px * 3, d_out + (static_cast<size_t>(b) * 3 + c) * px, c,
                         mean[c], 1.0f / stdv[c]};
      normalize_plane<<<grid, block>>>(job, w, h);
      CK_LAUNCH();
    }
  CK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int b = 0; b < batch; ++b)
    for (int c = 0; c < 3; ++c) {
      const PlaneJob job{nullptr, nullptr, c, mean[c], 1.0f / stdv[c]};
      for (int i = 0; i < px; ++i)
        bad += !close_enough(out[(static_cast<size_t>(b) * 3 + c) * px + i],
                             job.value(img[(static_cast<size_t>(b) * px + i) * 3 + c]), 1e-5, 1e-5);
    }
  CK(cudaFree(d_img));
  CK(cudaFree(d_out));
  return verdict("planes_per_launch", bad, static_cast<long>(out.size()));
}
