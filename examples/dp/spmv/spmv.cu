// SpMV y = A x over a CSR matrix whose row lengths follow a power law (a few rows hold thousands of
// nonzeros, most hold a handful), written with plain CUDA dynamic parallelism: one parent thread per
// row launches a child grid with one thread per nonzero of its row.
//
// Values are small integers stored as floats, so every partial sum is exact and the result does not
// depend on the order of the float atomics: the check against the CPU reference is exact.
//
// Build: nvcc -O3 -rdc=true -arch=sm_90 spmv.cu -o spmv -lcudadevrt
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

static const int ROWS = 65536;
static const int COLS = 65536;
static const int MAX_ROW = 8192;
static const int RUNS = 5;

__device__ unsigned int d_launch_errors; // device-side launches that failed

// Child: one thread per nonzero of row `row`.
__global__ void spmv_row(int row, int start, int len, const int *col, const float *val, const float *x,
                         float *y) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < len) {
    atomicAdd(&y[row], val[start + j] * x[col[start + j]]);
  }
}

// Parent: one thread per row.
__global__ void spmv_parent(int rows, const int *rowptr, const int *col, const float *val, const float *x,
                            float *y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  int start = rowptr[row];
  int len = rowptr[row + 1] - start;
  if (len == 0) return;
  spmv_row<<<(len + 127) / 128, 128>>>(row, start, len, col, val, x, y);
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
  unsigned long long seed = 12345;
  int *rowptr = (int *)malloc((ROWS + 1) * sizeof(int));
  rowptr[0] = 0;
  for (int r = 0; r < ROWS; ++r) {
    // power law: P(len >= k) ~ k^-1/2, from 1 to MAX_ROW nonzeros (mean about 60)
    double u = (lcg(&seed) + 1.0) / 2147483649.0;
    int len = 1 + (int)(1.0 / (u * u * 0.99999 + 0.00001)) / 8;
    if (len > MAX_ROW) len = MAX_ROW;
    rowptr[r + 1] = rowptr[r] + len;
  }
  int nnz = rowptr[ROWS];
  int *col = (int *)malloc(nnz * sizeof(int));
  float *val = (float *)malloc(nnz * sizeof(float));
  float *x = (float *)malloc(COLS * sizeof(float));
  for (int i = 0; i < nnz; ++i) {
    col[i] = (int)(lcg(&seed) % COLS);
    val[i] = (float)(1 + lcg(&seed) % 4);
  }
  for (int i = 0; i < COLS; ++i) x[i] = (float)(1 + lcg(&seed) % 8);
  float *ref = (float *)malloc(ROWS * sizeof(float));
  for (int r = 0; r < ROWS; ++r) {
    float s = 0.0f;
    for (int j = rowptr[r]; j < rowptr[r + 1]; ++j) s += val[j] * x[col[j]];
    ref[r] = s;
  }

  CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 18));
  int *d_rowptr, *d_col;
  float *d_val, *d_x, *d_y;
  CHECK(cudaMalloc((void **)&d_rowptr, (ROWS + 1) * sizeof(int)));
  CHECK(cudaMalloc((void **)&d_col, nnz * sizeof(int)));
  CHECK(cudaMalloc((void **)&d_val, nnz * sizeof(float)));
  CHECK(cudaMalloc((void **)&d_x, COLS * sizeof(float)));
  CHECK(cudaMalloc((void **)&d_y, ROWS * sizeof(float)));
  CHECK(cudaMemcpy(d_rowptr, rowptr, (ROWS + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_col, col, nnz * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_val, val, nnz * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_x, x, COLS * sizeof(float), cudaMemcpyHostToDevice));

  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  float times[RUNS + 1];
  for (int run = 0; run <= RUNS; ++run) { // run 0 warms up
    CHECK(cudaMemset(d_y, 0, ROWS * sizeof(float)));
    CHECK(cudaEventRecord(t0));
    spmv_parent<<<(ROWS + 255) / 256, 256>>>(ROWS, d_rowptr, d_col, d_val, d_x, d_y);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    CHECK(cudaEventElapsedTime(&times[run], t0, t1));
  }
  CHECK(cudaDeviceSynchronize());
  qsort(times + 1, RUNS, sizeof(float), cmp_float);

  float *y = (float *)malloc(ROWS * sizeof(float));
  CHECK(cudaMemcpy(y, d_y, ROWS * sizeof(float), cudaMemcpyDeviceToHost));
  unsigned int launch_errors = 0;
  CHECK(cudaMemcpyFromSymbol(&launch_errors, d_launch_errors, sizeof launch_errors));
#ifdef WARPWISE_PRELUDE
  launch_errors += ww_launch_error_count(); // launches made by warpwise-generated code
#endif
  int bad = 0;
  unsigned int hash = 2166136261u;
  for (int r = 0; r < ROWS; ++r) {
    if (y[r] != ref[r]) ++bad;
    unsigned int bits;
    memcpy(&bits, &y[r], sizeof bits);
    hash = (hash ^ bits) * 16777619u;
  }
  int pass = bad == 0 && launch_errors == 0;
  printf("RESULT spmv %s time_ms=%.4f launch_errors=%u mismatches=%d hash=%08x nnz=%d\n", pass ? "PASS" : "FAIL",
         times[1 + RUNS / 2], launch_errors, bad, hash, nnz);
  return pass ? 0 : 1;
}
