"""Judgment: a sentence (and a question), two or more labelled answers (README.md)."""
ORDER = 20
