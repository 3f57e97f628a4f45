// Element stress update of an explicit small-strain FE code on a voxel model of a three-phase fibre
// composite (a CT-scanned RVE): 63^3 voxels, each split into 6 tetrahedra (1.5 M elements, Kuhn
// split), element numbering voxel by voxel, each voxel's phase from the scan (50% matrix, 30% fibre, 20%
// interphase, mixed at voxel scale). One thread per element: gather the 4 nodes (connectivity, then
// positions and displacements), small strain, then phase_stress() switches on the element's phase to one
// of three iterative constitutive updates (include/phases.cuh). Neighbouring elements have different phases,
// so nearly every warp runs all three updates one after the other. Three launches (load steps 0.6, 0.8, 1).
#include <algorithm>
#include "bench.cuh"
#include "phases.cuh"

struct Mesh {
  const int4* tet;
  const unsigned char* phase;
  const float* ep;  // accumulated plastic strain (history), used by the matrix phase
  int n;
};

struct Nodes {
  const float4 *X, *u;
  float load;
  __host__ __device__ float4 disp(int i) const { const float4 d = u[i]; return make_float4(load * d.x, load * d.y, load * d.z, 0.0f); }
};

struct StressOut {
  float* s;  // six components, component-major
  int n;
  __host__ __device__ void store(int e, const Sym3& v) const {
    s[e] = v.xx; s[n + e] = v.yy; s[2 * n + e] = v.zz; s[3 * n + e] = v.xy; s[4 * n + e] = v.yz; s[5 * n + e] = v.zx;
  }
};

__host__ __device__ inline Sym3 element_update(const Mesh& mesh, const Nodes& nodes, const Phases& ph, int e) {
  const int4 t = mesh.tet[e];
  const float4 X[4] = {nodes.X[t.x], nodes.X[t.y], nodes.X[t.z], nodes.X[t.w]};
  const float4 u[4] = {nodes.disp(t.x), nodes.disp(t.y), nodes.disp(t.z), nodes.disp(t.w)};
  return phase_stress(ph, mesh.phase[e], tet_strain(X, u), mesh.ep[e]);
}

__global__ void element_stress(Mesh mesh, Nodes nodes, Phases ph, StressOut out) {
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e < mesh.n) out.store(e, element_update(mesh, nodes, ph, e));
}

int main() {
  const int nv = 64, cells = (nv - 1) * (nv - 1) * (nv - 1), ne = 6 * cells, nn = nv * nv * nv;
  std::vector<float4> X(nn), u(nn);
  Rng rng(10707);
  for (int i = 0; i < nn; ++i) {
    X[i] = make_float4(i % nv + rng.uniform(-0.1f, 0.1f), (i / nv) % nv + rng.uniform(-0.1f, 0.1f), i / (nv * nv) + rng.uniform(-0.1f, 0.1f), 0.0f);
    u[i] = make_float4(rng.uniform(-0.01f, 0.01f), rng.uniform(-0.01f, 0.01f), rng.uniform(-0.01f, 0.01f), 0.0f);
  }
  std::vector<int4> tet(ne);
  std::vector<unsigned char> phase(ne);
  std::vector<float> ep(ne);
  const int perms[6][3] = {{1, 2, 4}, {1, 4, 2}, {2, 1, 4}, {2, 4, 1}, {4, 1, 2}, {4, 2, 1}};
  int e = 0;
  for (int c = 0; c < cells; ++c) {
    const int cx = c % (nv - 1), cy = (c / (nv - 1)) % (nv - 1), cz = c / ((nv - 1) * (nv - 1));
    const int base = cx + nv * (cy + nv * cz);
    auto node = [&](int bits) { return base + (bits & 1) + ((bits >> 1) & 1) * nv + ((bits >> 2) & 1) * nv * nv; };
    const unsigned r = rng.next() % 10;
    const unsigned char ph = r < 5 ? 0 : r < 8 ? 1 : 2;
    for (const auto& p : perms) {
      tet[e] = make_int4(node(0), node(p[0]), node(p[0] | p[1]), node(7));
      phase[e] = ph;
      ep[e] = rng.uniform(0.0f, 0.01f);
      ++e;
    }
  }
  const Phases ph{{1.0f, 2.0f, 0.004f, 0.003f, 200.0f}, {3.0f, 5.0f, 0.02f, 1.0f, 3.5f, 2e-6f},
                  {0.5f, 1.5f, 0.3f, 0.2f, 1e-3f, 20.0f, 1e-3f}};
  float4 *d_X, *d_u;
  int4* d_tet;
  unsigned char* d_phase;
  float *d_ep, *d_s;
  CK(cudaMalloc(&d_X, nn * sizeof(float4)));
  CK(cudaMalloc(&d_u, nn * sizeof(float4)));
  CK(cudaMalloc(&d_tet, ne * sizeof(int4)));
  CK(cudaMalloc(&d_phase, ne));
  CK(cudaMalloc(&d_ep, ne * sizeof(float)));
  CK(cudaMalloc(&d_s, 6L * ne * sizeof(float)));
  CK(cudaMemcpy(d_X, X.data(), nn * sizeof(float4), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_u, u.data(), nn * sizeof(float4), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_tet, tet.data(), ne * sizeof(int4), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_phase, phase.data(), ne, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_ep, ep.data(), ne * sizeof(float), cudaMemcpyHostToDevice));
  const Mesh mesh{d_tet, d_phase, d_ep, ne};
  const StressOut out{d_s, ne};
  const float loads[3] = {0.6f, 0.8f, 1.0f};
  for (float load : loads) {
    element_stress<<<(ne + 255) / 256, 256>>>(mesh, Nodes{d_X, d_u, load}, ph, out);
    CK_LAUNCH();
  }
  std::vector<float> s(6L * ne);
  CK(cudaMemcpy(s.data(), d_s, s.size() * sizeof(float), cudaMemcpyDeviceToHost));
  const Mesh hmesh{tet.data(), phase.data(), ep.data(), ne};
  const Nodes hnodes{X.data(), u.data(), 1.0f};
  long bad = 0, checked = 0;
  for (int i = 0; i < ne; i += 331) {
    const Sym3 w = element_update(hmesh, hnodes, ph, i);
    const float want[6] = {w.xx, w.yy, w.zz, w.xy, w.yz, w.zx};
    for (int k = 0; k < 6; ++k, ++checked) bad += !close_enough(s[static_cast<long>(k) * ne + i], want[k], 2e-3, 2e-5);
  }
  CK(cudaFree(d_X));
  CK(cudaFree(d_u));
  CK(cudaFree(d_tet));
  CK(cudaFree(d_phase));
  CK(cudaFree(d_ep));
  CK(cudaFree(d_s));
  return verdict("fem_phase_mix", bad, checked);
}
