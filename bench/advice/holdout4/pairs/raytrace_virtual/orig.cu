// Path tracing of a 1280 x 720 image (4 samples per pixel, up to 4 diffuse bounces, 50 spheres) the way
// the CUDA ports of "Ray Tracing in One Weekend" write it: a Hittable base class with a virtual hit(),
// Sphere and HittableList objects created on the device with new by a one-thread kernel, and render()
// calling world->hit(), which calls list[i]->hit() for every sphere through the vtable (8 x 8 blocks).
#include "bench.cuh"
#include "scene.cuh"

class Hittable {
 public:
  __device__ virtual ~Hittable() {}
  __device__ virtual bool hit(const Ray& r, float t_min, float t_max, HitRecord& rec) const = 0;
};

class Sphere : public Hittable {
 public:
  __device__ Sphere(const vec3& c, float r, const vec3& a) : center(c), radius(r), albedo(a) {}
  __device__ bool hit(const Ray& r, float t_min, float t_max, HitRecord& rec) const override {
    return sphere_hit(center, radius, albedo, r, t_min, t_max, rec);
  }
  vec3 center;
  float radius;
  vec3 albedo;
};

class HittableList : public Hittable {
 public:
  __device__ HittableList(Hittable** l, int n) : list(l), size(n) {}
  __device__ bool hit(const Ray& r, float t_min, float t_max, HitRecord& rec) const override {
    HitRecord tmp;
    bool any = false;
    float closest = t_max;
    for (int i = 0; i < size; ++i) {
      if (list[i]->hit(r, t_min, closest, tmp)) {
        any = true;
        closest = tmp.t;
        rec = tmp;
      }
    }
    return any;
  }
  Hittable** list;
  int size;
};

__global__ void build_world(Hittable** list, Hittable** world, const SphereParams* p, int n) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  for (int i = 0; i < n; ++i)
    list[i] = new Sphere(vec3(p[i].cx, p[i].cy, p[i].cz), p[i].radius, vec3(p[i].ar, p[i].ag, p[i].ab));
  *world = new HittableList(list, n);
}

__global__ void free_world(Hittable** list, Hittable** world, int n) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  for (int i = 0; i < n; ++i) delete list[i];
  delete *world;
}

__global__ void render(vec3* fb, int width, int height, Hittable** world, Camera cam) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= width || j >= height) return;
  fb[j * width + i] = shade_pixel(**world, cam, i, j, width, height);
}

// The host reference: the same scene as a plain loop over the spheres.
struct HostWorld {
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

int main() {
  const int width = 1280, height = 720;
  SphereParams params[kSpheres];
  make_scene(params);
  SphereParams* d_params;
  Hittable **d_list, **d_world;
  vec3* d_fb;
  CK(cudaMalloc(&d_params, sizeof(params)));
  CK(cudaMalloc(&d_list, kSpheres * sizeof(Hittable*)));
  CK(cudaMalloc(&d_world, sizeof(Hittable*)));
  CK(cudaMalloc(&d_fb, (size_t)width * height * sizeof(vec3)));
  CK(cudaMemcpy(d_params, params, sizeof(params), cudaMemcpyHostToDevice));
  build_world<<<1, 1>>>(d_list, d_world, d_params, kSpheres);
  CK_LAUNCH();
  const Camera cam(width, height);
  const dim3 block(8, 8), grid((width + 7) / 8, (height + 7) / 8);
  for (int rep = 0; rep < 3; ++rep) {
    render<<<grid, block>>>(d_fb, width, height, d_world, cam);
    CK_LAUNCH();
  }
  std::vector<vec3> fb((size_t)width * height);
  CK(cudaMemcpy(fb.data(), d_fb, fb.size() * sizeof(vec3), cudaMemcpyDeviceToHost));
  free_world<<<1, 1>>>(d_list, d_world, kSpheres);
  CK_LAUNCH();
  const HostWorld hw{params, kSpheres};
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
  CK(cudaFree(d_list));
  CK(cudaFree(d_world));
  CK(cudaFree(d_fb));
  return verdict("raytrace_virtual", bad, checked);
}
