// Drift step of a particle code that keeps each particle field in its own array (structure of arrays):
// the step reads x, vx and mass, and each warp's loads are whole 128-byte lines of useful data.
// Built with -use_fast_math (the division is already the fast one).
#include "../bench.cuh"

struct Particles {
  float *x, *y, *z, *vx, *vy, *vz, *fx, *fy, *fz, *mass, *charge, *radius;
};

__global__ void drift(Particles p, int n, float dt) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  p.x[i] += p.vx[i] * dt / p.mass[i];
}

int main() {
  const int n = 10 << 20;
  const float dt = 0.01f;
  constexpr int kFields = 12;
  // the same values as the array-of-structures program: 16 draws per particle, field k = draw k
  std::vector<std::vector<float>> field(kFields, std::vector<float>(n));
  Rng rng(19);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 16; ++k) {
      float v = rng.uniform(0.5f, 2.0f);
      if (k < kFields) field[k][i] = v;
    }
  Particles d;
  float** dev[kFields] = {&d.x, &d.y, &d.z, &d.vx, &d.vy, &d.vz, &d.fx, &d.fy, &d.fz, &d.mass, &d.charge, &d.radius};
  for (int k = 0; k < kFields; ++k) {
    CK(cudaMalloc(dev[k], n * sizeof(float)));
    CK(cudaMemcpy(*dev[k], field[k].data(), n * sizeof(float), cudaMemcpyHostToDevice));
  }
  for (int rep = 0; rep < 3; ++rep) {
    drift<<<(n + 255) / 256, 256>>>(d, n, dt);
    CK_LAUNCH();
  }
  std::vector<float> x(n);
  CK(cudaMemcpy(x.data(), d.x, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int i = 0; i < n; ++i) {
    double want = field[0][i];
    for (int rep = 0; rep < 3; ++rep) want += (double)field[3][i] * dt / field[9][i];
    bad += !close_enough(x[i], want, 1e-5, 1e-6);
  }
  for (int k = 0; k < kFields; ++k) CK(cudaFree(*dev[k]));
  return verdict("aos_particles", bad, n);
}
