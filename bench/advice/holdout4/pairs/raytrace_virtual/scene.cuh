// The small ray tracer of "Ray Tracing in One Weekend" as its CUDA ports write it (vec3 class, ray, camera,
// a Hittable base class with a virtual hit(), spheres and a hittable list), Lambertian spheres only.
// Shared by orig.cu (virtual dispatch over device-allocated objects) and fix.cu (a flat sphere array).
#pragma once
#include <cmath>

class vec3 {
 public:
  float x, y, z;
  __host__ __device__ vec3() : x(0.0f), y(0.0f), z(0.0f) {}
  __host__ __device__ vec3(float x_, float y_, float z_) : x(x_), y(y_), z(z_) {}
  __host__ __device__ vec3 operator+(const vec3& o) const { return vec3(x + o.x, y + o.y, z + o.z); }
  __host__ __device__ vec3 operator-(const vec3& o) const { return vec3(x - o.x, y - o.y, z - o.z); }
  __host__ __device__ vec3 operator*(const vec3& o) const { return vec3(x * o.x, y * o.y, z * o.z); }
  __host__ __device__ vec3 operator*(float s) const { return vec3(x * s, y * s, z * s); }
  __host__ __device__ float dot(const vec3& o) const { return x * o.x + y * o.y + z * o.z; }
  __host__ __device__ vec3 unit() const {
    const float inv = 1.0f / sqrtf(dot(*this));
    return *this * inv;
  }
};

struct Ray {
  vec3 orig, dir;  // dir has unit length
  __host__ __device__ Ray() {}
  __host__ __device__ Ray(const vec3& o, const vec3& d) : orig(o), dir(d) {}
  __host__ __device__ vec3 at(float t) const { return orig + dir * t; }
};

struct HitRecord {
  float t;
  vec3 p, normal, albedo;
};

// Ray-sphere intersection for a unit-length direction, nearest root in (t_min, t_max).
__host__ __device__ inline bool sphere_hit(const vec3& center, float radius, const vec3& albedo, const Ray& r,
                                           float t_min, float t_max, HitRecord& rec) {
  const vec3 oc = r.orig - center;
  const float half_b = oc.dot(r.dir);
  const float c = oc.dot(oc) - radius * radius;
  const float disc = half_b * half_b - c;
  if (disc <= 0.0f) return false;
  const float sq = sqrtf(disc);
  float t = -half_b - sq;
  if (t <= t_min || t >= t_max) {
    t = -half_b + sq;
    if (t <= t_min || t >= t_max) return false;
  }
  rec.t = t;
  rec.p = r.at(t);
  rec.normal = (rec.p - center) * (1.0f / radius);
  rec.albedo = albedo;
  return true;
}

struct SphereParams {
  float cx, cy, cz, radius, ar, ag, ab;
};

// 7 x 7 small spheres on a large ground sphere; seeded, identical for orig and fix.
constexpr int kSpheres = 50;
inline void make_scene(SphereParams* s) {
  s[0] = {0.0f, -100.0f, 0.0f, 100.0f, 0.5f, 0.5f, 0.5f};
  unsigned seed = 4406u;
  auto rnd = [&seed]() {
    seed = seed * 1664525u + 1013904223u;
    return (float)(seed >> 8) / 16777216.0f;
  };
  int k = 1;
  for (int a = -3; a <= 3; ++a)
    for (int b = -3; b <= 3; ++b) {
      const float rad = 0.25f + 0.2f * rnd();
      s[k++] = {1.6f * a + 0.5f * rnd(), rad, 1.6f * b + 0.5f * rnd(), rad, 0.2f + 0.7f * rnd(), 0.2f + 0.7f * rnd(),
                0.2f + 0.7f * rnd()};
    }
}

// Counter-based random numbers (PCG hash), reproducible on the host for the reference.
__host__ __device__ inline unsigned pcg_hash(unsigned v) {
  const unsigned state = v * 747796405u + 2891336453u;
  const unsigned word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
  return (word >> 22u) ^ word;
}
__host__ __device__ inline float rand01(unsigned& s) {
  s = pcg_hash(s);
  return (float)(s >> 8) * (1.0f / 16777216.0f);
}

class Camera {
 public:
  __host__ __device__ Camera(int width, int height) {
    const float aspect = (float)width / (float)height, half_h = 0.7f, half_w = aspect * half_h;
    origin = vec3(0.0f, 2.2f, 9.0f);
    const vec3 w = (origin - vec3(0.0f, 0.3f, 0.0f)).unit();
    const vec3 u = vec3(w.z, 0.0f, -w.x).unit();  // (0,1,0) x w
    const vec3 v = vec3(w.y * u.z - w.z * u.y, w.z * u.x - w.x * u.z, w.x * u.y - w.y * u.x);
    lower_left = origin - u * half_w - v * half_h - w;
    horizontal = u * (2.0f * half_w);
    vertical = v * (2.0f * half_h);
  }
  __host__ __device__ Ray get_ray(float s, float t) const {
    return Ray(origin, (lower_left + horizontal * s + vertical * t - origin).unit());
  }

 private:
  vec3 origin, lower_left, horizontal, vertical;
};

constexpr int kSamples = 4, kDepth = 4;

__host__ __device__ inline vec3 sky(const Ray& r) {
  const float t = 0.5f * (r.dir.y + 1.0f);
  return vec3(1.0f, 1.0f, 1.0f) * (1.0f - t) + vec3(0.5f, 0.7f, 1.0f) * t;
}

// A Lambertian bounce: the normal plus a random point in the unit sphere (rejection-free: a random
// direction scaled by a random radius), normalised.
__host__ __device__ inline vec3 diffuse_dir(const vec3& n, unsigned& s) {
  const float z = 2.0f * rand01(s) - 1.0f, phi = 6.2831853f * rand01(s);
  const float rr = sqrtf(fmaxf(0.0f, 1.0f - z * z));
  const vec3 d = n + vec3(rr * cosf(phi), rr * sinf(phi), z);
  const float len2 = d.dot(d);
  return len2 > 1e-8f ? d * (1.0f / sqrtf(len2)) : n;
}

// Path tracing of one pixel with any world type that has hit(ray, t_min, t_max, rec).
template <typename World>
__host__ __device__ inline vec3 shade_pixel(const World& world, const Camera& cam, int i, int j, int width,
                                            int height) {
  vec3 col;
  for (int smp = 0; smp < kSamples; ++smp) {
    unsigned s = (unsigned)(j * width + i) * 9781u + (unsigned)smp * 6271u + 1u;
    const float u = ((float)i + rand01(s)) / (float)width, v = ((float)j + rand01(s)) / (float)height;
    Ray r = cam.get_ray(u, v);
    vec3 atten(1.0f, 1.0f, 1.0f), c;
    bool done = false;
    for (int d = 0; d < kDepth && !done; ++d) {
      HitRecord rec;
      if (world.hit(r, 0.001f, 1e30f, rec)) {
        atten = atten * rec.albedo;
        r = Ray(rec.p, diffuse_dir(rec.normal, s));
      } else {
        c = atten * sky(r);
        done = true;
      }
    }
    col = col + c;  // a path still bouncing after kDepth hits contributes black
  }
  return col * (1.0f / kSamples);
}
