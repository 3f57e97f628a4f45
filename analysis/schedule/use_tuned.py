"""Source rewrite: launch a kernel from its tuned cubin behind ``#ifdef WARPWISE_TUNED``.

A launch ``k<<<g, b, s, st>>>(args);`` becomes::

    #ifdef WARPWISE_TUNED
      if (warpwise_tuned::launch(k, "out/k.tuned.cubin", "_Z1kPfi", g, b, s, st, args) != CUDA_SUCCESS)
    #endif
      k<<<g, b, s, st>>>(args);

so a build without the macro compiles exactly the original statement, and a build with it
(``nvcc -DWARPWISE_TUNED ... -lcuda``) loads the tuned cubin once (cuModuleLoad/cuModuleGetFunction,
cached), converts the arguments to the kernel's own parameter types (deduced from ``k``'s type, as the
``<<<>>>`` launch would), and launches it with cuLaunchKernel; every driver call is checked, and if
the tuned cubin cannot be used (missing file, other GPU architecture, ...) the helper prints why and
the original launch runs instead. A small helper header block is inserted once after the last
``#include``, also inside ``#ifdef WARPWISE_TUNED``.

The rewrite is idempotent: a launch already preceded by a warpwise guard (:func:`existing_guard`) gets
that guard replaced (new cubin path, current launch arguments), never a second one; a guard that is
already up to date is refused with the reason. cuModuleLoad resolves a relative cubin path against the
program's working directory at run time (not the source file's folder), so the editor writes an
absolute path.

Launch sites are found by a scanner that skips comments, string and character literals and matches
``name<<<...>>>(...)`` with balanced brackets (template arguments after the name are allowed).
Edits are returned, never applied (DESIGN.md: rewrites return text edits); offsets are UTF-8 bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from warpwise.analysis.eol import eol_at, with_eol

HELPER_MARK = "warpwise_tuned::launch"

HELPER = r"""
#ifdef WARPWISE_TUNED
// warpwise: launch kernels from schedule-tuned cubins (see docs/tuning.md). Link with -lcuda.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
namespace warpwise_tuned {
inline CUresult check(CUresult r, const char* what, const char* cubin) {
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    cuGetErrorName(r, &name);
    std::fprintf(stderr, "warpwise tuned kernel: %s failed for %s: %s; using the original build\n", what, cubin,
                 name ? name : "unknown error");
  }
  return r;
}
inline CUresult function(const char* cubin, const char* mangled, CUfunction* out) {
  static std::mutex mu;
  static std::unordered_map<std::string, CUfunction> cache;
  std::lock_guard<std::mutex> lock(mu);
  std::string key = std::string(cubin) + "\n" + mangled;
  auto it = cache.find(key);
  if (it != cache.end()) { *out = it->second; return it->second ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND; }
  cudaFree(nullptr);  // make the runtime's primary context current on this thread
  CUmodule mod = nullptr;
  CUresult r = check(cuModuleLoad(&mod, cubin), "cuModuleLoad", cubin);
  if (r == CUDA_SUCCESS) r = check(cuModuleGetFunction(out, mod, mangled), "cuModuleGetFunction", cubin);
  cache[key] = r == CUDA_SUCCESS ? *out : nullptr;
  return r;
}
template <typename... P, typename... A>
CUresult launch(void (*)(P...), const char* cubin, const char* mangled, dim3 grid, dim3 block,
                unsigned shared, cudaStream_t stream, A&&... args) {
  CUfunction f = nullptr;
  CUresult r = function(cubin, mangled, &f);
  if (r != CUDA_SUCCESS) return r;
  std::tuple<typename std::decay<P>::type...> params(std::forward<A>(args)...);  // the kernel's own types
  return std::apply([&](auto&... p) {
    void* ptrs[] = {static_cast<void*>(&p)..., nullptr};
    return check(cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared,
                                reinterpret_cast<CUstream>(stream), ptrs, nullptr), "cuLaunchKernel", cubin);
  }, params);
}
template <typename... P, typename... A>
CUresult launch(void (*k)(P...), const char* cubin, const char* mangled, dim3 grid, dim3 block, A&&... args) {
  return launch(k, cubin, mangled, grid, block, 0u, cudaStream_t(0), std::forward<A>(args)...);
}
}  // namespace warpwise_tuned
#endif  // WARPWISE_TUNED
"""


class UseTunedError(ValueError):
    """No launch of the kernel was found (or not on the requested line), the launch is part of a larger
    statement, or it already loads the requested cubin."""


@dataclass(frozen=True)
class TextEdit:
    """Replace UTF-8 bytes ``[start, end)`` of the file with ``new_text`` (insert when start == end)."""

    start: int
    end: int
    new_text: str


@dataclass(frozen=True)
class Launch:
    """A ``<<<>>>`` launch: byte range of the whole expression, 1-based line, config and call arguments."""

    start: int
    end: int
    line: int
    name: str
    config: list[str]
    args: list[str]


@dataclass(frozen=True)
class Guard:
    """A warpwise guard written before a launch by :func:`use_tuned_edits`: UTF-8 byte range
    ``[start, end)`` of its three lines (``#ifdef WARPWISE_TUNED``, ``if (warpwise_tuned::launch(...))``,
    ``#endif``), the cubin path and the mangled kernel name it loads."""

    start: int
    end: int
    cubin: str
    mangled: str


def source_name(mangled: str) -> str:
    """The unqualified function name in an Itanium-mangled name (``_Z9blur_rowsPKfPfii`` → ``blur_rows``;
    ``_ZN2ns1kEv`` → ``k``); names that are not mangled are returned unchanged."""
    if not mangled.startswith("_Z"):
        return mangled
    s = mangled[2:]
    nested = s.startswith("N")
    if nested:
        s = s[1:]
    last = mangled
    while s and s[0].isdigit():
        m = re.match(r"\d+", s)
        assert m is not None
        n = int(m.group())
        last, s = s[m.end() : m.end() + n], s[m.end() + n :]
        if not nested:
            break
    return last


def _mask(src: str) -> str:
    """``src`` with comments and string/char literals blanked (same length)."""
    out = list(src)
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            j += 1
        else:
            i += 1
            continue
        for k in range(i, min(j, n)):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def _split_top(s: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _close(masked: str, i: int, open_: str, close: str) -> int:
    """Index just past the bracket matching the one at ``i``."""
    depth = 0
    for j in range(i, len(masked)):
        if masked[j] == open_:
            depth += 1
        elif masked[j] == close:
            depth -= 1
            if depth == 0:
                return j + 1
    raise UseTunedError("unbalanced brackets")


def find_launches(src: str, kernel: str) -> list[Launch]:
    """Every ``kernel[<template args>]<<<...>>>(...)`` launch in ``src`` (``kernel``: source name)."""
    masked = _mask(src)
    out = []
    for m in re.finditer(r"\b" + re.escape(kernel) + r"\b", masked):
        j = m.end()
        while j < len(masked) and masked[j].isspace():
            j += 1
        if masked.startswith("<", j) and not masked.startswith("<<<", j):
            depth = 0
            for k in range(j, len(masked)):
                depth += masked[k] == "<"
                depth -= masked[k] == ">"
                if depth == 0:
                    j = k + 1
                    break
            while j < len(masked) and masked[j].isspace():
                j += 1
        if not masked.startswith("<<<", j):
            continue
        end_cfg = masked.find(">>>", j + 3)
        if end_cfg < 0:
            continue
        k = end_cfg + 3
        while k < len(masked) and masked[k].isspace():
            k += 1
        if k >= len(masked) or masked[k] != "(":
            continue
        end = _close(masked, k, "(", ")")
        name = src[m.start() : j].strip()
        out.append(
            Launch(
                start=len(src[: m.start()].encode()),
                end=len(src[:end].encode()),
                line=src.count("\n", 0, m.start()) + 1,
                name=name,
                config=_split_top(src[j + 3 : end_cfg]),
                args=_split_top(src[k + 1 : end - 1]),
            )
        )
    return out


def c_string(s: str) -> str:
    """``s`` as a C/C++ string literal: ``\\`` and ``"`` escaped, ``?`` escaped (no trigraphs), bytes
    outside printable ASCII as 3-digit octal escapes of their UTF-8 encoding (octal, not ``\\x``: a hex
    escape would swallow a following hex digit; C++17 [lex.ccon]).

    Raises:
        UseTunedError: ``s`` holds a control character (newline, carriage return, tab, NUL ...): a path or
            name with one is refused, never written into a source (issue 13: a newline closed
            ``#ifdef WARPWISE_TUNED`` early).
    """
    bad = next((ch for ch in s if ord(ch) < 0x20 or ord(ch) == 0x7F or 0x80 <= ord(ch) < 0xA0), None)
    if bad is not None:
        raise UseTunedError(f"{s!r} holds the control character {bad!r}; refusing to write it into a source")
    out = []
    for b in s.encode("utf-8"):
        ch = chr(b)
        if ch in '\\"?':
            out.append("\\" + ch)
        elif 0x20 <= b < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def c_unescape(body: str) -> str:
    """The text of a C string literal's body written by :func:`c_string` (simple and octal escapes)."""
    data = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            m = re.match(r"[0-7]{1,3}", body[i + 1 : i + 4])
            if m:
                data.append(int(m.group(0), 8) & 0xFF)
                i += 1 + len(m.group(0))
                continue
            data.extend(body[i + 1].encode("utf-8"))
            i += 2
            continue
        data.extend(ch.encode("utf-8"))
        i += 1
    return data.decode("utf-8", errors="replace")


_IFDEF = re.compile(r"[ \t]*#[ \t]*ifdef[ \t]+WARPWISE_TUNED\b[^\n]*\n")
_ENDIF = re.compile(r"[ \t]*#[ \t]*endif\b[^\n]*\n")
_CALL = re.compile(r"[ \t]*if[ \t]*\([ \t]*" + re.escape(HELPER_MARK) + r"[ \t]*\([^\n]*\n")
_C_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def existing_guard(src: str, launch: Launch) -> Guard | None:
    """The warpwise guard directly above ``launch`` (the three lines :func:`use_tuned_edits` writes),
    or None."""
    data = src.encode()
    starts = [data.rfind(b"\n", 0, launch.start) + 1]  # the launch's line, then the three above it
    for _ in range(3):
        if starts[-1] == 0:
            return None
        starts.append(data.rfind(b"\n", 0, starts[-1] - 1) + 1)
    ifdef, call, endif = (data[a:b].decode() for a, b in zip(starts[3:0:-1], starts[2::-1], strict=True))
    if not (_IFDEF.fullmatch(ifdef) and _CALL.fullmatch(call) and _ENDIF.fullmatch(endif)):
        return None
    strings = [c_unescape(m.group(1)) for m in _C_STRING.finditer(call)]
    if len(strings) < 2:
        return None
    return Guard(starts[3], starts[0], strings[0], strings[1])


def use_tuned_edits(src: str, mangled: str, cubin_path: str, line: int | None = None) -> list[TextEdit]:
    """Edits that make the launches of kernel ``mangled`` in ``src`` use ``cubin_path`` under
    ``WARPWISE_TUNED`` (only the launch on 1-based ``line`` if given). The cubin path is written as
    given: cuModuleLoad opens a relative path from the program's working directory at run time, so
    pass an absolute path unless the program always runs from one folder. A launch that already has a
    warpwise guard gets it replaced (see :func:`existing_guard`), not a second one.

    Raises:
        UseTunedError: no launch of that kernel (on that line), a launch inside a larger statement, or
            every launch already loads ``cubin_path`` with its current arguments.
    """
    kernel = source_name(mangled)
    launches = [x for x in find_launches(src, kernel) if line is None or x.line == line]
    if not launches:
        where = f" on line {line}" if line else ""
        raise UseTunedError(f"no <<<>>> launch of {kernel}{where}")
    edits: list[TextEdit] = []
    up_to_date: list[Launch] = []
    data = src.encode()
    masked = _mask(src)
    for x in launches:
        if len(x.config) < 2:
            raise UseTunedError(f"line {x.line}: launch configuration needs grid and block")
        cfg = [*x.config, "0", "0"][:4]
        call_args = ", ".join(
            [
                x.name,
                c_string(cubin_path),
                c_string(mangled),
                cfg[0],
                cfg[1],
                f"static_cast<unsigned>({cfg[2]})",
                f"(cudaStream_t)({cfg[3]})",
                *x.args,
            ]
        )
        line_start = data.rfind(b"\n", 0, x.start) + 1
        after = masked[len(data[: x.end].decode()) :].lstrip()
        if data[line_start : x.start].strip() or not after.startswith(";"):
            raise UseTunedError(
                f"line {x.line}: the launch of {kernel} is part of a larger statement; put `{x.name}<<<...>>>(...);` "
                "on a line of its own first"
            )
        indent = data[line_start : x.start].decode()
        new = f"#ifdef WARPWISE_TUNED\n{indent}if ({HELPER_MARK}({call_args}) != CUDA_SUCCESS)\n#endif\n"
        new = with_eol(new, eol_at(data, line_start))  # a CRLF file stays CRLF
        guard = existing_guard(src, x)
        if guard is None:
            edits.append(TextEdit(line_start, line_start, new))
        elif data[guard.start : guard.end].decode() != new:
            edits.append(TextEdit(guard.start, guard.end, new))
        else:
            up_to_date.append(x)
    helper_missing = "namespace warpwise_tuned" not in src
    if not edits and not helper_missing:
        lines = ", ".join(str(x.line) for x in up_to_date)
        raise UseTunedError(f"line {lines}: the launch of {kernel} already loads {cubin_path} under WARPWISE_TUNED")
    if helper_missing:
        incs = list(re.finditer(r"^[ \t]*#[ \t]*include[^\n]*\n", _mask(src), re.M))
        at = incs[-1].end() if incs else 0
        at_b = len(src[:at].encode())
        edits.insert(0, TextEdit(at_b, at_b, with_eol(HELPER.lstrip("\n"), eol_at(data, max(at_b - 1, 0)))))
    return edits


def apply_edits(src: str, edits: list[TextEdit]) -> str:
    """``src`` with ``edits`` applied (for tests and the CLI; the editor applies them itself)."""
    data = src.encode()
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        data = data[: e.start] + e.new_text.encode() + data[e.end :]
    return data.decode()
