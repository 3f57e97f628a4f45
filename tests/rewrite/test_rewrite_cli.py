"""server/rewrite_cmd.py: the ``warpwise rewrite`` sub-command."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from rewrite_helpers import example_path
from warpwise.analysis.rewrite.parse import parse
from warpwise.server.rewrite_cmd import add_arguments, run_rewrite


def _args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_arguments(p)
    return p.parse_args(list(argv))


def test_writes_the_rewritten_file(tmp_path: Path) -> None:
    out = tmp_path / "bfs_agg.cu"
    rc = run_rewrite(_args("aggregate", str(example_path("bfs")), "--launch", "50", "--granularity", "multiblock",
                           "-o", str(out)))
    assert rc == 0
    text = out.read_text()
    assert "/* warpwise aggregate (multi-block granularity" in text
    assert parse(text, str(out)).errors == []


def test_prints_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_rewrite(_args("coarsen", str(example_path("spmv")), "--launch", "47", "--factor", "8")) == 0
    assert "#define WARPWISE_CFACTOR 8" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (("threshold", "missing.cu", "--launch", "3"), "cannot read missing.cu"),
    (("threshold", "EX", "--launch", "3"), "no device-side kernel launch on this line"),
    (("coarsen", "EX", "--launch", "47", "--granularity", "warp"), "--granularity applies to aggregate only"),
    (("threshold", "EX", "--launch", "47", "--threshold", "0"), "threshold must be a positive integer"),
])
def test_bad_input_exits_2(argv: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = tuple(str(example_path("spmv")) if a == "EX" else a for a in argv)
    assert run_rewrite(_args(*argv)) == 2
    err = capsys.readouterr().err
    assert err.startswith("warpwise rewrite: ") and message in err


def test_group_blocks_sets_the_multiblock_group(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("aggregate", str(example_path("tree")), "--launch", "51", "--granularity", "multiblock",
            "--group-blocks", "4")
    assert run_rewrite(_args(*argv)) == 0
    assert "#define WARPWISE_AGG_GRANULARITY 4 " in capsys.readouterr().out
    assert run_rewrite(_args("aggregate", str(example_path("tree")), "--launch", "51", "--group-blocks", "4")) == 2


def test_syntax_error_in_main_exits_2_with_its_position(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = example_path("spmv").read_text()
    assert "int main" in src
    broken = src.replace("int main(", "int main(int x = ,", 1)  # a syntax error in host code only
    f = tmp_path / "syn.cu"
    f.write_text(broken)
    line = broken[:broken.index("int main(")].count("\n") + 1
    assert run_rewrite(_args("threshold", str(f), "--launch", "47")) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.startswith(f"warpwise rewrite: parse failed at {f}:{line}:") and ": expected" in out.err
