// A small PyTorch CUDA extension (written for warpwise's docs/cli.md example): y = a * x + b, one
// element per thread, with a grid-stride loop. Built by setup.py (torch.utils.cpp_extension).
#include <c10/cuda/CUDAException.h>
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void my_ext_axpb_kernel(const float* __restrict__ x, float* __restrict__ y, float a, float b, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float v = x[i];
    y[i] = a * v + b;
  }
}

torch::Tensor axpb(torch::Tensor x, double a, double b) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.is_contiguous(), "x: contiguous float32 CUDA");
  auto y = torch::empty_like(x);
  int n = static_cast<int>(x.numel());
  int block = 256;
  int grid = (n + block - 1) / block;
  if (grid > 4096) grid = 4096;
  my_ext_axpb_kernel<<<grid, block>>>(x.data_ptr<float>(), y.data_ptr<float>(), static_cast<float>(a),
                                      static_cast<float>(b), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("axpb", &axpb, "y = a * x + b (CUDA)"); }
