"""Editor side of tuning: manifests from the H200 run decide what the 'use tuned schedule' action offers."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from warpwise.analysis import confine
from warpwise.server import actions
from warpwise.server.config import Settings
from warpwise.server.tuning import (
    HARNESS_GLOBS,
    TunedKernel,
    find_harness,
    find_tuned,
    is_harness_file,
    read_manifest,
    tune_command,
)

from tests.conftest import ROOT, example

DATA = Path(__file__).parent / "data"


SGEMM = "_Z11sgemm_tiledPKfS0_Pfi"
BLUR = "_Z9blur_rowsPKfPfii"


@pytest.fixture(autouse=True)
def workspace(tmp_path: Path) -> Iterator[None]:
    """The repository and the test's folder are the workspace (tuned cubins must resolve inside it)."""
    confine.set_roots([ROOT, tmp_path])
    yield
    confine.set_roots([])


def test_manifest_with_real_gain_is_accepted() -> None:
    # tiled SGEMM on the H200 (bench/tune, third run): 319.0 -> 316.8 us side by side, 10,000 samples verified;
    # the fixture keeps the first 5 steps of the search history
    t = read_manifest(DATA / "sgemm_tiled.tune.json")
    assert t is not None
    assert t.kernel == SGEMM and t.verified_samples == 10000
    assert 1.005 < t.speedup < 1.01
    assert t.cubin == DATA / f"{SGEMM}.tuned.cubin"


def test_manifest_slower_than_original_is_refused(tmp_path: Path) -> None:
    # stencil on the H200: the side-by-side measurement found the tuned schedule 0.997x: not offered
    m = json.loads((DATA / "stencil_no_gain.tune.json").read_text())
    assert m["side_by_side"]["speedup"] < 1.0
    shutil.copy(DATA / "stencil_no_gain.tune.json", tmp_path / "s.tune.json")
    (tmp_path / m["tuned_cubin"]["file"]).write_bytes(b"\x7fELF")
    assert read_manifest(tmp_path / "s.tune.json") is None
    assert find_tuned([tmp_path / "s.tune.json", DATA / "sgemm_tiled.tune.json"]).keys() == {SGEMM}


def test_manifest_that_kept_the_original_is_refused(tmp_path: Path) -> None:
    # third run's stencil: best candidate 1.001x, not below the original's first quartile -> original kept
    m = json.loads((DATA / "stencil_kept.tune.json").read_text())
    assert m["result"].startswith("original kept") and m["tuned_cubin"] is None
    assert read_manifest(DATA / "stencil_kept.tune.json") is None
    # even a stray cubin next to it does not make it an accepted result
    shutil.copy(DATA / "stencil_kept.tune.json", tmp_path)
    (tmp_path / "_Z9blur_rowsPKfPfii.tuned.cubin").write_bytes(b"\x7fELF")
    assert read_manifest(tmp_path / "stencil_kept.tune.json") is None


def test_missing_tuned_cubin_is_refused(tmp_path: Path) -> None:
    shutil.copy(DATA / "sgemm_tiled.tune.json", tmp_path)
    assert read_manifest(tmp_path / "sgemm_tiled.tune.json") is None
    (tmp_path / "junk.tune.json").write_text("{not json")
    assert read_manifest(tmp_path / "junk.tune.json") is None


def _tuned(cubin: Path) -> dict[str, TunedKernel]:
    if not cubin.exists():
        cubin.write_bytes(b"\x7fELF " + cubin.name.encode())
    sha = hashlib.sha256(cubin.read_bytes()).hexdigest()
    return {BLUR: TunedKernel(BLUR, cubin, cubin.parent / "m.tune.json", 1.05, 10000, sha)}


def _edit_text(a: lsp.CodeAction, text: str) -> str:
    """``text`` with the action's edits applied (LSP line/character; the stencil source is ASCII)."""
    assert a.edit is not None and a.edit.document_changes
    change = a.edit.document_changes[0]
    assert isinstance(change, lsp.TextDocumentEdit)
    lines = text.split("\n")

    def off(p: lsp.Position) -> int:
        return sum(len(x) + 1 for x in lines[: p.line]) + p.character

    for e in sorted(change.edits, key=lambda e: off(e.range.start), reverse=True):
        text = text[: off(e.range.start)] + e.new_text + text[off(e.range.end) :]
    return text


def test_use_tuned_action_rewrites_the_host_launch_with_an_absolute_cubin_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src_path = example("stencil", ".cu")
    text = src_path.read_text()
    line = next(i + 1 for i, t in enumerate(text.split("\n")) if "blur_rows<<<" in t)
    (tmp_path / "out").mkdir()
    cubin = tmp_path / "out" / "blur_rows.tuned.cubin"
    cubin.write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    tuned = _tuned(Path("out/blur_rows.tuned.cubin"))  # found relative to the server's directory
    uri = src_path.as_uri()
    got = actions.tuned_actions(uri, 3, text, str(src_path), line, line, None, tuned)
    (a,) = got
    assert "1.050×" in a.title and "10,000" in a.title and a.title.endswith(f"loaded from {cubin}")
    assert a.edit is not None and a.edit.document_changes
    change = a.edit.document_changes[0]
    assert isinstance(change, lsp.TextDocumentEdit) and change.text_document.version == 3
    new = "".join(e.new_text for e in change.edits)
    # cuModuleLoad opens the path from the program's working directory, so it must be absolute
    assert "WARPWISE_TUNED" in new and f'warpwise_tuned::launch(blur_rows, "{cubin}", ' in new
    assert Path(cubin).is_absolute()
    # elsewhere in the file: nothing offered
    assert actions.tuned_actions(uri, 3, text, str(src_path), 1, 2, None, tuned) == []


