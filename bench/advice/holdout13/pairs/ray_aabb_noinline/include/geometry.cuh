// Small geometry library of the ray-casting code (rays, axis-aligned boxes, the slab test). Its functions are
// declared GEOM_FN, __noinline__ unless the includer defines GEOM_FN first (the library keeps call sites small).
#pragma once

#ifndef GEOM_FN
#define GEOM_FN __noinline__
#endif

struct Vec3 {
  float x, y, z;
};

struct Ray {
  Vec3 o;    // origin
  Vec3 inv;  // 1 / direction, per component (precomputed by the ray generator)
};

struct Aabb {
  Vec3 lo, hi;
};

// Kay-Kajiya slab test: the entry distance of the ray into the box if it enters it within [0, tmax], else -1.
// Only subtractions, multiplications, min and max (no multiply-add to contract), so host and device agree bit
// for bit.
__host__ __device__ GEOM_FN float slab_enter(const Ray& r, const Aabb& b, float tmax) {
  const float tx0 = (b.lo.x - r.o.x) * r.inv.x, tx1 = (b.hi.x - r.o.x) * r.inv.x;
  const float ty0 = (b.lo.y - r.o.y) * r.inv.y, ty1 = (b.hi.y - r.o.y) * r.inv.y;
  const float tz0 = (b.lo.z - r.o.z) * r.inv.z, tz1 = (b.hi.z - r.o.z) * r.inv.z;
  const float tn = fmaxf(fmaxf(fminf(tx0, tx1), fminf(ty0, ty1)), fmaxf(fminf(tz0, tz1), 0.0f));
  const float tf = fminf(fminf(fmaxf(tx0, tx1), fmaxf(ty0, ty1)), fminf(fmaxf(tz0, tz1), tmax));
  return tn <= tf ? tn : -1.0f;
}
