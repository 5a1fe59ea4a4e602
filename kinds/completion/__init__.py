"""Completion: a sentence prefix, the next word typed (README.md)."""
ORDER = 50
