"""Line endings of generated text: code that warpwise inserts takes the line ending of the place it
goes to, so every rewrite, quick fix and tuned-launch edit keeps a CRLF (or mixed) file's bytes as they
were outside the edit (issue 13). Standard library only (the tuned-launch rewrite runs without libclang).
"""

from __future__ import annotations

import re


def eol_at(data: bytes, offset: int) -> str:
    """The line ending of the line holding byte ``offset`` of ``data`` (``"\\r\\n"`` or ``"\\n"``); for
    the last line, which may have none, that of the line before; ``"\\n"`` for a one-line file."""
    nl = data.find(b"\n", offset)
    if nl < 0:
        nl = data.rfind(b"\n", 0, offset)
    if nl < 0:
        return "\n"
    return "\r\n" if nl > 0 and data[nl - 1 : nl] == b"\r" else "\n"


def with_eol(text: str, eol: str) -> str:
    """``text`` with each bare ``\\n`` written as ``eol`` (``\\r\\n`` stays): generated code takes the line
    ending of the place it goes to, so a CRLF file stays CRLF."""
    if eol == "\n" or "\n" not in text:
        return text
    return re.sub(r"(?<!\r)\n", eol, text)
