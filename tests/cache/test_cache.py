"""The persistent analysis cache (analysis/cache.py): keys, atomic stores, corrupt entries, LRU bound,
private-directory check, and `analyze` answering a second call from disk."""

from __future__ import annotations

import os
import pickle
import threading
from pathlib import Path

import pytest
from warpwise.analysis import cache, pipeline

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture
def cdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("WARPWISE_CACHE_DIR", str(d))
    monkeypatch.delenv("WARPWISE_NO_CACHE", raising=False)
    monkeypatch.delenv("WARPWISE_CACHE_MAX_MB", raising=False)
    return d


def test_round_trip_and_private_dir(cdir: Path) -> None:
    assert cache.load("k1") is None
    assert cache.store("k1", {"a": [1, 2.5]})
    assert cache.load("k1") == {"a": [1, 2.5]}
    assert cdir.stat().st_mode & 0o777 == 0o700


def test_xdg_cache_home_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("WARPWISE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.cache_dir() == tmp_path / "warpwise"


def test_disabled_stores_nothing(cdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WARPWISE_NO_CACHE", "1")
    assert not cache.store("k", 1) and cache.load("k") is None and not cdir.exists()


def test_corrupt_entries_are_misses_and_removed(cdir: Path) -> None:
    cache.store("good", 1)
    for name, data in (("trunc", cache._MAGIC + pickle.dumps(list(range(100)))[:20]), ("alien", b"\x80\x04junk")):
        (cdir / f"{name}.pickle").write_bytes(data)
        assert cache.load(name) is None
        assert not (cdir / f"{name}.pickle").exists()
    assert cache.load("good") == 1


def test_group_writable_dir_is_refused(cdir: Path) -> None:
    cache.store("k", 1)
    os.chmod(cdir, 0o777)
    try:
        assert cache.load("k") is None
        assert not cache.store("k2", 2)
    finally:
        os.chmod(cdir, 0o700)


def test_lru_eviction_keeps_recently_used(cdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blob = b"x" * 300_000
    for k in ("a", "b", "c"):
        cache.store(k, blob)
    os.utime(cdir / "a.pickle", ns=(1, 1))
    os.utime(cdir / "b.pickle", ns=(2, 2))
    assert cache.load("a") == blob  # touched: now the most recent
    monkeypatch.setenv("WARPWISE_CACHE_MAX_MB", "1")  # room for three entries
    cache.store("d", blob)
    left = sorted(p.stem for p in cdir.glob("*.pickle"))
    assert left == ["a", "c", "d"]


def test_concurrent_writers_leave_a_whole_entry(cdir: Path) -> None:
    values = [list(range(20_000 + i)) for i in range(8)]
    threads = [threading.Thread(target=cache.store, args=("same", v)) for v in values]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.load("same") in values
    assert not list(cdir.glob(".tmp-*"))


def test_key_depends_on_content_and_options(cdir: Path, tmp_path: Path) -> None:
    f = tmp_path / "r.ncu-rep"
    f.write_bytes(b"one")
    k1 = cache.make_key("analysis", [f], ["kernel=None"])
    assert k1 == cache.make_key("analysis", [f], ["kernel=None"])
    assert k1 != cache.make_key("analysis", [f], ["kernel=k"])
    f.write_bytes(b"two")
    assert k1 != cache.make_key("analysis", [f], ["kernel=None"])


def test_second_analyze_is_a_load(cdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ex = ROOT / "examples" / "stencil"
    profiles, binaries = pipeline.discover([ex])
    sources = sorted(ex.glob("*.cu"))
    pipeline._profile_cache.clear()
    cold = pipeline.analyze(profiles[0], binaries, sources)
    assert len(list(cdir.glob("*.pickle"))) == 1

    def no_reading(*a: object, **k: object) -> None:
        raise AssertionError("warm analyze must not read the report")

    pipeline._profile_cache.clear()
    monkeypatch.setattr(pipeline, "load_profiles", no_reading)
    warm = pipeline.analyze(profiles[0], binaries, sources)
    assert [k.profile.name for k in warm.kernels] == [k.profile.name for k in cold.kernels]
    assert warm.kernels[0].advice == cold.kernels[0].advice and cold.kernels[0].advice
    assert warm.kernels[0].blame.edges == cold.kernels[0].blame.edges


def test_tool_versions_name_the_installed_files(tmp_path: Path) -> None:
    from warpwise.analysis.binary.tools import find_tool
    from warpwise.analysis.profile.nvperf_boot import library_path

    got = cache.tool_versions()
    nvdisasm = Path(find_tool("nvdisasm"))
    assert f"nvdisasm {nvdisasm} {nvdisasm.stat().st_size} " in got
    lib = library_path()
    assert lib is not None  # ncu-report is a dependency
    assert f"{lib} {Path(lib).stat().st_size} " in got
    assert f"{Path(lib).parent / '__init__.py'} " in got  # the package's Python module too
    f = tmp_path / "tool"
    f.write_bytes(b"one")
    one = cache._file_identity(f)
    f.write_bytes(b"three")  # another size: another identity (as a reinstalled tool would have)
    assert cache._file_identity(f) != one and cache._file_identity(tmp_path / "gone") == f"{tmp_path / 'gone'} missing"


def test_key_imports_neither_importlib_metadata_nor_pyelftools() -> None:
    """What the advise process holds while the report reader runs beside it (the process tree's RSS peak,
    docs/benchmarks.md issue 15 "Sixth pass, memory"): the CLI, advise's imports and the cache key, without
    importlib.metadata (~1.5 MiB) and pyelftools (~3 MiB), which come later or never."""
    import subprocess
    import sys

    code = ("import sys; from pathlib import Path; from warpwise.server.cli import build_parser; build_parser(); "
            "import warpwise.server.advise_cmd; from warpwise.analysis import cache; "
            f"ex = Path({str(ROOT / 'examples' / 'stencil')!r}); "
            "k = cache.make_key('analysis', [ex / 'stencil.ncu-rep', ex / 'stencil.sm_90.cubin']); "
            "print(len(k), 'importlib.metadata' in sys.modules, any(m.startswith('elftools') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["64", "False", "False"]
