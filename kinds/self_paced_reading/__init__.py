"""Self-paced reading: word by word (moving window), an optional comprehension question (README.md)."""
ORDER = 60

# the trial-table columns this kind adds to the core's (experiments/schema.py): (column, pandas dtype, meaning)
COLUMNS = (
    ("word_rts_ms", "string", "self-paced reading, humans: JSON list of reading times (ms), one per word of `words`"),
    ("region_rts_ms", "string", "self-paced reading, humans: JSON list of reading times (ms), one per region"),
)
# the kind's own screen texts (experiments/screen_texts.py `kind_text`); the spec's `task.hint` overrides it
TEXTS = {"en": {"hint": "Press {key} for the next word"}, "it": {"hint": "Premi {key} per la parola successiva"}}
