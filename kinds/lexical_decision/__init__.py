"""Lexical decision: a letter string, word or non-word (README.md)."""
ORDER = 70
