"""Maze (Forster; A-maze: Boyce, Futrell & Levy 2020): each word beside a distractor, the reader picks the word
that continues the sentence; per-word RTs; after an error the sentence ends or waits (README.md)."""
ORDER = 80
# the kind's own screen texts (experiments/screen_texts.py `kind_text`): the `hint` default, English and Italian
# (`error_text` is a setting)
TEXTS = {"en": {"hint": "{left} for the left word, {right} for the right word"},
         "it": {"hint": "{left} per la parola a sinistra, {right} per la parola a destra"}}
