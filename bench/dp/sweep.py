"""The variant sweep of the DP benchmark: which transforms, and which -D values of their macros.

Kept small so bench/dp/gpu.sh (compile + run everything) ends within 8 minutes on one H200:
_THRESHOLD ∈ {64, 512} child threads, _CFACTOR ∈ {1, 4} blocks, four aggregation granularities.
"""

from __future__ import annotations

from dataclasses import dataclass

# example folder -> its child kernel
EXAMPLES = {"bfs": "bfs_edges", "spmv": "spmv_row", "tree": "descend_children", "mandelbrot": "tile_pixels"}
GRANULARITIES = ("warp", "block", "multiblock", "grid")
THRESHOLDS = (64, 512)
FACTORS = (1, 4)
NO_LAUNCH = 2147483647


@dataclass(frozen=True)
class Variant:
    """A generated source (``source``.cu from ``steps``) and the builds made from it."""

    source: str
    kind: str  # original | nocdp | threshold | coarsen | agg | tca
    steps: tuple[tuple[str, str | None], ...]
    granularity: str | None = None

    def builds(self) -> list[tuple[str, list[str]]]:
        """(build name, -D flags) pairs."""
        if self.kind == "original":
            return [("original", [])]
        if self.kind == "nocdp":
            return [("nocdp", [f"-D_THRESHOLD={NO_LAUNCH}"])]
        if self.kind == "threshold":
            return [(f"t{t}", [f"-D_THRESHOLD={t}"]) for t in THRESHOLDS]
        if self.kind == "coarsen":
            return [("c4", ["-D_CFACTOR=4"])]
        if self.kind == "agg":
            return [(self.source, [])]
        return [(f"{self.source}_t{t}_c{c}", [f"-D_THRESHOLD={t}", f"-D_CFACTOR={c}"])
                for t in THRESHOLDS for c in FACTORS]

    @staticmethod
    def threshold_of(defines: list[str]) -> int | None:
        for d in defines:
            if d.startswith("-D_THRESHOLD="):
                return int(d.split("=")[1])
        return None

    @staticmethod
    def factor_of(defines: list[str]) -> int | None:
        for d in defines:
            if d.startswith("-D_CFACTOR="):
                return int(d.split("=")[1])
        return None


def variants() -> list[Variant]:
    """All variants, original first."""
    out = [Variant("original", "original", ()),
           Variant("nocdp", "nocdp", (("threshold", None),)),
           Variant("threshold", "threshold", (("threshold", None),)),
           Variant("coarsen", "coarsen", (("coarsen", None),))]
    out += [Variant(f"agg_{g}", "agg", (("aggregate", g),), g) for g in GRANULARITIES]
    out += [Variant(f"tca_{g}", "tca", (("threshold", None), ("coarsen", None), ("aggregate", g)), g)
            for g in GRANULARITIES]
    return out
