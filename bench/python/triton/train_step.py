"""A 'training step' whose forward pass runs the fused Triton kernel inside the NVTX range "forward"."""

import torch
from kernel import add_relu

x = torch.randn(1 << 22, device="cuda")
y = torch.randn(1 << 22, device="cuda")
for _ in range(3):
    torch.cuda.nvtx.range_push("forward")
    out = add_relu(x, y)
    torch.cuda.nvtx.range_pop()
    (out * 2).sum()  # a "backward"-ish torch kernel outside the range
torch.cuda.synchronize()
assert torch.allclose(out, torch.relu(x + y))
print("ok", float(out.sum()))
