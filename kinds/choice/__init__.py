"""Choice: a question or a sentence prefix and options, one of which may be the answer (README.md)."""
ORDER = 30
