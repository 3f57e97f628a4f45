// B-tree range search, written with plain CUDA dynamic parallelism: one parent thread per query
// descends a static B-tree (fan-out 16, keys sorted in the leaves) to the leaf holding the query's
// lower bound, then launches a child grid with one thread per key of the range [lo, hi], which sums
// the values of the keys in range. Range lengths are heavy-tailed (a few queries cover thousands of
// keys). Integer sums: the check against the CPU reference is exact.
//
// Build: nvcc -O3 -rdc=true -arch=sm_90 btree.cu -o btree -lcudadevrt; run: ./btree [large|small]
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

static const int KEYS = 1 << 20;  // keys in the leaves (sorted)
static const int FAN = 16;        // children per inner node
static const int QUERIES = 32768;
static const int RUNS = 5;

__device__ unsigned int d_launch_errors; // device-side launches that failed

// Child: one thread per leaf slot of the range [first, first + count): adds the values of the keys <= hi.
__global__ void scan_range(int first, int count, int hi, const int *keys, const int *vals, int q,
                           unsigned long long *sums) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  int key = keys[first + k];
  if (key <= hi) atomicAdd(&sums[q], (unsigned long long)vals[first + k]);
}

// Parent: one thread per query; descends the inner levels (separator keys, level by level) to the
// first key >= lo, then launches the child over the keys that can be <= hi.
__global__ void search(const int *inner, const int *level_off, int levels, const int *keys, const int *vals,
                       const int *qlo, const int *qhi, int nq, unsigned long long *sums) {
  int q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= nq) return;
  int lo = qlo[q], hi = qhi[q];
  int node = 0; // index within the level
  for (int l = 0; l < levels; ++l) { // inner node `node` of level l holds FAN separators (min key of each child)
    const int *sep = inner + level_off[l] + node * FAN;
    int c = 0;
    while (c + 1 < FAN && sep[c + 1] <= lo) ++c;
    node = node * FAN + c;
  }
  int first = node * FAN; // leaf `node` holds keys [node * FAN, node * FAN + FAN)
  while (first < KEYS && keys[first] < lo) ++first;
  int last = first; // one past the last key <= hi, found by galloping from `first`
  int step = 1;
  while (last + step <= KEYS && keys[last + step - 1] <= hi) { last += step; step *= 2; }
  while (step > 0) { if (last + step <= KEYS && keys[last + step - 1] <= hi) last += step; step /= 2; }
  int count = last - first;
  if (count > 0) {
    scan_range<<<(count + 127) / 128, 128>>>(first, count, hi, keys, vals, q, sums);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(&d_launch_errors, 1u);
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

int main(int argc, char **argv) {
  const char *input = argc > 1 ? argv[1] : "large"; // large: ranges up to 8192 keys; small: up to 24; xl: up to 131072
  const int xl = strcmp(input, "xl") == 0;
  const int max_range = strcmp(input, "small") == 0 ? 24 : xl ? 1 << 17 : 8192;
  const double eps = xl ? 0.0001 / 16 : 0.0001; // xl: a 16x heavier tail
  unsigned long long seed = 99;
  int *keys = (int *)malloc(KEYS * sizeof(int));
  int *vals = (int *)malloc(KEYS * sizeof(int));
  int k = 0;
  for (int i = 0; i < KEYS; ++i) {
    k += 1 + (int)(lcg(&seed) % 3);
    keys[i] = k;
    vals[i] = (int)(lcg(&seed) % 1000);
  }
  // inner levels bottom-up: level above the leaves has KEYS / FAN^2 nodes of FAN separators each
  int levels = 0, nodes = KEYS / FAN; // leaves
  int sizes[8];
  while (nodes > 1) {
    nodes /= FAN;
    sizes[levels++] = nodes;
  }
  int *level_off = (int *)malloc(levels * sizeof(int));
  int total = 0;
  for (int l = 0; l < levels; ++l) { // top level first
    level_off[l] = total;
    total += sizes[levels - 1 - l] * FAN;
  }
  int *inner = (int *)malloc(total * sizeof(int));
  for (int l = 0; l < levels; ++l) {
    int n = sizes[levels - 1 - l];
    int span = KEYS / (n * FAN); // keys under each child of a level-l node
    for (int i = 0; i < n * FAN; ++i) inner[level_off[l] + i] = keys[i * span];
  }
  int *qlo = (int *)malloc(QUERIES * sizeof(int));
  int *qhi = (int *)malloc(QUERIES * sizeof(int));
  for (int q = 0; q < QUERIES; ++q) {
    double r = (lcg(&seed) + 1.0) / 2147483649.0;
    int len = 1 + (int)(1.0 / (r * r * (1.0 - eps) + eps)) % max_range; // heavy-tailed range lengths (keys)
    int i = (int)(lcg(&seed) % (KEYS - len));
    qlo[q] = keys[i] - (int)(lcg(&seed) % 2);
    qhi[q] = keys[i + len - 1];
  }
  unsigned long long *ref = (unsigned long long *)calloc(QUERIES, sizeof(unsigned long long));
  for (int q = 0; q < QUERIES; ++q) {
    int a = 0, b = KEYS; // first key >= lo
    while (a < b) { int m = (a + b) / 2; if (keys[m] < qlo[q]) a = m + 1; else b = m; }
    for (int i = a; i < KEYS && keys[i] <= qhi[q]; ++i) ref[q] += (unsigned long long)vals[i];
  }

  CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 16));
  int *d_inner, *d_loff, *d_keys, *d_vals, *d_qlo, *d_qhi;
  unsigned long long *d_sums;
  CHECK(cudaMalloc((void **)&d_inner, total * sizeof(int)));
  CHECK(cudaMalloc((void **)&d_loff, levels * sizeof(int)));
  CHECK(cudaMalloc((void **)&d_keys, KEYS * sizeof(int)));
  CHECK(cudaMalloc((void **)&d_vals, KEYS * sizeof(int)));
  CHECK(cudaMalloc((void **)&d_qlo, QUERIES * sizeof(int)));
  CHECK(cudaMalloc((void **)&d_qhi, QUERIES * sizeof(int)));
  CHECK(cudaMalloc((void **)&d_sums, QUERIES * sizeof(unsigned long long)));
  CHECK(cudaMemcpy(d_inner, inner, total * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_loff, level_off, levels * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_keys, keys, KEYS * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_vals, vals, KEYS * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_qlo, qlo, QUERIES * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_qhi, qhi, QUERIES * sizeof(int), cudaMemcpyHostToDevice));

  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  float times[RUNS + 1];
  for (int run = 0; run <= RUNS; ++run) { // run 0 warms up
    CHECK(cudaMemset(d_sums, 0, QUERIES * sizeof(unsigned long long)));
    CHECK(cudaEventRecord(t0));
    search<<<(QUERIES + 127) / 128, 128>>>(d_inner, d_loff, levels, d_keys, d_vals, d_qlo, d_qhi, QUERIES, d_sums);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    CHECK(cudaEventElapsedTime(&times[run], t0, t1));
  }
  qsort(times + 1, RUNS, sizeof(float), cmp_float);
  unsigned long long *sums = (unsigned long long *)malloc(QUERIES * sizeof(unsigned long long));
  CHECK(cudaMemcpy(sums, d_sums, QUERIES * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  unsigned int launch_errors = 0;
  CHECK(cudaMemcpyFromSymbol(&launch_errors, d_launch_errors, sizeof launch_errors));
#ifdef WARPWISE_PRELUDE
  launch_errors += ww_launch_error_count(); // launches made by warpwise-generated code
#endif
  int bad = 0;
  unsigned int hash = 2166136261u;
  for (int q = 0; q < QUERIES; ++q) {
    if (sums[q] != ref[q]) ++bad;
    hash = (hash ^ (unsigned int)sums[q]) * 16777619u;
  }
  int pass = bad == 0 && launch_errors == 0;
  printf("RESULT btree@%s %s time_ms=%.4f launch_errors=%u mismatches=%d hash=%08x levels=%d\n", input,
         pass ? "PASS" : "FAIL", times[1 + RUNS / 2], launch_errors, bad, hash, levels);
  return pass ? 0 : 1;
}
