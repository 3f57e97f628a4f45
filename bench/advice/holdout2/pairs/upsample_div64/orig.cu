// 2x bilinear upsampling of a batch of feature maps (4 x 16 channels, 512^2 -> 1024^2, NCHW float, the
// half-pixel convention of image/DL libraries), one thread per output element over a flat 64-bit index:
// the index is split into plane, row and column with 64-bit division and modulo by run-time extents, two
// 64-bit divisions per element in a kernel that otherwise does a few loads and a dozen FMAs.
#include "bench.cuh"

__global__ void upsample2x(const float* __restrict__ in, float* __restrict__ out, long long planes, long long h,
                           long long w) {
  long long oh = 2 * h, ow = 2 * w;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= planes * oh * ow) return;
  long long plane = i / (oh * ow);
  long long rem = i % (oh * ow);
  long long oy = rem / ow, ox = rem % ow;
  float sy = fmaxf(0.5f * oy - 0.25f, 0.0f), sx = fmaxf(0.5f * ox - 0.25f, 0.0f);
  int y0 = (int)sy, x0 = (int)sx;
  int y1 = min(y0 + 1, (int)h - 1), x1 = min(x0 + 1, (int)w - 1);
  float fy = sy - y0, fx = sx - x0;
  const float* p = in + plane * h * w;
  float top = p[y0 * w + x0] + fx * (p[y0 * w + x1] - p[y0 * w + x0]);
  float bot = p[y1 * w + x0] + fx * (p[y1 * w + x1] - p[y1 * w + x0]);
  out[i] = top + fy * (bot - top);
}

// CPU reference of one output element (same formula, double accumulation of the same float inputs)
static float reference(const std::vector<float>& in, long long plane, long long oy, long long ox, long long h, long long w) {
  float sy = std::fmax(0.5f * oy - 0.25f, 0.0f), sx = std::fmax(0.5f * ox - 0.25f, 0.0f);
  int y0 = (int)sy, x0 = (int)sx;
  int y1 = std::min(y0 + 1, (int)h - 1), x1 = std::min(x0 + 1, (int)w - 1);
  double fy = sy - y0, fx = sx - x0;
  const float* p = in.data() + plane * h * w;
  double top = p[y0 * w + x0] + fx * (p[y0 * w + x1] - p[y0 * w + x0]);
  double bot = p[y1 * w + x0] + fx * (p[y1 * w + x1] - p[y1 * w + x0]);
  return (float)(top + fy * (bot - top));
}

int main() {
  const long long planes = 4 * 16, h = 512, w = 512;
  const size_t n_in = planes * h * w, n_out = n_in * 4;
  std::vector<float> in(n_in), out(n_out);
  Rng rng(505);
  for (auto& v : in) v = rng.uniform(-1.0f, 1.0f);
  float *d_in, *d_out;
  CK(cudaMalloc(&d_in, n_in * sizeof(float)));
  CK(cudaMalloc(&d_out, n_out * sizeof(float)));
  CK(cudaMemcpy(d_in, in.data(), n_in * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    upsample2x<<<(unsigned)((n_out + 255) / 256), 256>>>(d_in, d_out, planes, h, w);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(out.data(), d_out, n_out * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (size_t i = 0; i < n_out; i += 3, ++checked) {  // every third element (a full check takes seconds)
    long long plane = i / (4 * h * w), rem = i % (4 * h * w);
    bad += !close_enough(out[i], reference(in, plane, rem / (2 * w), rem % (2 * w), h, w), 1e-5, 1e-5);
  }
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  return verdict("upsample_div64", bad, checked);
}
