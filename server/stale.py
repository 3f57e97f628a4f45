"""Work for superseded document versions is dropped before it runs (issue 13: during a 490 edits/s burst,
hover p95 reached 10.9 s because requests queued behind code actions and diagnostics computed for texts
that had already changed).

A handler captures the document version when the request or notification arrives; the worker checks
:func:`superseded` when it starts and gives up at once if a newer version came in meanwhile: code actions
answer an empty list (the editor asks again for the text it now shows; ContentModified would make pygls log
a traceback for every dropped request), diagnostics are skipped (the newer version's publish follows).
"""

from __future__ import annotations

import asyncio
from typing import Any

#: Seconds a code-action request waits for the text to stop changing before it is computed (a typing
#: burst sends one per keystroke; all but the last are superseded within this time).
SETTLE_S = 0.05


def superseded(ls: Any, uri: str, version: int | None) -> bool:
    """Whether document ``uri`` was closed or changed past ``version`` (None: never superseded)."""
    if version is None:
        return False
    doc = ls.workspace.text_documents.get(uri)
    return doc is None or doc.version != version



#: uri -> the last version that stayed unchanged for SETTLE_S (requests on it need not wait again)
_SETTLED: dict[str, int] = {}


async def settled(ls: Any, uri: str, version: int | None, wait_s: float = SETTLE_S) -> bool:
    """Wait up to ``wait_s`` seconds on the event loop, then whether ``uri`` is still at ``version`` (False:
    superseded, drop the request before any worker computes it). Answers False as soon as a newer version
    arrives, and at once for a version that already settled (a document the user is not typing in: the wait
    would only add ``wait_s`` to every request, 50x a no-op server's round trip)."""
    if version is not None and _SETTLED.get(uri) == version:
        return not superseded(ls, uri, version)
    steps = max(1, round(wait_s / 0.005))
    for _ in range(steps):
        await asyncio.sleep(wait_s / steps)
        if superseded(ls, uri, version):
            return False
    if version is not None:
        if len(_SETTLED) > 4096:
            _SETTLED.clear()
        _SETTLED[uri] = version
    return True
