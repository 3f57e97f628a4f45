"""A pygls server that answers hover / inlayHint / codeLens / codeAction with nothing: the round-trip floor
the editor benchmark divides by (same pygls, same transport, same client)."""

from __future__ import annotations

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

server = LanguageServer("noop", "0")


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: LanguageServer, params: lsp.HoverParams) -> lsp.Hover | None:
    return None


@server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT)
def inlay(ls: LanguageServer, params: lsp.InlayHintParams) -> list[lsp.InlayHint]:
    return []


@server.feature(lsp.TEXT_DOCUMENT_CODE_LENS)
def lens(ls: LanguageServer, params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
    return []


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION)
def action(ls: LanguageServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    return []


if __name__ == "__main__":
    server.start_io()
