"""Forced choice at the critical verb (models only): the correct form against its number-flipped form (README.md)."""
ORDER = 15
