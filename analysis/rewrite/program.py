"""Whole-program host facts for the dynamic-parallelism diagnostics: device-runtime limits set on the
host (``cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount | cudaLimitDevRuntimeSyncDepth, N)``)
and the host launch configurations of parent kernels, read from every source file of the program: the
file itself, the other C/C++/CUDA files of its folder (or of the workspace folder given), and the files
listed in a ``compile_commands.json`` found there.

Host code is read as text (a pattern over the call, not a parse): the other files need not parse with
warpwise's shim, and a limit set in a ``main.cpp`` compiled by the host compiler counts. Integer
expressions are evaluated only from literals, ``<< * / + -`` and named constants defined in the
program (``#define N 4096``, ``static const int N = 4096;``, ``constexpr``), never executed.
"""

from __future__ import annotations

import ast
import json
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp")
MAX_FILES = 400
MAX_BYTES = 2_000_000

_LIMIT = re.compile(r"cudaDeviceSetLimit\s*\(\s*(cudaLimitDevRuntimePendingLaunchCount|cudaLimitDevRuntimeSyncDepth)"
                    r"\s*,\s*((?:[^()]|\([^()]*\))*)\)")
_CONST = re.compile(r"(?:#\s*define\s+([A-Za-z_]\w*)\s+([^\n]+))|(?:\b(?:static\s+)?(?:constexpr|const)\s+"
                    r"(?:unsigned\s+|signed\s+)?(?:int|long|long\s+long|size_t|unsigned)\s+([A-Za-z_]\w*)\s*=\s*"
                    r"([^;]+);)")


@dataclass(frozen=True)
class HostFact:
    """A value set on the host: ``value`` (None when the expression is not a constant), where (file, 1-based
    line) and the expression text."""

    value: int | None
    file: str
    line: int
    text: str


@dataclass(frozen=True)
class HostLaunch:
    """A host-side launch ``kernel<<<grid, block>>>`` found in program text; ``threads`` is grid x block
    when both are constant (None otherwise)."""

    kernel: str
    file: str
    line: int
    grid: str
    block: str
    threads: int | None


@dataclass
class ProgramFacts:
    """Facts of the whole program: the last pending-launch and sync-depth limits set, host launches."""

    files: list[str] = field(default_factory=list)
    pending_limit: HostFact | None = None
    sync_depth: HostFact | None = None
    launches: list[HostLaunch] = field(default_factory=list)

    def parent_threads(self, kernel: str) -> HostLaunch | None:
        """The host launch of ``kernel`` with the most threads (constant ones first), or None."""
        cands = [h for h in self.launches if h.kernel == kernel]
        if not cands:
            return None
        return max(cands, key=lambda h: -1 if h.threads is None else h.threads)


_OPS: dict[type, Callable[[int, int], int]] = {ast.Add: operator.add, ast.Sub: operator.sub,
                                               ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
                                               ast.Div: operator.floordiv, ast.LShift: operator.lshift,
                                               ast.RShift: operator.rshift, ast.BitOr: operator.or_}


def eval_int(expr: str, consts: dict[str, str], depth: int = 0) -> int | None:
    """Value of a C integer constant expression of literals, named constants and + - * / << >> |, or None."""
    text = re.sub(r"\b(\d+)(?:[uUlL]+)\b", r"\1", expr.strip())
    text = re.sub(r"\((?:unsigned\s+)?(?:int|long|size_t|unsigned)\)", "", text)
    text = text.replace("/", "//").replace("////", "//")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None

    def ev(n: ast.AST) -> int | None:
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.Name):
            if depth > 8 or n.id not in consts:
                return None
            return eval_int(consts[n.id], consts, depth + 1)
        if isinstance(n, ast.BinOp) and type(n.op) in _OPS:
            a, b = ev(n.left), ev(n.right)
            if a is None or b is None or (isinstance(n.op, (ast.FloorDiv, ast.Div)) and b == 0):
                return None
            if isinstance(n.op, ast.LShift) and b > 62:
                return None
            return _OPS[type(n.op)](a, b)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            v = ev(n.operand)
            return None if v is None else -v
        return None

    return ev(tree.body)


