"""Load a tuned cubin for a ``@triton.jit`` kernel (SIP §4.1: "the best cubin is retrieved and loaded
into Triton directly without incurring any runtime overhead").

Triton 3.x compiles a JIT function per specialization into a ``CompiledKernel`` kept in the
function's per-device cache; the kernel's binary is ``compiled.asm["cubin"]`` (also held as
``compiled.kernel``), loaded lazily by ``compiled._init_handles()`` into ``compiled.module`` /
``compiled.function``, and every later launch of the same specialization reuses that object. The
hook therefore compiles without launching (``JITFunction.warmup``), checks that the compiled cubin is
the one that was tuned (SHA-256 from the manifest: a different Triton version, source or
specialization gives a different cubin, and its tuned schedule would not apply), swaps in the tuned
bytes and reloads the handles. Usage::

    from warpwise.analysis.schedule.triton_hook import tuned

    attn = tuned(attn_fwd, "out/attn_fwd.tune.json")      # wraps the @triton.jit function
    attn[grid](q, k, v, o, scale, N_CTX=1024, ...)        # same call as attn_fwd[grid](...)

Imports Triton lazily; nothing here runs without it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from warpwise.analysis.bounded import read_bytes


class TunedCubinMismatch(RuntimeError):
    """The kernel Triton compiled is not the one the manifest's tuned cubin came from."""


def _read(manifest: str | Path) -> tuple[dict[str, Any], bytes | None]:
    # regular files within the manifest / binary limits (a FIFO or /dev/zero would block or fill memory)
    m = json.loads(read_bytes(manifest, "manifest"))
    if m.get("tuned_cubin") is None:
        return m, None  # "original kept": no schedule beat the original side by side
    cubin = read_bytes(Path(manifest).parent / m["tuned_cubin"]["file"], "binary")
    if hashlib.sha256(cubin).hexdigest() != m["tuned_cubin"]["sha256"]:
        raise TunedCubinMismatch(f"{manifest}: the tuned cubin's SHA-256 differs from the manifest")
    return m, cubin


def load_into(compiled: Any, tuned_cubin: bytes, source_sha256: str | None = None) -> None:
    """Replace the binary of a Triton ``CompiledKernel`` by ``tuned_cubin`` and reload its handles.

    Raises:
        TunedCubinMismatch: ``source_sha256`` is given and the compiled cubin's hash differs.
        AttributeError: this Triton version keeps its binary elsewhere (not Triton 3.x).
    """
    current = compiled.asm["cubin"]
    if isinstance(current, str):
        current = current.encode("latin-1")
    if source_sha256 is not None and hashlib.sha256(current).hexdigest() != source_sha256:
        if hashlib.sha256(current).hexdigest() == hashlib.sha256(tuned_cubin).hexdigest():
            return  # already swapped
        raise TunedCubinMismatch(
            f"Triton compiled {getattr(compiled, 'name', '?')} to a different cubin than the one tuned "
            "(other Triton version, source, constexprs or options): re-run warpwise tune"
        )
    compiled.asm["cubin"] = tuned_cubin
    if hasattr(compiled, "kernel"):
        compiled.kernel = tuned_cubin
    compiled.module = None
    compiled.function = None
    compiled._init_handles()


class TunedKernel:
    """A ``@triton.jit`` function whose matching specialization runs the tuned cubin.

    ``kernel[grid](*args, **kwargs)`` behaves like the JIT function's launch; on the first launch of a
    specialization it compiles it (``warmup``), swaps in the tuned cubin when its name and source hash
    match the manifest, and otherwise (another specialization) leaves Triton's own cubin in place.
    ``swapped`` counts specializations that run the tuned code. A manifest whose ``tuned_cubin`` is null
    (the tuner kept the original) swaps nothing.
    """

    def __init__(self, fn: Any, manifest: str | Path, strict: bool = True) -> None:
        self.fn = fn
        self.manifest, self.cubin = _read(manifest)
        self.strict = strict
        self.swapped = 0
        self._done: set[int] = set()

    def __getitem__(self, grid: Any) -> Any:
        def launch(*args: Any, **kwargs: Any) -> Any:
            compiled = self.fn.warmup(*args, grid=grid, **kwargs)
            if id(compiled) not in self._done:
                self._done.add(id(compiled))
                name = getattr(compiled, "name", None) or compiled.metadata.name
                if self.cubin is None:
                    pass  # the manifest kept the original: Triton's own cubin runs
                elif name == self.manifest["kernel"]:
                    load_into(compiled, self.cubin, self.manifest["source_cubin"]["sha256"])
                    self.swapped += 1
                elif self.strict:
                    raise TunedCubinMismatch(f"compiled kernel {name!r} is not {self.manifest['kernel']!r}")
            return self.fn[grid](*args, **kwargs)

        return launch


def tuned(fn: Any, manifest: str | Path, strict: bool = True) -> TunedKernel:
    """Wrap ``@triton.jit`` function ``fn`` so it runs the tuned cubin described by ``manifest``
    (a ``*.tune.json`` from ``warpwise tune``; the cubin lies next to it).

    Raises:
        InputFileError: the manifest or its cubin is missing, not a regular file, or over its size limit.
        KeyError/json.JSONDecodeError: incomplete or invalid manifest.
        TunedCubinMismatch: the cubin does not match its manifest.
    """
    return TunedKernel(fn, manifest, strict)
