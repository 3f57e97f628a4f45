"""Builds the example extension: python setup.py build_ext --inplace (TORCH_CUDA_ARCH_LIST=9.0).

Line info for warpwise: nvcc reads NVCC_APPEND_FLAGS=-lineinfo from the environment; WARPWISE_EXT_LINEINFO=1
adds it through extra_compile_args instead (both are tried by bench/python/gpu_python.sh).
"""

import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

nvcc = ["-O3"] + (["-lineinfo"] if os.environ.get("WARPWISE_EXT_LINEINFO") == "1" else [])
setup(name="my_ext", ext_modules=[CUDAExtension("my_ext", ["my_ext.cu"], extra_compile_args={"nvcc": nvcc})],
      cmdclass={"build_ext": BuildExtension})
