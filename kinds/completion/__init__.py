"""Completion: a sentence prefix, the next word typed (README.md)."""
ORDER = 50

# the trial-table columns this kind adds to the core's (experiments/schema.py): (column, pandas dtype, meaning)
COLUMNS = (
    ("response_text", "string", "completion: the typed (humans) or generated (models) text"),
    ("keystrokes", "string", "completion, humans: JSON list of [key, ms from prompt onset]"),
)
# the kind's own screen texts (experiments/screen_texts.py `kind_text`); the spec's `task.hint` overrides it
TEXTS = {"en": {"hint": "Type your answer and press {key}"}, "it": {"hint": "Scrivi la risposta e premi {key}"}}
