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



async def settled(ls: Any, uri: str, version: int | None, wait_s: float = SETTLE_S) -> bool:
    """Wait ``wait_s`` seconds on the event loop, then whether ``uri`` is still at ``version`` (False:
    superseded, drop the request before any worker computes it)."""
    await asyncio.sleep(wait_s)
    return not superseded(ls, uri, version)
