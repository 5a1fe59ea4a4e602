"""A template task kind: copy this folder to start a kind of your own (docs/general_model/kinds.md "How to add a kind").

The folder `_template` is not registered (the registry skips folders whose name starts with "_"). Copied as
`kinds/<your_kind>/`, or into your own package named by a `twinlab.kinds` entry point, it is a working
kind named after its folder: a yes/no question about a sentence, asked of model subjects, its two answers
scored against the item's `answer`. Replace the question, the answers and the protocol with yours.

This module stays light (no imports): the registry reads these declarations without importing the kind.
"""
# where the kind stands in listings (runners' lists, the report's sections); default 1000, then by name
ORDER = 1000

# the trial-table columns the kind adds, as plain data: (column, pandas dtype, meaning); dtype one of
# string, Int64, Float64, boolean. A column the core or another kind declares is recorded, not declared again.
COLUMNS = (
    ("yes_margin", "Float64", "models: log P(' yes') - log P(' no') (the template kind's own column)"),
)
