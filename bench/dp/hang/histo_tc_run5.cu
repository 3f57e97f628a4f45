// bench/dp/generated/histo/tc.cu as generated before the loop-launch fix (runs 1-5; it hangs at threshold 255-257 with 32,768 documents). Do not edit.
// Per-document term histogram with the launch inside a loop of the parent, written with plain CUDA
// dynamic parallelism: a small parent grid walks the documents with a grid-stride loop and, for each
// document, launches a child grid with one thread per token, which hashes the token and counts it in
// the document's bucket row. Document lengths are heavy-tailed. Integer counts: the check against the
// CPU reference is exact.
//
// Build: nvcc -O3 -rdc=true -arch=sm_90 histo.cu -o histo -lcudadevrt; run: ./histo [large|small]
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
#ifndef WARPWISE_PRELUDE
#define WARPWISE_PRELUDE 1
#ifndef WARPWISE_CFACTOR
#define WARPWISE_CFACTOR 4 /* coarsening factor: original child blocks per block (CGO'22 Fig. 6) */
#endif
/* warpwise prelude (warpwise dynamic-parallelism rewrite): device-side launch failures are counted here,
   because a failed device-side launch (e.g. past the device runtime's pending-launch limit) is
   otherwise silent. The host reads the count with ww_launch_error_count(). */
static __device__ unsigned int ww_launch_errors = 0;
static unsigned int ww_host_launch_errors = 0;
#define WARPWISE_COUNT_LAUNCH_ERROR(err) \
  do { if ((err) != cudaSuccess) atomicAdd(&ww_launch_errors, 1u); } while (0)
[[maybe_unused]] static inline unsigned int ww_launch_error_count(void) {
  unsigned int n = 0;
  cudaMemcpyFromSymbol(&n, ww_launch_errors, sizeof n);
  return n + ww_host_launch_errors;
}
#endif
#ifndef WARPWISE_THRESHOLD
#define WARPWISE_THRESHOLD 128 /* threshold: minimum child threads for a launch (CGO'22 Fig. 3) */
#endif

static int DOCS = 65536; // HISTO_DOCS in the environment overrides it (bench/dp/gpu.sh diagnostics)
static const int BUCKETS = 16;
static const int RUNS = 5;

__device__ unsigned int d_launch_errors; // device-side launches that failed

__host__ __device__ unsigned int token_bucket(unsigned int tok) {
  tok ^= tok >> 16;
  tok *= 0x45d9f3bu;
  tok ^= tok >> 16;
  return tok % BUCKETS;
}

// Child: one thread per token of document d.
__global__ void count_tokens(int d, int first, int len, const unsigned int *tokens, unsigned int *hist) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < len) atomicAdd(&hist[d * BUCKETS + token_bucket(tokens[first + k])], 1u);
}

/* warpwise coarsen (CGO'22 Fig. 6): coarsened copy of child kernel `count_tokens`; block b runs the
   original blocks b, b + gridDim.x, ... of the uncoarsened grid ww_gDim */
__global__ void ww_count_tokens_coarse(int d, int first, int len, const unsigned int *tokens, unsigned int *hist, dim3 ww_gDim) {
  for (unsigned int ww_bx = blockIdx.x; ww_bx < ww_gDim.x; ww_bx += gridDim.x) {
    {
      int k = ww_bx * blockDim.x + threadIdx.x;
      if (k < len) atomicAdd(&hist[d * BUCKETS + token_bucket(tokens[first + k])], 1u);
    }
  }
}

/* warpwise threshold (CGO'22 Fig. 3): serial version of child kernel `count_tokens`, run by one
   parent thread when the child grid would have fewer than WARPWISE_THRESHOLD threads */
__device__ void ww_count_tokens_serial(int d, int first, int len, const unsigned int *tokens, unsigned int *hist, dim3 ww_sgDim, dim3 ww_sbDim) {
  for (unsigned int ww_bx = 0; ww_bx < ww_sgDim.x; ++ww_bx) {
    for (unsigned int ww_tx = 0; ww_tx < ww_sbDim.x; ++ww_tx) {
      {
        int k = ww_bx * ww_sbDim.x + ww_tx;
        if (k < len) atomicAdd(&hist[d * BUCKETS + token_bucket(tokens[first + k])], 1u);
      }
    }
  }
}

