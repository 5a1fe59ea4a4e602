"""The one trial-table schema shared by human and model sessions.

Every row has every column (empty where it does not apply), so a human table and a model table
concatenate without surprises. Runner-specific details that do not deserve a column go in `extra`
as JSON.
"""
from __future__ import annotations

from typing import Any

# (column, pandas dtype, meaning)
COLUMNS: list[tuple[str, str, str]] = [
    ("subject_id", "string", "participant id or model-subject id"),
    ("subject_kind", "string", "human or model"),
    ("session", "Int64", "session number (1-based)"),
    ("experiment", "string", "experiment name from the spec"),
    ("spec_hash", "string", "hash of the validated spec"),
    ("sequence_hash", "string", "hash of the compiled trial sequence"),
    ("block", "string", "block name (e.g. training, test)"),
    ("trial_index", "Int64", "0-based position in the session"),
    ("block_trial_index", "Int64", "0-based position inside the block"),
    ("item_id", "string", "stimulus item id"),
    ("structure", "string", "sentence structure (long_nested, short_nested, ...)"),
    ("condition", "string", "grammatical number of the nouns, e.g. PSP"),
    ("dependency", "string", "critical dependency: inner or outer"),
    ("violation_position", "string", "none, inner or outer (other: an imported filler with a violation elsewhere, never scored)"),
    ("grammatical", "boolean", "True when the sentence has no violation"),
    ("words", "string", "the sentence as presented"),
    ("critical_index", "Int64", "0-based index of the critical word"),
    ("critical_word", "string", "critical word as presented"),
    ("correct_form", "string", "grammatical form at the critical position"),
    ("alternative_word", "string", "number-flipped form of the presented critical word"),
    ("correct_response", "string", "violation or no_violation"),
    ("lexicon", "string", "lexicon the item was built from"),
    ("feedback", "boolean", "the block gives feedback after this trial"),
    ("response", "string", "the subject's response (violation, no_violation, a chosen form, or none)"),
    ("correct", "boolean", "response matches the correct response"),
    ("response_mode", "string", "how the answer was given: key (go/no-go during the sentence) or panel (two-option panel after it)"),
    ("rsvp_units", "string", "JSON list of the RSVP units as shown, when a unit holds more than one word (e.g. Italian \"l' uomo\"); empty when every unit is one word of `words`"),
    ("rt_ms", "Float64", "humans: response time (ms) from critical-word onset (key mode) or from panel onset (panel mode)"),
    ("rt_sentence_end_ms", "Float64", "humans: response time from sentence end (ms)"),
    ("early_response", "string", "humans, panel mode: the answer of the first key press during the sentence (empty if none)"),
    ("early_response_unit", "Int64", "humans, panel mode: 0-based RSVP unit on screen (or just shown) at that early press"),
    ("early_response_ms", "Float64", "humans, panel mode: time of that early press from the first word onset (ms)"),
    ("word_onsets_ms", "string", "humans: JSON list of word onsets from win.flip() (ms from trial start)"),
    ("word_durations_ms", "string", "humans: JSON list of measured word durations (ms)"),
    ("protocol", "string", "models: response protocol"),
    ("context_mode", "string", "none, fewshot:<set>, running, or human"),
    ("option_labels", "string", "models: JSON list of the options scored"),
    ("option_logprobs", "string", "models: JSON list of summed log-probabilities, one per option"),
    ("margin", "Float64", "models: logP(correct option) - logP(other option)"),
    ("feedback_shown", "boolean", "feedback was given after this trial"),
    ("feedback_text", "string", "the feedback text shown"),
    ("started_at", "string", "ISO time the trial started"),
    ("ended_at", "string", "ISO time the trial ended"),
    ("extra", "string", "JSON with runner-specific details"),
]

