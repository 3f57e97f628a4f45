"""Diagnostics on device-side launches: unchecked launch errors and the pending-launch limit.

The device runtime keeps at most ``cudaLimitDevRuntimePendingLaunchCount`` launches pending (2048 by
default, CUDA Programming Guide, CDP "Configuration Options"); launches past it fail with
cudaErrorLaunchPendingCountExceeded, which only a device-side error check sees (FACTS.md: a CDP
program with one launch per parent thread lost launches silently).
"""

from __future__ import annotations

import re

from .cursors import K, binop, operands, strip
from .launches import Site, find_sites
from .model import LaunchDiagnostic
from .parse import Parsed, parse, require_parses, walk

PENDING_LAUNCH_DEFAULT = 2048
_CHECKS = {"cudaGetLastError", "cudaPeekAtLastError"}
CODE_UNCHECKED = "cdp-unchecked-launch"
CODE_PENDING = "cdp-pending-launch-limit"


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


def diagnostics_of(p: Parsed) -> list[LaunchDiagnostic]:
    """Findings for every device-side launch of a parsed file, in source order."""
    out: list[LaunchDiagnostic] = []
    limit_raised = _limit_raised(p)
    for s in find_sites(p):
        if not s.device_side:
            continue
        line, col = p.line_col(s.stmt_start)
        end_line, end_col = p.line_col(s.call.extent.end.offset)
        if end_line != line:  # a multi-line launch: underline the first line
            nl = p.data.find(b"\n", s.stmt_start)
            end_col = col + (nl - s.stmt_start)
        if not _checked(p, s):
            out.append(LaunchDiagnostic(line, col, end_col,
                                        f"device-side launch of `{s.child_name}` is never checked: call "
                                        "cudaGetLastError() after it; launches the device runtime rejects "
                                        "(e.g. past the pending-launch limit) fail silently", CODE_UNCHECKED))
        if limit_raised or _single_thread_guard(s):
            continue
        what = "inside a loop, in every parent thread" if s.in_loop else "once per parent thread"
        out.append(LaunchDiagnostic(line, col, end_col,
                                    f"`{s.child_name}` is launched {what} with no cap: more than "
                                    f"{PENDING_LAUNCH_DEFAULT} pending launches (the device runtime's default "
                                    "cudaLimitDevRuntimePendingLaunchCount) fail; raise the limit on the host "
                                    "with cudaDeviceSetLimit, or threshold/aggregate the launch", CODE_PENDING))
    return out


def launch_diagnostics(source: str, path: str) -> list[LaunchDiagnostic]:
    """Diagnostics for the device-side launches of ``source`` (the text of ``path``).

    Raises RewriteError naming ``file:line:col`` and clang's message when the file has a parse error
    (parse.blocking_errors), rather than reporting on a partial AST.
    """
    p = parse(source, path)
    require_parses(p)
    return diagnostics_of(p)
