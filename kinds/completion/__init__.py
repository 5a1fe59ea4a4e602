"""Completion: a sentence prefix, the next word typed (README.md)."""
ORDER = 50

# the trial-table columns this kind adds to the core's (experiments/schema.py): (column, pandas dtype, meaning)
COLUMNS = (
    ("response_text", "string", "completion: the typed (humans) or generated (models) text"),
    ("keystrokes", "string", "completion, humans: JSON list of [key, ms from prompt onset]"),
)
