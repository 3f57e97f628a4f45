"""Parsing of nvdisasm output and of single SASS instructions (synthetic text for single rules)."""

from __future__ import annotations

from warpwise.analysis.binary.model import SourceLoc
from warpwise.analysis.binary.sass import parse, split_instruction

SAMPLE = """\
\t.target\tsm_90a

//--------------------- .text._Z1kPfPKfi          --------------------------
\t.section\t.text._Z1kPfPKfi,"ax",@progbits
\t.sectioninfo\t@"SHI_REGISTERS=10"
_Z1kPfPKfi:
\t//## File "/a/k.cu", line 7
        /*0000*/                   LDC R1, c[0x0][0x28] ;
\t//## File "/a/k.cu", line 2 inlined at "/a/k.cu", line 5
\t//## File "/a/k.cu", line 5 inlined at "/a/k.cu", line 9
\t//## File "/a/k.cu", line 9
.L_x_1:
        /*0010*/                   FFMA R0, R2, R2, 1 ;
        /*0020*/               @!PT BRA `(.L_x_1);
\t.section\t.text._Z1jv,"ax",@progbits
        /*0000*/                   EXIT ;
"""


def test_parse_sections_locations_and_chains() -> None:
    d = parse(SAMPLE)
    assert d.target == "sm_90a"
    assert list(d.sections) == [".text._Z1kPfPKfi", ".text._Z1jv"]
    a, b, c = d.sections[".text._Z1kPfPKfi"]
    assert (a.offset, a.text, a.loc, a.inline_chain) == (0, "LDC R1, c[0x0][0x28]", SourceLoc("/a/k.cu", 7), ())
    chain = (SourceLoc("/a/k.cu", 5), SourceLoc("/a/k.cu", 9))
    assert (b.offset, b.loc, b.inline_chain) == (0x10, SourceLoc("/a/k.cu", 2), chain)
    assert (c.text, c.loc, c.inline_chain) == ("@!PT BRA `(.L_x_1)", b.loc, b.inline_chain)  # carried over
    (e,) = d.sections[".text._Z1jv"]
    assert (e.text, e.loc) == ("EXIT", None)  # a new section starts without a location


def test_split_instruction() -> None:
    assert split_instruction("@!UP0 LDG.E.64 R2, desc[UR4][R2.64+0x10]") == (
        "!UP0", "LDG.E.64", ["R2", "desc[UR4][R2.64+0x10]"],
    )
    assert split_instruction("FSETP.GTU.FTZ.AND P0, PT, |R0|, +INF , PT") == (
        None, "FSETP.GTU.FTZ.AND", ["P0", "PT", "|R0|", "+INF", "PT"],
    )
    assert split_instruction("DEPBAR.LE SB0, 0x0, {2,1}") == (None, "DEPBAR.LE", ["SB0", "0x0", "{2,1}"])
    assert split_instruction("EXIT") == (None, "EXIT", [])
    assert split_instruction("@P0 EXIT") == ("P0", "EXIT", [])
