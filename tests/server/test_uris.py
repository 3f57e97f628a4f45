"""URIs with spaces and non-ASCII characters (issue 12 item 3): percent-encoded, and the client's own
spelling kept for its documents."""

from __future__ import annotations

from pathlib import Path

from warpwise.server.uris import path_to_uri, uri_to_path


def test_percent_encoding_of_spaces_and_non_ascii(tmp_path: Path) -> None:
    f = tmp_path / "my kernels" / "résumé ü.cu"
    f.parent.mkdir()
    f.write_text("")
    uri = path_to_uri(f)
    assert uri.startswith("file:///") and " " not in uri and "é" not in uri
    assert uri.endswith("/my%20kernels/r%C3%A9sum%C3%A9%20%C3%BC.cu")
    assert uri_to_path(uri) == f


def test_the_clients_spelling_is_kept(tmp_path: Path) -> None:
    f = tmp_path / "a b" / "ü.cu"
    f.parent.mkdir()
    f.write_text("")
    client = f.as_uri().replace("%C3%BC", "%c3%bc")  # another valid spelling of the same file
    assert client != f.as_uri()
    assert path_to_uri(f, [client]) == client
    assert path_to_uri(tmp_path / "a b" / "other.cu", [client]) == (tmp_path / "a b" / "other.cu").as_uri()
