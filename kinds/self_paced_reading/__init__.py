"""Self-paced reading: word by word (moving window), an optional comprehension question (README.md)."""
ORDER = 60
