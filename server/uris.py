"""file:// URIs -> local paths (the one place the server converts them)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse


def uri_to_path(uri: str) -> Path:
    """Local path of a file:// URI."""
    return Path(unquote(urlparse(uri).path))

