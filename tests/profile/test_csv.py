"""ncu CSV exports read into the same KernelProfile as the .ncu-rep reader (issue 12 item 1).

The examples hold ncu's own exports of their committed reports (examples/*/NAME.source.csv =
`ncu --import NAME.ncu-rep --page source --print-source sass --csv`, NAME.details.csv = `--page details --csv`,
ncu 2025.3.1 on the H200; bench/csv/gpu_export.sh makes more kinds). The variants below are derived from those
real files the way real exports differ: ==PROF== lines and program output before the header, quoted numbers
with grouping separators, a units row, older column labels in another order, n/a cells, CRLF endings.
"""

from __future__ import annotations

import csv
import functools
import io
from pathlib import Path
from typing import Any

import pytest
from warpwise.analysis.binary.load import load_binary
from warpwise.analysis.pipeline import analyze, discover
from warpwise.analysis.profile import csvfile
from warpwise.analysis.profile.csv_load import companions, lines_from_cubin, load_csv_profiles, name_from_cubin
from warpwise.analysis.profile.join import join
from warpwise.analysis.profile.ncu import UNATTRIBUTED, load_profiles

EX = Path(__file__).resolve().parents[2] / "examples"
NAMES = ["stencil", "gather", "intdiv", "noinline", "cdp"]
FIELDS = ["samples", "not_issued", "stalls", "stalls_not_issued", "inst_executed", "thread_inst_executed",
          "predicated_on_thread_inst_executed", "divergent_branches", "l2_sectors", "l2_sectors_ideal",
          "function", "offset", "file", "line"]


def _paths(name: str) -> tuple[Path, Path, Path, Path]:
    d = EX / name
    return d / f"{name}.ncu-rep", d / f"{name}.source.csv", d / f"{name}.details.csv", d / f"{name}.sm_90.cubin"


@functools.cache
def _report_lines(name: str) -> tuple[list[tuple[object, ...]], list[str], Any]:
    """The .ncu-rep analysis of an example (computed once per test session): lines, advice ids, launch."""
    rep, _src, _det, cub = _paths(name)
    a = analyze(rep, [cub], [rep.with_suffix(".cu")]).kernels[0]
    return ([(x.file, x.line, x.samples, x.latency_samples, x.stalls) for x in a.lines],
            [x.optimizer for x in a.advice], a.profile)


def _joined_pair(name: str, source: Path | None = None, details: Path | None = None) -> tuple[dict, dict]:
    rep, src, det, cub = _paths(name)
    cubins = load_binary(str(cub))
    a = load_profiles(rep)[0]
    join(a, cubins[0])
    b = load_csv_profiles([source or src, details or det])[0]
    c = name_from_cubin(b, cubins)
    assert c is not None and b.mangled == a.mangled
    join(b, c)
    lines_from_cubin(b, c)
    return {s.pc: s for s in a.pcs.values()}, {s.pc: s for s in b.pcs.values()}


@pytest.mark.parametrize("name", NAMES)
def test_per_pc_numbers_equal_the_report(name: str) -> None:
    rep, got = _joined_pair(name)
    compared = 0
    for pc, a in rep.items():
        if a.function == UNATTRIBUTED:
            assert pc not in got  # ncu's Source page lists only the module's functions
            continue
        b = got[pc]
        # lines come from the cubin's line table: ncu attributes some never-sampled PCs of inlined
        # device-runtime code (cdp: 33 PCs, 0 samples) to the call site, nvdisasm to the header line
        fields = FIELDS if a.samples else FIELDS[:-2]
        assert {f: getattr(b, f) for f in fields} == {f: getattr(a, f) for f in fields}, hex(pc)
        assert b.sass.split()[0] == a.sass.split()[0]
        compared += 1
    extra = [s for pc, s in got.items() if pc not in rep]
    assert all(s.samples == 0 and s.inst_executed == 0 for s in extra)  # listed, never executed
    assert compared == sum(1 for s in rep.values() if s.function != UNATTRIBUTED) > 30


