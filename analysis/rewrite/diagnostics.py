"""Diagnostics on device-side launches: unchecked launch errors, the pending-launch limit, and CDP1
code that CDP2 (CUDA 12+, the only model on sm_90) does not have.

The device runtime keeps at most ``cudaLimitDevRuntimePendingLaunchCount`` launches pending (2048 by
default, CUDA Programming Guide, CDP "Configuration Options"); launches past it fail with
cudaErrorLaunchPendingCountExceeded, which only a device-side error check sees (FACTS.md: a CDP
program with one launch per parent thread lost launches silently). The limit and the parent's host
launch are looked up in the whole program (program.py): a limit raised in main.cpp counts.

CDP2 (CUDA Programming Guide, "CUDA Dynamic Parallelism", CDP2 vs CDP1): device-side
``cudaDeviceSynchronize()`` is removed and ``cudaLimitDevRuntimeSyncDepth`` is not supported; a parent
that needs its children's results restructures the code after the wait into a tail launch
(``cudaStreamTailLaunch``) or a separate kernel launched from the host.
"""

from __future__ import annotations

import re

from .cursors import K, binop, is_device_function, operands, strip
from .launches import WAITS, Site, find_sites
from .model import LaunchDiagnostic
from .parse import Parsed, parse, require_parses, walk
from .program import ProgramFacts, program_facts

PENDING_LAUNCH_DEFAULT = 2048
_CHECKS = {"cudaGetLastError", "cudaPeekAtLastError"}
CODE_UNCHECKED = "cdp-unchecked-launch"
CODE_PENDING = "cdp-pending-launch-limit"
CODE_DEVICE_SYNC = "cdp1-device-sync"
CODE_SYNC_DEPTH = "cdp1-sync-depth"
_CDP2_FIX = ("move the code after the wait into a kernel launched into cudaStreamTailLaunch (it runs when the "
             "parent grid and its children are done) or split the parent at the wait and launch the rest from "
             "the host")


def _checked(p: Parsed, site: Site) -> bool:
    """True when cudaGetLastError/cudaPeekAtLastError is called after the launch in the same function
    (directly or inside a macro such as CHECK(cudaGetLastError()))."""
    end = site.call.extent.end.offset
    for c in walk(site.func):
        if c.kind == K.CALL_EXPR and c.spelling in _CHECKS and c.extent.start.offset >= end:
            return True
    tail = p.data[end:site.func.extent.end.offset]
    return re.search(rb"\b(cudaGetLastError|cudaPeekAtLastError)\b", tail) is not None


def _single_thread_guard(site: Site) -> bool:
    """True when an enclosing `if` compares a thread index with ==, e.g. ``if (threadIdx.x == 0)``."""
    for a in site.ancestors:
        if a.kind != K.IF_STMT:
            continue
        cond = next(iter(a.get_children()), None)
        if cond is None:
            continue
        for c in walk(cond):
            if binop(c) == "==":
                lhs, rhs = operands(c)
                for side in (strip(lhs), strip(rhs)):
                    if any(d.kind == K.DECL_REF_EXPR and d.spelling == "threadIdx" for d in walk(side)):
                        return True
    return False


def _limit_raised(p: Parsed) -> bool:
    return b"cudaLimitDevRuntimePendingLaunchCount" in p.data and b"cudaDeviceSetLimit" in p.data


def _where(file: str, line: int, p: Parsed) -> str:
    from pathlib import Path

    return f"line {line}" if Path(file).resolve() == Path(p.path).resolve() else f"{Path(file).name}:{line}"


def _pending(p: Parsed, s: Site, facts: ProgramFacts | None) -> str | None:
    """The pending-launch finding for a launch made by every parent thread, or None when the program
    keeps it under the limit (or raised the limit to an unknown value)."""
    limit = facts.pending_limit if facts is not None else None
    if facts is None and _limit_raised(p):
        return None
    if limit is not None and limit.value is None:
        return None  # raised to a value we cannot evaluate: trust it
    cap = limit.value if limit is not None and limit.value is not None else PENDING_LAUNCH_DEFAULT
    host = facts.parent_threads(s.func.spelling) if facts is not None else None
    what = "inside a loop, in every parent thread" if s.in_loop else "once per parent thread"
    set_at = (f"raised to {cap} at {_where(limit.file, limit.line, p)}" if facts is not None and limit
              else f"the device runtime's default cudaLimitDevRuntimePendingLaunchCount, {cap}")
    if host is not None and host.threads is not None:
        if host.threads <= cap and (not s.in_loop or limit is not None):
            return None  # under the limit (in a loop: the limit was raised on purpose; trip count unknown)
        many = f"at least {host.threads}" if s.in_loop else f"up to {host.threads}"
        return (f"`{s.child_name}` is launched {what}: {many} launches of grids of `{s.grid.text}` blocks can be "
                f"pending at once (parent `{s.func.spelling}` runs {host.grid} x {host.block} threads, "
                f"{_where(host.file, host.line, p)}) — more than {set_at}: launches past it fail; raise "
                "the limit on the host with cudaDeviceSetLimit, or threshold/aggregate the launch")
    if limit is not None:
        return None  # raised to a known value, parent size unknown: no evidence of overflow
    return (f"`{s.child_name}` is launched {what} with no cap: more than {PENDING_LAUNCH_DEFAULT} pending launches "
            "(the device runtime's default cudaLimitDevRuntimePendingLaunchCount) fail; raise the limit on the host "
            "with cudaDeviceSetLimit, or threshold/aggregate the launch")


