"""Judgment on the analysis side: acceptance and d′ from its accepting and rejecting labels
(analysis/measures/judgments.py), people's RTs; its `direct` protocol's two options (the sentence and its pair) read as
the accepting and the rejecting value (the twins)."""
from __future__ import annotations

from analysis.kind_sections import AnalysisKind

ANALYSIS = AnalysisKind("judgment", detection=True, rt=True, value_options=("judgment:direct",))