@pytest.mark.parametrize("name", NAMES)
def test_per_line_numbers_and_launch_equal_the_report(name: str) -> None:
    rep, src, _det, cub = _paths(name)
    lines, advice, profile = _report_lines(name)
    b = analyze(src, [cub], [rep.with_suffix(".cu")]).kernels[0]  # details page found by its name
    assert [(x.file, x.line, x.samples, x.latency_samples, x.stalls) for x in b.lines] == lines
    la, lb = profile.launch, b.profile.launch
    assert (lb.grid, lb.block, lb.registers_per_thread, lb.shared_bytes_per_block, lb.sm_count, lb.occupancy_limit) \
        == (la.grid, la.block, la.registers_per_thread, la.shared_bytes_per_block, la.sm_count, la.occupancy_limit)
    # the Details page prints 2 decimals (3 significant digits for durations)
    assert lb.achieved_occupancy == pytest.approx(la.achieved_occupancy, abs=0.006)
    assert lb.waves_per_sm == pytest.approx(la.waves_per_sm, abs=0.006)
    assert lb.duration_ns == pytest.approx(la.duration_ns, rel=3e-3)
    # the SpeedOfLight throughputs (the advice's roofline caps) come through the Details page too
    assert set(lb.throughput_pct) == set(la.throughput_pct) and la.throughput_pct
    assert all(lb.throughput_pct[u] == pytest.approx(v, abs=0.006) for u, v in la.throughput_pct.items())
    assert b.profile.arch == profile.arch == "sm_90"
    assert [x.optimizer for x in b.advice][:2] == advice[:2]


def test_cdp_children_and_device_runtime_are_functions_of_the_parent_launch() -> None:
    profs = load_csv_profiles([EX / "cdp" / "cdp.source.csv", EX / "cdp" / "cdp.details.csv"])
    assert len(profs) == 1 and profs[0].name == "scale_all"
    assert {f for f, _ in profs[0].pcs} == {"scale_all", "scale_segment", "__cudaCDP2LaunchDeviceV2",
                                              "__cudaCDP2GetParameterBufferV2", "__cudaCDP2GetLastError"}


# ---- variants of the real exports --------------------------------------------------------------------


def _rows(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text())))


def _write(rows: list[list[str]], path: Path, before: str = "", newline: str = "\n") -> Path:
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator=newline)
    for r in rows:
        w.writerow(r)
    path.write_text(before + buf.getvalue(), newline="")
    return path


def _grouped(cell: str) -> str:
    try:
        return f"{int(cell):,}"
    except ValueError:
        return cell


def test_prof_lines_separators_units_row_and_crlf(tmp_path: Path) -> None:
    src = EX / "stencil" / "stencil.source.csv"
    rows = _rows(src)
    head = 1  # row 0 is the "Kernel Name" title, row 1 the header
    out = [rows[0], rows[head], ["", "", *(["sample"] * 2), *([""] * (len(rows[head]) - 4))]]
    out += [[_grouped(c) for c in r] for r in rows[head + 1:]]
    assert any("," in c for r in out[3:] for c in r)  # e.g. inst_executed "1,048,576"
    before = ("==PROF== Connected to process 4242 (/work/stencil)\n==WARNING== Backing up device memory\n"
              "stencil: max |err| = 0 -> PASS\n==PROF== Disconnected from process 4242\n")
    variant = _write(out, tmp_path / "x.source.csv", before=before, newline="\r\n")
    export = csvfile.read(variant)
    assert export.tables[0].units is not None and export.tables[0].units[2] == "sample"
    assert [n for n, _ in export.skipped] == [1, 2, 3, 4]
    assert export.warnings() == ["==WARNING== Backing up device memory"]
    rep, got = _joined_pair("stencil", source=variant)
    for pc, a in rep.items():
        assert (got[pc].samples, got[pc].stalls, got[pc].inst_executed) == (a.samples, a.stalls, a.inst_executed)
    p = load_csv_profiles([variant])[0]
    assert any("4 line(s)" in n and "Backing up device memory" in n for n in p.notes)


