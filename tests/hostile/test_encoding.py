"""Encodings of sources (issue 13 item 3): a Latin-1 comment does not block a rewrite and every byte outside
the edits is kept; a BOM-only copy of the profiled source is the same source; a report or cubin passed as
the source is named for what it is (fresh-user test: "not UTF-8 text")."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from warpwise.analysis.bounded import InputFileError
from warpwise.analysis.encoding import decode_source

from tests.conftest import ROOT, example
from tests.hostile.variants import LATIN1, Variant, apply_variant, launch_lines, shift_line, variant_bytes

CLI = [sys.executable, "-m", "warpwise.server.cli"]
MANDELBROT = ROOT / "examples/dp/mandelbrot/mandelbrot.cu"


@pytest.mark.parametrize("eol", ["lf", "crlf"])
def test_rewrite_of_a_latin1_source_keeps_every_byte(tmp_path: Path, eol: str) -> None:
    # fresh-user test: `rewrite` refused a source with a Latin-1 comment ("not UTF-8 text")
    original = MANDELBROT.read_text()
    v = Variant(eol=eol, latin1=True)
    data = variant_bytes(apply_variant(original, v), v)
    assert LATIN1.encode("latin-1").replace(b"\n", b"\r\n" if eol == "crlf" else b"\n") in data
    src = tmp_path / "mandelbrot.cu"
    src.write_bytes(data)
    out = tmp_path / "out.cu"
    line = shift_line(launch_lines(original)[0], v, original)
    res = subprocess.run([*CLI, "rewrite", "threshold", str(src), "--launch", str(line), "-o", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    first = data.index(b"\xe9")  # the first byte that is not UTF-8: the note names it
    assert f"{src} is not UTF-8 (byte {first})" in res.stderr
    got = out.read_bytes()
    from warpwise.analysis.rewrite import rewrite

    text = data.decode("latin-1")
    # on the file's bytes: the edits' offsets are into the UTF-8 of the byte-for-byte text,
    # so each maps back to a byte offset of the file; every gap between them is the file's own bytes
    edits = sorted(rewrite(text, str(src), "threshold", line), key=lambda e: (e.start, e.end))
    utf8 = text.encode("utf-8")

    def byte(off: int) -> int:
        return len(utf8[:off].decode("utf-8"))

    pos, rebuilt = 0, b""
    for e in edits:
        rebuilt += data[pos:byte(e.start)] + e.new_text.encode("latin-1")
        pos = byte(e.end)
    assert got == rebuilt + data[pos:]
    assert b"\xef\xbf\xbd" not in got and got.count(b"\xe9") == data.count(b"\xe9")  # no U+FFFD, no re-encoding
    if eol == "crlf":
        assert got.count(b"\n") == got.count(b"\r\n")
        nvcc = shutil.which("nvcc")
        if nvcc is None:
            pytest.skip("nvcc not on PATH")
        cc = subprocess.run([nvcc, "-rdc=true", "-arch=sm_90", "-std=c++17", "-c", str(out), "-o",
                             str(tmp_path / "out.o")], capture_output=True, text=True, timeout=300)
        assert cc.returncode == 0, cc.stderr[-2000:]


def test_inserted_text_outside_latin1_is_written_in_ascii() -> None:
    st = decode_source("// caf\xe9\n".encode("latin-1"), "k.cu")
    assert st.encoding == "latin-1" and st.first_non_utf8 == 6
    assert st.encode(st.text + "/* \u00a7V \u2014 x \u2264 y \u2192 z */\n") == \
        b"// caf\xe9\n/* \xa7V -- x <= y -> z */\n"
    assert decode_source("\ufeff// café\n".encode(), "k.cu").encode("\ufeff// café\n") == "\ufeff// café\n".encode()


@pytest.mark.parametrize("name, data, what", [
    ("stencil.ncu-rep", None, "an Nsight Compute report (.ncu-rep)"),
    ("stencil.sm_90.cubin", None, "an ELF binary (a cubin or executable)"),
    ("utf16.cu", "// x\n".encode("utf-16"), "UTF-16 text (byte-order mark at byte 0)"),
])
def test_a_binary_given_as_the_source_is_named_for_what_it_is(tmp_path: Path, name: str, data: bytes | None,
                                                               what: str) -> None:
    path = tmp_path / name
    path.write_bytes(data if data is not None else example("stencil", name.removeprefix("stencil")).read_bytes())
    with pytest.raises(InputFileError, match=r"\(" if data is None else "UTF-16") as e:
        decode_source(path.read_bytes(), path)
    assert str(path) in str(e.value) and what in str(e.value)
    res = subprocess.run([*CLI, "rewrite", "threshold", str(path), "--launch", "1"], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 2 and what in res.stderr and "UTF-8 text" not in res.stderr, res.stderr


def test_bom_only_copy_of_the_profiled_source_is_not_stale(tmp_path: Path) -> None:
    # fresh-user test: a copy that differs only by a UTF-8 BOM got "differs from the source that was profiled"
    for suffix in (".ncu-rep", ".sm_90.cubin"):
        shutil.copy(example("stencil", suffix), tmp_path)
    (tmp_path / "stencil.cu").write_bytes(b"\xef\xbb\xbf" + example("stencil", ".cu").read_bytes())
    res = subprocess.run([*CLI, "advise", str(tmp_path / "stencil.cu"), "--format", "json"], capture_output=True,
                         text=True, timeout=180)
    assert res.returncode == 0, res.stderr
    (k,) = json.loads(res.stdout)["kernels"]
    assert k["lines"] and not [n for n in k["notes"] if "differs from the source" in n], k["notes"]
    # ... while a real code change still is one
    from warpwise.analysis.profile.source import same_code

    text = example("stencil", ".cu").read_text()
    edited = text.replace("cudaFree(din)", "cudaFree(dout)")
    assert same_code("\ufeff" + text, text) and not same_code("\ufeff" + edited, text)


@pytest.mark.parametrize("kind", ["report-bytes", "zeros"])
def test_advise_refuses_binary_data_given_as_the_source(tmp_path: Path, kind: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    # mutation run: a report's bytes saved as stencil.cu exited 0 (advice from the report's embedded text)
    from warpwise.server.cli import main

    src = tmp_path / "stencil.cu"
    if kind == "zeros":
        with open(src, "wb") as f:
            f.truncate(1 << 30)  # sparse: no disk used
    else:
        src.write_bytes(example("stencil", ".ncu-rep").read_bytes()[:4096])
    rc = main(["advise", str(src), "--profile", str(example("stencil", ".ncu-rep")), "--binary",
               str(example("stencil", ".sm_90.cubin"))])
    err = capsys.readouterr().err
    assert rc == 2 and f"{src}: is not a CUDA source: " in err, err
    assert ("an Nsight Compute report" if kind == "report-bytes" else "binary data (a NUL byte at byte 0)") in err


@pytest.mark.parametrize("flag", ["SOURCE", "--profile", "--binary"])
def test_symlink_loop_is_called_a_loop(tmp_path: Path, flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    # mutation run: a symlink loop named stencil.ncu-rep was reported as "no such file"
    from warpwise.server.cli import main

    loop = tmp_path / {"SOURCE": "k.cu", "--profile": "k.ncu-rep", "--binary": "k.cubin"}[flag]
    loop.symlink_to(loop.name)
    argv = ["advise", str(loop) if flag == "SOURCE" else str(example("stencil", ".cu"))]
    if flag != "SOURCE":
        argv += [flag, str(loop)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{loop}: is a symbolic link that loops" in err and "no such file" not in err, err


def test_advice_reads_a_latin1_source_inside_the_workspace(tmp_path: Path) -> None:
    # the advice's source text (quick fixes, loop and launch lookups) was None for a file that is not UTF-8
    from warpwise.analysis import confine

    k = tmp_path / "k.cu"
    k.write_bytes("// temp\xe9rature\n__global__ void k(float *x) { x[0] *= 0.1; }\n".encode("latin-1"))
    blob = tmp_path / "b.cu"
    blob.write_bytes(b"NVR\x00" + bytes(100))
    confine.set_roots([tmp_path])
    try:
        assert confine.read_source(k) == "// temp\xe9rature\n__global__ void k(float *x) { x[0] *= 0.1; }\n"
        assert confine.read_source(blob) is None
        assert confine.read_source(k, errors="replace") == "// temp\ufffdrature\n" \
            "__global__ void k(float *x) { x[0] *= 0.1; }\n"
    finally:
        confine.set_roots([])
