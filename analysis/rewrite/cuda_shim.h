/* warpwise libclang shim: just enough of the CUDA runtime API for a host-only parse
 * (`-x cuda --cuda-host-only -nocudainc -nocudalib -nostdinc`).  It is never compiled by nvcc;
 * it lets libclang build an AST of a .cu file without a CUDA install or clang's resource headers.
 * System #include lines of the parsed file are blanked by warpwise before parsing. */
#pragma once
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define NULL 0
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#define INFINITY __builtin_huge_valf()

typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;

struct uint3 { unsigned int x, y, z; };
struct int2 { int x, y; };
struct int3 { int x, y, z; };
struct int4 { int x, y, z, w; };
struct uint2 { unsigned int x, y; };
struct uint4 { unsigned int x, y, z, w; };
struct float2 { float x, y; };
struct float3 { float x, y, z; };
struct float4 { float x, y, z, w; };
struct double2 { double x, y; };
struct dim3 {
  unsigned int x, y, z;
  __host__ __device__ dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  __host__ __device__ dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  __host__ __device__ operator uint3() const { uint3 t = {x, y, z}; return t; }
};
__host__ __device__ uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z);
__host__ __device__ int2 make_int2(int x, int y);
__host__ __device__ float2 make_float2(float x, float y);
__host__ __device__ float4 make_float4(float x, float y, float z, float w);

extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ dim3 blockDim;
extern const __device__ dim3 gridDim;
extern const __device__ int warpSize;

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
enum cudaError { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2,
                 cudaErrorLaunchPendingCountExceeded = 69, cudaErrorLaunchFailure = 719 };
typedef enum cudaError cudaError_t;
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2,
                      cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4 };
enum cudaLimit { cudaLimitStackSize = 0, cudaLimitPrintfFifoSize = 1, cudaLimitMallocHeapSize = 2,
                 cudaLimitDevRuntimeSyncDepth = 3, cudaLimitDevRuntimePendingLaunchCount = 4 };
#define cudaStreamNonBlocking 0x01
#define cudaStreamFireAndForget ((cudaStream_t)0x4)
#define cudaStreamTailLaunch ((cudaStream_t)0x3)
struct cudaDeviceProp { char name[256]; int multiProcessorCount; int major; int minor; };

extern "C" {
__host__ __device__ unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem = 0,
                                                         cudaStream_t stream = 0);
__host__ __device__ cudaError_t cudaGetLastError(void);
__host__ __device__ cudaError_t cudaPeekAtLastError(void);
__host__ __device__ const char *cudaGetErrorString(cudaError_t error);
__host__ __device__ const char *cudaGetErrorName(cudaError_t error);
__host__ __device__ cudaError_t cudaMalloc(void **devPtr, size_t size);
__host__ __device__ cudaError_t cudaFree(void *devPtr);
__host__ __device__ cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags);
__host__ __device__ cudaError_t cudaStreamDestroy(cudaStream_t stream);
__host__ __device__ cudaError_t cudaGetDevice(int *device);
__host__ __device__ cudaError_t cudaDeviceGetAttribute(int *value, int attr, int device);
__host__ __device__ cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags = 1);
__host__ __device__ cudaError_t cudaMallocHost(void **ptr, size_t size);
__host__ __device__ cudaError_t cudaFreeHost(void *ptr);
__host__ __device__ cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
__host__ __device__ cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream = 0);
__host__ __device__ cudaError_t cudaMemset(void *devPtr, int value, size_t count);
__host__ __device__ cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream = 0);
__host__ __device__ cudaError_t cudaDeviceSynchronize(void);
__host__ __device__ cudaError_t cudaDeviceReset(void);
__host__ __device__ cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value);
__host__ __device__ cudaError_t cudaDeviceGetLimit(size_t *pValue, enum cudaLimit limit);
__host__ __device__ cudaError_t cudaSetDevice(int device);
__host__ __device__ cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device);
__host__ __device__ cudaError_t cudaStreamCreate(cudaStream_t *pStream);
__host__ __device__ cudaError_t cudaStreamSynchronize(cudaStream_t stream);
__host__ __device__ cudaError_t cudaEventCreate(cudaEvent_t *event);
__host__ __device__ cudaError_t cudaEventDestroy(cudaEvent_t event);
__host__ __device__ cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0);
__host__ __device__ cudaError_t cudaEventSynchronize(cudaEvent_t event);
__host__ __device__ cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);

