"""The wheel maps analysis/ and server/ to warpwise.analysis / warpwise.server (DESIGN.md layout)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import venv
from pathlib import Path

from tests.conftest import ROOT


def test_every_subpackage_is_listed() -> None:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    for top, name in (("analysis", "warpwise.analysis"), ("server", "warpwise.server")):
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top).parts
            assert ".".join((name, *rel)) in listed, f"{init.parent} missing from pyproject packages"


def test_wheel_installs_and_imports(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(wheels), str(ROOT)], check=True, cwd=tmp_path)
    wheel = next(wheels.glob("warpwise-*.whl"))
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True)
    code = ("import warpwise.analysis, warpwise.server, warpwise.analysis.profile.model as m;"
            "import importlib.util as u;"
            "assert u.find_spec('analysis') is None and u.find_spec('server') is None;"
            "print(m.__file__)")
    out = subprocess.run([str(py), "-c", code], check=True, capture_output=True, text=True, cwd=tmp_path)
    assert "site-packages/warpwise/analysis/profile/model.py" in out.stdout
    # the shim header for libclang's host-only CUDA parse ships with the package
    assert list((env_dir / "lib").glob("python3*/site-packages/warpwise/analysis/rewrite/*.h"))
    # and the headers that complete clang's CUDA wrapper for the real-header parse
    site = "python3*/site-packages/warpwise/analysis/rewrite"
    shipped = {p.name for p in (env_dir / "lib").glob(f"{site}/cuda_include/*.h")}
    # every header of the source tree ships (the legacy-API declarations for code CUDA 12/13 no longer builds too)
    tree = {p.name for p in (Path(__file__).resolve().parents[1] / "analysis" / "rewrite" / "cuda_include").glob("*.h")}
    assert shipped == tree
    assert tree >= {"warpwise_cuda_extra.h", "warpwise_builtin_vars.h", "texture_fetch_functions.h",
                    "curand_mtgp32_kernel.h", "warpwise_legacy_cuda.h"}
