// Compositing a premultiplied RGBA8 overlay over an 8K RGBA8 frame (Porter-Duff "over": out = fg + bg * (255 -
// a_fg) / 255 per channel, rounded with the exact (x + 128 + ((x + 128) >> 8)) >> 8 division by 255), done
// right: four pixels per thread with one 16-byte load of each frame and one 16-byte store, 256-thread blocks,
// ~150 integer instructions per 48 bytes moved: DRAM-bound (398 MB per launch).
#include "bench.cuh"

__host__ __device__ inline uint32_t over_pixel(uint32_t fg, uint32_t bg) {
  const uint32_t inv = 255u - (fg >> 24);
  uint32_t r = 0;
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const uint32_t x = ((bg >> (8 * c)) & 255u) * inv + 128u;
    const uint32_t v = ((fg >> (8 * c)) & 255u) + ((x + (x >> 8)) >> 8);
    r |= (v > 255u ? 255u : v) << (8 * c);
  }
  return r;
}

__global__ void alpha_over(const uint4* __restrict__ fg, const uint4* __restrict__ bg, uint4* __restrict__ out, int quads) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= quads) return;
  const uint4 f = fg[i], b = bg[i];
  out[i] = make_uint4(over_pixel(f.x, b.x), over_pixel(f.y, b.y), over_pixel(f.z, b.z), over_pixel(f.w, b.w));
}

int main() {
  const int pixels = 7680 * 4320, quads = pixels / 4;
  std::vector<uint32_t> fg(pixels), bg(pixels), got(pixels);
  Rng rng(7108);
  for (int i = 0; i < pixels; ++i) {
    const uint32_t a = rng.next() & 255u;  // premultiplied: colour <= alpha
    uint32_t p = a << 24;
    for (int c = 0; c < 3; ++c) p |= (a ? rng.next() % (a + 1) : 0u) << (8 * c);
    fg[i] = p;
    bg[i] = rng.next() | 0xff000000u;
  }
  uint4 *d_fg, *d_bg, *d_out;
  CK(cudaMalloc(&d_fg, pixels * sizeof(uint32_t)));
  CK(cudaMalloc(&d_bg, pixels * sizeof(uint32_t)));
  CK(cudaMalloc(&d_out, pixels * sizeof(uint32_t)));
  CK(cudaMemcpy(d_fg, fg.data(), pixels * sizeof(uint32_t), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_bg, bg.data(), pixels * sizeof(uint32_t), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    alpha_over<<<(quads + 255) / 256, 256>>>(d_fg, d_bg, d_out, quads);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_out, pixels * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < pixels; i += 3, ++checked) {
    uint32_t want = 0;  // reference: round(bg * inv / 255) in double per channel
    const uint32_t inv = 255u - (fg[i] >> 24);
    for (int c = 0; c < 4; ++c) {
      const uint32_t v = ((fg[i] >> (8 * c)) & 255u) + static_cast<uint32_t>(std::floor(((bg[i] >> (8 * c)) & 255u) * inv / 255.0 + 0.5));
      want |= (v > 255u ? 255u : v) << (8 * c);
    }
    bad += got[i] != want;
  }
  CK(cudaFree(d_fg));
  CK(cudaFree(d_bg));
  CK(cudaFree(d_out));
  return verdict("alpha_over_rgba8", bad, checked);
}
