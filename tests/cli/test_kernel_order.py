"""The text report lists a report's kernels by the GPU time their launches took, longest first, each with its
share (fresh-user: a path tracer's one-thread setup kernels came first, with 120x upper bounds)."""

from __future__ import annotations

import re
from pathlib import Path

from warpwise.analysis.pipeline import analyze
from warpwise.analysis.report import render_text

from tests.conftest import pair_report

PAIR = Path(__file__).resolve().parents[2] / "bench" / "advice" / "holdout4" / "pairs" / "raytrace_virtual"


def test_kernels_are_listed_longest_first_with_their_share_of_the_time() -> None:
    srcs = [*sorted(p for p in PAIR.iterdir() if p.suffix in (".cu", ".cuh")), PAIR.parents[2] / "pairs" / "bench.cuh"]
    an = analyze(pair_report(PAIR), sorted(PAIR.glob("orig.*.cubin")), [s for s in srcs if s.is_file()])
    times = {g.name.split("(")[0]: sum(k.profile.launch.duration_ns for k in g.launches) for g in an.groups}
    assert set(times) == {"render", "build_world", "free_world"}
    text = render_text([an])
    names = re.findall(r"^== (\w+)", text, flags=re.M)
    assert names == sorted(times, key=lambda n: -times[n]) and names[0] == "render"
    shares = [float(x) for x in re.findall(r"GPU time: [\d,.]+ us, ([\d.]+)% of the profiled kernels' time", text)]
    assert len(shares) == 3 and abs(sum(shares) - 100.0) < 0.2
    assert shares[0] == round(100 * times["render"] / sum(times.values()), 1)
