"""The built-in task kinds' analysis registrations, in the report's section order.

The `analysis` package imports this module, so it stays light (no pandas, no scipy: `twinlab --help`
and every command that never analyses pay nothing): each kind's flags are data here and its report
section is a hook that imports the kind's own unit (`analysis/tasks_<kind>.py`) when a report calls
it. A kind from outside (a plugin, a test's toy kind) calls `register_analysis_kind` itself.

- choice: people's RTs; its section (`tasks_choice.choice_section`): position bias and accuracy by the
  correct option's position.
- rating: its section (`tasks_rating_report.rating_section`): distributions, means (a model's expected
  value and argmax, named), the people's cumulative-link mixed model.
- completion: typed answers (a twin's likelihood is log P(the person's word)); its section
  (`tasks_completion.completion_section`): accuracy against the target and its accepted variants.
- judgment: acceptance and d′ from its accepting and rejecting labels (analysis/judgments.py), people's
  RTs; its `direct` protocol's two options (the sentence and its pair) read as the accepting and the
  rejecting value (the twins).
- lexical_decision: acceptance and d′ (word accepts, a non-word is the signal), people's RTs; the decision
  from a model's log-probabilities is its unit's (`tasks_lexical.py`).
- self_paced_reading: read word by word (its sections are the reading report's, `reading_report.py`; the
  twins' reading ΔLL reads its word rows).
- violation_detection (the Lakretz kind): acceptance and d′; a table without a `task` column (a Lakretz
  release, a session written before the general model) is this kind; how its model protocols' recorded
  names place in the demand gap (Hu & Frank): forced choice and `direct` read probabilities,
  `violation_judgment` asks the question; forced choice and production pose one task (the verb's form),
  `direct` and `violation_judgment` another; forced choice is the preferred low-demand partner.
"""
from __future__ import annotations

from analysis.kind_sections import AnalysisKind, register_analysis_kind, unit_hook

# each section is named by its unit and function, imported when a report calls it (an entry point, as a
# plugin's): the units import the analysis modules that read this registry, so a direct import here would
# be an import circle (tests/test_import_cycles.py) as well as slow
_choice_section = unit_hook("analysis.tasks_choice", "choice_section")
_rating_section = unit_hook("analysis.tasks_rating_report", "rating_section")
_completion_section = unit_hook("analysis.tasks_completion", "completion_section")


register_analysis_kind(AnalysisKind("choice", rt=True, section=_choice_section))
register_analysis_kind(AnalysisKind("rating", section=_rating_section))
register_analysis_kind(AnalysisKind("completion", typed=True, section=_completion_section))
register_analysis_kind(AnalysisKind("judgment", detection=True, rt=True, value_options=("judgment:direct",)))
register_analysis_kind(AnalysisKind("lexical_decision", detection=True, rt=True))
register_analysis_kind(AnalysisKind("self_paced_reading", word_by_word=True))  # its sections: reading_report
register_analysis_kind(AnalysisKind(
    "violation_detection", detection=True, untyped_tables=True,
    methods={"forced_choice": "direct", "forced-choice": "direct", "violation_judgment": "metalinguistic"},
    families={"direct": "violation_judgment", "violation_judgment": "violation_judgment",
              "forced_choice": "forced_choice", "forced-choice": "forced_choice", "production": "forced_choice"},
    low_demand=("forced_choice",)))
