"""Self-paced reading: word by word (moving window), an optional comprehension question (README.md)."""
ORDER = 60
# the kind's own screen texts (experiments/screen_texts.py `kind_text`); the spec's `task.hint` overrides it
TEXTS = {"en": {"hint": "Press {key} for the next word"}, "it": {"hint": "Premi {key} per la parola successiva"}}