# The general model's columns (docs/general_model.md). A session whose trials are all Lakretz trials
# keeps the header above byte for byte (its tables and resumes are unchanged); a session of a general
# design writes COLUMNS + GENERIC_COLUMNS + its factors' own columns (named in the sidecar's `design`).
GENERIC_COLUMNS: list[tuple[str, str, str]] = [
    ("item", "string", "the item group: one lexical item across its conditions"),
    ("list", "Int64", "the counterbalanced list (1-based) the subject was assigned to"),
    ("task", "string", "task kind: judgment, choice, rating, completion, self_paced_reading, lexical_decision, ..."),
    ("role", "string", "test, filler or practice"),
    ("materials", "string", "JSON object: the item's materials (sentence, options, prefix, target, ...)"),
    ("option_order", "string", "choice: JSON list of the options' original indices (0-based) in the order shown"),
    ("chosen_position", "Int64", "choice: 0-based screen position of the chosen option"),
    ("rating", "Float64", "rating: the scale point chosen (humans) or the argmax (models)"),
    ("rating_expected", "Float64", "rating, models: expected value of the scale under the model's distribution"),
    ("response_text", "string", "completion: the typed (humans) or generated (models) text"),
    ("keystrokes", "string", "completion, humans: JSON list of [key, ms from prompt onset]"),
    ("word_rts_ms", "string", "self-paced reading, humans: JSON list of reading times (ms), one per word of `words`"),
    ("region_rts_ms", "string", "self-paced reading, humans: JSON list of reading times (ms), one per region"),
    ("word_surprisal_bits", "string", "models, surprisal: JSON list of surprisal (bits), one per word of `words`"),
    ("option_mean_logprobs", "string", "models: JSON list of per-token mean log-probabilities, one per option"),
    ("target_logprob", "Float64", "models, completion/direct: log P(target | prefix), summed over its tokens"),
    ("target_rank", "Int64", "models, completion/direct: rank of the target's first token (1 = most probable)"),
    ("sentence_logprob", "Float64", "models: log P(sentence), summed over its tokens"),
]
GENERIC_COLUMN_NAMES: list[str] = [c for c, _, _ in GENERIC_COLUMNS]

COLUMN_NAMES: list[str] = [c for c, _, _ in COLUMNS]
DTYPES: dict[str, str] = {c: t for c, t, _ in COLUMNS + GENERIC_COLUMNS}
DESCRIPTIONS: dict[str, str] = {c: d for c, _, d in COLUMNS + GENERIC_COLUMNS}
# columns every loader insists on (the rest may be empty): a Lakretz session's. The Lakretz ones among
# them (structure, dependency, violation_position) are violation detection's: a table of a general design
# still has them in its header (byte for byte as recorded) but need not fill them (required_columns).
REQUIRED: tuple[str, ...] = (
    "subject_id", "subject_kind", "experiment", "block", "trial_index", "structure", "condition",
    "dependency", "violation_position", "correct",
)


def required_columns(generic: bool) -> tuple[str, ...]:
    """The columns a table must have and fill: REQUIRED for a Lakretz session, without violation
    detection's own columns (studies.lakretz2021.materials.TABLE_REQUIRED) for a general design."""
    from studies.lakretz2021.materials import TABLE_REQUIRED

    return tuple(c for c in REQUIRED if not (generic and c in TABLE_REQUIRED))


class SchemaError(ValueError):
    """A row or table does not fit the trial-table schema."""


def table_columns(factors: tuple[str, ...] | list[str] = (), generic: bool = False) -> list[str]:
    """A session's header: COLUMN_NAMES (a Lakretz session, byte for byte), or for a general design
    COLUMN_NAMES + GENERIC_COLUMN_NAMES + its factors' own columns (a factor named like a Lakretz
    column, e.g. `condition`, fills that column instead of adding one)."""
    if not generic and not factors:
        return list(COLUMN_NAMES)
    return COLUMN_NAMES + GENERIC_COLUMN_NAMES + [f for f in factors if f not in COLUMN_NAMES]


def is_table_header(header: list[str]) -> bool:
    """A header this version writes: the Lakretz columns, or those + the generic ones + factor names."""
    base = COLUMN_NAMES + GENERIC_COLUMN_NAMES
    return header == COLUMN_NAMES or (header[: len(base)] == base and len(set(header)) == len(header))


def check_row(row: dict[str, Any], columns: list[str] | None = None) -> dict[str, Any]:
    """Reject unknown columns (typos would otherwise vanish silently); fill missing ones with None.

    `columns`: the session's header (default: the Lakretz columns)."""
    columns = COLUMN_NAMES if columns is None else columns
    unknown = sorted(set(row) - set(columns))
    if unknown:
        raise SchemaError(f"unknown trial-table column(s): {', '.join(unknown)}")
    return {c: row.get(c) for c in columns}