def constants(text: str) -> dict[str, str]:
    """Named integer constants of a source text: ``#define N expr``, ``[static] const|constexpr int N = expr;``
    (name -> expression text; evaluate with eval_int)."""
    out: dict[str, str] = {}
    for m in _CONST.finditer(_strip_comments(text)):
        name, val = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        out.setdefault(name, val.strip())
    return out


def program_files(path: str | Path, root: str | Path | None = None) -> list[Path]:
    """Source files of the program holding ``path``: the file, the files named by a compile_commands.json
    in ``root`` (or the file's folder) or its build/ folder, and the C/C++/CUDA files under ``root`` (or
    the file's folder, not recursing), regular files only, at most MAX_FILES."""
    here = Path(path).resolve()
    base = Path(root).resolve() if root is not None else here.parent
    found: dict[Path, None] = {here: None}
    for cc in (base / "compile_commands.json", base / "build" / "compile_commands.json"):
        if cc.is_file():
            try:
                entries = json.loads(cc.read_text(encoding="utf-8", errors="replace"))
            except (OSError, ValueError):
                entries = []
            for e in entries if isinstance(entries, list) else []:
                if isinstance(e, dict) and isinstance(e.get("file"), str):
                    f = Path(e.get("directory") or cc.parent) / e["file"]
                    if f.suffix in SOURCE_SUFFIXES and f.is_file():
                        found[f.resolve()] = None
    walker = base.rglob("*") if root is not None else base.glob("*")
    for f in walker:
        if len(found) >= MAX_FILES:
            break
        if f.suffix in SOURCE_SUFFIXES and f.is_file() and not f.is_symlink() and ".git" not in f.parts:
            found[f.resolve()] = None
    return list(found)


_TEXTS: dict[str, tuple[int, int, str]] = {}  # path -> (mtime_ns, size, text): the editor asks often


def _read(f: Path) -> str | None:
    """Text of a regular file of at most MAX_BYTES (cached by mtime and size), None otherwise."""
    try:
        st = f.stat()
        if st.st_size > MAX_BYTES:
            return None
        hit = _TEXTS.get(str(f))
        if hit is not None and hit[0] == st.st_mtime_ns and hit[1] == st.st_size:
            return hit[2]
        text = f.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if len(_TEXTS) > 4 * MAX_FILES:
        _TEXTS.clear()
    _TEXTS[str(f)] = (st.st_mtime_ns, st.st_size, text)
    return text


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _strip_comments(text: str) -> str:
    """Comments blanked out (same length, newlines kept), so a commented-out call does not count."""
    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    return re.sub(r"//[^\n]*|/\*.*?\*/", blank, text, flags=re.S)


def program_facts(path: str | Path, source: str, root: str | Path | None = None,
                  files: list[Path] | None = None) -> ProgramFacts:
    """Host facts of the program holding ``path`` (whose current text is ``source``; other files are read
    from disk, unreadable ones skipped). ``files`` overrides program_files()."""
    here = Path(path).resolve()
    texts: dict[str, str] = {str(here): source}
    for f in files if files is not None else program_files(path, root):
        if str(f) in texts:
            continue
        t = _read(f)
        if t is not None:
            texts[str(f)] = t
    facts = ProgramFacts(files=list(texts))
    clean = {f: _strip_comments(t) for f, t in texts.items()}
    consts: dict[str, str] = {}
    for t in clean.values():
        for k, v in constants(t).items():
            consts.setdefault(k, v)
    for fname, t in clean.items():
        for m in _LIMIT.finditer(t):
            fact = HostFact(eval_int(m.group(2), consts), fname, _line_of(t, m.start()), m.group(2).strip())
            if m.group(1) == "cudaLimitDevRuntimePendingLaunchCount":
                facts.pending_limit = fact
            else:
                facts.sync_depth = fact
        for m in re.finditer(r"\b([A-Za-z_]\w*)\s*(?:<[^<>;]*>)?\s*<<<\s*((?:[^,()<>]|\([^()]*\))+)\s*,\s*"
                             r"((?:[^,()<>]|\([^()]*\))+)\s*(?:,[^>]*)?>>>", t):
            g, b = eval_int(m.group(2), consts), eval_int(m.group(3), consts)
            facts.launches.append(HostLaunch(m.group(1), fname, _line_of(t, m.start()), m.group(2).strip(),
                                             m.group(3).strip(), g * b if g is not None and b is not None else None))
    return facts
