"""The trial-table columns every session has (the core's) and the dtypes a column may have: plain data, read by
experiments/schema.py and by the registry of kinds and studies (experiments/kinds.py), which refuses a third
party's declaration that takes one of them before the schema is built."""
from __future__ import annotations

DTYPE_NAMES = ("string", "Int64", "Float64", "boolean")  # the pandas dtypes a column may have

# (column, pandas dtype, meaning)
CORE_COLUMNS: tuple[tuple[str, str, str], ...] = (
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
    ("condition", "string", "the trial's condition: a design's factor levels joined, or a study's cell"),
    ("grammatical", "boolean", "True when the sentence has no violation"),
    ("words", "string", "the sentence as presented"),
    ("correct_response", "string", "the item's right answer (a design's `answer`; empty where it has none)"),
    ("feedback", "boolean", "the block gives feedback after this trial"),
    ("response", "string", "the subject's response (the kind's answer value, or none)"),
    ("correct", "boolean", "response matches the correct response"),
    ("response_mode", "string", "how the answer was given (the kind's: key, panel, task, ...)"),
    ("rt_ms", "Float64", "humans: response time (ms), from the onset the kind names"),
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
    ("item", "string", "the item group: one lexical item across its conditions"),
    ("list", "Int64", "the counterbalanced list (1-based) the subject was assigned to"),
    ("task", "string", "task kind: judgment, choice, rating, completion, self_paced_reading, lexical_decision, ..."),
    ("role", "string", "test, filler or practice"),
    ("materials", "string", "JSON object: the item's materials (sentence, options, prefix, target, ...)"),
    ("word_surprisal_bits", "string", "models, surprisal: JSON list of surprisal (bits), one per word of `words`"),
    ("option_mean_logprobs", "string", "models: JSON list of per-token mean log-probabilities, one per option"),
    ("target_logprob", "Float64", "models, completion/direct: log P(target | prefix), summed over its tokens"),
    ("target_rank", "Int64", "models, completion/direct: rank of the target's first token (1 = most probable)"),
    ("sentence_logprob", "Float64", "models: log P(sentence), summed over its tokens"),
)
