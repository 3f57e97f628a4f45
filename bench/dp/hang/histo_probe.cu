// Hand-written reduction of the histo threshold hang (issue 14, docs/benchmarks.md "The histo hang"),
// run by bench/dp/hang_diag.sh. The parent is the same grid-stride loop over documents as
// examples/dp/histo/histo.cu with the threshold written by hand: a document of at least THR tokens gets a
// child grid (one thread per token, the original count_tokens), a shorter one is counted serially by its
// parent thread (the same loop nest as warpwise's ww_*_serial, CGO'22 Fig. 3). Compile-time switches
// take one piece away at a time so the device runtime can be separated from the generated code:
//
//   -DTHR=256          threshold (child threads); the generated build hangs at 255-257 with 32,768 docs
//   -DSERIAL_NOP       the serial branch does nothing (output wrong, only hang/pass counts)
//   -DLAUNCH_NOP       the launch is not made (output wrong)
//   -DNOINLINE         the serial function is __noinline__ (a call, its own convergence barriers)
//   -DNOERR            no cudaPeekAtLastError / cudaGetLastError after the launch
//   -DSYNCWARP         __syncwarp() after the if/else (the warp reconverges before the next document;
//                      legal here: every thread runs ndocs / (grid threads) iterations when that divides)
//   -DSEQ              two ifs instead of if/else, with __syncwarp(__activemask()) between them: the
//                      warp's launching lanes finish their launches before its serial lanes start
//   -DFAF              launch into cudaStreamFireAndForget instead of the block's implicit NULL stream
//   -DPROBE            progress counters in mapped pinned host memory, polled by the host while the
//                      kernel runs: per parent thread the document index and phase, per child launch
//                      issued / returned / started / finished
//
// Run: ./histo_probe [large|xl]; environment: HISTO_DOCS (documents, default 32768), PENDING (the
// pending-launch limit; 0: leave the default; default 131072 as the program sets), RUNS (timed runs after
// one warm-up, default 5), POLL_S (PROBE: seconds to poll before giving up, default 4).
// Prints "run <k> ms=<t>" per run as it finishes, then "RESULT ..." like the benchmark programs.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>
#include <cuda_runtime.h>

#ifndef THR
#define THR 256
#endif

#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t err_ = (call);                                                        \
    if (err_ != cudaSuccess) {                                                        \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_));   \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

static const int BUCKETS = 16;
__device__ unsigned int d_launch_errors;

#ifdef PROBE
// Phases of a parent thread (pstate[t] = iteration << 8 | phase), written with volatile stores to mapped
// host memory so the host sees them while the kernel runs.
enum { PH_START = 1, PH_BEFORE_LAUNCH = 2, PH_AFTER_LAUNCH = 3, PH_SERIAL = 4, PH_SERIAL_DONE = 5, PH_EXIT = 6 };
struct LaunchRec {
  unsigned int parent; // parent thread + 1 (0: slot unused)
  unsigned int len;    // child threads
  unsigned int iter;   // parent loop iteration
  unsigned int returned, started, finished, err;
};
__device__ volatile unsigned int *g_pstate;
__device__ volatile LaunchRec *g_lrec;
__device__ unsigned int g_nlaunch;             // launch ids
__device__ unsigned int g_blocks_done[1 << 17]; // per launch: child blocks finished
static const unsigned int MAX_LAUNCH = 1 << 17;
#define PSTATE(t, it, ph) (g_pstate[t] = ((it) << 8) | (ph))
#else
#define PSTATE(t, it, ph) ((void)0)
#endif

__host__ __device__ unsigned int token_bucket(unsigned int tok) {
  tok ^= tok >> 16;
  tok *= 0x45d9f3bu;
  tok ^= tok >> 16;
  return tok % BUCKETS;
}

#ifdef PROBE
__global__ void count_tokens(int d, int first, int len, const unsigned int *tokens, unsigned int *hist, unsigned int id) {
  if (threadIdx.x == 0) g_lrec[id].started = 1;
#else
__global__ void count_tokens(int d, int first, int len, const unsigned int *tokens, unsigned int *hist) {
#endif
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < len) atomicAdd(&hist[d * BUCKETS + token_bucket(tokens[first + k])], 1u);
#ifdef PROBE
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(&g_blocks_done[id], 1u) + 1 == gridDim.x) g_lrec[id].finished = 1;
#endif
}

