"""Violation detection (Lakretz et al. 2021): an RSVP sentence, a violation reported by key or panel (README.md)."""
ORDER = 10