def test_use_tuned_action_is_not_offered_twice_and_updates_another_path(tmp_path: Path) -> None:
    src_path = example("stencil", ".cu")
    text = src_path.read_text()
    line = next(i + 1 for i, t in enumerate(text.split("\n")) if "blur_rows<<<" in t)
    old, new = tmp_path / "old.tuned.cubin", tmp_path / "new.tuned.cubin"
    (a,) = actions.tuned_actions(src_path.as_uri(), 1, text, str(src_path), line, line, None, _tuned(old))
    once = _edit_text(a, text)
    line = next(i + 1 for i, t in enumerate(once.split("\n")) if "blur_rows<<<" in t)
    lines = (line - 3, line)  # a range over the guard and the launch
    # already switched to this cubin: no action
    assert actions.tuned_actions(src_path.as_uri(), 2, once, str(src_path), *lines, None, _tuned(old)) == []
    # another cubin: "Update ...", which replaces the guard
    (u,) = actions.tuned_actions(src_path.as_uri(), 2, once, str(src_path), *lines, None, _tuned(new))
    assert u.title.startswith(f"Update the tuned SASS schedule of blur_rows to {new} (1.050×")
    twice = _edit_text(u, once)
    assert twice.count("if (warpwise_tuned::launch(") == 1 and str(old) not in twice and str(new) in twice
    assert twice.count("namespace warpwise_tuned {") == 1


def test_dry_run_manifests_are_never_offered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from warpwise.analysis.schedule.evaluate import DryRunEvaluator
    from warpwise.analysis.schedule.harness import load_harness
    from warpwise.analysis.schedule.tune import TuneOptions, tune, write_artifacts
    from warpwise.server.tune_cmd import main

    cubin = example("stencil", ".sm_90.cubin")
    harness = ROOT / "bench/tune/harness/stencil.json"
    out = tmp_path / "warpwise-tuned"
    assert (
        main(
            [
                str(cubin),
                "--harness",
                str(harness),
                "--dry-run",
                "-o",
                str(out),
                "--iterations",
                "20",
                "--verify-samples",
                "10",
                "--no-progress",
            ]
        )
        == 0
    )
    assert "dry run: nothing measured" in capsys.readouterr().out
    (man,) = out.glob("*.tune.json")
    assert json.loads(man.read_text())["dry_run"] is True
    # even with a cubin where an accepted result's would be
    (out / f"{BLUR}.tuned.cubin").write_bytes(cubin.read_bytes())
    assert read_manifest(man) is None and find_tuned([man]) == {}
    # a dry run written before the "dry_run" flag existed (what the tester found): result "tuned",
    # a reordered cubin, only the stand-in device marks it
    old = tmp_path / "old"
    r = tune(
        cubin.read_bytes(),
        BLUR,
        load_harness(harness),
        DryRunEvaluator(),
        TuneOptions(iterations=20, verify_samples=10, movable="all"),
        str(cubin),
    )
    tuned_cubin, old_man = write_artifacts(r, old)
    m = json.loads(old_man.read_text())
    m.pop("dry_run")
    m["options"].pop("dry_run")
    old_man.write_text(json.dumps(m))
    assert m["result"] == "tuned" and tuned_cubin is not None and m["device"]["device"] == "dry-run (no GPU)"
    assert read_manifest(old_man) is None
    # the same manifest from a real device would be offered; the dry_run flag alone refuses it
    m["device"] = {"device": "NVIDIA H200"}
    old_man.write_text(json.dumps(m))
    assert read_manifest(old_man) is not None
    old_man.write_text(json.dumps({**m, "dry_run": True}))
    assert read_manifest(old_man) is None


def test_harness_naming_rule(tmp_path: Path) -> None:
    bench = ROOT / "bench/tune/harness/stencil.json"
    assert is_harness_file(bench) and is_harness_file(tmp_path / "blur_rows.harness.json")
    assert is_harness_file(tmp_path / "harnesses" / "x.json")
    assert not is_harness_file(tmp_path / "blur.json") and not is_harness_file(tmp_path / "harness" / "x.txt")
    assert not is_harness_file(tmp_path / "harness" / "sub" / "x.json")
    body = bench.read_text()
    decoy = tmp_path / "configs" / "stencil.json"  # same content, not named as a harness
    named = tmp_path / "blur_rows.harness.json"
    in_folder = tmp_path / "harnesses" / "stencil.json"
    for p in (decoy, named, in_folder):
        p.parent.mkdir(exist_ok=True)
        p.write_text(body)
    assert find_harness([decoy], BLUR) is None
    assert find_harness([decoy, in_folder], BLUR) == in_folder
    assert find_harness([decoy, named], BLUR) == named
    assert find_harness([bench], BLUR) == bench
    assert find_harness([bench], SGEMM) is None
    assert set(HARNESS_GLOBS) == {"**/*.harness.json", "**/harness/*.json", "**/harnesses/*.json"}


def test_tune_command_is_an_argument_list() -> None:
    s = Settings()
    cmd = tune_command("python3", Path("k.cubin"), "_Z1kv", Path("k.harness.json"), Path("out"), s)
    assert cmd[:5] == ["python3", "-m", "warpwise.server.cli", "tune", "k.cubin"]
    assert cmd[cmd.index("--verify-samples") + 1] == "10000"
