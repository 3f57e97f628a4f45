"""file:// URIs <-> local paths (the one place the server converts them).

Diagnostics and locations must use the URI exactly as the client sent it for an open document (VS Code
percent-encodes spaces, non-ASCII characters and the drive colon in its own way): :func:`path_to_uri` returns
the client's URI when the path is that document's, and an RFC 3986 percent-encoded ``file:`` URI otherwise.
"""

from __future__ import annotations

import functools
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


@functools.lru_cache(maxsize=4096)
def _resolved(path: str) -> Path:
    return Path(path).resolve()


def resolved(path: str | Path) -> Path:
    """``Path(path).resolve()``, remembered per path string. Hover and inlay hints compare the findings' files
    with the document's several times per request, and each ``resolve`` is a few ``lstat`` calls on the
    event loop (1.5 ms of a 12 ms hover in the burst soak). For display and matching only: the confinement
    rules (analysis/confine.py) resolve afresh every time. :func:`forget_resolved` drops the memory (reload)."""
    return _resolved(str(path))


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether ``a`` and ``b`` resolve to the same path (:func:`resolved`)."""
    return resolved(a) == resolved(b)


def forget_resolved() -> None:
    """Forget the remembered resolutions (a symlink may have changed: called on every reload)."""
    _resolved.cache_clear()
