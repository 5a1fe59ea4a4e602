"""Judgment: a sentence (and a question), two or more labelled answers (README.md)."""
ORDER = 20
# the kind's own screen texts (experiments/screen_texts.py `kind_text`): its answers' labels, `label_<value>`
TEXTS = {"en": {"label_yes": "Yes", "label_no": "No"}, "it": {"label_yes": "Sì", "label_no": "No"}}