#ifdef NOINLINE
__noinline__
#endif
__device__ void count_tokens_serial(int d, int first, int len, const unsigned int *tokens, unsigned int *hist,
                                    dim3 sg, dim3 sb) {
#ifndef SERIAL_NOP
  for (unsigned int bx = 0; bx < sg.x; ++bx)
    for (unsigned int tx = 0; tx < sb.x; ++tx) {
      int k = bx * sb.x + tx;
      if (k < len) atomicAdd(&hist[d * BUCKETS + token_bucket(tokens[first + k])], 1u);
    }
#endif
}

__global__ void count_documents(const int *doc_off, int ndocs, const unsigned int *tokens, unsigned int *hist) {
  unsigned int it = 0;
  const unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
  (void)t;
  for (int d = t; d < ndocs; d += gridDim.x * blockDim.x, ++it) {
    PSTATE(t, it, PH_START);
    int first = doc_off[d];
    int len = doc_off[d + 1] - first;
    if (len > 0) {
      const int threads = len;
      const dim3 g = (threads + 127) / 128, b = 128;
      if (threads >= THR) {
#ifndef LAUNCH_NOP
#ifdef PROBE
        const unsigned int id = atomicAdd(&g_nlaunch, 1u);
        if (id < MAX_LAUNCH) {
          g_lrec[id].len = len;
          g_lrec[id].iter = it;
          g_lrec[id].parent = t + 1;
        }
        PSTATE(t, it, PH_BEFORE_LAUNCH);
#endif
#ifdef FAF
#define STREAM , 0, cudaStreamFireAndForget
#else
#define STREAM
#endif
#ifdef PROBE
        count_tokens<<<g, b STREAM>>>(d, first, len, tokens, hist, id < MAX_LAUNCH ? id : MAX_LAUNCH - 1);
#else
        count_tokens<<<g, b STREAM>>>(d, first, len, tokens, hist);
#endif
#ifndef NOERR
        cudaError_t e = cudaPeekAtLastError();
        if (e != cudaSuccess) atomicAdd(&d_launch_errors, 1u);
#endif
#ifdef PROBE
        if (id < MAX_LAUNCH) {
          g_lrec[id].returned = 1;
#ifndef NOERR
          g_lrec[id].err = e;
#endif
        }
        PSTATE(t, it, PH_AFTER_LAUNCH);
#endif
#endif
      }
#ifdef SEQ
      __syncwarp(__activemask());
      if (threads < THR) {
#else
      else {
#endif
        PSTATE(t, it, PH_SERIAL);
        count_tokens_serial(d, first, len, tokens, hist, g, b);
        PSTATE(t, it, PH_SERIAL_DONE);
      }
#ifndef NOERR
      if (cudaGetLastError() != cudaSuccess) atomicAdd(&d_launch_errors, 1u);
#endif
    }
#ifdef SYNCWARP
    __syncwarp();
#endif
  }
  PSTATE(t, it, PH_EXIT);
}

static unsigned int lcg(unsigned long long *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned int)(*s >> 33);
}

#ifdef PROBE
static double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}
#endif

#ifdef PROBE
static const char *PHASE_NAME[] = {"none", "start", "before_launch", "after_launch", "serial", "serial_done", "exit"};

