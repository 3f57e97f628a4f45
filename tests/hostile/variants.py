"""Byte variants of the example sources (CRLF, mixed endings, BOM, tabs, non-ASCII text, a Latin-1 (not
UTF-8) comment, trailing white space and no final newline, a `\\`-continued macro) and the edits every
rewrite and quick fix makes on them — shared by the property tests and by
bench/hostile/compile_variants.py, which compiles each rewritten variant with nvcc."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
DP_SOURCES = sorted((ROOT / "examples/dp").glob("*/*.cu"))
SOURCES = sorted(p for p in (ROOT / "examples").glob("*/*.cu"))
TRANSFORMS = ("threshold", "coarsen", "aggregate")
MACRO = "#define WW_TEST_TWICE(x) \\\n  ((x) + (x))\n"
NON_ASCII = "// différent: température ✓ — 変数\n"
#: A comment a CUDA engineer's Latin-1 editor wrote: the file is then not UTF-8 (every char here is in ISO-8859-1).
LATIN1 = "// température de référence: 25 °C, ½ pas, Müller\n"


@dataclass(frozen=True)
class Variant:
    """How a source's bytes are varied: line endings ``lf``/``crlf``/``mixed`` (every other line CRLF),
    a UTF-8 BOM, leading spaces as tabs, a non-ASCII comment line, a continued macro after the includes,
    ``latin1``: a Latin-1 comment line there and the file written in ISO-8859-1 (so not UTF-8; not with
    ``bom`` or ``non_ascii``), ``trail``: two trailing spaces on every line that does not end in ``\\``
    and no line ending after the last line."""

    eol: str = "lf"
    bom: bool = False
    tabs: bool = False
    non_ascii: bool = False
    macro: bool = False
    latin1: bool = False
    trail: bool = False

    def __post_init__(self) -> None:
        assert not (self.latin1 and (self.bom or self.non_ascii)), "a Latin-1 file has no UTF-8 BOM or text"

    def name(self) -> str:
        """Short name for file names: ``crlf-bom-tabs``."""
        parts = [self.eol] + [n for n in ("bom", "tabs", "non_ascii", "macro", "latin1", "trail") if getattr(self, n)]
        return "-".join(parts)

    def extras(self) -> list[str]:
        """The lines this variant inserts after the includes, in order."""
        return [t for t, on in ((NON_ASCII, self.non_ascii), (LATIN1, self.latin1), (MACRO, self.macro)) if on]


def _after_includes(text: str) -> int:
    incs = list(re.finditer(r"^[ \t]*#[ \t]*include[^\n]*\n", text, re.M))
    return incs[-1].end() if incs else 0


def base_text(text: str, v: Variant) -> str:
    """The committed LF ``text`` a variant starts from: for ``latin1`` its characters outside ISO-8859-1
    (the examples' UTF-8 dashes and arrows) in ASCII, as a Latin-1 file would hold them; else ``text``.
    Compare a variant's result with the result on this text."""
    if not v.latin1:
        return text
    from warpwise.analysis.encoding import SourceText

    return SourceText("", "latin-1").encode(text).decode("latin-1")


def apply_variant(text: str, v: Variant) -> str:
    """``text`` (LF, as committed) varied by ``v`` (starting from :func:`base_text`)."""
    text = base_text(text, v)
    if v.tabs:
        text = re.sub(r"^((?:  )+)", lambda m: "\t" * (len(m.group(1)) // 2), text, flags=re.M)
    at = _after_includes(text)
    text = text[:at] + "".join(v.extras()) + text[at:]
    if v.trail:
        text = re.sub(r"(?<=[^\\\n])$", "  ", text.removesuffix("\n"), flags=re.M)
    if v.eol == "crlf":
        text = text.replace("\n", "\r\n")
    elif v.eol == "mixed":
        lines = text.split("\n")
        text = "".join(ln + ("\r\n" if i % 2 else "\n") for i, ln in enumerate(lines[:-1])) + lines[-1]
    return ("\ufeff" if v.bom else "") + text


def variant_bytes(text: str, v: Variant) -> bytes:
    """The bytes of variant text ``text`` as the file holds them: ISO-8859-1 for ``latin1``, else UTF-8."""
    return text.encode("latin-1" if v.latin1 else "utf-8")


def variant_text(text: str, v: Variant) -> str:
    """Variant text ``text`` as the rewrite CLI decodes its file (analysis/encoding.py)."""
    from warpwise.analysis.encoding import decode_source

    st = decode_source(variant_bytes(text, v), "variant.cu")
    assert st.encoding == ("latin-1" if v.latin1 else "utf-8") and st.text == text
    return st.text


def normalize(text: str, v: Variant) -> str:
    """Undo ``v``'s line endings, BOM and trailing spaces (for comparing a variant's result with the LF
    original's)."""
    text = text.removeprefix("\ufeff") if v.bom else text
    text = text.replace("\r\n", "\n")
    return re.sub(r" +$", "", text, flags=re.M) if v.trail else text


def launch_lines(text: str) -> list[int]:
    """1-based lines of device-side launches in a DP example (inside __global__ functions)."""
    out, in_kernel = [], False
    for i, line in enumerate(text.split("\n"), 1):
        if line.startswith("__global__"):
            in_kernel = True
        elif line.startswith("int main") or line.startswith("static void") or line.startswith("void "):
            in_kernel = False
        if in_kernel and "<<<" in line and not line.lstrip().startswith("//"):
            out.append(i)
    return out


def rewrite_jobs() -> Iterator[tuple[Path, str, int]]:
    """(DP example, transform, device-side launch line) for every DP rewrite the examples offer."""
    for p in DP_SOURCES:
        for line in launch_lines(p.read_text()):
            for t in TRANSFORMS:
                yield p, t, line


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line holding ``needle`` in the LF text."""
    return next(i for i, t in enumerate(text.split("\n"), 1) if needle in t)


def shift_line(line: int, v: Variant, original: str) -> int:
    """``line`` of the LF original as a line of the variant (inserted lines come after the includes)."""
    at_line = original[: _after_includes(original)].count("\n") + 1
    extra = sum(t.count("\n") for t in v.extras())
    return line + extra if line >= at_line else line


EditsFn = Callable[[str, str, Variant], list[Any]]


def quickfix_jobs() -> Iterator[tuple[Path, str, EditsFn]]:
    """(example, fix name, function giving the fix's edits for a variant's text) for every quick fix the
    examples offer: float literals, #pragma unroll on each loop, __forceinline__ on each device
    function, and the tuned-launch rewrite on each host launch."""
    from warpwise.analysis.advice.quickfix import float_literal_fixes, forceinline_fix, unroll_fix
    from warpwise.analysis.schedule.use_tuned import find_launches, use_tuned_edits

    for p in SOURCES:
        text = p.read_text()

        def floats(t: str, path: str, v: Variant) -> list[Any]:
            return [e for f in float_literal_fixes(t, path) for e in f.edits]

        yield p, "float_literal", floats
        for i, ln in enumerate(text.split("\n"), 1):
            if re.match(r"\s*(for|while)\s*\(", ln):
                def unroll(t: str, path: str, v: Variant, _i: int = i, _orig: str = text) -> list[Any]:
                    f = unroll_fix(t, path, shift_line(_i, v, _orig))
                    return list(f.edits) if f else []

                yield p, f"unroll:{i}", unroll
        for m in re.finditer(r"__device__[^(]*?\b(\w+)\s*\(", text):
            def inline(t: str, path: str, v: Variant, _n: str = m.group(1)) -> list[Any]:
                f = forceinline_fix(t, path, _n)
                return list(f.edits) if f else []

            yield p, f"forceinline:{m.group(1)}", inline
        kernels = sorted(set(re.findall(r"__global__\s+void\s+(\w+)", text)))
        for k in kernels:
            if "main" in text and find_launches(text, k):
                def tuned(t: str, path: str, v: Variant, _k: str = k) -> list[Any]:
                    return use_tuned_edits(t, f"_Z{len(_k)}{_k}v", "/abs/path/k.tuned.cubin")

                yield p, f"use_tuned:{k}", tuned


def apply_byte_edits(text: str, edits: list[Any]) -> str:
    """``text`` with edits on UTF-8 byte offsets applied (``start``/``end``/``new_text``); inserts at one
    position land in list order, as LSP and rewrite.apply_edits apply them."""
    data = text.encode("utf-8")
    order = sorted(range(len(edits)), key=lambda i: (edits[i].start, edits[i].end, i), reverse=True)
    for i in order:
        e = edits[i]
        data = data[: e.start] + e.new_text.encode("utf-8") + data[e.end :]
    return data.decode("utf-8")


def check_edits(original: str, variant: str, v: Variant, edits: list[Any], lf_result: str) -> str:
    """Assert what every edit of a variant must keep; returns the rewritten variant.

    - outside the edited byte ranges the bytes are the variant's own (gaps compared one by one);
    - inserted text uses the line ending of its place: a CRLF file gets no bare LF, an LF file no CR (in a
      mixed file, code copied from the file keeps its own endings);
    - the BOM stays the file's first character; the continued macro stays intact and whole;
    - with line endings and BOM undone, the result is the LF original's result with the variant's
      extra lines (so no edit moved into the macro, a comment, or another place).
    """
    data = variant.encode("utf-8")
    out = apply_byte_edits(variant, edits)
    pos = 0
    rebuilt: list[bytes] = []
    for e in sorted(edits, key=lambda e: (e.start, e.end)):  # stable: same-position inserts keep list order
        assert 0 <= pos <= e.start <= e.end <= len(data), "edits overlap or leave the file"
        rebuilt.append(data[pos : e.start])
        rebuilt.append(e.new_text.encode("utf-8"))
        pos = e.end
    rebuilt.append(data[pos:])
    assert b"".join(rebuilt) == out.encode("utf-8")
    for e in edits:
        if v.eol == "crlf":
            assert "\n" not in e.new_text.replace("\r\n", ""), f"bare LF inserted into a CRLF file: {e.new_text!r}"
        if v.eol == "lf":
            assert "\r" not in e.new_text
    if v.bom:
        assert out.startswith("\ufeff") and out.count("\ufeff") == 1
    if v.macro:
        eol = "\r\n" if v.eol == "crlf" else None
        macro = MACRO.replace("))\n", "))  \n") if v.trail else MACRO
        if eol:
            assert macro.replace("\n", eol) in out, "the continued macro was split"
        assert "WW_TEST_TWICE(x) \\" in out
    if not v.tabs:
        got = normalize(out, v)
        for extra in v.extras():
            assert got.count(extra) == 1
            got = got.replace(extra, "", 1)
        if v.trail:  # no line ending after the last line: compare without it (and without trailing spaces)
            got, lf_result = got.rstrip("\n"), re.sub(r" +$", "", lf_result, flags=re.M).rstrip("\n")
        assert got == lf_result
    return out
