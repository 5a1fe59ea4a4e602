"""Violation detection (Lakretz et al. 2021): an RSVP sentence, a violation reported by key or panel (README.md)."""
ORDER = 10

# the trial-table columns this kind adds to the core's (experiments/schema.py): (column, pandas dtype, meaning)
COLUMNS = (
    ("rsvp_units", "string", "JSON list of the RSVP units as shown, when a unit holds more than one word (e.g. Italian "
                             "\"l' uomo\"); empty when every unit is one word of `words`"),
    ("rt_sentence_end_ms", "Float64", "humans: response time from sentence end (ms)"),
    ("early_response", "string", "humans, panel mode: the answer of the first key press during the sentence (empty if "
                                 "none)"),
    ("early_response_unit", "Int64", "humans, panel mode: 0-based RSVP unit on screen (or just shown) at that early "
                                     "press"),
    ("early_response_ms", "Float64", "humans, panel mode: time of that early press from the first word onset (ms)"),
)
