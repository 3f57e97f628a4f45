"""Check that each benchmark pair's SASS shows its bottleneck in orig and the fix removes it (no GPU).

Builds every pair (``nvcc -lineinfo -O3 -arch=sm_90`` plus its pair.json flags) unless ``--build-dir`` holds
the binaries of a ``DRY=1 BUILD_DIR=dir bash bench/advice/gpu_collect.sh`` run, disassembles them with
cuobjdump (PATH, CUDA_HOME or the PyPI wheel) and compares opcode counts of the pair's kernel.

usage: python bench/advice/sass_check.py [--build-dir DIR] [PAIR ...]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
_INS = re.compile(r"^\s+/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")
FP64 = r"^(D[A-Z]+|F2F\.F64|F2F\.F32\.F64|MUFU\.RCP64H|MUFU\.RSQ64H)"

Counts = dict[str, int]
# pair -> (what the check asserts, predicate on (orig counts, fix counts, orig SASS == fix SASS))
CHECKS: dict[str, tuple[str, Callable[[Counts, Counts, bool], bool]]] = {
    "bs_batches": ("FP64/conversion instructions in orig, none in fix",
                   lambda o, f, s: o["fp64"] > 0 == f["fp64"]),
    "rbf_fastmath_double": ("FP64 exp in orig, none in fix; MUFU.EX2 in fix",
                            lambda o, f, s: o["fp64"] > 0 == f["fp64"] and f["MUFU.EX2"] > 0),
    "periodic_divmod": ("I2F.U32.RP reciprocal set-ups in orig only",
                        lambda o, f, s: o["I2F.U32.RP"] > 0 == f["I2F.U32.RP"]),
    "spill_bounds": ("local memory (spills) in orig only", lambda o, f, s: o["local"] > 0 == f["local"]),
    "knn_local": ("local memory in orig only", lambda o, f, s: o["local"] > 0 == f["local"]),
    "fir_window": ("local memory in orig only", lambda o, f, s: o["local"] > 0 == f["local"]),
    "cheb_noinline": ("calls and local memory in the loop of orig only",
                      lambda o, f, s: o["CALL"] > f["CALL"] and o["local"] > 0 == f["local"]),
    "colsum_unroll1": ("more global loads in the unrolled loop", lambda o, f, s: f["LDG"] > o["LDG"]),
    "table_prefetch": ("the prefetch adds a global load", lambda o, f, s: f["LDG"] == o["LDG"] + 1),
    "rowsum_tree": ("fewer barriers, shuffles in fix", lambda o, f, s: f["BAR"] < o["BAR"] and f["SHFL"] > 0),
    "ell_rowmajor": ("the layout changes only the address arithmetic", lambda o, f, s: not s),
    "wave_precise": ("MUFU.SIN only in the fast-math build", lambda o, f, s: o["MUFU.SIN"] == 0 < f["MUFU.SIN"]),
    "transpose_bank": ("the padded tile changes the shared-memory addressing", lambda o, f, s: not s),
    "causal_tiles": ("the row mapping changes the kernel", lambda o, f, s: not s),
    "aos_particles": ("the layout changes the kernel", lambda o, f, s: not s),
    "tiny_blocks_blur": ("identical kernel (only the launch changes)", lambda o, f, s: s),
    "fourblock_poly": ("identical kernel (only the launch changes)", lambda o, f, s: s),
    "fourblock_poly_grid": ("identical kernel (only the launch changes)", lambda o, f, s: s),
    "table_prefetch_unroll": ("the unrolled loop issues several loads ahead",
                              lambda o, f, s: f["LDG"] > o["LDG"]),
    "oneblock_sumsq": ("identical kernel (only the launch changes)", lambda o, f, s: s),
}


def cuobjdump() -> str:
    """Path of cuobjdump; raises SystemExit when none is found."""
    found = shutil.which("cuobjdump")
    if found:
        return found
    try:
        from cuda.pathfinder import find_nvidia_binary_utility

        path = find_nvidia_binary_utility("cuobjdump")
        if path:
            return str(path)
    except ImportError:
        pass
    raise SystemExit("sass_check.py: cuobjdump not found (PATH, or pip install nvidia-cuda-cuobjdump)")


def kernel_sass(binary: Path, kernel: str, tool: str) -> list[tuple[str, str]]:
    """(opcode, instruction text without encodings) of the function whose name contains ``kernel``."""
    out = subprocess.run([tool, "-sass", str(binary)], capture_output=True, text=True, timeout=120, check=True).stdout
    ins: list[tuple[str, str]] = []
    inside = False
    for line in out.splitlines():
        if "Function :" in line:
            inside = re.search(rf"\b_Z\d+{re.escape(kernel)}\w*|\b{re.escape(kernel)}\b", line) is not None
            continue
        m = _INS.match(line) if inside else None
        if m:
            ins.append((m.group(1), re.sub(r"/\*[^*]*\*/", "", line).strip()))
    return ins


def counts(sass: list[tuple[str, str]]) -> Counts:
    """Opcode-class counts of a kernel's SASS: fp64 (FP64 arithmetic and conversions), local (LDL/STL),
    LDG, BAR, SHFL, CALL, three MUFU/I2F opcodes and all instructions."""
    ops = [o for o, _ in sass]

    def n(pred: Callable[[str], bool]) -> int:
        return sum(1 for o in ops if pred(o))

    c: Counts = {"fp64": n(lambda o: re.match(FP64, o) is not None), "local": n(lambda o: o.startswith(("LDL", "STL")))}
    for key in ("LDG", "BAR", "SHFL", "CALL", "MUFU.EX2", "MUFU.SIN", "I2F.U32.RP"):
        c[key] = n(lambda o, k=key: o.startswith(k))  # type: ignore[misc]
    c["instructions"] = len(ops)
    return c


def build(pair: Path, variant: str, meta: dict[str, object], out: Path) -> Path:
    """Compile one variant; raises SystemExit with nvcc's output on failure or on any warning."""
    flags = list(meta.get("nvcc_flags", []))  # type: ignore[call-overload]
    if variant == "fix":
        flags += list(meta.get("fix_nvcc_flags", []))  # type: ignore[call-overload]
    exe = out / pair.name / variant
    exe.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["nvcc", "-lineinfo", "-O3", "-arch=sm_90", *flags, "-o", str(exe), str(pair / f"{variant}.cu")]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if run.returncode != 0 or run.stdout.strip() or run.stderr.strip():
        raise SystemExit(f"{pair.name}/{variant}.cu: nvcc {'failed' if run.returncode else 'warned'}:\n"
                         f"{run.stdout}{run.stderr}")
    return exe


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", type=Path, help="binaries of a DRY=1 BUILD_DIR=... gpu_collect.sh run")
    ap.add_argument("pairs", nargs="*")
    args = ap.parse_args(argv)
    tool = cuobjdump()
    names = args.pairs or sorted(CHECKS)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            pair = HERE / "pairs" / name
            meta = json.loads((pair / "pair.json").read_text())
            if name not in CHECKS:
                print(f"{name:22s} (no SASS check defined)")
                continue
            bins = {}
            for v in ("orig", "fix"):
                pre = args.build_dir / name / v if args.build_dir else None
                bins[v] = pre if pre is not None and pre.is_file() else build(pair, v, meta, Path(tmp))
            so, sf = (kernel_sass(bins[v], str(meta["kernel"]), tool) for v in ("orig", "fix"))
            co, cf = counts(so), counts(sf)
            what, check = CHECKS[name]
            ok = check(co, cf, so == sf)
            failed += not ok
            diff = {k: (co[k], cf[k]) for k in co if co[k] != cf[k]}
            same = "identical SASS" if so == sf else "same counts, different SASS"
            print(f"{name:22s} {'ok  ' if ok else 'FAIL'} {what}; orig->fix {diff or same}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
