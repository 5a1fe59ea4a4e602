"""Lexical decision: a letter string, word or non-word (README.md)."""
ORDER = 70
# the kind's own screen texts (experiments/screen_texts.py `kind_text`): its answers' labels, `label_<value>`
TEXTS = {"en": {"label_word": "Word", "label_nonword": "Not a word"},
         "it": {"label_word": "Parola", "label_nonword": "Non parola"}}
