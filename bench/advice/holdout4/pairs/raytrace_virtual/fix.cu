// Path tracing of a 1280 x 720 image (orig.cu's program) with the scene as a flat array of sphere
// parameters copied from the host and a non-virtual world whose hit() loops over it: sphere_hit() is
// inlined into render(), no vtable loads, no indirect calls, no device-side new.
#include "bench.cuh"
#include "scene.cuh"

// The world: a plain loop over a flat sphere array (device memory in render(), host memory for the reference).
struct SphereArray {
  const SphereParams* s;
  int n;
  __host__ __device__ bool hit(const Ray& r, float t_min, float t_max, HitRecord& rec) const {
    bool any = false;
    float closest = t_max;
    for (int i = 0; i < n; ++i) {
      if (sphere_hit(vec3(s[i].cx, s[i].cy, s[i].cz), s[i].radius, vec3(s[i].ar, s[i].ag, s[i].ab), r, t_min, closest,
                     rec)) {
        any = true;
        closest = rec.t;
      }
    }
    return any;
  }
};

__global__ void render(vec3* fb, int width, int height, SphereArray world, Camera cam) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= width || j >= height) return;
  fb[j * width + i] = shade_pixel(world, cam, i, j, width, height);
}

int main() {
  const int width = 1280, height = 720;
  SphereParams params[kSpheres];
  make_scene(params);
  SphereParams* d_params;
  vec3* d_fb;
  CK(cudaMalloc(&d_params, sizeof(params)));
  CK(cudaMalloc(&d_fb, (size_t)width * height * sizeof(vec3)));
  CK(cudaMemcpy(d_params, params, sizeof(params), cudaMemcpyHostToDevice));
  const Camera cam(width, height);
  const dim3 block(8, 8), grid((width + 7) / 8, (height + 7) / 8);
  for (int rep = 0; rep < 3; ++rep) {
    render<<<grid, block>>>(d_fb, width, height, SphereArray{d_params, kSpheres}, cam);
    CK_LAUNCH();
  }
  std::vector<vec3> fb((size_t)width * height);
  CK(cudaMemcpy(fb.data(), d_fb, fb.size() * sizeof(vec3), cudaMemcpyDeviceToHost));
  const SphereArray hw{params, kSpheres};
  long diverged = 0, checked = 0;
  double abs_err = 0.0;
  for (int p = 0; p < width * height; p += 61) {
    const vec3 want = shade_pixel(hw, cam, p % width, p / width, width, height);
    const vec3 got = fb[p];
    const double e = std::fmax(std::fabs(got.x - want.x), std::fmax(std::fabs(got.y - want.y), std::fabs(got.z - want.z)));
    abs_err += e;
    diverged += e > 0.02;
    ++checked;
  }
  // FMA contraction on the GPU can flip a grazing hit, after which that path bounces elsewhere: such pixels
  // are allowed up to 1% of those checked, and the mean error must stay small.
  std::printf("%ld of %ld checked pixels differ by > 0.02, mean max-channel error %.2e\n", diverged, checked,
              abs_err / checked);
  const long bad = (diverged * 100 > checked || abs_err / checked > 2e-3) ? diverged + 1 : 0;
  CK(cudaFree(d_params));
  CK(cudaFree(d_fb));
  return verdict("raytrace_virtual", bad, checked);
}
