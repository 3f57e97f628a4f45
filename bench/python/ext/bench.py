"""Calls the example extension's kernel a few times (the program warpwise profile runs)."""

import torch  # noqa: I001 (first: the extension links against libtorch)

import my_ext

x = torch.rand(1 << 22, device="cuda")
for _ in range(5):
    y = my_ext.axpb(x, 2.0, 1.0)
torch.cuda.synchronize()
assert torch.allclose(y, 2.0 * x + 1.0)
print("ok", float(y.sum()))
