// Bilinear up-scaling of float luma planes for video scaling (pixel-centre alignment, clamp to edge), three
// launches of different sizes: 1280x720 -> 1920x1080, 1920x1080 -> 3840x2160, 2560x1440 -> 3840x2160.
// fix: 32 x 8-thread blocks (full warps along rows, up to 2048 threads per SM); the kernel is unchanged.
#include "bench.cuh"

struct Image {
  float* px;
  int w, h;
  __host__ __device__ float at(int x, int y) const { return px[static_cast<long>(y) * w + x]; }
  __host__ __device__ float& ref(int x, int y) { return px[static_cast<long>(y) * w + x]; }
};

struct Bilinear {
  float sx, sy;  // source pixels per destination pixel
  __host__ __device__ float sample(const Image& src, int dx, int dy) const {
    const float fx = fmaxf((dx + 0.5f) * sx - 0.5f, 0.0f), fy = fmaxf((dy + 0.5f) * sy - 0.5f, 0.0f);
    const int x0 = static_cast<int>(fx), y0 = static_cast<int>(fy);
    const int x1 = x0 + 1 < src.w ? x0 + 1 : src.w - 1, y1 = y0 + 1 < src.h ? y0 + 1 : src.h - 1;
    const float ax = fx - x0, ay = fy - y0;
    const float top = src.at(x0, y0) + ax * (src.at(x1, y0) - src.at(x0, y0));
    const float bot = src.at(x0, y1) + ax * (src.at(x1, y1) - src.at(x0, y1));
    return top + ay * (bot - top);
  }
};

__global__ void resize_bilinear(Image src, Image dst, Bilinear b) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= dst.w || y >= dst.h) return;
  dst.ref(x, y) = b.sample(src, x, y);
}

int main() {
  const int sizes[3][4] = {{1280, 720, 1920, 1080}, {1920, 1080, 3840, 2160}, {2560, 1440, 3840, 2160}};
  const dim3 block(32, 8);
  Rng rng(1204);
  long bad = 0, checked = 0;
  for (const auto& sz : sizes) {
    const int sw = sz[0], sh = sz[1], dw = sz[2], dh = sz[3];
    std::vector<float> hs(static_cast<long>(sw) * sh), got(static_cast<long>(dw) * dh);
    for (auto& v : hs) v = rng.uniform(0.0f, 1.0f);
    float *ds, *dd;
    CK(cudaMalloc(&ds, hs.size() * sizeof(float)));
    CK(cudaMalloc(&dd, got.size() * sizeof(float)));
    CK(cudaMemcpy(ds, hs.data(), hs.size() * sizeof(float), cudaMemcpyHostToDevice));
    const Image src{ds, sw, sh}, dst{dd, dw, dh};
    const Bilinear b{static_cast<float>(sw) / dw, static_cast<float>(sh) / dh};
    const dim3 grid((dw + block.x - 1) / block.x, (dh + block.y - 1) / block.y);
    resize_bilinear<<<grid, block>>>(src, dst, b);
    CK_LAUNCH();
    CK(cudaMemcpy(got.data(), dd, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    // Tolerance 1e-3 (a quarter of an 8-bit step): the GPU contracts (dx + 0.5f) * sx - 0.5f and the lerps into
    // FMAs, which moves the source coordinate by up to an ulp of a coordinate near 2560 (2.4e-4 pixel) and the
    // result by up to about 1e-4 against this uncontracted host reference.
    const Image hsrc{hs.data(), sw, sh};
    for (int y = 0; y < dh; y += 5)
      for (int x = 0; x < dw; ++x, ++checked)
        bad += !close_enough(got[static_cast<long>(y) * dw + x], b.sample(hsrc, x, y), 0.0, 1e-3);
    CK(cudaFree(ds));
    CK(cudaFree(dd));
  }
  return verdict("resize_bilinear_4x4", bad, checked);
}
