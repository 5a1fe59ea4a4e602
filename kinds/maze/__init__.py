"""Maze (Forster; A-maze: Boyce, Futrell & Levy 2020): each word beside a distractor, the reader picks the word
that continues the sentence; per-word RTs; after an error the sentence ends or waits (README.md)."""
ORDER = 80

# the trial-table columns this kind adds to the core's (experiments/schema.py): (column, pandas dtype, meaning).
# No layout names them: a Maze session's header carries them after the general layout, before the factors.
# (The per-word RTs are self-paced reading's `word_rts_ms`, `region_rts_ms`, recorded without declaring them.)
COLUMNS = (
    ("word_correct", "string", "maze: JSON list, one per word of the sentence: the first pick was the word (true) "
                               "or its distractor (false); null: the word was never reached"),
    ("first_error", "Int64", "maze: 0-based index of the first word whose first pick was the distractor; "
                             "empty when every word reached was picked right"),
)
# the kind's own screen texts (experiments/screen_texts.py `kind_text`): the `hint` default, English and Italian
# (`error_text` is a setting)
TEXTS = {"en": {"hint": "{left} for the left word, {right} for the right word"},
         "it": {"hint": "{left} per la parola a sinistra, {right} per la parola a destra"}}
