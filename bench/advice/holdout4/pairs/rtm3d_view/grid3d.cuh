// A small 3D-grid accessor, the kind a seismic or CFD code keeps in a header of its own: a non-owning
// view of an nx x ny x nz field stored x fastest, indexed as v(x, y, z). Passed to kernels by value.
#pragma once
#include <cstddef>

template <typename T>
class View3D {
 public:
  __host__ __device__ View3D(T* data, int nx, int ny, int nz) : data_(data), nx_(nx), ny_(ny), nz_(nz) {}
  __host__ __device__ T& operator()(int x, int y, int z) const {
    return data_[(static_cast<size_t>(z) * ny_ + y) * nx_ + x];
  }
  __host__ __device__ int nx() const { return nx_; }
  __host__ __device__ int ny() const { return ny_; }
  __host__ __device__ int nz() const { return nz_; }

 private:
  T* data_;
  int nx_, ny_, nz_;
};

// 8th-order central second derivative (radius 4), per axis; the 3D Laplacian is their sum over x, y, z.
constexpr int kR = 4;
constexpr float kC0 = -205.0f / 72.0f;
constexpr float kC1 = 8.0f / 5.0f, kC2 = -1.0f / 5.0f, kC3 = 8.0f / 315.0f, kC4 = -1.0f / 560.0f;

__host__ __device__ inline float fd_coef(int r) {
  return r == 1 ? kC1 : r == 2 ? kC2 : r == 3 ? kC3 : kC4;
}