// Parent: a grid-stride loop over the documents; one child launch per document.
__global__ void count_documents(const int *doc_off, int ndocs, const unsigned int *tokens, unsigned int *hist) {
  for (int d = blockIdx.x * blockDim.x + threadIdx.x; d < ndocs; d += gridDim.x * blockDim.x) {
    int first = doc_off[d];
    int len = doc_off[d + 1] - first;
    if (len > 0) {
      { /* warpwise threshold (CGO'22 Fig. 3): launch child `count_tokens` only when it has at least WARPWISE_THRESHOLD threads; otherwise this thread runs it serially */
        const auto ww_threads = (len); /* child threads, Fig. 4 pattern (N+b-1)/b */
        const dim3 ww_thr_gDim = (ww_threads + 127) / 128;
        const dim3 ww_thr_bDim = 128;
        if (ww_threads >= WARPWISE_THRESHOLD) {
          { /* warpwise coarsen (CGO'22 Fig. 6): each block of `ww_count_tokens_coarse` runs WARPWISE_CFACTOR blocks of child `count_tokens` */
            const dim3 ww_cf_gDim = ww_thr_gDim;
            dim3 ww_cf_cgDim = ww_cf_gDim;
            ww_cf_cgDim.x = (ww_cf_gDim.x + WARPWISE_CFACTOR - 1) / WARPWISE_CFACTOR;
            ww_count_tokens_coarse<<<ww_cf_cgDim, ww_thr_bDim>>>(d, first, len, tokens, hist, ww_cf_gDim);
            WARPWISE_COUNT_LAUNCH_ERROR(cudaPeekAtLastError());
          }
        } else {
          ww_count_tokens_serial(d, first, len, tokens, hist, ww_thr_gDim, ww_thr_bDim);
        }
      }
      if (cudaGetLastError() != cudaSuccess) atomicAdd(&d_launch_errors, 1u);
    }
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
  const char *input = argc > 1 ? argv[1] : "large"; // large: documents up to 2500 tokens; small: up to 32; xl: 40000
  const int xl = strcmp(input, "xl") == 0;
  const int max_len = strcmp(input, "small") == 0 ? 32 : xl ? 1 << 16 : 16384;
  const double eps = xl ? 0.0001 / 16 : 0.0001; // xl: a 16x heavier tail
  const int docs_env = getenv("HISTO_DOCS") ? atoi(getenv("HISTO_DOCS")) : 0;
  if (docs_env > 0 && docs_env < DOCS) DOCS = docs_env;
  unsigned long long seed = 12345;
  int *doc_off = (int *)malloc((DOCS + 1) * sizeof(int));
  doc_off[0] = 0;
  for (int d = 0; d < DOCS; ++d) {
    double r = (lcg(&seed) + 1.0) / 2147483649.0;
    int len = 1 + (int)(1.0 / (r * r * (1.0 - eps) + eps)) / 4;
    doc_off[d + 1] = doc_off[d] + (len > max_len ? max_len : len);
  }
  int T = doc_off[DOCS];
  unsigned int *tokens = (unsigned int *)malloc(T * sizeof(unsigned int));
  for (int t = 0; t < T; ++t) tokens[t] = lcg(&seed) % 50000;
  unsigned int *ref = (unsigned int *)calloc((size_t)DOCS * BUCKETS, sizeof(unsigned int));
  for (int d = 0; d < DOCS; ++d)
    for (int t = doc_off[d]; t < doc_off[d + 1]; ++t) ++ref[d * BUCKETS + token_bucket(tokens[t])];

  CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 17));
  int *d_off;
  unsigned int *d_tokens, *d_hist;
  CHECK(cudaMalloc((void **)&d_off, (DOCS + 1) * sizeof(int)));
  CHECK(cudaMalloc((void **)&d_tokens, T * sizeof(unsigned int)));
  CHECK(cudaMalloc((void **)&d_hist, DOCS * BUCKETS * sizeof(unsigned int)));
  CHECK(cudaMemcpy(d_off, doc_off, (DOCS + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_tokens, tokens, T * sizeof(unsigned int), cudaMemcpyHostToDevice));

  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  float times[RUNS + 1];
  for (int run = 0; run <= RUNS; ++run) { // run 0 warms up
    CHECK(cudaMemset(d_hist, 0, DOCS * BUCKETS * sizeof(unsigned int)));
    CHECK(cudaEventRecord(t0));
    count_documents<<<64, 128>>>(d_off, DOCS, d_tokens, d_hist); // 8192 parent threads, 8 documents each
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    CHECK(cudaEventElapsedTime(&times[run], t0, t1));
  }
  qsort(times + 1, RUNS, sizeof(float), cmp_float);
  unsigned int *hist = (unsigned int *)malloc(DOCS * BUCKETS * sizeof(unsigned int));
  CHECK(cudaMemcpy(hist, d_hist, DOCS * BUCKETS * sizeof(unsigned int), cudaMemcpyDeviceToHost));
  unsigned int launch_errors = 0;
  CHECK(cudaMemcpyFromSymbol(&launch_errors, d_launch_errors, sizeof launch_errors));
#ifdef WARPWISE_PRELUDE
  launch_errors += ww_launch_error_count(); // launches made by warpwise-generated code
#endif
  int bad = 0;
  unsigned int hash = 2166136261u;
  for (int i = 0; i < DOCS * BUCKETS; ++i) {
    if (hist[i] != ref[i]) ++bad;
    hash = (hash ^ hist[i]) * 16777619u;
  }
  int pass = bad == 0 && launch_errors == 0;
  printf("RESULT histo@%s %s time_ms=%.4f launch_errors=%u mismatches=%d hash=%08x tokens=%d\n", input,
         pass ? "PASS" : "FAIL", times[1 + RUNS / 2], launch_errors, bad, hash, T);
  return pass ? 0 : 1;
}
