/* warpwise: CUDA 13 removed this header; clang 18's CUDA wrapper (__clang_cuda_runtime_wrapper.h) still
 * includes it. Empty on purpose: the texture-reference fetches it declared were removed in CUDA 12.0 (for code
 * written before, parse.py brings in warpwise_legacy_cuda.h). */
#pragma once