def test_columns_by_name_older_labels_other_order_and_na(tmp_path: Path) -> None:
    rows = _rows(EX / "gather" / "gather.source.csv")
    header = rows[1]
    rename = {"Warp Stall Sampling (All Samples)": "Sampling Data (All)",
              "Warp Stall Sampling (Not-issued Samples)": "Sampling Data (Not Issued)"}
    order = list(reversed(range(len(header))))
    out = [rows[0], [rename.get(header[i], header[i]) for i in order]]
    li = header.index("L2 Theoretical Sectors Global")
    for r in rows[2:]:
        r = list(r)
        r[li] = "n/a"
        out.append([r[i] for i in order])
    variant = _write(out, tmp_path / "g.source.csv")
    rep, got = _joined_pair("gather", source=variant)
    for pc, a in rep.items():
        assert (got[pc].samples, got[pc].not_issued, got[pc].stalls_not_issued) == (
            a.samples, a.not_issued, a.stalls_not_issued)
        assert got[pc].l2_sectors == 0  # n/a is missing, counted as no sectors (as ncu's own totals do)


def test_numbers() -> None:
    assert csvfile.number('213,515') == 213515
    assert csvfile.number("441,726.92") == pytest.approx(441726.92)
    assert csvfile.number("n/a") is None and csvfile.number("-") is None and csvfile.number("") is None
    assert csvfile.number("PolicySpread") is None and csvfile.number("(128, 2, 1)") is None
    assert csvfile.to_base(32.77, "Kbyte") == pytest.approx(32770)
    assert csvfile.to_base(1.68, "ms") == pytest.approx(1.68e6) and csvfile.to_base(225.34, "usecond") == 225340


def test_csv_only_analysis_says_what_it_cannot_do(tmp_path: Path) -> None:
    src = tmp_path / "stencil.source.csv"
    src.write_bytes((EX / "stencil" / "stencil.source.csv").read_bytes())
    ka = analyze(src, [], [EX / "stencil" / "stencil.cu"]).kernels[0]
    assert ka.cubin is None and ka.lines == [] and ka.advice == []
    text = " ".join(ka.notes)
    assert "no Details/Raw page" in text and "no source lines" in text and "blame and advice need the binary" in text
    assert ka.profile.total_samples == 28464  # the samples are all there

    det = tmp_path / "only.details.csv"
    det.write_bytes((EX / "stencil" / "stencil.details.csv").read_bytes())
    ka = analyze(det, [EX / "stencil" / "stencil.sm_90.cubin"], []).kernels[0]
    assert ka.profile.launch.registers_per_thread == 24 and ka.profile.pcs == {}
    assert any("launch facts only" in n for n in ka.notes)


def test_discovery_prefers_the_report_and_pairs_pages(tmp_path: Path) -> None:
    for suffix in (".source.csv", ".details.csv", ".sm_90.cubin", ".cu"):
        (tmp_path / f"stencil{suffix}").write_bytes((EX / "stencil" / f"stencil{suffix}").read_bytes())
    profiles, binaries = discover([tmp_path / "stencil.cu"])
    assert profiles == [tmp_path / "stencil.source.csv"] and binaries == [tmp_path / "stencil.sm_90.cubin"]
    assert companions(tmp_path / "stencil.source.csv") == [tmp_path / "stencil.details.csv"]
    (tmp_path / "stencil.ncu-rep").write_bytes((EX / "stencil" / "stencil.ncu-rep").read_bytes())
    assert discover([tmp_path / "stencil.cu"])[0] == [tmp_path / "stencil.ncu-rep"]


