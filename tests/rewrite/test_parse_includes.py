"""A project header in a folder near the file (cuda-samples' `#include <helper_cuda.h>` from `Common/`) is
found before the first parse: one libclang parse instead of one per missing include (each a whole parse of
the file's headers, Thrust included), with the same result."""

from __future__ import annotations

from pathlib import Path

import pytest
from warpwise.analysis.rewrite import parse as P

pytestmark = pytest.mark.skipif(P.find_cuda_headers() is None, reason="CUDA headers (nvidia-cuda-runtime...) absent")

SRC = ("#include <stdio.h>\n#include <vector>\n#include <helper_a.h>\n#include \"helper_b.h\"\n"
       "#include <cuda_runtime.h>\n"
       "__global__ void k(int* a) { a[threadIdx.x] = helper_a() + helper_b(); }\n"
       "int main() { std::vector<int> v(3); printf(\"%d\\n\", v[0]); return 0; }\n")


def _project(root: Path) -> Path:
    (root / "Common").mkdir()
    for n, v in (("a", 1), ("b", 2)):
        (root / "Common" / f"helper_{n}.h").write_text(
            f"#pragma once\n__host__ __device__ inline int helper_{n}() {{ return {v}; }}\n")
    (root / "Samples" / "k").mkdir(parents=True)
    f = root / "Samples" / "k" / "k.cu"
    f.write_text(SRC)
    return f


def _parse_counting(f: Path, prescan: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[P.Parsed, int]:
    monkeypatch.setattr(P, "PRESCAN_INCLUDES", prescan)
    P.parse("", str(f.parent / "warm.cu"))  # the index and the precompiled headers exist
    calls = []
    real = P._index.parse  # type: ignore[union-attr]

    def counting(*a, **k):  # type: ignore[no-untyped-def]
        calls.append(a)
        return real(*a, **k)

    monkeypatch.setattr(P._index, "parse", counting)
    p = P._parse(f.read_text(), str(f))
    return p, len(calls)


def test_project_includes_resolved_before_the_first_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = _project(tmp_path)
    before, n_before = _parse_counting(f, False, monkeypatch)
    now, n_now = _parse_counting(f, True, monkeypatch)
    assert before.errors == now.errors == []
    assert (n_before, n_now) == (2, 1)  # the missing helper_a.h cost a round; Common/ holds both
    assert P._preresolved_dirs(SRC.encode(), str(f), P.find_cuda_headers()) == [str(tmp_path / "Common")]  # type: ignore[arg-type]


def test_system_and_cuda_headers_are_never_taken_from_the_project(tmp_path: Path) -> None:
    f = _project(tmp_path)
    # a project copy of a system and a CUDA header nearby does not shadow the real ones
    (tmp_path / "Common" / "stdio.h").write_text("#error not this one\n")
    (tmp_path / "Common" / "cuda_runtime.h").write_text("#error not this one\n")
    src = "#include <stdio.h>\n#include \"cuda_runtime.h\"\nint main() { return printf(\"x\"); }\n"
    assert P._preresolved_dirs(src.encode(), str(f), P.find_cuda_headers()) == []  # type: ignore[arg-type]
    assert P.parse(src, str(f)).errors == []
