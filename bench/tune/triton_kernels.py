"""The SIP paper's two Triton workloads, compiled for the GPU at hand, written out as cubin + harness.

SIP (He & Yoneki, EuroMLSys 2024) tunes Triton's fused attention and a fused GEMM + LeakyReLU, both
taken from Triton's tutorials, in float16. These are compact versions of those two tutorials
(forward attention without causal mask; GEMM with grouped tile ordering and a LeakyReLU epilogue)
with every shape a constexpr, so the compiled kernels take only pointers (and ``sm_scale``) and the
harness does not depend on Triton's integer specialisation rules. Triton's trailing scratch
parameters are passed as null pointers (the parameter count is read from the cubin's
EIATTR_KPARAM_INFO).

    python bench/tune/triton_kernels.py OUTDIR            # compile, write OUTDIR/<name>.{cubin,harness.json}
    python bench/tune/triton_kernels.py OUTDIR --check-hook MANIFEST...   # run tuned cubins through
                                                          # warpwise's Triton hook and compare outputs
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

# Shapes: small enough that one launch takes tens of microseconds on an H200.
ATTN = {"Z": 4, "H": 8, "N_CTX": 1024, "HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64}
GEMM = {"M": 1024, "N": 4096, "K": 1024, "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}


@triton.jit
def attn_fwd(
    Q, K, V, Out, sm_scale, N_CTX: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = off_hz.to(tl.int64) * N_CTX * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(K + base + (start_n + offs_n)[None, :] * HEAD_DIM + offs_d[:, None])
        qk = tl.dot(q, k) * qk_scale
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (start_n + offs_n)[:, None] * HEAD_DIM + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], acc.to(tl.float16))


@triton.jit
def matmul_leaky(
    A,
    B,
    C,
    M: tl.constexpr,
    N: tl.constexpr,
    K: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_pid_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % group) % size_m)
    pid_n = (pid % group) // size_m
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = A + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = B + offs_k[:, None] * N + offs_n[None, :]
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for _ in range(0, K // BLOCK_K):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    acc = tl.where(acc >= 0, acc, 0.01 * acc)
    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(C + cm[:, None] * N + cn[None, :], acc.to(tl.float16))


def kparam_count(cubin: bytes, kernel: str) -> int:
    """Number of kernel parameters from ``.nv.info.<kernel>`` EIATTR_KPARAM_INFO (0x17) records."""
    from io import BytesIO

    from elftools.elf.elffile import ELFFile

    sec = ELFFile(BytesIO(cubin)).get_section_by_name(".nv.info." + kernel)
    raw = sec.data()
    i, n = 0, 0
    while i < len(raw):
        fmt, attr = raw[i], raw[i + 1]
        if fmt == 4:
            size = struct.unpack_from("<H", raw, i + 2)[0]
            n += attr == 0x17
            i += 4 + size
        else:
            i += 4
    return n


def _launch_attn(kernel, q, k, v, o, scale):
    grid = (ATTN["N_CTX"] // ATTN["BLOCK_M"], ATTN["Z"] * ATTN["H"], 1)
    return kernel[grid](
        q,
        k,
        v,
        o,
        scale,
        N_CTX=ATTN["N_CTX"],
        HEAD_DIM=ATTN["HEAD_DIM"],
        BLOCK_M=ATTN["BLOCK_M"],
        BLOCK_N=ATTN["BLOCK_N"],
        num_warps=4,
        num_stages=3,
    ), grid


def _launch_gemm(kernel, a, b, c):
    grid = (triton.cdiv(GEMM["M"], GEMM["BLOCK_M"]) * triton.cdiv(GEMM["N"], GEMM["BLOCK_N"]), 1, 1)
    return kernel[grid](a, b, c, **GEMM, num_warps=8, num_stages=3), grid


def _inputs():
    torch.manual_seed(0)
    z, h, n, d = ATTN["Z"], ATTN["H"], ATTN["N_CTX"], ATTN["HEAD_DIM"]
    q, k, v = (torch.randn(z, h, n, d, device="cuda", dtype=torch.float16) for _ in range(3))
    a = torch.rand(GEMM["M"], GEMM["K"], device="cuda", dtype=torch.float16) * 2 - 1
    b = torch.rand(GEMM["K"], GEMM["N"], device="cuda", dtype=torch.float16) * 2 - 1
    return q, k, v, a, b


def build(outdir: Path) -> list[dict]:
    """Compile both kernels, check them against PyTorch, write cubins and harness files."""
    outdir.mkdir(parents=True, exist_ok=True)
    q, k, v, a, b = _inputs()
    o = torch.empty_like(q)
    c = torch.empty(GEMM["M"], GEMM["N"], device="cuda", dtype=torch.float16)
    scale = 0.125
    ck_attn, grid_attn = _launch_attn(attn_fwd, q, k, v, o, scale)
    ck_gemm, grid_gemm = _launch_gemm(matmul_leaky, a, b, c)
    torch.cuda.synchronize()
    ref_o = torch.softmax((q.float() @ k.float().transpose(-1, -2)) * scale, -1) @ v.float()
    ref_c = torch.nn.functional.leaky_relu(a.float() @ b.float(), 0.01)
    err_o = (o.float() - ref_o).abs().max().item()
    err_c = (c.float() - ref_c).abs().max().item()
    out = []
    n_attn = ATTN["Z"] * ATTN["H"] * ATTN["N_CTX"] * ATTN["HEAD_DIM"]
    specs = [
        (
            "attn_fwd",
            ck_attn,
            grid_attn,
            err_o,
            [
                {
                    "name": "Q",
                    "buffer": {"dtype": "float16", "count": n_attn, "init": {"dist": "normal", "mean": 0, "std": 1}},
                },
                {
                    "name": "K",
                    "buffer": {"dtype": "float16", "count": n_attn, "init": {"dist": "normal", "mean": 0, "std": 1}},
                },
                {
                    "name": "V",
                    "buffer": {"dtype": "float16", "count": n_attn, "init": {"dist": "normal", "mean": 0, "std": 1}},
                },
                {
                    "name": "Out",
                    "buffer": {"dtype": "float16", "count": n_attn, "output": True, "init": {"dist": "zeros"}},
                },
                {"name": "sm_scale", "scalar": {"dtype": "float32", "value": scale}},
            ],
        ),
        (
            "matmul_leaky",
            ck_gemm,
            grid_gemm,
            err_c,
            [
                {
                    "name": "A",
                    "buffer": {
                        "dtype": "float16",
                        "count": GEMM["M"] * GEMM["K"],
                        "init": {"dist": "uniform", "low": -1, "high": 1},
                    },
                },
                {
                    "name": "B",
                    "buffer": {
                        "dtype": "float16",
                        "count": GEMM["K"] * GEMM["N"],
                        "init": {"dist": "uniform", "low": -1, "high": 1},
                    },
                },
                {
                    "name": "C",
                    "buffer": {
                        "dtype": "float16",
                        "count": GEMM["M"] * GEMM["N"],
                        "output": True,
                        "init": {"dist": "zeros"},
                    },
                },
            ],
        ),
    ]
    for name, ck, grid, err, args in specs:
        cubin = ck.asm["cubin"]
        kname = ck.name if hasattr(ck, "name") else ck.metadata.name
        n_params = kparam_count(cubin, kname)
        for j in range(n_params - len(args)):
            args.append({"name": f"scratch{j}", "null_pointer": True})
        if n_params != len(args):
            raise SystemExit(f"{name}: cubin has {n_params} parameters, harness {len(args)}")
        md = ck.metadata
        harness = {
            "kernel": kname,
            "grid": list(grid),
            "block": [32 * md.num_warps, 1, 1],
            "shared_bytes": int(md.shared),
            "args": args,
        }
        (
            outdir / f"{name}.sm_{torch.cuda.get_device_capability()[0]}{torch.cuda.get_device_capability()[1]}.cubin"
        ).write_bytes(cubin)
        (outdir / f"{name}.harness.json").write_text(json.dumps(harness, indent=1))
        out.append(
            {
                "name": name,
                "kernel": kname,
                "max_abs_err_vs_torch": err,
                "params": n_params,
                "shared_bytes": int(md.shared),
                "num_warps": md.num_warps,
                "global_scratch_size": int(getattr(md, "global_scratch_size", 0) or 0),
            }
        )
    meta = {
        "triton": triton.__version__,
        "torch": torch.__version__,
        "kernels": out,
        "attn_shape": ATTN,
        "gemm_shape": GEMM,
    }
    (outdir / "triton_meta.json").write_text(json.dumps(meta, indent=1))
    return out


def check_hook(manifests: list[Path]) -> dict:
    """Run each tuned cubin through warpwise's Triton hook on PyTorch inputs; compare with Triton's own."""
    from warpwise.analysis.schedule.triton_hook import tuned

    q, k, v, a, b = _inputs()
    res = {}
    for man in manifests:
        m = json.loads(man.read_text())
        try:
            if m["kernel"] == "attn_fwd":
                o1, o2 = torch.empty_like(q), torch.empty_like(q)
                _launch_attn(attn_fwd, q, k, v, o1, 0.125)
                tk = tuned(attn_fwd, man)
                _launch_attn(tk, q, k, v, o2, 0.125)
            elif m["kernel"] == "matmul_leaky":
                o1 = torch.empty(GEMM["M"], GEMM["N"], device="cuda", dtype=torch.float16)
                o2 = torch.empty_like(o1)
                _launch_gemm(matmul_leaky, a, b, o1)
                tk = tuned(matmul_leaky, man)
                _launch_gemm(tk, a, b, o2)
            else:
                continue
            torch.cuda.synchronize()
            res[m["kernel"]] = {"swapped": tk.swapped, "identical_output": bool(torch.equal(o1, o2))}
        except Exception as e:  # report, do not hide: the bench prints it
            res[m["kernel"]] = {"error": f"{type(e).__name__}: {e}"}
    return res


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--check-hook", nargs="*", type=Path)
    a = ap.parse_args()
    if a.check_hook is not None:
        r = check_hook(a.check_hook)
        (a.outdir / "triton_hook_check.json").write_text(json.dumps(r, indent=1))
        print(json.dumps(r))
        return 0
    for k in build(a.outdir):
        print(
            f"{k['name']}: kernel {k['kernel']}, {k['params']} params, {k['shared_bytes']} B shared, "
            f"max |err| vs torch {k['max_abs_err_vs_torch']:.3g}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