def test_not_a_csv_export(tmp_path: Path) -> None:
    bad = tmp_path / "x.csv"
    bad.write_text("hello\nworld\n")
    with pytest.raises(csvfile.CsvError, match="no CSV table"):
        load_csv_profiles([bad])
    with pytest.raises(csvfile.CsvError, match="no such CSV file"):
        load_csv_profiles([tmp_path / "missing.csv"])


# ---- more export kinds, made on the H200 from the same reports (tests/profile/csv_exports/README.md) -------

GPU = Path(__file__).resolve().parent / "csv_exports"
KINDS = {
    "cuda_sass+raw": ("source.cuda_sass", "raw"),  # lines straight from ncu, no cubin needed for them
    "mangled": ("source.sass.mangled", "details.mangled"),  # --print-kernel-base mangled
}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_other_export_kinds_give_the_reports_lines(name: str, kind: str) -> None:
    rep, _src, _det, cub = _paths(name)
    lines, _advice, profile = _report_lines(name)
    src, page = (GPU / f"{name}.{k}.csv" for k in KINDS[kind])
    b = analyze(src, [cub], [rep.with_suffix(".cu")], pages=[page]).kernels[0]
    assert b.profile.mangled == profile.mangled and b.cubin is not None
    assert [(x.file, x.line, x.samples, x.latency_samples, x.stalls) for x in b.lines] == lines


@pytest.mark.parametrize("name", NAMES)
def test_cuda_sass_view_has_ncus_line_for_every_pc_without_a_cubin(name: str) -> None:
    rep_pcs = {s.pc: s for s in load_profiles(_paths(name)[0])[0].pcs.values()}
    (b,) = load_csv_profiles([GPU / f"{name}.source.cuda_sass.csv", GPU / f"{name}.raw.csv"])
    lined = [s for s in b.pcs.values() if s.line is not None]
    assert len(lined) > 20
    differ = 0
    for s in lined:
        a = rep_pcs.get(s.pc)
        if a is None:  # listed but never executed nor sampled (the report keeps no value for it)
            assert s.samples == 0 and s.inst_executed == 0
            continue
        if not a.samples and (s.file, s.line) != (a.file, a.line):
            # ncu itself places some never-sampled PCs of inlined device-runtime code (cdp) at the header line
            # in this view and at the call site in its report API (source_info)
            differ += 1
            continue
        assert (s.file, s.line, s.samples, s.stalls, s.inst_executed) == (a.file, a.line, a.samples, a.stalls,
                                                                          a.inst_executed)
    assert differ == {"cdp": 18}.get(name, 0)


@pytest.mark.parametrize("name", NAMES)
def _same_launch(a: Any, b: Any) -> None:
    """Launch facts equal; the Raw page prints occupancy with 6 decimals and waves with 2."""
    assert (b.grid, b.block, b.registers_per_thread, b.shared_bytes_per_block, b.sm_count, b.occupancy_limit,
            b.duration_ns, b.theoretical_occupancy) == (a.grid, a.block, a.registers_per_thread,
                                                       a.shared_bytes_per_block, a.sm_count, a.occupancy_limit,
                                                       a.duration_ns, a.theoretical_occupancy)
    assert b.achieved_occupancy == pytest.approx(a.achieved_occupancy, abs=1e-6)
    assert b.achieved_warps_per_sm == pytest.approx(a.achieved_warps_per_sm, abs=1e-6)
    assert b.waves_per_sm == pytest.approx(a.waves_per_sm, abs=0.006)


@pytest.mark.parametrize("name", NAMES)
def test_raw_page_gives_the_reports_launch_facts(name: str) -> None:
    a = load_profiles(_paths(name)[0])[0].launch
    b = load_csv_profiles([_paths(name)[1], GPU / f"{name}.raw.csv"])[0].launch
    _same_launch(a, b)  # duration exact here (the Details page rounds it to 3 digits)


def test_raw_page_with_instance_values() -> None:
    a = load_profiles(_paths("stencil")[0])[0].launch
    b = load_csv_profiles([_paths("stencil")[1], GPU / "stencil.raw.instances.csv"])[0].launch
    _same_launch(a, b)  # "2,309 (32; 32; ...)" cells read as their totals


