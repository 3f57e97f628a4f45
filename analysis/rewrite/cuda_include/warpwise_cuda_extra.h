/* warpwise: declarations clang's CUDA wrapper leaves out, taken from the installed CUDA headers themselves.
 *
 * clang 18's __clang_cuda_runtime_wrapper.h skips sm_32_intrinsics.h (it defines __ldg and the funnel
 * shifts with builtins instead) and so loses the cache-hint loads/stores (__ldcg, __ldca, __ldcs, __ldlu,
 * __ldcv, __stcg, __stcs, __stwb, __stwt). They are included here under their own names; __ldg and the
 * funnel shifts are renamed so clang's definitions stay the ones in use. Parsing only: never compiled. */
#pragma once
#include <__clang_cuda_runtime_wrapper.h>
#pragma push_macro("__CUDACC__")
#pragma push_macro("__ldg")
#pragma push_macro("__funnelshift_l")
#pragma push_macro("__funnelshift_lc")
#pragma push_macro("__funnelshift_r")
#pragma push_macro("__funnelshift_rc")
#define __CUDACC__
#define __ldg __warpwise_sm32_ldg
#define __funnelshift_l __warpwise_sm32_funnelshift_l
#define __funnelshift_lc __warpwise_sm32_funnelshift_lc
#define __funnelshift_r __warpwise_sm32_funnelshift_r
#define __funnelshift_rc __warpwise_sm32_funnelshift_rc
#undef __SM_32_INTRINSICS_H__
#undef __SM_32_INTRINSICS_HPP__
#include "sm_32_intrinsics.h"
#pragma pop_macro("__funnelshift_rc")
#pragma pop_macro("__funnelshift_r")
#pragma pop_macro("__funnelshift_lc")
#pragma pop_macro("__funnelshift_l")
#pragma pop_macro("__ldg")
#pragma pop_macro("__CUDACC__")
/* device-side launches of templated kernels: see parse.py (_HD_GLOBAL) */
#define __WWGLBL__ inline __attribute__((host, device, annotate("warpwise.global")))
/* Runtime API functions CUDA 12/13 removed (still in older code, e.g. Rodinia): declared so such code can be
 * analysed; the deprecation says what replaces each (CUDA Runtime API, "Thread Management [DEPRECATED]"). */
extern "C" {
__attribute__((deprecated("removed in CUDA 13: use cudaDeviceSynchronize"))) cudaError_t cudaThreadSynchronize(void);
__attribute__((deprecated("removed in CUDA 13: use cudaDeviceReset"))) cudaError_t cudaThreadExit(void);
__attribute__((deprecated("removed in CUDA 13: use cudaDeviceSetLimit"))) cudaError_t cudaThreadSetLimit(
    enum cudaLimit limit, size_t value);
__attribute__((deprecated("removed in CUDA 13: use cudaDeviceGetLimit"))) cudaError_t cudaThreadGetLimit(
    size_t *pValue, enum cudaLimit limit);
__attribute__((deprecated("removed in CUDA 13: use cudaDeviceSetCacheConfig"))) cudaError_t cudaThreadSetCacheConfig(
    enum cudaFuncCache cacheConfig);
__attribute__((deprecated("removed in CUDA 13: use cudaDeviceGetCacheConfig"))) cudaError_t cudaThreadGetCacheConfig(
    enum cudaFuncCache *pCacheConfig);
}
/* Device-side cudaDeviceSynchronize (CDP1): CUDA 12 removed it for sm_90+ and CUDA 13's headers no longer
 * declare it for device code. Declared here so CDP1 programs parse and warpwise can diagnose the call
 * (rewrite/diagnostics: use a tail launch / restructure instead) rather than fail to parse them. */
static __attribute__((device, deprecated("CDP1: device-side cudaDeviceSynchronize was removed in CUDA 12 for "
                                         "sm_90+ (CDP2); use a tail launch or restructure"))) inline cudaError_t
cudaDeviceSynchronize(void) { return cudaSuccess; }
/* What nvcc brings in and clang's wrapper does not (checked against nvcc 13's preprocessed output):
 * crt/common_functions.h includes <string.h> and <time.h> for host code (Rodinia calls time() with only
 * <sys/time.h> included), and cuda_runtime.h includes surface_indirect_functions.h (surf2Dread...). */
#include <string.h>
#include <time.h>
#pragma push_macro("__CUDACC__")
#define __CUDACC__
#include "surface_indirect_functions.h"
#pragma pop_macro("__CUDACC__")
/* Host min/max: nvcc's crt/math_functions.h declares them __host__ __device__ (int max(int, int) and the
 * mixed-signedness/width overloads of crt/math_functions.hpp); clang's wrapper makes them __device__ only,
 * so host code such as `max(abs(dx), abs(dy))` (cuda-samples lineOfSight) would not resolve. Declarations
 * only, with nvcc's signatures, so a project's own definition of one stays compatible. */
#define __WARPWISE_HOST_MINMAX(R, A, B) \
  __attribute__((host)) R min(const A a, const B b); __attribute__((host)) R max(const A a, const B b);
__WARPWISE_HOST_MINMAX(int, int, int)
__WARPWISE_HOST_MINMAX(unsigned int, unsigned int, unsigned int)
__WARPWISE_HOST_MINMAX(unsigned int, int, unsigned int)
__WARPWISE_HOST_MINMAX(unsigned int, unsigned int, int)
__WARPWISE_HOST_MINMAX(long int, long int, long int)
__WARPWISE_HOST_MINMAX(unsigned long int, unsigned long int, unsigned long int)
__WARPWISE_HOST_MINMAX(unsigned long int, long int, unsigned long int)
__WARPWISE_HOST_MINMAX(unsigned long int, unsigned long int, long int)
__WARPWISE_HOST_MINMAX(long long int, long long int, long long int)
__WARPWISE_HOST_MINMAX(unsigned long long int, unsigned long long int, unsigned long long int)
__WARPWISE_HOST_MINMAX(unsigned long long int, long long int, unsigned long long int)
__WARPWISE_HOST_MINMAX(unsigned long long int, unsigned long long int, long long int)
__WARPWISE_HOST_MINMAX(float, float, float)
__WARPWISE_HOST_MINMAX(double, double, double)
__WARPWISE_HOST_MINMAX(double, float, double)
__WARPWISE_HOST_MINMAX(double, double, float)
#undef __WARPWISE_HOST_MINMAX
