// RGBA8 -> NV12 (BT.709, limited range) conversion of a batch of 4 UHD frames (3840 x 2160) before a video
// encoder. Probe of a kernel that is DRAM-bound already: each thread now takes 8 x 2 pixels (four 16-byte
// loads, two 8-byte luma stores, one 8-byte chroma store), half as many threads. Should not pay.
#include "bench.cuh"

struct Bt709 {  // limited-range BT.709 from 8-bit R'G'B'
  __host__ __device__ static unsigned char clamp8(float v) {
    return static_cast<unsigned char>(fminf(fmaxf(v + 0.5f, 0.0f), 255.0f));
  }
  __host__ __device__ float luma(uchar4 p) const { return 16.0f + (219.0f / 255.0f) * (0.2126f * p.x + 0.7152f * p.y + 0.0722f * p.z); }
  __host__ __device__ float cb(float r, float g, float b) const { return 128.0f + (224.0f / 255.0f) * (-0.1146f * r - 0.3854f * g + 0.5f * b); }
  __host__ __device__ float cr(float r, float g, float b) const { return 128.0f + (224.0f / 255.0f) * (0.5f * r - 0.4542f * g - 0.0458f * b); }
};

struct Nv12Frames {  // per frame: w x h luma bytes, then w x h/2 interleaved Cb Cr bytes
  unsigned char* data;
  int w, h;
  __host__ __device__ long frame_bytes() const { return static_cast<long>(w) * h * 3 / 2; }
  __host__ __device__ unsigned char* y(int f, int row) const { return data + f * frame_bytes() + static_cast<long>(row) * w; }
  __host__ __device__ unsigned char* uv(int f, int crow) const { return data + f * frame_bytes() + static_cast<long>(w) * h + static_cast<long>(crow) * w; }
};

__device__ __host__ inline uchar4 px_of(unsigned v) { return make_uchar4(v & 255, (v >> 8) & 255, (v >> 16) & 255, v >> 24); }

__device__ unsigned chroma_pair(uchar4 a, uchar4 b, uchar4 c, uchar4 d, Bt709 m) {  // 2 x 2 box -> Cb | Cr << 8
  const float r = 0.25f * (a.x + b.x + c.x + d.x), g = 0.25f * (a.y + b.y + c.y + d.y), bl = 0.25f * (a.z + b.z + c.z + d.z);
  return Bt709::clamp8(m.cb(r, g, bl)) | (static_cast<unsigned>(Bt709::clamp8(m.cr(r, g, bl))) << 8);
}

__global__ void rgba_to_nv12(const uchar4* __restrict__ rgba, Nv12Frames out, Bt709 m) {
  const int qx = blockIdx.x * blockDim.x + threadIdx.x, qy = blockIdx.y * blockDim.y + threadIdx.y, f = blockIdx.z;
  const int x = qx * 8, y = qy * 2;
  if (x >= out.w || y >= out.h) return;
  const uchar4* src = rgba + static_cast<long>(f) * out.w * out.h;
  const uint4* s0 = reinterpret_cast<const uint4*>(src + static_cast<long>(y) * out.w + x);
  const uint4* s1 = reinterpret_cast<const uint4*>(src + static_cast<long>(y + 1) * out.w + x);
  const uint4 r0 = s0[0], r0b = s0[1], r1 = s1[0], r1b = s1[1];
  const uchar4 a[8] = {px_of(r0.x), px_of(r0.y), px_of(r0.z), px_of(r0.w), px_of(r0b.x), px_of(r0b.y), px_of(r0b.z), px_of(r0b.w)};
  const uchar4 b[8] = {px_of(r1.x), px_of(r1.y), px_of(r1.z), px_of(r1.w), px_of(r1b.x), px_of(r1b.y), px_of(r1b.z), px_of(r1b.w)};
  uint2 y0 = make_uint2(0, 0), y1 = make_uint2(0, 0);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    y0.x |= static_cast<unsigned>(Bt709::clamp8(m.luma(a[i]))) << (8 * i);
    y0.y |= static_cast<unsigned>(Bt709::clamp8(m.luma(a[i + 4]))) << (8 * i);
    y1.x |= static_cast<unsigned>(Bt709::clamp8(m.luma(b[i]))) << (8 * i);
    y1.y |= static_cast<unsigned>(Bt709::clamp8(m.luma(b[i + 4]))) << (8 * i);
  }
  *reinterpret_cast<uint2*>(out.y(f, y) + x) = y0;
  *reinterpret_cast<uint2*>(out.y(f, y + 1) + x) = y1;
  *reinterpret_cast<uint2*>(out.uv(f, y / 2) + x) =
      make_uint2(chroma_pair(a[0], a[1], b[0], b[1], m) | (chroma_pair(a[2], a[3], b[2], b[3], m) << 16),
                 chroma_pair(a[4], a[5], b[4], b[5], m) | (chroma_pair(a[6], a[7], b[6], b[7], m) << 16));
}

int main() {
  const int frames = 4, w = 3840, h = 2160;
  const long npx = static_cast<long>(w) * h;
  std::vector<uchar4> rgba(frames * npx);
  Rng rng(10606);
  for (auto& p : rgba) p = px_of(rng.next() | (rng.next() << 31));
  Nv12Frames host{nullptr, w, h};
  std::vector<unsigned char> nv12(frames * host.frame_bytes());
  host.data = nv12.data();
  uchar4* d_rgba;
  unsigned char* d_nv12;
  CK(cudaMalloc(&d_rgba, rgba.size() * sizeof(uchar4)));
  CK(cudaMalloc(&d_nv12, nv12.size()));
  CK(cudaMemcpy(d_rgba, rgba.data(), rgba.size() * sizeof(uchar4), cudaMemcpyHostToDevice));
  const Nv12Frames dev{d_nv12, w, h};
  const Bt709 m{};
  const dim3 block(32, 8), grid((w / 8 + 31) / 32, (h / 2 + 7) / 8, frames);
  for (int rep = 0; rep < 3; ++rep) {
    CK(cudaMemset(d_nv12, 0, nv12.size()));
    rgba_to_nv12<<<grid, block>>>(d_rgba, dev, m);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(nv12.data(), d_nv12, nv12.size(), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int f = 0; f < frames; ++f)
    for (int y = 0; y < h; y += 2 * 7)
      for (int x = 0; x < w; x += 2) {
        const uchar4* s = &rgba[f * npx + static_cast<long>(y) * w + x];
        const uchar4 a = s[0], b = s[1], c = s[w], d = s[w + 1];
        const float r = 0.25f * (a.x + b.x + c.x + d.x), g = 0.25f * (a.y + b.y + c.y + d.y), bl = 0.25f * (a.z + b.z + c.z + d.z);
        const int want[6] = {Bt709::clamp8(m.luma(a)), Bt709::clamp8(m.luma(b)), Bt709::clamp8(m.luma(c)),
                             Bt709::clamp8(m.luma(d)), Bt709::clamp8(m.cb(r, g, bl)), Bt709::clamp8(m.cr(r, g, bl))};
        const int got[6] = {host.y(f, y)[x], host.y(f, y)[x + 1], host.y(f, y + 1)[x], host.y(f, y + 1)[x + 1],
                            host.uv(f, y / 2)[x], host.uv(f, y / 2)[x + 1]};
        for (int i = 0; i < 6; ++i, ++checked) bad += std::abs(got[i] - want[i]) > 1;  // FMA contraction: +-1 at .5
      }
  CK(cudaFree(d_rgba));
  CK(cudaFree(d_nv12));
  return verdict("nv12_convert", bad, checked);
}
