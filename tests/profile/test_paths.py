"""Recorded source paths -> local files (issue 12 item 3, issue 13 item 4): normalization, content check,
nearest report, path maps, and a clear note when the choice is ambiguous."""

from __future__ import annotations

from pathlib import Path

import pytest
from warpwise.analysis.pipeline import analyze
from warpwise.analysis.profile.paths import (
    apply_path_map,
    common_suffix,
    map_path,
    normalize,
    parse_path_map,
    resolve,
)
from warpwise.analysis.profile.source import same_code

EX = Path(__file__).resolve().parents[2] / "examples"


def test_longest_suffix_wins() -> None:
    cands = [Path("/home/me/a/kern.cu"), Path("/home/me/proj/src/kern.cu"), Path("/home/me/proj/other.cu")]
    assert map_path("/gpu-box/build/proj/src/kern.cu", cands) == Path("/home/me/proj/src/kern.cu")
    assert map_path("/gpu-box/x/kern.cu", cands) == Path("/home/me/a/kern.cu")  # tie: first given
    assert map_path("/gpu-box/none.cu", cands) is None


def test_windows_and_posix_paths() -> None:
    assert common_suffix(r"C:\work\proj\src\kern.cu", "/home/me/proj/src/kern.cu") == 3
    assert common_suffix("/a/b/kern.cu", "/a/b/kern.cuh") == 0


@pytest.mark.parametrize(("recorded", "expected"), [
    ("./kernel/x.cu", "kernel/x.cu"),
    ("/build/./proj/./kernel/x.cu", "/build/proj/kernel/x.cu"),
    ("/build/proj/bin/../kernel/x.cu", "/build/proj/kernel/x.cu"),
    (r"C:\build\proj/kernel\x.cu", "C:/build/proj/kernel/x.cu"),
    ("kernel//x.cu", "kernel/x.cu"),
])
def test_normalize(recorded: str, expected: str) -> None:
    assert normalize(recorded) == expected


def test_dot_and_dotdot_segments_match_by_suffix() -> None:
    cands = [Path("/home/me/proj/kernel/x.cu"), Path("/home/me/proj/other/x.cu")]
    assert resolve("./kernel/x.cu", cands).local == cands[0]
    assert resolve("/build/proj/bin/../kernel/x.cu", cands).local == cands[0]
    assert resolve(r"D:\ci\proj\kernel\x.cu", cands).local == cands[0]


def test_content_then_nearest_report_then_a_note(tmp_path: Path) -> None:
    a, b = tmp_path / "a" / "stencil.cu", tmp_path / "b" / "stencil.cu"
    for f in (a, b):
        f.parent.mkdir()
    profiled = "__global__ void k() {}\n"
    a.write_text("__global__ void k() { int edited; }\n")
    b.write_text(profiled)
    # the report is in neither folder: the profiled text decides
    assert resolve("/build/stencil.cu", [a, b], profiled, tmp_path / "r.ncu-rep").local == b
    # same text in both: the one beside the report wins
    a.write_text(profiled)
    assert resolve("/build/stencil.cu", [a, b], profiled, b.with_suffix(".ncu-rep")).local == b
    assert resolve("/build/stencil.cu", [a, b], profiled, a.with_suffix(".ncu-rep")).local == a
    # equally near, same text: none is taken, the note names both and how to choose
    m = resolve("/build/stencil.cu", [a, b], profiled, tmp_path / "r.ncu-rep")
    assert m.local is None and m.candidates == (a, b)
    assert m.note is not None and str(a) in m.note and str(b) in m.note
    assert "--path-map /build=" in m.note and "warpwise.pathMap" in m.note
    # a path map settles it
    pm = parse_path_map([f"/build={tmp_path / 'a'}"])
    assert resolve("/build/stencil.cu", [a, b], profiled, tmp_path / "r.ncu-rep", pm).local == a


def test_path_map_parsing() -> None:
    assert parse_path_map(["/x=/y", "/x/deep=/z"]) == [("/x/deep", "/z"), ("/x", "/y")]
    assert apply_path_map("/x/deep/k.cu", parse_path_map(["/x=/y", "/x/deep=/z"])) == Path("/z/k.cu")
    assert apply_path_map("/xy/k.cu", parse_path_map(["/x=/y"])) is None  # component boundary
    with pytest.raises(ValueError, match="OLD=NEW"):
        parse_path_map(["/only-old"])


def test_crcrlf_line_endings_are_not_a_change() -> None:
    assert same_code("a();\r\r\nb();\r\r\n", "a();\nb();\n")
    assert not same_code("a();\r\r\nc();\r\r\n", "a();\nb();\n")


def test_report_beside_one_of_two_copies_maps_to_that_copy(tmp_path: Path) -> None:
    # issue 13: a/stencil.cu and b/{stencil.cu, report, cubin}: b gets the lines, a none
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "stencil.cu").write_bytes((EX / "stencil" / "stencil.cu").read_bytes())
    (tmp_path / "common.cuh").write_bytes((EX / "common.cuh").read_bytes())
    for suffix in (".ncu-rep", ".sm_90.cubin"):
        (tmp_path / "b" / f"stencil{suffix}").write_bytes((EX / "stencil" / f"stencil{suffix}").read_bytes())
    srcs = [tmp_path / "a" / "stencil.cu", tmp_path / "b" / "stencil.cu"]
    ka = analyze(tmp_path / "b" / "stencil.ncu-rep", [tmp_path / "b" / "stencil.sm_90.cubin"], srcs).kernels[0]
    assert {p for p in ka.local.values() if p is not None and p.name == "stencil.cu"} == {srcs[1]}
    assert not any("matches 2 local files" in n for n in ka.notes)


def test_two_equal_copies_far_from_the_report_are_an_ambiguity_with_a_note(tmp_path: Path) -> None:
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "stencil.cu").write_bytes((EX / "stencil" / "stencil.cu").read_bytes())
    (tmp_path / "r").mkdir()
    for suffix in (".ncu-rep", ".sm_90.cubin"):
        (tmp_path / "r" / f"stencil{suffix}").write_bytes((EX / "stencil" / f"stencil{suffix}").read_bytes())
    srcs = [tmp_path / "a" / "stencil.cu", tmp_path / "b" / "stencil.cu"]
    ka = analyze(tmp_path / "r" / "stencil.ncu-rep", [tmp_path / "r" / "stencil.sm_90.cubin"], srcs).kernels[0]
    assert not any(p is not None and p.name == "stencil.cu" for p in ka.local.values())
    assert len(ka.ambiguous_paths) == 1 and ka.ambiguous_paths[0] in ka.notes
    assert str(srcs[0]) in ka.ambiguous_paths[0] and "--path-map" in ka.ambiguous_paths[0]
    recorded = next(r for r in ka.local if r.endswith("stencil.cu"))
    pm = parse_path_map([f"{Path(recorded).parent}={tmp_path / 'b'}"])
    ka = analyze(tmp_path / "r" / "stencil.ncu-rep", [tmp_path / "r" / "stencil.sm_90.cubin"], srcs,
                 path_map=pm).kernels[0]
    assert ka.local[recorded] == srcs[1] and ka.ambiguous_paths == []
