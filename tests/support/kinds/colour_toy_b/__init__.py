"""A toy kind for model subjects: is the word a colour? (tests/support/kinds/README.md)"""

# the trial-table column this kind adds (experiments/schema.py): its sessions' headers carry it, no other's
COLUMNS = (("colour_margin", "Float64", "colour_toy_b, models: log P(' colour') - log P(' other')"),)