// Prints what the parent threads and the child launches are doing; returns the number of parent threads
// not at PH_EXIT.
static int dump_probe(double t, const unsigned int *pstate, int nthreads, const LaunchRec *lrec, unsigned int nl,
                      const int *doc_off) {
  int by_phase[7] = {0};
  for (int i = 0; i < nthreads; ++i) ++by_phase[(pstate[i] & 0xff) < 7 ? (pstate[i] & 0xff) : 0];
  unsigned int issued = 0, returned = 0, started = 0, finished = 0, errs = 0;
  for (unsigned int i = 0; i < nl && i < MAX_LAUNCH; ++i) {
    issued += lrec[i].parent != 0;
    returned += lrec[i].returned;
    started += lrec[i].started;
    finished += lrec[i].finished;
    errs += lrec[i].err != 0;
  }
  printf("PROBE t=%.2fs parents:", t);
  for (int p = 0; p < 7; ++p) printf(" %s=%d", PHASE_NAME[p], by_phase[p]);
  printf(" | launches ids=%u issued=%u returned=%u started=%u finished=%u errors=%u\n", nl, issued, returned, started,
         finished, errs);
  int stuck = nthreads - by_phase[6], shown = 0;
  // per warp: which lanes are not done, and where
  for (int w = 0; w < nthreads / 32 && shown < 40; ++w) {
    int notdone = 0;
    for (int l = 0; l < 32; ++l) notdone += (pstate[w * 32 + l] & 0xff) != 6;
    if (!notdone) continue;
    ++shown;
    printf("PROBE warp %d (block %d warp %d): %d lanes not exited:", w, w * 32 / 128, (w * 32 % 128) / 32, notdone);
    for (int l = 0; l < 32; ++l) {
      unsigned int s = pstate[w * 32 + l];
      int tid = w * 32 + l;
      int d = tid + (int)(s >> 8) * nthreads;
      printf(" %d:%s/it%u/len%d", l, PHASE_NAME[(s & 0xff) < 7 ? (s & 0xff) : 0], s >> 8,
             (s & 0xff) == 6 ? -1 : doc_off[d + 1] - doc_off[d]);
    }
    printf("\n");
  }
  shown = 0;
  for (unsigned int i = 0; i < nl && i < MAX_LAUNCH && shown < 40; ++i)
    if (lrec[i].parent && !lrec[i].finished) {
      ++shown;
      printf("PROBE launch %u parent=%u (block %u lane %u) iter=%u len=%u returned=%u started=%u finished=%u err=%u\n", i,
             lrec[i].parent - 1, (lrec[i].parent - 1) / 128, (lrec[i].parent - 1) % 32, lrec[i].iter, lrec[i].len,
             lrec[i].returned, lrec[i].started, lrec[i].finished, lrec[i].err);
    }
  // per parent block: launches issued, and those not started / not finished
  int per_block[3][1024] = {{0}};
  for (unsigned int i = 0; i < nl && i < MAX_LAUNCH; ++i) {
    unsigned int b = (lrec[i].parent - 1) / 128;
    if (!lrec[i].parent || b >= 1024) continue;
    ++per_block[0][b];
    per_block[1][b] += !lrec[i].started;
    per_block[2][b] += !lrec[i].finished;
  }
  printf("PROBE per block issued/not_started/not_finished:");
  for (int b = 0; b < nthreads / 128 && b < 1024; ++b)
    printf(" %d:%d/%d/%d", b, per_block[0][b], per_block[1][b], per_block[2][b]);
  printf("\n");
  fflush(stdout);
  return stuck;
}
#endif