__host__ __device__ int printf(const char *format, ...);
__host__ __device__ int fprintf(struct _IO_FILE *stream, const char *format, ...);
__host__ __device__ int sprintf(char *str, const char *format, ...);
__host__ __device__ int snprintf(char *str, size_t size, const char *format, ...);
__host__ __device__ int puts(const char *s);
extern struct _IO_FILE *stdout;
extern struct _IO_FILE *stderr;
__host__ __device__ void *malloc(size_t size);
__host__ __device__ void *calloc(size_t n, size_t size);
__host__ __device__ void *realloc(void *p, size_t size);
__host__ __device__ void free(void *p);
__host__ __device__ void exit(int status);
__host__ __device__ void abort(void);
__host__ __device__ int atoi(const char *s);
__host__ __device__ long atol(const char *s);
__host__ __device__ double atof(const char *s);
__host__ __device__ long strtol(const char *s, char **end, int base);
__host__ __device__ int rand(void);
__host__ __device__ void srand(unsigned int seed);
__host__ __device__ void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
__host__ __device__ void *memset(void *s, int c, size_t n);
__host__ __device__ void *memcpy(void *d, const void *s, size_t n);
__host__ __device__ int memcmp(const void *a, const void *b, size_t n);
__host__ __device__ size_t strlen(const char *s);
__host__ __device__ int strcmp(const char *a, const char *b);
__host__ __device__ int abs(int x);
__host__ __device__ long long llabs(long long x);
__host__ __device__ double fabs(double x);
__host__ __device__ float fabsf(float x);
__host__ __device__ double sqrt(double x);
__host__ __device__ float sqrtf(float x);
__host__ __device__ double ceil(double x);
__host__ __device__ float ceilf(float x);
__host__ __device__ double floor(double x);
__host__ __device__ float floorf(float x);
__host__ __device__ double log(double x);
__host__ __device__ double log2(double x);
__host__ __device__ double exp(double x);
__host__ __device__ double pow(double x, double y);
__host__ __device__ float powf(float x, float y);
__host__ __device__ int min(int a, int b);
__host__ __device__ int max(int a, int b);
__host__ __device__ unsigned int min(unsigned int a, unsigned int b);
__host__ __device__ unsigned int max(unsigned int a, unsigned int b);
__host__ __device__ float fminf(float a, float b);
__host__ __device__ float fmaxf(float a, float b);
}
__host__ __device__ float min(float a, float b);
__host__ __device__ float max(float a, float b);
__host__ __device__ long long min(long long a, long long b);
__host__ __device__ long long max(long long a, long long b);

template <class T> cudaError_t cudaMemcpyToSymbol(const T &symbol, const void *src, size_t count,
                                                  size_t offset = 0, enum cudaMemcpyKind kind = cudaMemcpyHostToDevice);
template <class T> cudaError_t cudaMemcpyFromSymbol(void *dst, const T &symbol, size_t count,
                                                    size_t offset = 0, enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost);
template <class T> cudaError_t cudaMemcpyToSymbolAsync(const T &symbol, const void *src, size_t count,
                                                       size_t offset = 0,
                                                       enum cudaMemcpyKind kind = cudaMemcpyHostToDevice,
                                                       cudaStream_t stream = 0);
template <class T> cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const T &symbol, size_t count,
                                                         size_t offset = 0,
                                                         enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost,
                                                         cudaStream_t stream = 0);
template <class T> cudaError_t cudaGetSymbolAddress(void **devPtr, const T &symbol);
template <class T> cudaError_t cudaMalloc(T **devPtr, size_t size);

/* Device-side intrinsics: declared so their uses parse; the transforms recognise them by name. */
__device__ void __syncthreads(void);
__device__ int __syncthreads_count(int p);
__device__ int __syncthreads_and(int p);
__device__ int __syncthreads_or(int p);
__device__ void __syncwarp(unsigned mask = 0xffffffffu);
__device__ void __threadfence(void);
__device__ void __threadfence_block(void);
__device__ void __trap(void);
__device__ unsigned __activemask(void);
__device__ unsigned __ballot_sync(unsigned mask, int p);
__device__ int __any_sync(unsigned mask, int p);
__device__ int __all_sync(unsigned mask, int p);
template <class T> __device__ T __shfl_sync(unsigned mask, T v, int src, int width = 32);
template <class T> __device__ T __shfl_up_sync(unsigned mask, T v, unsigned d, int width = 32);
template <class T> __device__ T __shfl_down_sync(unsigned mask, T v, unsigned d, int width = 32);
template <class T> __device__ T __shfl_xor_sync(unsigned mask, T v, int m, int width = 32);
template <class T> __device__ unsigned __match_any_sync(unsigned mask, T v);
template <class T> __device__ T __reduce_add_sync(unsigned mask, T v);
__device__ int __popc(unsigned x);
__device__ int __popcll(unsigned long long x);
__device__ int __ffs(int x);
__device__ int __clz(int x);
__device__ float __int_as_float(int x);
__device__ int __float_as_int(float x);
__device__ int atomicAdd(int *a, int v);
__device__ unsigned int atomicAdd(unsigned int *a, unsigned int v);
__device__ unsigned long long atomicAdd(unsigned long long *a, unsigned long long v);
__device__ float atomicAdd(float *a, float v);
__device__ double atomicAdd(double *a, double v);
__device__ int atomicSub(int *a, int v);
__device__ unsigned int atomicSub(unsigned int *a, unsigned int v);
__device__ int atomicMax(int *a, int v);
__device__ unsigned int atomicMax(unsigned int *a, unsigned int v);
__device__ int atomicMin(int *a, int v);
__device__ unsigned int atomicMin(unsigned int *a, unsigned int v);
__device__ int atomicExch(int *a, int v);
__device__ unsigned int atomicExch(unsigned int *a, unsigned int v);
__device__ unsigned long long atomicExch(unsigned long long *a, unsigned long long v);
__device__ int atomicCAS(int *a, int c, int v);
__device__ unsigned int atomicCAS(unsigned int *a, unsigned int c, unsigned int v);
__device__ unsigned long long atomicCAS(unsigned long long *a, unsigned long long c, unsigned long long v);
__device__ int atomicOr(int *a, int v);
__device__ unsigned int atomicOr(unsigned int *a, unsigned int v);
__device__ long long clock64(void);
