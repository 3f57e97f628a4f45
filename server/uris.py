"""file:// URIs <-> local paths (the one place the server converts them).

Diagnostics and locations must use the URI exactly as the client sent it for an open document (VS Code
percent-encodes spaces, non-ASCII characters and the drive colon in its own way): :func:`path_to_uri` returns
the client's URI when the path is that document's, and an RFC 3986 percent-encoded ``file:`` URI otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote, urlparse


def uri_to_path(uri: str) -> Path:
    """Local path of a file:// URI (percent-escapes decoded as UTF-8)."""
    return Path(unquote(urlparse(uri).path))


def path_to_uri(path: str | Path, known: Iterable[str] = ()) -> str:
    """The URI for ``path``: one of ``known`` (URIs the client sent) naming the same file, else the
    percent-encoded ``file:`` URI of the absolute path (``Path.as_uri``: spaces -> ``%20``, UTF-8 bytes of
    non-ASCII characters -> ``%XX``)."""
    p = Path(path)
    target = p.resolve() if p.is_absolute() or p.exists() else p.absolute()
    for uri in known:
        try:
            if uri_to_path(uri).resolve() == target:
                return uri
        except (OSError, ValueError):
            continue
    return target.as_uri()
