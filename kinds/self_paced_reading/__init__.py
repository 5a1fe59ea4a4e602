"""Self-paced reading: word by word (moving window), an optional comprehension question (README.md)."""
ORDER = 60

# the trial-table columns this kind adds to the core's (experiments/schema.py): (column, pandas dtype, meaning)
COLUMNS = (
    ("word_rts_ms", "string", "self-paced reading, humans: JSON list of reading times (ms), one per word of `words`"),
    ("region_rts_ms", "string", "self-paced reading, humans: JSON list of reading times (ms), one per region"),
)
