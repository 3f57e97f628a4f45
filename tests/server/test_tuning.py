"""Editor side of tuning: manifests from the H200 run decide what the 'use tuned schedule' action offers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from lsprotocol import types as lsp
from warpwise.server import actions
from warpwise.server.config import Settings
from warpwise.server.tuning import TunedKernel, find_tuned, read_manifest, tune_command

from tests.conftest import example

DATA = Path(__file__).parent / "data"


SGEMM = "_Z11sgemm_tiledPKfS0_Pfi"


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


def test_use_tuned_action_rewrites_the_host_launch(tmp_path: Path) -> None:
    src_path = example("stencil", ".cu")
    text = src_path.read_text()
    line = next(i + 1 for i, t in enumerate(text.split("\n")) if "blur_rows<<<" in t)
    cubin = tmp_path / "blur_rows.tuned.cubin"
    cubin.write_bytes(b"")
    tuned = {"_Z9blur_rowsPKfPfii": TunedKernel("_Z9blur_rowsPKfPfii", cubin, tmp_path / "m.tune.json", 1.05, 10000)}
    uri = src_path.as_uri()
    got = actions.tuned_actions(uri, 3, text, str(src_path), line, line, None, tuned)
    (a,) = got
    assert "1.050×" in a.title and "10,000" in a.title
    assert a.edit is not None and a.edit.document_changes
    change = a.edit.document_changes[0]
    assert isinstance(change, lsp.TextDocumentEdit) and change.text_document.version == 3
    new = "".join(e.new_text for e in change.edits)
    assert "WARPWISE_TUNED" in new and "blur_rows.tuned.cubin" in new
    # elsewhere in the file: nothing offered
    assert actions.tuned_actions(uri, 3, text, str(src_path), 1, 2, None, tuned) == []


def test_tune_command_is_an_argument_list() -> None:
    s = Settings()
    cmd = tune_command("python3", Path("k.cubin"), "_Z1kv", Path("k.harness.json"), Path("out"), s)
    assert cmd[:5] == ["python3", "-m", "warpwise.server.cli", "tune", "k.cubin"]
    assert cmd[cmd.index("--verify-samples") + 1] == "10000"
