// Recursive quadtree build over clustered points, written with plain CUDA dynamic parallelism: a node
// kernel has one thread per point of its node (points are sorted by Morton code, so a node is a range);
// each thread records that its point reaches this depth and adds its cell code to the depth's sum, and
// four threads of block 0 find the ranges of the four quadrants by binary search and launch the node
// kernel on each quadrant that holds more than LEAF points (the child launches itself, down to
// MAX_DEPTH). The per-point depths and per-depth sums do not depend on the order of the atomics: the
// check against the CPU recursion is exact.
//
// Build: nvcc -O3 -rdc=true -arch=sm_90 quadtree.cu -o quadtree -lcudadevrt; run: ./quadtree [large|small]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t err_ = (call);                                                        \
    if (err_ != cudaSuccess) {                                                        \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_));   \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

#define BITS 10      // Morton code: BITS bits per coordinate
#define MAX_DEPTH 10 // depth guard of the recursion (<= BITS)
static const int RUNS = 5;

__device__ unsigned int d_launch_errors; // device-side launches that failed

__host__ __device__ int lower_bound(const unsigned int *codes, int a, int b, unsigned int key) {
  while (a < b) {
    int m = (a + b) / 2;
    if (codes[m] < key) a = m + 1;
    else b = m;
  }
  return a;
}

// One node: the points [begin, end) whose codes share the node's prefix of 2 * depth bits.
__global__ void qt_node(const unsigned int *codes, int begin, int end, int depth, int leaf, int *pdepth,
                        unsigned long long *depth_sum) {
  int i = begin + blockIdx.x * blockDim.x + threadIdx.x;
  if (i < end) {
    atomicMax(&pdepth[i], depth);
    atomicAdd(&depth_sum[depth], (unsigned long long)(codes[i] >> (2 * (BITS - depth))));
  }
  if (blockIdx.x == 0 && threadIdx.x < 4 && depth < MAX_DEPTH && end - begin > leaf) {
    int shift = 2 * (BITS - depth - 1);
    unsigned int prefix = (codes[begin] >> (shift + 2)) * 4 + threadIdx.x;
    int lo = lower_bound(codes, begin, end, prefix << shift);
    int hi = lower_bound(codes, lo, end, (prefix + 1) << shift);
    if (hi > lo) {
      qt_node<<<(hi - lo + 127) / 128, 128>>>(codes, lo, hi, depth + 1, leaf, pdepth, depth_sum);
      if (cudaGetLastError() != cudaSuccess) atomicAdd(&d_launch_errors, 1u);
    }
  }
}

static void cpu_node(const unsigned int *codes, int begin, int end, int depth, int leaf, int *pdepth,
                     unsigned long long *depth_sum) {
  for (int i = begin; i < end; ++i) {
    if (pdepth[i] < depth) pdepth[i] = depth;
    depth_sum[depth] += codes[i] >> (2 * (BITS - depth));
  }
  if (depth >= MAX_DEPTH || end - begin <= leaf) return;
  int shift = 2 * (BITS - depth - 1);
  for (unsigned int q = 0; q < 4; ++q) {
    unsigned int prefix = (codes[begin] >> (shift + 2)) * 4 + q;
    int lo = lower_bound(codes, begin, end, prefix << shift);
    int hi = lower_bound(codes, lo, end, (prefix + 1) << shift);
    if (hi > lo) cpu_node(codes, lo, hi, depth + 1, leaf, pdepth, depth_sum);
  }
}

static unsigned int lcg(unsigned long long *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned int)(*s >> 33);
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

static int cmp_uint(const void *a, const void *b) {
  unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;
  return (x > y) - (x < y);
}

static unsigned int spread(unsigned int x) { // BITS bits -> every other bit
  unsigned int r = 0;
  for (int b = 0; b < BITS; ++b) r |= ((x >> b) & 1u) << (2 * b);
  return r;
}

