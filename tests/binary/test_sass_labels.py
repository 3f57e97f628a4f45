"""One nvdisasm listing parser for the loader and the schedule model: labels are recorded per section."""

from __future__ import annotations

from warpwise.analysis.binary.sass import parse
from warpwise.analysis.schedule.sass import parse_listing

LISTING = """
\t.target\tsm_90
\t.section\t.text._Z1kPf,"ax",@progbits
_Z1kPf:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/              @!P0 BRA `(.L_x_1) ;
.L_x_0:
        /*0020*/                   IADD3 R0, R0, 0x1, RZ ;
.L_x_1:
        /*0030*/                   EXIT ;
\t.section\t.text._Z1gv,"ax",@progbits
$_Z1gv$callee:
        /*0000*/                   RET.REL.NODEC R20 0x0 ;
"""


def test_labels_per_section() -> None:
    d = parse(LISTING)
    assert d.labelled == {".text._Z1kPf": {0x0, 0x20, 0x30}, ".text._Z1gv": {0x0}}
    assert [x.text for x in d.sections[".text._Z1kPf"]][1] == "@!P0 BRA `(.L_x_1)"


def test_schedule_listing_uses_the_same_parser() -> None:
    texts, labelled = parse_listing(LISTING, ".text._Z1kPf")
    assert texts == {0x0: "LDC R1, c[0x0][0x28]", 0x10: "@!P0 BRA `(.L_x_1)", 0x20: "IADD3 R0, R0, 0x1, RZ",
                     0x30: "EXIT"}
    assert labelled == {0x0, 0x20, 0x30}
