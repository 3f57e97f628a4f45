/* warpwise: replaces clang's __clang_cuda_builtin_vars.h for parsing only (parse.py puts it in a resource
 * folder of its own). clang models threadIdx/blockIdx/blockDim/gridDim as objects with __declspec(property)
 * members, whose member expressions have no name in libclang's cursors; here they are plain uint3/dim3
 * variables, as nvcc's own headers declare them, so `blockIdx.x` is an ordinary member reference. The
 * __cuda_builtin_*_t types stay declared because clang's wrapper defines conversion operators on them. */
#ifndef __CUDA_BUILTIN_VARS_H
#define __CUDA_BUILTIN_VARS_H
struct dim3;
struct uint3;
#define __WARPWISE_BUILTIN_TYPE(T)                       \
  struct T {                                             \
    unsigned int x, y, z;                                \
    __attribute__((device)) operator dim3() const;       \
    __attribute__((device)) operator uint3() const;      \
  }
__WARPWISE_BUILTIN_TYPE(__cuda_builtin_threadIdx_t);
__WARPWISE_BUILTIN_TYPE(__cuda_builtin_blockIdx_t);
__WARPWISE_BUILTIN_TYPE(__cuda_builtin_blockDim_t);
__WARPWISE_BUILTIN_TYPE(__cuda_builtin_gridDim_t);
#undef __WARPWISE_BUILTIN_TYPE
extern const __attribute__((device)) uint3 threadIdx;
extern const __attribute__((device)) uint3 blockIdx;
extern const __attribute__((device)) dim3 blockDim;
extern const __attribute__((device)) dim3 gridDim;
__attribute__((device)) const int warpSize = 32;
#endif
