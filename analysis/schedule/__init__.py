"""SASS schedule tuning (SIP, He & Yoneki 2024; DESIGN.md "Schedule tuning").

Modules: ``sass`` (one kernel section's instructions and block leaders; register def/use is the blamer's
engine, analysis/blame/operands, in its conservative mode), ``model`` (candidate moves and their static
legality), ``patch`` (writing a new order into the cubin: words, relocations, ``.nv.info`` offsets;
round-trip check), ``target`` (the three together), ``harness`` (launch/argument description),
``params`` (the kernel's parameter table from ``.nv.info``, and the harness check against it),
``devkernels`` (device-side input generation and output comparison), ``evaluate`` (CUDA driver API
timing and probabilistic testing), ``anneal`` (SIP Alg. 1), ``tune`` (the pipeline, artifacts and
manifest), ``use_tuned`` (source rewrite to load a tuned cubin), ``triton_hook`` (load a tuned cubin into a
``@triton.jit`` kernel).
"""
