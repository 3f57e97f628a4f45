"""One fuzz target per reader (issue 13 item 6): each must return a value or raise its own documented
error naming the file — never another exception, never hang (every tool run is time-limited).

The CSV reader (analysis/profile/csv*.py) has two targets: byte mutations of the examples' Source and
Details exports, and line/cell-level edits (rows dropped, duplicated, swapped, cells replaced by other
cells, ``n/a``, huge or negative numbers, quotes and separators) that keep the file CSV-shaped so the
table logic, not only the tokenizer, is reached."""

from __future__ import annotations

import json
import os
import string
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from warpwise.analysis import confine
from warpwise.analysis.binary.elf import read_cuda_elf
from warpwise.analysis.binary.errors import BinaryError
from warpwise.analysis.binary.load import load_cubin
from warpwise.analysis.binary.sass import parse, split_instruction
from warpwise.analysis.profile.csv_load import load_csv_profiles
from warpwise.analysis.profile.csvfile import CsvError
from warpwise.analysis.profile.ncu import ProfileLoadError, load_profiles
from warpwise.server.tuning import read_manifest

from tests.conftest import example
from tests.fuzz.mutate import mutated

REPORT = example("stencil", ".ncu-rep").read_bytes()
CUBIN = example("gather", ".sm_90.cubin").read_bytes()
CSV_NAMES = ("stencil", "gather", "intdiv", "noinline", "cdp")
CSV_SOURCE = {n: example(n, ".source.csv").read_bytes() for n in CSV_NAMES}
CSV_DETAILS = {n: example(n, ".details.csv").read_bytes() for n in CSV_NAMES}
_TMP = Path(tempfile.mkdtemp(prefix="ww-fuzz-"))


def _write(name: str, data: bytes) -> Path:
    p = _TMP / name
    p.write_bytes(data)
    return p


@pytest.fixture(autouse=True)
def short_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WARPWISE_TOOL_TIMEOUT_S", "20")
    monkeypatch.setenv("WARPWISE_REPORT_TIMEOUT_S", "30")


@settings(max_examples=int(os.environ.get("WARPWISE_FUZZ_REPORTS", "8")))
@given(data=mutated(REPORT))
def test_report_reader(data: bytes) -> None:
    p = _write("m.ncu-rep", data)
    try:
        profiles = load_profiles(p)
    except ProfileLoadError as e:
        assert str(p) in str(e)
        return
    for k in profiles:  # a report that still loads must be internally consistent
        assert k.name and k.total_samples >= 0 and all(s.samples >= 0 for s in k.pcs.values())


@given(data=mutated(CUBIN, max_edits=4))
def test_cubin_elf_reader(data: bytes) -> None:
    try:
        elf = read_cuda_elf("m.cubin", data)
    except BinaryError as e:
        assert "m.cubin" in str(e)
        return
    for sec, text in elf.texts.items():
        assert sec.startswith(".text.") and isinstance(text, bytes)


@settings(max_examples=int(os.environ.get("WARPWISE_FUZZ_CUBINS", "6")))
@given(data=mutated(CUBIN, max_edits=3))
def test_cubin_with_nvdisasm(data: bytes) -> None:
    p = _write("m.cubin", data)
    try:
        cub = load_cubin(p)
    except BinaryError as e:
        assert str(p) in str(e)
        return
    for f in cub.functions.values():
        assert all(i.offset % 16 == 0 for i in f.instructions)


_LOC_LINE = st.builds(
    lambda f, n, g, m: f'//## File "{f}", line {n}' + (f' inlined at "{g}", line {m}' if g else ""),
    st.text(string.printable.replace('"', "").replace("\n", ""), max_size=40), st.integers(-5, 10**12),
    st.one_of(st.none(), st.text(string.ascii_letters + "/._", max_size=20)), st.integers(0, 10**6))
_INSN = st.builds(lambda o, t: f"        /*{o:04x}*/                   {t} ;", st.integers(0, 1 << 20),
                  st.text(string.ascii_uppercase + string.digits + " ,.[]@!{}-_", max_size=60))
_SECTION = st.sampled_from(['\t.section\t.text._Z1kv,"ax",@progbits', "\t.section .text.", ".target sm_90",
                            ".target", "\t.section\t.nv.info", "//##", "/*", "/**/", ""])


@given(lines=st.lists(st.one_of(_LOC_LINE, _INSN, _SECTION, st.text(max_size=30)), max_size=60))
def test_line_table_and_sass_text(lines: list[str]) -> None:
    dis = parse("\n".join(lines))
    for sec, ins in dis.sections.items():
        assert sec.startswith(".text.")
        for s in ins:
            assert s.loc is None or isinstance(s.loc.line, int)
            _pred, opcode, ops = split_instruction(s.text)
            assert isinstance(opcode, str) and all(isinstance(o, str) for o in ops)


@given(text=st.text(max_size=200))
def test_split_instruction(text: str) -> None:
    pred, opcode, ops = split_instruction(text)
    assert (pred is None or isinstance(pred, str)) and isinstance(opcode, str) and isinstance(ops, list)


_JSON = st.recursive(st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=30),
                     lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=12), c, max_size=5),
                     max_leaves=20)


@given(base=st.sampled_from(["sgemm_tiled", "stencil_kept", "stencil_no_gain"]),
       path=st.lists(st.sampled_from(["tuned_cubin", "file", "sha256", "kernel", "verification", "passed",
                                      "side_by_side", "speedup", "format", "result", "accepted", "dry_run"]),
                     min_size=1, max_size=3), value=_JSON)
