"""Violation detection (the Lakretz kind) on the analysis side: acceptance and d′; a table without a `task`
column (a Lakretz release, a session written before the general model) is this kind; how its model
protocols' recorded names place in the demand gap (Hu & Frank): forced choice and `direct` read
probabilities, `violation_judgment` asks the question; forced choice and production pose one task (the
verb's form), `direct` and `violation_judgment` another; forced choice is the preferred low-demand partner."""
from __future__ import annotations

from analysis.kind_sections import AnalysisKind

ANALYSIS = AnalysisKind(
    "violation_detection", detection=True, untyped_tables=True,
    methods={"forced_choice": "direct", "forced-choice": "direct", "violation_judgment": "metalinguistic"},
    families={"direct": "violation_judgment", "violation_judgment": "violation_judgment",
              "forced_choice": "forced_choice", "forced-choice": "forced_choice", "production": "forced_choice"},
    low_demand=("forced_choice",))
