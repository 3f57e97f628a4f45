/* warpwise: CUDA 13 removed this header; clang 18's CUDA wrapper (__clang_cuda_runtime_wrapper.h) still
 * includes it. Empty on purpose: the texture fetch API it declared is gone from CUDA 13. */
#pragma once