int main(int argc, char **argv) {
  const char *input = argc > 1 ? argv[1] : "large"; // large: 256K points, leaves of 64; small: 64K, leaves of 8;
  const int small = strcmp(input, "small") == 0;     // xl: 1M points, leaves of 64
  const int N = small ? 1 << 16 : strcmp(input, "xl") == 0 ? 1 << 20 : 1 << 18;
  const int leaf = small ? 8 : 64;
  unsigned long long seed = 8086;
  unsigned int *codes = (unsigned int *)malloc(N * sizeof(unsigned int));
  for (int i = 0; i < N; ++i) { // clusters of various spread around 64 random centres
    int c = (int)(lcg(&seed) % 64);
    unsigned long long cs = 1000 + (unsigned long long)c;
    int cx = (int)(lcg(&cs) % (1 << BITS)), cy = (int)(lcg(&cs) % (1 << BITS));
    int spreadw = 4 << (c % 8);
    int x = cx + (int)(lcg(&seed) % spreadw) - spreadw / 2, y = cy + (int)(lcg(&seed) % spreadw) - spreadw / 2;
    x = x < 0 ? 0 : x >= (1 << BITS) ? (1 << BITS) - 1 : x;
    y = y < 0 ? 0 : y >= (1 << BITS) ? (1 << BITS) - 1 : y;
    codes[i] = spread((unsigned int)x) | (spread((unsigned int)y) << 1);
  }
  qsort(codes, N, sizeof(unsigned int), cmp_uint);
  int *ref_depth = (int *)calloc(N, sizeof(int));
  unsigned long long ref_sum[MAX_DEPTH + 1] = {0};
  cpu_node(codes, 0, N, 0, leaf, ref_depth, ref_sum);

  CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 18));
  unsigned int *d_codes;
  int *d_pdepth;
  unsigned long long *d_sum;
  CHECK(cudaMalloc((void **)&d_codes, N * sizeof(unsigned int)));
  CHECK(cudaMalloc((void **)&d_pdepth, N * sizeof(int)));
  CHECK(cudaMalloc((void **)&d_sum, (MAX_DEPTH + 1) * sizeof(unsigned long long)));
  CHECK(cudaMemcpy(d_codes, codes, N * sizeof(unsigned int), cudaMemcpyHostToDevice));

  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  float times[RUNS + 1];
  for (int run = 0; run <= RUNS; ++run) { // run 0 warms up
    CHECK(cudaMemset(d_pdepth, 0, N * sizeof(int)));
    CHECK(cudaMemset(d_sum, 0, (MAX_DEPTH + 1) * sizeof(unsigned long long)));
    CHECK(cudaEventRecord(t0));
    qt_node<<<(N + 127) / 128, 128>>>(d_codes, 0, N, 0, leaf, d_pdepth, d_sum);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    CHECK(cudaEventElapsedTime(&times[run], t0, t1));
  }
  qsort(times + 1, RUNS, sizeof(float), cmp_float);
  int *pdepth = (int *)malloc(N * sizeof(int));
  unsigned long long sum[MAX_DEPTH + 1];
  CHECK(cudaMemcpy(pdepth, d_pdepth, N * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(sum, d_sum, sizeof sum, cudaMemcpyDeviceToHost));
  unsigned int launch_errors = 0;
  CHECK(cudaMemcpyFromSymbol(&launch_errors, d_launch_errors, sizeof launch_errors));
#ifdef WARPWISE_PRELUDE
  launch_errors += ww_launch_error_count(); // launches made by warpwise-generated code
#endif
  int bad = 0;
  unsigned int hash = 2166136261u;
  for (int i = 0; i < N; ++i) {
    if (pdepth[i] != ref_depth[i]) ++bad;
    hash = (hash ^ (unsigned int)pdepth[i]) * 16777619u;
  }
  for (int d = 0; d <= MAX_DEPTH; ++d) {
    if (sum[d] != ref_sum[d]) ++bad;
    hash = (hash ^ (unsigned int)sum[d]) * 16777619u;
  }
  int pass = bad == 0 && launch_errors == 0;
  printf("RESULT quadtree@%s %s time_ms=%.4f launch_errors=%u mismatches=%d hash=%08x points=%d\n", input,
         pass ? "PASS" : "FAIL", times[1 + RUNS / 2], launch_errors, bad, hash, N);
  return pass ? 0 : 1;
}