int main(int argc, char **argv) {
  const char *input = argc > 1 ? argv[1] : "large";
  const int xl = strcmp(input, "xl") == 0;
  const int max_len = strcmp(input, "small") == 0 ? 32 : xl ? 1 << 16 : 16384;
  const double eps = xl ? 0.0001 / 16 : 0.0001;
  const int DOCS = getenv("HISTO_DOCS") ? atoi(getenv("HISTO_DOCS")) : 32768;
  const int pending = getenv("PENDING") ? atoi(getenv("PENDING")) : 1 << 17;
  const int RUNS = getenv("RUNS") ? atoi(getenv("RUNS")) : 5;
  // the same input as examples/dp/histo/histo.cu (its first DOCS documents)
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
  int nlaunch_expected = 0;
  for (int d = 0; d < DOCS; ++d) nlaunch_expected += doc_off[d + 1] - doc_off[d] >= THR;
  printf("INFO docs=%d tokens=%d thr=%d launches_expected=%d pending_limit=%d\n", DOCS, T, THR, nlaunch_expected,
         pending);
  fflush(stdout);

  if (pending > 0) CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pending));
  int *d_off;
  unsigned int *d_tokens, *d_hist;
  CHECK(cudaMalloc((void **)&d_off, (DOCS + 1) * sizeof(int)));
  CHECK(cudaMalloc((void **)&d_tokens, T * sizeof(unsigned int)));
  CHECK(cudaMalloc((void **)&d_hist, DOCS * BUCKETS * sizeof(unsigned int)));
  CHECK(cudaMemcpy(d_off, doc_off, (DOCS + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_tokens, tokens, T * sizeof(unsigned int), cudaMemcpyHostToDevice));
  const int grid = 64, block = 128;

#ifdef PROBE
  const int nthreads = grid * block;
  unsigned int *h_pstate, *dp_pstate;
  LaunchRec *h_lrec, *dp_lrec;
  CHECK(cudaHostAlloc((void **)&h_pstate, nthreads * sizeof(unsigned int), cudaHostAllocMapped));
  CHECK(cudaHostAlloc((void **)&h_lrec, MAX_LAUNCH * sizeof(LaunchRec), cudaHostAllocMapped));
  CHECK(cudaHostGetDevicePointer((void **)&dp_pstate, h_pstate, 0));
  CHECK(cudaHostGetDevicePointer((void **)&dp_lrec, h_lrec, 0));
  CHECK(cudaMemcpyToSymbol(g_pstate, &dp_pstate, sizeof dp_pstate));
  CHECK(cudaMemcpyToSymbol(g_lrec, &dp_lrec, sizeof dp_lrec));
  const double poll_s = getenv("POLL_S") ? atof(getenv("POLL_S")) : 4.0;
  const int runs = RUNS + 1;
#else
  const int runs = RUNS + 1;
#endif
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  float times[64];
  for (int run = 0; run < runs && run < 64; ++run) {
    CHECK(cudaMemset(d_hist, 0, DOCS * BUCKETS * sizeof(unsigned int)));
#ifdef PROBE
    memset(h_pstate, 0, nthreads * sizeof(unsigned int));
    memset(h_lrec, 0, MAX_LAUNCH * sizeof(LaunchRec));
    unsigned int zero = 0;
    CHECK(cudaMemcpyToSymbol(g_nlaunch, &zero, sizeof zero));
    void *blocks_done;
    CHECK(cudaGetSymbolAddress(&blocks_done, g_blocks_done));
    CHECK(cudaMemset(blocks_done, 0, sizeof(unsigned int) * MAX_LAUNCH));
#endif
    CHECK(cudaEventRecord(t0));
    count_documents<<<grid, block>>>(d_off, DOCS, d_tokens, d_hist);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(t1));
#ifdef PROBE
    const double start = now_s();
    double next_dump = start + 0.5;
    while (cudaEventQuery(t1) == cudaErrorNotReady) {
      usleep(20000);
      if (now_s() >= next_dump) {
        // g_nlaunch lives in device memory: count the mapped records instead (ids are dense)
        unsigned int nl = 0;
        while (nl < MAX_LAUNCH && h_lrec[nl].parent) ++nl;
        dump_probe(now_s() - start, h_pstate, nthreads, h_lrec, nl, doc_off);
        next_dump += 1.5;
      }
      if (now_s() - start > poll_s) {
        printf("HANG run=%d after %.1fs\n", run, now_s() - start);
        fflush(stdout);
        _exit(3);
      }
    }
#endif
    CHECK(cudaEventSynchronize(t1));
    CHECK(cudaEventElapsedTime(&times[run], t0, t1));
    printf("run %d ms=%.4f\n", run, times[run]);
    fflush(stdout);
  }
  unsigned int *hist = (unsigned int *)malloc(DOCS * BUCKETS * sizeof(unsigned int));
  CHECK(cudaMemcpy(hist, d_hist, DOCS * BUCKETS * sizeof(unsigned int), cudaMemcpyDeviceToHost));
  unsigned int launch_errors = 0;
  CHECK(cudaMemcpyFromSymbol(&launch_errors, d_launch_errors, sizeof launch_errors));
  int bad = 0;
  for (int i = 0; i < DOCS * BUCKETS; ++i) bad += hist[i] != ref[i];
  float best = times[runs > 1 ? 1 : 0];
  for (int r = 2; r < runs; ++r) best = times[r] < best ? times[r] : best;
  printf("RESULT histo_probe@%s %s min_ms=%.4f launch_errors=%u mismatches=%d\n", input,
         bad == 0 && launch_errors == 0 ? "PASS" : "FAIL", best, launch_errors, bad);
  return 0;
}
