"""Byte mutations of real inputs (the committed examples' reports and cubins), as hypothesis strategies."""

from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def mutated(draw: st.DrawFn, data: bytes, max_edits: int = 8) -> bytes:
    """``data`` with a few random byte overwrites, insertions, deletions or a truncation."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, max_edits))):
        op = draw(st.sampled_from(["flip", "set", "insert", "delete", "truncate", "zero_run"]))
        if not out:
            break
        i = draw(st.integers(0, len(out) - 1))
        if op == "flip":
            out[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "set":
            out[i] = draw(st.sampled_from([0, 0xFF, 0x7F, 0x80, draw(st.integers(0, 255))]))
        elif op == "insert":
            out[i:i] = draw(st.binary(min_size=1, max_size=16))
        elif op == "delete":
            del out[i : i + draw(st.integers(1, 64))]
        elif op == "truncate":
            del out[i:]
        else:
            out[i : i + 8] = b"\xff" * 8 if draw(st.booleans()) else b"\x00" * 8
    return bytes(out)
