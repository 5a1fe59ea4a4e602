"""Judgment on the analysis side: acceptance, hits, false alarms and d′ (analysis/judgments.py, from the
task's accepting and rejecting labels), people's response times, and its `direct` protocol, whose two
options are the sentence and its pair, read as the accepting and the rejecting value (the twins)."""
from __future__ import annotations

from analysis.kind_sections import AnalysisKind, register_analysis_kind

KIND = "judgment"

register_analysis_kind(AnalysisKind(KIND, detection=True, rt=True, value_options=(f"{KIND}:direct",)))
