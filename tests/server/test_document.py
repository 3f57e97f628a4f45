"""server/document.py: incremental edits applied to a list of lines give the text pygls's own TextDocument
gives, on every line-end mix, position encoding and range (past the end included)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types as lsp
from pygls.workspace import PositionCodec, TextDocument, Workspace
from warpwise.server import document
from warpwise.server.document import EditedDocument

PIECES = ["a", "bc", " ", "\n", "\r\n", "\r", "é", "😋", "\t", "\x0c", "x\n", "\r\r\n", ""]
texts = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)
positions = st.tuples(st.integers(0, 12), st.integers(0, 9))
change = st.tuples(positions, positions, texts)
encodings = st.sampled_from([lsp.PositionEncodingKind.Utf16, lsp.PositionEncodingKind.Utf8,
                             lsp.PositionEncodingKind.Utf32])


def _pair(text: str, enc: lsp.PositionEncodingKind) -> tuple[TextDocument, EditedDocument]:
    return (TextDocument("file:///a.cu", text, 1, position_codec=PositionCodec(enc)),
            EditedDocument("file:///a.cu", text, 1, position_codec=PositionCodec(enc)))


@settings(max_examples=200, deadline=None)
@given(texts, st.lists(change, min_size=1, max_size=8), encodings, st.booleans())
def test_edits_give_the_text_pygls_gives(text: str, changes: list, enc: lsp.PositionEncodingKind,
                                         read_between: bool) -> None:
    ref, fast = _pair(text, enc)
    for (a, b), (c, d), new in changes:
        # the same Range object for both: pygls's codec may clamp a character in place
        rng = lsp.Range(lsp.Position(a, b), lsp.Position(c, d))
        ref.apply_change(lsp.TextDocumentContentChangePartial(range=rng, text=new))
        rng = lsp.Range(lsp.Position(a, b), lsp.Position(c, d))
        fast.apply_change(lsp.TextDocumentContentChangePartial(range=rng, text=new))
        if read_between:
            assert fast.source == ref.source
            assert tuple(fast.lines) == tuple(ref.lines)
    assert fast.source == ref.source
    assert tuple(fast.lines) == tuple(ref.lines)


def test_full_change_and_one_join_per_version() -> None:
    doc = EditedDocument("file:///a.cu", "int a;\nint b;\n", 1)
    doc.apply_change(lsp.TextDocumentContentChangePartial(
        range=lsp.Range(lsp.Position(1, 4), lsp.Position(1, 5)), text="c"))
    first = doc.source
    assert first == "int a;\nint c;\n" and doc.source is first  # joined once, then the same object
    doc.apply_change(lsp.TextDocumentContentChangeWholeDocument(text="void f();\n"))
    assert doc.source == "void f();\n" and doc.lines == ("void f();\n",)


def test_install_makes_the_workspace_open_edited_documents() -> None:
    ws = Workspace("file:///w", lsp.TextDocumentSyncKind.Incremental)
    document.install(ws)
    ws.put_text_document(lsp.TextDocumentItem(uri="file:///w/a.cu", language_id="cuda-cpp", version=1,
                                              text="x\n"))
    ws.update_text_document(lsp.VersionedTextDocumentIdentifier(uri="file:///w/a.cu", version=2),
                            lsp.TextDocumentContentChangePartial(
                                range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)), text="y"))
    doc = ws.get_text_document("file:///w/a.cu")
    assert isinstance(doc, EditedDocument) and doc.source == "yx\n" and doc.version == 2


CODE_PIECES = ["int a;", " ", "\n", "\r\n", "// c", "\t", "x", "\r", "\x0c", '"//"', ""]
code_texts = st.lists(st.sampled_from(CODE_PIECES), max_size=30).map("".join)


@settings(max_examples=200, deadline=None)
@given(code_texts, st.lists(st.tuples(positions, positions, code_texts), max_size=6))
def test_code_lines_from_the_document_lines_equal_those_of_the_text(text: str, changes: list) -> None:
    from warpwise.server.linemap import LineMap, PlainLines, _code_lines, doc_code_lines

    doc = EditedDocument("file:///a.cu", text, 1)
    for (a, b), (c, d), new in [((0, 0), (0, 0), ""), *changes]:
        doc.apply_change(lsp.TextDocumentContentChangePartial(
            range=lsp.Range(lsp.Position(a, b), lsp.Position(c, d)), text=new))
        plain = doc.plain_lines()
        src = doc.source
        # only \n and \r\n end lines: the fast path applies (a lone \r or a form feed: the text is split)
        assert (plain is not None) == ("\r" not in src.replace("\r\n", "") and "\x0c" not in src)
        if plain is not None:
            assert doc_code_lines(plain) == _code_lines(src)
            view, split = PlainLines(plain), src.split("\n")
            assert len(view) == len(split) and list(view) == split and view[-1] == split[-1]
            assert view[1:3] == split[1:3] and view[-2:] == split[-2:]
            base = "int a;\nx\n"
            fast, slow = LineMap(base, src, doc_code_lines(plain)), LineMap(base, src)
            assert [fast.line(k) for k in range(1, 4)] == [slow.line(k) for k in range(1, 4)]
