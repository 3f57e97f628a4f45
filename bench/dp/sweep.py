"""The variant sweep of the DP benchmark: which transforms, and which -D values of their macros.

Seven programs shaped like real CDP code (examples/dp/<name>/<name>.cu), each run on an ``xl`` input
(a 16x heavier power-law tail than ``large``: the largest child grids have tens of thousands of threads,
so a serial loop in one parent thread is long), a ``large`` one (child grids of hundreds to thousands of
threads) and a ``small`` one (child grids of 1-32 threads). bench/dp/gpu.sh compiles, profiles the
originals with ncu, runs and checks everything within 8 minutes:

- ``original`` (CDP), ``nocdp`` (the parent runs every child serially: threshold with
  WARPWISE_THRESHOLD = 2^31 - 1, no device-side launch is made: the CGO'22 "No CDP" baseline);
- ``agg_<g>``: aggregation only at granularity g (KLAP, the CGO'22 "CDP+A" baseline; warp granularity,
  the slowest aggregation on all 12 benchmark inputs of the first H200 sweep, is left out to keep the
  run within 8 minutes);
- ``tc_t<T>_c<C>``: threshold + coarsen (no aggregation), ``tca_<g>_t<T>_c<C>``: threshold +
  coarsen + aggregate at g, for T in THRESHOLDS child threads and C in FACTORS blocks.

The profile-guided choice (analysis/rewrite/plan.py, whose THRESHOLDS and FACTORS are these) picks a
threshold in THRESHOLDS, a factor in FACTORS and a granularity in GRANULARITIES or none, so its time is
looked up in the sweep (bench/dp/plan_eval.py). gpu.sh spreads the (program, input) groups over the
GPUs it finds (all variants of one group run on one GPU, one at a time) and stops starting runs at
DEADLINE.
"""

from __future__ import annotations

from dataclasses import dataclass

# example folder -> (child kernel, input names); the child of quadtree is its own parent (recursion)
EXAMPLES: dict[str, str] = {"bfs": "bfs_edges", "btree": "scan_range", "color": "check_neighbours",
                            "mst": "offer_edges", "sssp": "relax_edges", "quadtree": "qt_node",
                            "histo": "count_tokens"}
INPUTS = ("xl", "large", "small")
AGG_GRANULARITIES = ("block", "multiblock", "grid")  # aggregation only
GRANULARITIES = ("block", "multiblock", "grid")  # in the combined pipeline
THRESHOLDS = (32, 256)
FACTORS = (1, 4)
NO_LAUNCH = 2147483647


@dataclass(frozen=True)
class Variant:
    """A generated source (``source``.cu from ``steps``) and the builds made from it."""

    source: str
    kind: str  # original | nocdp | agg | tc | tca
    steps: tuple[tuple[str, str | None], ...]
    granularity: str | None = None

    def builds(self) -> list[tuple[str, list[str]]]:
        """(build name, -D flags) pairs."""
        if self.kind == "original":
            return [("original", [])]
        if self.kind == "nocdp":
            return [("nocdp", [f"-DWARPWISE_THRESHOLD={NO_LAUNCH}"])]
        if self.kind == "agg":
            return [(self.source, [])]
        return [(f"{self.source}_t{t}_c{c}", [f"-DWARPWISE_THRESHOLD={t}", f"-DWARPWISE_CFACTOR={c}"])
                for t in THRESHOLDS for c in FACTORS]

    @staticmethod
    def threshold_of(defines: list[str]) -> int | None:
        for d in defines:
            if d.startswith("-DWARPWISE_THRESHOLD="):
                return int(d.split("=")[1])
        return None

    @staticmethod
    def factor_of(defines: list[str]) -> int | None:
        for d in defines:
            if d.startswith("-DWARPWISE_CFACTOR="):
                return int(d.split("=")[1])
        return None


def variants() -> list[Variant]:
    """All variants, original first."""
    out = [Variant("original", "original", ()),
           Variant("nocdp", "nocdp", (("threshold", None),)),
           Variant("tc", "tc", (("threshold", None), ("coarsen", None)))]
    out += [Variant(f"agg_{g}", "agg", (("aggregate", g),), g) for g in AGG_GRANULARITIES]
    out += [Variant(f"tca_{g}", "tca", (("threshold", None), ("coarsen", None), ("aggregate", g)), g)
            for g in GRANULARITIES]
    return out


def build_name(kind: str, granularity: str | None, threshold: int | None, factor: int | None) -> str:
    """The build that holds a (kind, granularity, threshold, factor) choice (the profile-guided
    choice is looked up by it)."""
    if kind == "agg":
        return f"agg_{granularity}"
    if kind == "tc":
        return f"tc_t{threshold}_c{factor}"
    if kind == "tca":
        return f"tca_{granularity}_t{threshold}_c{factor}"
    return kind


# ncu profile of each CDP original (bench/dp/gpu.sh): the host-launched parent kernel, launches skipped,
# launches profiled (multi-round programs: the rounds with the largest frontiers come early)
PROFILE: dict[str, tuple[str, int, int]] = {"bfs": ("bfs_frontier", 1, 6), "btree": ("search", 0, 1),
                                            "color": ("colour_round", 0, 2), "mst": ("lightest_edges", 0, 2),
                                            "sssp": ("relax_frontier", 1, 6), "quadtree": ("qt_node", 0, 1),
                                            "histo": ("count_documents", 0, 1)}

if __name__ == "__main__":  # gpu.sh reads the profile table: example, parent, skip, count
    for _ex, (_parent, _skip, _count) in PROFILE.items():
        print(f"{_ex}\t{_parent}\t{_skip}\t{_count}")
