"""GPA's instruction blamer (CGO'21 §4): def/use slicing, pruning, apportioning, classification."""

from warpwise.analysis.blame.attribute import attribute
from warpwise.analysis.blame.model import BlameEdge, BlameGraph

__all__ = ["BlameEdge", "BlameGraph", "attribute"]
