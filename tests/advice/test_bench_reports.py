"""bench/advice/reports.py: the benchmark pairs' reports committed xz-compressed and unpacked into a cache."""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest

from tests.conftest import ROOT, bench_reports, example

ADVICE = ROOT / "bench" / "advice"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "warpwise-bench" / "reports"


def _pair_with_xz(tmp_path: Path) -> tuple[Path, bytes]:
    d = tmp_path / "pair"
    d.mkdir()
    data = example("stencil", ".ncu-rep").read_bytes()
    (d / "orig.ncu-rep").write_bytes(data)
    xz = bench_reports.compress(d / "orig.ncu-rep")
    assert xz == d / "orig.ncu-rep.xz" and not (d / "orig.ncu-rep").exists()
    assert xz.stat().st_size < len(data) // 4  # a real report compresses well
    return d, data


def test_compressed_report_unpacks_once_into_the_cache_keeping_its_name(tmp_path: Path, cache: Path) -> None:
    d, data = _pair_with_xz(tmp_path)
    got = bench_reports.pair_report(d)
    assert got is not None and got.name == "orig.ncu-rep" and got.read_bytes() == data
    assert got.parent.parent == cache and len(got.parent.name) == 64  # <sha256 of the .xz>/orig.ncu-rep
    before = got.stat().st_mtime_ns
    again = bench_reports.pair_report(d)
    assert again == got and again.stat().st_mtime_ns == before  # reused, not rewritten
    assert [p.name for p in got.parent.iterdir()] == ["orig.ncu-rep"]  # no temporary file left


def test_plain_report_in_the_folder_is_read_as_it_is(tmp_path: Path, cache: Path) -> None:
    d, data = _pair_with_xz(tmp_path)
    (d / "orig.ncu-rep").write_bytes(data[:100])  # a fresh profile beside the committed .xz
    assert bench_reports.pair_report(d) == d / "orig.ncu-rep"
    assert not cache.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert bench_reports.pair_report(empty) is None and not bench_reports.has_report(empty)


def test_corrupt_xz_raises_and_leaves_nothing_in_the_cache(tmp_path: Path, cache: Path) -> None:
    d, _ = _pair_with_xz(tmp_path)
    xz = d / "orig.ncu-rep.xz"
    xz.write_bytes(xz.read_bytes()[: xz.stat().st_size // 2])  # truncated stream
    with pytest.raises((lzma.LZMAError, EOFError)):
        bench_reports.pair_report(d)
    (folder,) = cache.iterdir()
    assert list(folder.iterdir()) == []


def test_every_committed_pair_has_its_report_compressed() -> None:
    pairs = [d for d in ADVICE.glob("**/pairs/*") if (d / "pair.json").is_file() and any(d.glob("orig.*.cubin"))]
    assert len(pairs) >= 60
    assert [d for d in pairs if not (d / "orig.ncu-rep.xz").is_file()] == []
    with lzma.open(ADVICE / "pairs" / "bs_batches" / "orig.ncu-rep.xz") as f:
        assert f.read(4) == b"NVR\x00"  # an Nsight Compute report inside
