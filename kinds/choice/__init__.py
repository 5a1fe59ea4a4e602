"""Choice: a question or a sentence prefix and options, one of which may be the answer (README.md)."""
ORDER = 30

# the trial-table columns this kind adds to the core's (experiments/schema.py): (column, pandas dtype, meaning)
COLUMNS = (
    ("option_order", "string", "choice: JSON list of the options' original indices (0-based) in the order shown"),
    ("chosen_position", "Int64", "choice: 0-based screen position of the chosen option"),
)
