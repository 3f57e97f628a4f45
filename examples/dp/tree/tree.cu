// Top-down tree descent over a tree with heavy-tailed fan-out (a few nodes have thousands of
// children), written with plain CUDA dynamic parallelism: for each level, one parent thread per node
// launches a child grid with one thread per child node, which derives the child's path value from
// its parent's (a hash of the root-to-node path) and its weight. Nodes are numbered level by level,
// so a node's children are contiguous. Integer arithmetic only: the check is exact.
//
// Build: nvcc -O3 -rdc=true -arch=sm_90 tree.cu -o tree -lcudadevrt
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t err_ = (call);                                                        \
    if (err_ != cudaSuccess) {                                                        \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_));   \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

static const int N = 400000;  // nodes
static const int MAX_FAN = 6000;
static const int RUNS = 5;

__device__ unsigned int d_launch_errors; // device-side launches that failed

__host__ __device__ unsigned int mix(unsigned int h, unsigned int w) {
  h ^= w + 0x9e3779b9u + (h << 6) + (h >> 2);
  return h * 2654435761u;
}

// Child: one thread per child node of a parent.
__global__ void descend_children(int first, int count, unsigned int parent_value, const unsigned int *weight,
                                 unsigned int *value) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < count) {
    int c = first + k;
    unsigned int h = parent_value;
    for (int r = 0; r < 8; ++r) h = mix(h, weight[c] + r);
    value[c] = h;
  }
}

// Parent: one thread per node of the level [begin, end).
__global__ void descend_level(int begin, int end, const int *first_child, const int *num_children,
                              const unsigned int *weight, unsigned int *value) {
  int node = begin + blockIdx.x * blockDim.x + threadIdx.x;
  if (node >= end) return;
  int count = num_children[node];
  if (count == 0) return;
  descend_children<<<(int)ceil((float)count / 128), 128>>>(first_child[node], count, value[node], weight, value);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&d_launch_errors, 1u);
}

static unsigned int lcg(unsigned long long *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned int)(*s >> 33);
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

int main(void) {
  unsigned long long seed = 4242;
  int *first_child = (int *)malloc(N * sizeof(int));
  int *num_children = (int *)malloc(N * sizeof(int));
  unsigned int *weight = (unsigned int *)malloc(N * sizeof(unsigned int));
  int *level_start = (int *)malloc((N + 1) * sizeof(int));
  // breadth-first construction: node ids are assigned level by level
  int next_id = 1, levels = 0;
  level_start[0] = 0;
  int lb = 0, le = 1;
  while (lb < le) {
    for (int u = lb; u < le; ++u) {
      // heavy tail: most nodes have 0-3 children, one in 500 is a hub with thousands
      int fan = lcg(&seed) % 500 == 0 ? 1000 + (int)(lcg(&seed) % (MAX_FAN - 1000)) : (int)(lcg(&seed) % 4);
      if (u == 0 && fan < 8) fan = 8;
      if (next_id + fan > N) fan = N - next_id;
      first_child[u] = next_id;
      num_children[u] = fan;
      next_id += fan;
    }
    level_start[++levels] = le;
    lb = le;
    le = next_id;
  }
  int nodes = next_id;
  for (int u = 0; u < nodes; ++u) weight[u] = lcg(&seed);
  unsigned int *ref = (unsigned int *)malloc(nodes * sizeof(unsigned int));
  ref[0] = 1u;
  for (int u = 0; u < nodes; ++u)
    for (int k = 0; k < num_children[u]; ++k) {
      int c = first_child[u] + k;
      unsigned int h = ref[u];
      for (int r = 0; r < 8; ++r) h = mix(h, weight[c] + r);
      ref[c] = h;
    }

  CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 18));
  int *d_first, *d_num;
  unsigned int *d_weight, *d_value;
  CHECK(cudaMalloc((void **)&d_first, nodes * sizeof(int)));
  CHECK(cudaMalloc((void **)&d_num, nodes * sizeof(int)));
  CHECK(cudaMalloc((void **)&d_weight, nodes * sizeof(unsigned int)));
  CHECK(cudaMalloc((void **)&d_value, nodes * sizeof(unsigned int)));
  CHECK(cudaMemcpy(d_first, first_child, nodes * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_num, num_children, nodes * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_weight, weight, nodes * sizeof(unsigned int), cudaMemcpyHostToDevice));

  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  float times[RUNS + 1];
  for (int run = 0; run <= RUNS; ++run) { // run 0 warms up
    CHECK(cudaMemset(d_value, 0, nodes * sizeof(unsigned int)));
    unsigned int one = 1u;
    CHECK(cudaMemcpy(d_value, &one, sizeof one, cudaMemcpyHostToDevice));
    CHECK(cudaEventRecord(t0));
    for (int l = 0; l + 1 < levels; ++l) {
      int b = level_start[l], e = level_start[l + 1];
      descend_level<<<(e - b + 255) / 256, 256>>>(b, e, d_first, d_num, d_weight, d_value);
      CHECK(cudaGetLastError());
    }
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    CHECK(cudaEventElapsedTime(&times[run], t0, t1));
  }
  qsort(times + 1, RUNS, sizeof(float), cmp_float);

  unsigned int *value = (unsigned int *)malloc(nodes * sizeof(unsigned int));
  CHECK(cudaMemcpy(value, d_value, nodes * sizeof(unsigned int), cudaMemcpyDeviceToHost));
  unsigned int launch_errors = 0;
  CHECK(cudaMemcpyFromSymbol(&launch_errors, d_launch_errors, sizeof launch_errors));
#ifdef WARPWISE_PRELUDE
  launch_errors += ww_launch_error_count(); // launches made by warpwise-generated code
#endif
  int bad = 0;
  unsigned int hash = 2166136261u;
  for (int u = 0; u < nodes; ++u) {
    if (value[u] != ref[u]) ++bad;
    hash = (hash ^ value[u]) * 16777619u;
  }
  int pass = bad == 0 && launch_errors == 0;
  printf("RESULT tree %s time_ms=%.4f launch_errors=%u mismatches=%d hash=%08x nodes=%d levels=%d\n",
         pass ? "PASS" : "FAIL", times[1 + RUNS / 2], launch_errors, bad, hash, nodes, levels);
  return pass ? 0 : 1;
}