def _span_of(p: Parsed, start: int, end: int) -> tuple[int, int, int]:
    line, col = p.line_col(start)
    end_line, end_col = p.line_col(end)
    if end_line != line:  # several lines: underline the first
        nl = p.data.find(b"\n", start)
        end_col = col + (nl - start)
    return line, col, end_col


def _cdp1(p: Parsed, facts: ProgramFacts | None, first_launch: int | None) -> list[LaunchDiagnostic]:
    """Device-side waits (removed in CDP2) and the CDP1 sync-depth limit."""
    out: list[LaunchDiagnostic] = []
    for fn in p.top_level():
        if not fn.is_definition() or not is_device_function(fn):
            continue
        for c in walk(fn):
            if c.kind == K.CALL_EXPR and c.spelling in WAITS:
                line, col, end_col = _span_of(p, c.extent.start.offset, c.extent.end.offset)
                out.append(LaunchDiagnostic(line, col, end_col,
                           f"device-side `{c.spelling}()` in `{fn.spelling}` waits for child grids, which CDP1 "
                           "allowed; CUDA 12 removed it (CDP2), and sm_90+ only has CDP2: it does not compile "
                           f"for sm_90, and a parent cannot wait for its children — {_CDP2_FIX}", CODE_DEVICE_SYNC))
    sd = facts.sync_depth if facts is not None else None
    if sd is None and facts is None:
        m = re.search(rb"cudaDeviceSetLimit\s*\(\s*cudaLimitDevRuntimeSyncDepth", p.data)
        if m:
            from .program import HostFact

            sd = HostFact(None, p.path, p.line_col(m.start())[0], "")
    if sd is not None:
        msg = ("`cudaLimitDevRuntimeSyncDepth` is a CDP1 limit (how deep device-side cudaDeviceSynchronize may "
               "nest); CDP2 (CUDA 12+, the only model on sm_90+) does not support it and cudaDeviceSetLimit "
               "returns cudaErrorUnsupportedLimit — remove it, and where a parent waited for its children, "
               f"{_CDP2_FIX}")
        from pathlib import Path

        if Path(sd.file).resolve() == Path(p.path).resolve():
            ls = p.data.split(b"\n")
            text = ls[sd.line - 1] if sd.line - 1 < len(ls) else b""
            col = text.find(b"cudaDeviceSetLimit") + 1
            out.append(LaunchDiagnostic(sd.line, max(col, 1), max(col, 1) + len("cudaDeviceSetLimit"), msg,
                                        CODE_SYNC_DEPTH))
        elif first_launch is not None:
            line, col, end_col = _span_of(p, first_launch, first_launch + 1)
            out.append(LaunchDiagnostic(line, col, end_col,
                                        f"{Path(sd.file).name}:{sd.line} sets " + msg[0].lower() + msg[1:],
                                        CODE_SYNC_DEPTH))
    return out


def diagnostics_of(p: Parsed, facts: ProgramFacts | None = None) -> list[LaunchDiagnostic]:
    """Findings for every device-side launch of a parsed file and its CDP1 leftovers, in source order.

    ``facts``: host facts of the whole program (program_facts); None looks at this file only."""
    out: list[LaunchDiagnostic] = []
    first: int | None = None
    for s in find_sites(p):
        if not s.device_side:
            continue
        first = s.stmt_start if first is None else first
        line, col, end_col = _span_of(p, s.stmt_start, s.call.extent.end.offset)
        if not _checked(p, s):
            out.append(LaunchDiagnostic(line, col, end_col,
                                        f"device-side launch of `{s.child_name}` is never checked: call "
                                        "cudaGetLastError() after it; launches the device runtime rejects "
                                        "(e.g. past the pending-launch limit) fail silently", CODE_UNCHECKED))
        if _single_thread_guard(s):
            continue
        msg = _pending(p, s, facts)
        if msg is not None:
            out.append(LaunchDiagnostic(line, col, end_col, msg, CODE_PENDING))
    out += _cdp1(p, facts, first)
    return sorted(out, key=lambda d: (d.line, d.column))


def launch_diagnostics(source: str, path: str, root: str | None = None,
                       whole_program: bool = True) -> list[LaunchDiagnostic]:
    """Diagnostics for the device-side launches of ``source`` (the text of ``path``).

    ``whole_program``: read host facts (limits, parent launches) from the program's other files
    (program.program_files: ``root`` or the file's folder, compile_commands.json). Raises RewriteError
    naming ``file:line:col`` and clang's message when the file has a parse error
    (parse.blocking_errors), rather than reporting on a partial AST.
    """
    p = parse(source, path)
    require_parses(p)
    return diagnostics_of(p, program_facts(path, source, root) if whole_program else None)
