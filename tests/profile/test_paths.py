from pathlib import Path

from warpwise.analysis.profile.paths import common_suffix, map_path


def test_longest_suffix_wins() -> None:
    cands = [Path("/home/me/a/kern.cu"), Path("/home/me/proj/src/kern.cu"), Path("/home/me/proj/other.cu")]
    assert map_path("/gpu-box/build/proj/src/kern.cu", cands) == Path("/home/me/proj/src/kern.cu")
    assert map_path("/gpu-box/x/kern.cu", cands) == Path("/home/me/a/kern.cu")  # tie: first given
    assert map_path("/gpu-box/none.cu", cands) is None


def test_windows_and_posix_paths() -> None:
    assert common_suffix(r"C:\work\proj\src\kern.cu", "/home/me/proj/src/kern.cu") == 3
    assert common_suffix("/a/b/kern.cu", "/a/b/kern.cuh") == 0
