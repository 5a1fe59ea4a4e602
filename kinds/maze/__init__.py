"""Maze (Forster; A-maze: Boyce, Futrell & Levy 2020): each word beside a distractor, the reader picks the word
that continues the sentence; per-word RTs; after an error the sentence ends or waits (README.md)."""
ORDER = 80