def test_live_export_with_prof_lines_and_program_output() -> None:
    export = csvfile.read(GPU / "live.stencil.source.csv")
    assert [t for _, t in export.skipped][:2] == [
        "==WARNING== Note: Running with unmodified GPU clocks. If not controlled otherwise, profiling results may be "
        "inconsistent.", export.skipped[1][1]]
    assert export.skipped[1][1].startswith("==PROF== Connected to process")
    assert any(t == "stencil: max |err| = 0 -> PASS" for _, t in export.skipped)
    (p,) = load_csv_profiles([GPU / "live.stencil.source.csv", GPU / "live.stencil.details.csv"])
    assert p.name == "blur_rows" and p.total_samples > 1000 and p.launch.block == (128, 2, 1)
    assert any("8 line(s)" in n and "unmodified GPU clocks" in n for n in p.notes)  # 4 in each file


def test_cuda_view_without_counters_is_a_clear_error() -> None:
    with pytest.raises(csvfile.CsvError, match="only source text, no samples"):
        load_csv_profiles([GPU / "stencil.source.cuda.csv"])


@pytest.mark.parametrize("kind", ["source", "details"])
def test_an_export_cut_in_the_middle_of_a_row_is_refused(tmp_path: Path, kind: str) -> None:
    # A source page cut at 8,000 bytes read as 900 of 28,464 samples and changed the first advice; a details
    # page cut at 5,000 bytes read as 0 registers and 0 SMs (fresh-user find). ncu ends every export with a
    # newline: a last row short of its header without one is a cut file.
    full = (EX / "stencil" / f"stencil.{kind}.csv").read_text()
    cut = tmp_path / f"cut.{kind}.csv"
    cut.write_text(full[:8000 if kind == "source" else 5000])
    with pytest.raises(csvfile.CsvError, match=r"ends in the middle of line \d+.*cut"):
        csvfile.read(cut)
    # the whole export, and one whose last row is complete but has no final newline, still read
    assert csvfile.read(EX / "stencil" / f"stencil.{kind}.csv").tables
    whole = tmp_path / f"whole.{kind}.csv"
    whole.write_text(full.rstrip("\n"))
    assert csvfile.read(whole).tables


def test_discovery_looks_one_level_down_only_for_what_the_folder_lacks(tmp_path: Path) -> None:
    # fresh-user find: with stencil.{ncu-rep,cubin} beside the source and old copies in old/, both reports were
    # analysed and old/'s was paired with the top-level cubin; a folder's own report and cubin win now, and a
    # subfolder is searched for the kind the folder lacks (a build/ holding the cubin)
    rep, _src, _det, cub = _paths("stencil")
    (tmp_path / "old").mkdir()
    for f in (rep, cub):
        (tmp_path / f.name).write_bytes(f.read_bytes())
        (tmp_path / "old" / f.name).write_bytes(f.read_bytes())
    profiles, binaries = discover([tmp_path / "stencil.cu"])
    assert profiles == [tmp_path / rep.name] and binaries == [tmp_path / cub.name]
    (tmp_path / cub.name).unlink()
    profiles, binaries = discover([tmp_path / "stencil.cu"])
    assert profiles == [tmp_path / rep.name] and binaries == [tmp_path / "old" / cub.name]


def test_a_found_cubin_without_the_kernel_is_named_in_the_note() -> None:
    # fresh-user find: gather's cubin beside stencil's report read "no cubin for blur_rows (sm_90) was found"
    rep = EX / "stencil" / "stencil.ncu-rep"
    a = analyze(rep, [EX / "gather" / "gather.sm_90.cubin"], [EX / "stencil" / "stencil.cu"]).kernels[0]
    assert a.advice_report is None
    assert any("none of the 1 cubin given or found (gather.sm_90.cubin) holds blur_rows (sm_90)" in n
               for n in a.notes), a.notes
