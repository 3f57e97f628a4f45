"""The facts table: one row per SM architecture, each number with its source.

Sources (see :mod:`warpwise.analysis.arch.model` for the abbreviations):
- residency, registers, shared memory, barriers, warp size: CUDA-CPG "Technical Specifications per
  Compute Capability" (CUDA 13.0 Programming Guide).
- schedulers per SM: 4 on every Volta-and-later SM (CUDA-CPG "Compute Capability 7.x/8.x/9.0/10.0/12.0":
  "4 warp schedulers"; GPA §2 for V100).
- scoreboard barriers: 6 (GPA §4 "six available barrier indices"; control code layout in FACTS).
- SM counts of reference products: NVIDIA product data sheets (V100 SXM2 80, T4 40, A100 108, A10 72,
  L4 58, H100/H200 SXM 132, B200 148, RTX PRO 6000 Blackwell 188); a profile's SM count overrides.
- SFU (MUFU) throughput: 16 results per clock per SM on every listed architecture (CUDA C++ Programming
  Guide, "Arithmetic Instructions", throughput table).
- parameter base: FACTS (c[0x0][0x160] on sm_80–89, 0x210 on sm_90, 0x380 on sm_100); sm_70/75 use 0x160
  (same ABI as sm_80, from nvdisasm of sm_75 cubins).
"""

from __future__ import annotations

from warpwise.analysis.arch.model import ArchFacts

CPG = "CUDA-CPG Technical Specifications per Compute Capability (CUDA 13.0)"
_KB = 1024

# sm: (name, product, warps/SM, CTAs/SM, threads/SM, smem/SM KiB, smem/block KiB, SMs, param base)
_ROWS: dict[int, tuple[str, str, int, int, int, int, int, int, int | None]] = {
    70: ("Volta", "Tesla V100 SXM2", 64, 32, 2048, 96, 96, 80, 0x160),
    75: ("Turing", "Tesla T4", 32, 16, 1024, 64, 64, 40, 0x160),
    80: ("Ampere", "A100 SXM", 64, 32, 2048, 164, 163, 108, 0x160),
    86: ("Ampere", "A10", 48, 16, 1536, 100, 99, 72, 0x160),
    89: ("Ada", "L4", 48, 24, 1536, 100, 99, 58, 0x160),
    90: ("Hopper", "H200 SXM", 64, 32, 2048, 228, 227, 132, 0x210),
    100: ("Blackwell", "B200", 64, 32, 2048, 228, 227, 148, 0x380),
    120: ("Blackwell", "RTX PRO 6000 Blackwell", 48, 32, 1536, 128, 99, 188, None),
}


def _facts(sm: int) -> ArchFacts:
    name, product, warps, ctas, threads, smem, smem_blk, sms, pbase = _ROWS[sm]
    src = {k: CPG for k in ("max_warps_per_sm", "max_ctas_per_sm", "max_threads_per_sm", "registers_per_sm",
                            "max_registers_per_thread", "register_alloc_unit", "shared_memory_per_sm",
                            "max_shared_memory_per_block", "named_barriers", "warp_size")}
    src["schedulers_per_sm"] = f"{CPG}, 'Compute Capability {sm // 10}.x': 4 warp schedulers per SM; GPA §2"
    src["scoreboard_barriers"] = "GPA §4 (six barrier indices B0-B5); FACTS control-code layout"
    src["default_sm_count"] = f"NVIDIA {product} data sheet"
    src["param_base"] = "FACTS (nvdisasm of nvcc 13.0 cubins)" if pbase is not None else "unknown"
    src["sfu_results_per_sm_cycle"] = ("CUDA C++ Programming Guide (CUDA 13.0), 'Arithmetic Instructions', "
                                       "throughput of 32-bit reciprocal, rsqrt, __log2f, exp2f, __sinf, __cosf: "
                                       "16 results per clock per SM on compute capability 7.x-12.x")
    src["async_copy"] = ("CUDA C++ Programming Guide (CUDA 13.0), 'Asynchronous Data Copies': cp.async "
                         "(LDGSTS) copies global to shared memory in hardware on compute capability 8.0 and higher")
    src["cache_line_bytes"] = ("CUDA C++ Best Practices Guide (CUDA 13.0), 'Coalesced Access to Global Memory': "
                               "128-byte cache lines of four 32-byte sectors (compute capability 6.0 and higher)")
    src["widest_access_bytes"] = ("CUDA C++ Programming Guide (CUDA 13.0), 'Device Memory Accesses': global "
                                  "memory instructions read or write words of 1, 2, 4, 8 or 16 bytes")
    src["max_threads_per_block"] = ("CUDA C++ Programming Guide (CUDA 13.0), 'Technical Specifications per Compute "
                                    "Capability': maximum number of threads per block 1024")
    return ArchFacts(
        sm=sm, name=name, product=product, schedulers_per_sm=4, max_warps_per_sm=warps, max_ctas_per_sm=ctas,
        max_threads_per_sm=threads, registers_per_sm=64 * _KB, max_registers_per_thread=255,
        register_alloc_unit=256, shared_memory_per_sm=smem * _KB, max_shared_memory_per_block=smem_blk * _KB,
        named_barriers=16, scoreboard_barriers=6, warp_size=32, default_sm_count=sms, param_base=pbase,
        async_copy=sm >= 80, sources=src)


ARCHS: dict[int, ArchFacts] = {sm: _facts(sm) for sm in _ROWS}
