"""A fused Triton kernel (written for warpwise's docs/cli.md example): out = relu(x + y)."""

import triton
import triton.language as tl


@triton.jit
def _fused_add_relu(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    s = x + y
    tl.store(out_ptr + offs, tl.where(s > 0, s, 0.0), mask=mask)


def add_relu(x, y):
    import torch

    out = torch.empty_like(x)
    n = x.numel()
    _fused_add_relu[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
