"""Rating: a sentence on a numbered scale with anchors (README.md)."""
ORDER = 40
