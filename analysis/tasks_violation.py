"""Violation detection on the analysis side (the Lakretz kind): what it registers beside the other kinds.

Its rates, d′, first encounter and learning are the general analyses (acceptance and detection read its
accepting and rejecting values from experiments.tasks.detection_values); here it says that a table
without a `task` column (a Lakretz release, a session written before the general model) is violation
detection, and how its model protocols' recorded names place in the demand gap (Hu & Frank): forced
choice and `direct` read probabilities, `violation_judgment` asks the question; forced choice and
production pose one task (the verb's form), `direct` and `violation_judgment` another.
"""
from __future__ import annotations

from analysis.kind_sections import AnalysisKind, register_analysis_kind

KIND = "violation_detection"

register_analysis_kind(AnalysisKind(
    KIND, detection=True, untyped_tables=True,
    methods={"forced_choice": "direct", "forced-choice": "direct", "violation_judgment": "metalinguistic"},
    families={"direct": "violation_judgment", "violation_judgment": "violation_judgment",
              "forced_choice": "forced_choice", "forced-choice": "forced_choice", "production": "forced_choice"},
    low_demand=("forced_choice",)))
