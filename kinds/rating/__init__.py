"""Rating: a sentence on a numbered scale with anchors (README.md)."""
ORDER = 40

# the trial-table columns this kind adds to the core's (experiments/schema.py): (column, pandas dtype, meaning)
COLUMNS = (
    ("rating", "Float64", "rating: the scale point chosen (humans) or the argmax (models)"),
    ("rating_expected", "Float64", "rating, models: expected value of the scale under the model's distribution"),
)
