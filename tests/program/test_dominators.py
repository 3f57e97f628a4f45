"""The program build's own immediate-dominator routine against networkx's (the implementation it replaced):
same dominators and the same dict order, on random CFG-like graphs with unreachable nodes and self-loops."""

from __future__ import annotations

import random

import networkx as nx
import pytest
from warpwise.analysis.program.build import _immediate_dominators


def _lists(g: nx.DiGraph) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    return {n: list(g.successors(n)) for n in g}, {n: list(g.predecessors(n)) for n in g}


@pytest.mark.parametrize("seed", range(40))
def test_matches_networkx_on_random_graphs(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 60)
    g: nx.DiGraph = nx.DiGraph()
    g.add_nodes_from(range(0, 16 * n, 16))
    nodes = list(g)
    for k, u in enumerate(nodes):  # fall-through chains, forward and backward branches, some self-loops
        if k + 1 < n and rng.random() < 0.8:
            g.add_edge(u, nodes[k + 1])
        if rng.random() < 0.5:
            g.add_edge(u, rng.choice(nodes))
    start = nodes[0]
    want = dict(nx.immediate_dominators(g, start))
    want.pop(start, None)  # networkx < 3.6 maps the start to itself, >= 3.6 leaves it out
    got = _immediate_dominators(*_lists(g), start)
    assert list(got.items()) == list(want.items())


def test_diamond_and_loop() -> None:
    g: nx.DiGraph = nx.DiGraph([(0, 1), (0, 2), (1, 3), (2, 3), (3, 1), (3, 4), (5, 4)])  # 5 unreachable
    assert _immediate_dominators(*_lists(g), 0) == {1: 0, 2: 0, 3: 0, 4: 3}