def test_manifest_reader(base: str, path: list[str], value: object) -> None:
    from tests.conftest import ROOT

    data = ROOT / "tests/server/data"
    m = json.loads((data / f"{base}.tune.json").read_text())
    node = m
    for key in path[:-1]:  # overwrite one field somewhere in the real manifest
        nxt = node.get(key) if isinstance(node, dict) else None
        if not isinstance(nxt, dict):
            nxt = {}
            if isinstance(node, dict):
                node[key] = nxt
        node = nxt
    if isinstance(node, dict):
        node[path[-1]] = value
    p = data.parent / "data" / f"fuzz-{os.getpid()}.tune.json"
    try:
        p.write_text(json.dumps(m))
        t = read_manifest(p, [data])
        if t is not None:  # accepted only if still a verified, faster, confined, hash-matching result
            assert t.speedup > 1.0 and t.cubin.is_relative_to(data.resolve()) and len(t.sha256) == 64
    finally:
        p.unlink(missing_ok=True)
        confine.set_roots([])


@given(data=st.binary(max_size=300))
def test_manifest_bytes(data: bytes) -> None:
    p = _write("x.tune.json", data)
    assert read_manifest(p, [_TMP]) is None or True  # never raises on any bytes


def _check_csv_profiles(paths: list[Path]) -> None:
    try:
        profiles = load_csv_profiles(paths)
    except CsvError as e:
        assert any(str(p) in str(e) for p in paths), e
        return
    for k in profiles:  # a CSV that still loads must give a consistent profile
        assert k.name and k.total_samples >= 0
        for s in k.pcs.values():
            assert s.samples >= 0 and s.not_issued >= 0 and all(v >= 0 for v in s.stalls.values())
            assert s.line is None or s.line >= 0
        assert all(d >= 0 for d in (*k.launch.grid, *k.launch.block))


@settings(max_examples=int(os.environ.get("WARPWISE_FUZZ_CSV", "25")))
@given(name=st.sampled_from(CSV_NAMES), which=st.sampled_from(["source", "details", "both"]), seed=st.data())
def test_csv_reader_bytes(name: str, which: str, seed: st.DataObject) -> None:
    src, det = CSV_SOURCE[name], CSV_DETAILS[name]
    if which in ("source", "both"):
        src = seed.draw(mutated(src))
    if which in ("details", "both"):
        det = seed.draw(mutated(det))
    _check_csv_profiles([_write(f"{name}.source.csv", src), _write(f"{name}.details.csv", det)])


_CELL = st.sampled_from(['""', '"n/a"', '"-"', '"0"', '"-1"', '"-5,000"', '"1e308"', '"1e999"', '"nan"', '"inf"',
                         '"0x"', '"0xzz"', '"0xffffffffffffffffffff"', '"4,294,967,296"', '"1.5"', '"%"', '"a""b"',
                         '"', ',', '"(1; 2)"', '"2 (1; 1)"', '"Kernel Name"', '"Source"', '"Address"', '"\u202f"'])


@st.composite
def _csv_edits(draw: st.DrawFn, data: bytes) -> bytes:
    lines = data.decode("utf-8", errors="replace").split("\n")
    for _ in range(draw(st.integers(1, 6))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["drop", "dup", "swap", "cell", "cut", "title", "empty"]))
        if op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "cell":
            cells = lines[i].split('","')
            k = draw(st.integers(0, max(0, len(cells) - 1)))
            cells[k] = draw(_CELL).strip('"')
            lines[i] = '","'.join(cells)
        elif op == "cut":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
        elif op == "title":
            lines.insert(i, draw(st.sampled_from(['"Kernel Name","x"', '"Function Name",""', '"File Path","/dev/stdin"',
                                                  '"Kernel Name"', "==PROF== x", '"ID","Kernel Name"'])))
        else:
            lines[i] = ""
    return "\n".join(lines).encode()


@settings(max_examples=int(os.environ.get("WARPWISE_FUZZ_CSV", "25")))
@given(name=st.sampled_from(CSV_NAMES), seed=st.data())
def test_csv_reader_rows_and_cells(name: str, seed: st.DataObject) -> None:
    src = seed.draw(_csv_edits(CSV_SOURCE[name]))
    det = seed.draw(_csv_edits(CSV_DETAILS[name]))
    _check_csv_profiles([_write(f"{name}.source.csv", src), _write(f"{name}.details.csv", det)])


def test_csv_fuzz_findings(tmp_path: Path) -> None:
    """What the CSV targets found (each a wrong value or a traceback before the fix)."""
    src = CSV_SOURCE["stencil"].decode()
    # a data row wider than its (cut) header: values would sit under the wrong column names
    det = CSV_DETAILS["stencil"].decode().replace('"Host Name","Kernel Name"', '"Host Name#,"Kernel Name"', 1)
    p_src, p_det = tmp_path / "s.source.csv", tmp_path / "s.details.csv"
    p_src.write_text(src)
    p_det.write_text(det)
    with pytest.raises(CsvError, match=r"s.details.csv: line \d+ has \d+ cells but the table's header"):
        load_csv_profiles([p_src, p_det])
    # a Source page table whose "Kernel Name" line is gone: a profile with no name
    p_det.write_text(CSV_DETAILS["stencil"].decode())
    p_src.write_text(src.replace('"Kernel Name"', "#Kernel Name", 1))
    with pytest.raises(CsvError, match='has no "Kernel Name" line above it'):
        load_csv_profiles([p_src, p_det])
    # a negative sample count (a negative profile) and 1e999 (OverflowError)
    lines = src.split("\n")
    i = next(k for k, t in enumerate(lines) if t.startswith('"0x'))
    cells = lines[i].split('","')
    cells[2], cells[30] = "-1", "1e999"  # the sample column; a stall-reason column
    lines[i] = '","'.join(cells)
    p_src.write_text("\n".join(lines))
    (k,) = load_csv_profiles([p_src, p_det])
    assert all(s.samples >= 0 for s in k.pcs.values())
