"""Rules for holdout12's misses (issue 10, helper modelI), checked on the committed H200 reports and cubins they
were found on:

- the byte extraction and re-packing nvcc keeps around an IDP.4A it recognised in a byte-wise dot product
  (code.dot_product_repacking) is strength_reduction's, fixed by ``__dp4a`` on the packed words."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, pair_advice_report, pair_report

H12 = ROOT / "bench" / "advice" / "holdout12" / "pairs"
H5 = ROOT / "bench" / "advice" / "holdout5" / "pairs"
DP4A = H12 / "dp4a_embed_search"
QUANT = H5 / "quant_int8_rowwise"


@cache
def _view(pair: Path) -> Any:
    """The KernelView of the longest launch of ``pair``'s kernel (its committed report, cubin and sources)."""
    from warpwise.analysis.advice.context import build_view
    from warpwise.analysis.arch.facts import arch_facts
    from warpwise.analysis.pipeline import analyze

    meta = json.loads((pair / "pair.json").read_text())
    srcs = [p for p in sorted(pair.iterdir()) if p.suffix in (".cu", ".cuh")]
    srcs.append(ROOT / "bench" / "advice" / "pairs" / "bench.cuh")
    an = analyze(pair_report(pair), sorted(pair.glob("orig.*.cubin")), srcs, kernel=meta["kernel"])
    k = max((k for k in an.kernels if k.advice_report is not None), key=lambda k: k.profile.launch.duration_ns)
    return build_view(k.profile, k.program, k.blame, arch_facts(k.profile.arch), None, None)


def _kernel_fn(pair: Path) -> Any:
    return next(f for f in _view(pair).program.functions.values() if f.is_kernel)


def test_dp4a_repacking_found() -> None:
    from collections import Counter

    from warpwise.analysis.advice import code

    pf = _kernel_fn(DP4A)
    chains = code.dot_product_repacking(pf)
    moves = set().union(*chains.values())
    # 64 IDP.4A in the unrolled loop body; 59 of them are fed by re-packing that serves nothing else (473 byte
    # moves: the tile word's bytes extracted and merged back; the query words' re-packing is hoisted into the
    # block before the loop and not followed)
    assert sum(1 for i in pf.instructions if i.base_opcode == "IDP") == 64
    assert len(chains) == 59 and len(moves) == 473
    ops = Counter(pf.function.at(o).base_opcode for o in moves)
    assert ops == {"LOP3": 165, "SHF": 163, "PRMT": 117, "IMAD": 28}
    assert all(pf.function.at(o).base_opcode == "IDP" for o in chains)


def test_dp4a_strength_reduction_first() -> None:
    rep = pair_advice_report(DP4A)
    a = rep.advice[0]
    # was: loop_unrolling 1.080x first, strength_reduction not advised; the __dp4a fix measured 3.815x
    assert a.optimizer == "strength_reduction" and a.params.get("byte_repack") == 1
    assert a.estimated_speedup == pytest.approx(2.917, abs=0.01)
    assert a.matched_samples == pytest.approx(204098, rel=0.001)
    assert a.params["byte_moves_per_idp"] == pytest.approx(8.02, abs=0.01)  # executed, per executed IDP.4A
    assert "__dp4a" in a.hint and "IDP.4A" in a.hint


def test_byte_packing_without_dot_product_is_not_matched() -> None:
    # holdout5's row-wise int8 quantizer packs four bytes per word with PRMT (48 of them) and has no IDP: packing
    # work the program needs, not a dot product's operands
    from warpwise.analysis.advice import code

    pf = _kernel_fn(QUANT)
    assert sum(1 for i in pf.instructions if i.base_opcode == "PRMT") == 48
    assert code.dot_product_repacking(pf) == {}
    assert code._byte_repack_advice(_view(QUANT)) is None
    rep = pair_advice_report(QUANT)
    assert all(not a.params.get("byte_repack") for a in rep.advice)


def test_byte_move_classes() -> None:
    from warpwise.analysis.advice import code

    pf = _kernel_fn(DP4A)
    by_text = {i.text.split(" ;")[0]: i for i in pf.instructions}
    moves = [t for t, i in by_text.items() if code.is_byte_move(i)]
    assert any(t.startswith("PRMT") for t in moves)
    # a shift by 16 and a 0xffff mask move whole half-words; an IDP, a load and a shift by 31 do not
    assert code.is_byte_move(next(i for t, i in by_text.items() if t.startswith("SHF.R.U32.HI") and "0x10" in t))
    assert code.is_byte_move(next(i for t, i in by_text.items() if t.startswith("LOP3.LUT") and "0xffff," in t))
    assert not any(code.is_byte_move(i) for i in pf.instructions if i.base_opcode in ("IDP", "LDS", "LDG"))
    assert not any(code.is_byte_move(i) for t, i in by_text.items() if t.startswith("SHF") and "0x1f" in t)
