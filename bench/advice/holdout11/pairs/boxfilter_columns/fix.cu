// Vertical pass of a separable box filter (radius 8, clamp to edge) over float luma planes of three video
// resolutions (1080p, 1440p, 2160p), written like the classic running-sum box filter: one thread per column
// walks its column top to bottom, adding the entering row and subtracting the leaving one. Fix: each column
// split into strips of 64 rows, a thread per (column, strip) that starts its running sum at the top of its
// strip: a 2D grid of (width / 128) x (height / 64) blocks instead of width / 128 blocks.
#include "bench.cuh"

struct Plane {
  float* px;
  int width, height, pitch;  // pitch in floats
  __host__ __device__ float at(int x, int y) const { return px[static_cast<long>(y) * pitch + x]; }
  __host__ __device__ float& ref(int x, int y) { return px[static_cast<long>(y) * pitch + x]; }
  __host__ __device__ int clamp_y(int y) const { return y < 0 ? 0 : (y >= height ? height - 1 : y); }
};

constexpr int kStrip = 64;  // rows per thread

template <int R>
__global__ void box_columns(Plane in, Plane out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= in.width) return;
  const int y0 = blockIdx.y * kStrip;
  const int y1 = min(y0 + kStrip, in.height);
  const float scale = 1.0f / (2 * R + 1);
  float sum = 0.0f;
  for (int d = -R; d <= R; ++d) sum += in.at(x, in.clamp_y(y0 + d));
  for (int y = y0; y < y1; ++y) {
    out.ref(x, y) = sum * scale;
    sum += in.at(x, in.clamp_y(y + R + 1)) - in.at(x, in.clamp_y(y - R));
  }
}

constexpr int kRadius = 8;

int main() {
  const int sizes[3][2] = {{1920, 1080}, {2560, 1440}, {3840, 2160}};
  long bad = 0, checked = 0;
  Rng rng(1104);
  for (const auto& sz : sizes) {
    const int w = sz[0], h = sz[1];
    const long n = static_cast<long>(w) * h;
    std::vector<float> src(n), got(n);
    for (auto& v : src) v = rng.uniform(0.0f, 1.0f);
    float *d_in, *d_out;
    CK(cudaMalloc(&d_in, n * sizeof(float)));
    CK(cudaMalloc(&d_out, n * sizeof(float)));
    CK(cudaMemcpy(d_in, src.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    const Plane in{d_in, w, h, w}, out{d_out, w, h, w};
    box_columns<kRadius><<<dim3((w + 127) / 128, (h + kStrip - 1) / kStrip), 128>>>(in, out);
    CK_LAUNCH();
    CK(cudaMemcpy(got.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    const Plane ref{src.data(), w, h, w};
    for (int x = 0; x < w; x += 7)
      for (int y = 0; y < h; ++y, ++checked) {
        double want = 0.0;
        for (int d = -kRadius; d <= kRadius; ++d) want += ref.at(x, ref.clamp_y(y + d));
        want /= 2 * kRadius + 1;
        bad += !close_enough(got[static_cast<long>(y) * w + x], want, 0.0, 2e-4);
      }
    CK(cudaFree(d_in));
    CK(cudaFree(d_out));
  }
  return verdict("boxfilter_columns", bad, checked);
}
