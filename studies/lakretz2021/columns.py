"""The trial-table columns this study adds to the core's, and the header layout every session has written.

Plain data (no imports): experiments/schema.py collects it through experiments/studies.py (`TABLE` in the
study's `__init__` names this module). Three things:

- `COLUMNS`: the Lakretz item record's columns (materials.KEYS beyond the core's `condition`, `words` and
  `correct_response`): the nested structure, the critical verb and its forms, the lexicon. They are the
  paradigm's, not violation detection's as a kind: what the RSVP runner measures and how a person answers
  (response_mode, early responses, word onsets, ...) is the kind's (kinds/violation_detection/__init__.py).
  Only this study's own tables carry them.
- `HEADER`: the layout of every Lakretz session, byte for byte. `EARLIER_GENERAL_HEADER`: the layout general
  designs' sessions were written with before their tables left this study's columns out (then their kinds'
  columns it does not name, then their factors): such a session keeps it when resumed, its rows filled with
  the values those sessions always held (materials.design_values).
- `TABLE_REQUIRED`: what a Lakretz table must fill beyond the core's required columns; `DESCRIBED_AS`: the
  words the Psych-DS description of a dataset (experiments/session.py) has always carried for four core
  columns, whose meaning the core states generally.
"""

# (column, pandas dtype, meaning)
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("structure", "string", "sentence structure (long_nested, short_nested, ...)"),
    ("dependency", "string", "critical dependency: inner or outer"),
    ("violation_position", "string", "none, inner or outer (other: an imported filler with a violation elsewhere, "
                                     "never scored)"),
    ("critical_index", "Int64", "0-based index of the critical word"),
    ("critical_word", "string", "critical word as presented"),
    ("correct_form", "string", "grammatical form at the critical position"),
    ("alternative_word", "string", "number-flipped form of the presented critical word"),
    ("lexicon", "string", "lexicon the item was built from"),
)

HEADER: tuple[str, ...] = (
    "subject_id", "subject_kind", "session", "experiment", "spec_hash", "sequence_hash", "block", "trial_index",
    "block_trial_index", "item_id", "structure", "condition", "dependency", "violation_position", "grammatical",
    "words", "critical_index", "critical_word", "correct_form", "alternative_word", "correct_response", "lexicon",
    "feedback", "response", "correct", "response_mode", "rsvp_units", "rt_ms", "rt_sentence_end_ms",
    "early_response", "early_response_unit", "early_response_ms", "word_onsets_ms", "word_durations_ms",
    "protocol", "context_mode", "option_labels", "option_logprobs", "margin", "feedback_shown", "feedback_text",
    "started_at", "ended_at", "extra",
)
EARLIER_GENERAL_HEADER: tuple[str, ...] = HEADER + (
    "item", "list", "task", "role", "materials", "option_order", "chosen_position", "rating", "rating_expected",
    "response_text", "keystrokes", "word_rts_ms", "region_rts_ms", "word_surprisal_bits", "option_mean_logprobs",
    "target_logprob", "target_rank", "sentence_logprob",
)

# the columns a Lakretz table must fill besides the core's (a general design's table need not fill them)
TABLE_REQUIRED: tuple[str, ...] = ("structure", "dependency", "violation_position")

DESCRIBED_AS: dict[str, str] = {
    "correct_response": "violation or no_violation",
    "condition": "grammatical number of the nouns, e.g. PSP",
    "response": "the subject's response (violation, no_violation, a chosen form, or none)",
    "response_mode": "how the answer was given: key (go/no-go during the sentence) or panel (two-option panel after "
                     "it)",
    "rt_ms": "humans: response time (ms) from critical-word onset (key mode) or from panel onset (panel mode)",
}
