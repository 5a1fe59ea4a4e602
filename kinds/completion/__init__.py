"""Completion: a sentence prefix, the next word typed (README.md)."""
ORDER = 50
# the kind's own screen texts (experiments/screen_texts.py `kind_text`); the spec's `task.hint` overrides it
TEXTS = {"en": {"hint": "Type your answer and press {key}"}, "it": {"hint": "Scrivi la risposta e premi {key}"}}
