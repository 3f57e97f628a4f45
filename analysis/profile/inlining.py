"""Inlined code on hot lines (issue 12 item 3): where a helper's hot line was inlined, and the inclusive
samples of the call lines.

The cubin's line table carries inline chains (nvdisasm ``-gi``; analysis/binary: ``Instruction.inline_chain``,
innermost call site first). A sampled instruction whose chain is not empty belongs to a helper inlined into
the function that holds it; the chain's last entry is the call site in that function's own body. A call
line's *inclusive* samples are its own plus those of every instruction inlined through it (what Nsight
Compute's Source page shows folded under the call).
"""

from __future__ import annotations

from dataclasses import dataclass

from warpwise.analysis.binary.model import Cubin
from warpwise.analysis.profile.model import KernelProfile


@dataclass(frozen=True)
class CallSite:
    """``function`` (mangled) inlined the line at ``file``:``line`` (recorded paths); ``samples`` of the
    line's instructions were inlined through this call site."""

    function: str
    file: str
    line: int
    samples: int = 0


def inline_sites(profile: KernelProfile, cubin: Cubin) -> tuple[dict[tuple[str, int], list[CallSite]],
                                                                 dict[tuple[str, int], int]]:
    """(hot line -> the call sites it was inlined through, most samples first; call line -> inclusive samples).

    Lines are the profile's (file, line); only sampled instructions count. A line that is also present
    without inlining (e.g. in the kernel body itself) still lists its inlined call sites.
    """
    from warpwise.analysis.profile.join import sections

    secs = sections(cubin)
    by_line: dict[tuple[str, int], dict[tuple[str, str, int], int]] = {}
    own: dict[tuple[str, int], int] = {}
    through: dict[tuple[str, int], int] = {}
    for s in profile.pcs.values():
        if not s.samples or s.file is None or s.line is None:
            continue
        key = (s.file, s.line)
        own[key] = own.get(key, 0) + s.samples
        sec = secs.get(s.function)
        ins = sec.by_offset.get(s.offset) if sec else None
        if ins is None or not ins.inline_chain:
            continue
        outer = ins.inline_chain[-1]
        site = (s.function, outer.file, outer.line)
        by_line.setdefault(key, {})
        by_line[key][site] = by_line[key].get(site, 0) + s.samples
        for c in {(c.file, c.line) for c in ins.inline_chain}:
            if c != key:
                through[c] = through.get(c, 0) + s.samples
    sites = {k: sorted((CallSite(f, file, line, n) for (f, file, line), n in v.items()), key=lambda c: -c.samples)
             for k, v in by_line.items()}
    inclusive = {k: own.get(k, 0) + n for k, n in through.items()}
    return sites, inclusive
