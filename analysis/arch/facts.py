"""Look up an architecture's facts by name (``sm_90``, ``sm_90a``, ``90``)."""

from __future__ import annotations

from warpwise.analysis.arch.model import ArchFacts, UnknownArchError
from warpwise.analysis.arch.tables import ARCHS


def arch_facts(arch: str | int | ArchFacts) -> ArchFacts:
    """Facts of ``arch``. Accepts ``sm_90``, ``sm_90a``, ``SM90``, ``90`` or an ArchFacts (returned as is).

    Raises:
        UnknownArchError: the string is not an SM version or warpwise has no facts for it.
    """
    if isinstance(arch, ArchFacts):
        return arch
    s = str(arch).strip().lower().removeprefix("sm_").removeprefix("sm").rstrip("afk")
    try:
        sm = int(s)
    except ValueError:
        raise UnknownArchError(f"unknown architecture {arch!r} (expected e.g. sm_90)") from None
    if sm not in ARCHS:
        known = ", ".join(f"sm_{k}" for k in sorted(ARCHS))
        raise UnknownArchError(f"no architecture facts for sm_{sm} (known: {known})")
    return ARCHS[sm]
