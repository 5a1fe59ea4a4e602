"""Which tool wrote a table, from its header: so that a file given to the wrong reader is named as what it is."""
from __future__ import annotations

# columns only one tool writes
SIGNS = {
    "psychopy": ("psychopyVersion", "frameRate", "expName"),
    "jspsych": ("trial_type", "trial_index", "time_elapsed", "internal_node_id"),
    "pcibex": ("PennElementType", "PennElementName", "MD5 hash of participant's IP address", "Controller name"),
}


def other_tool(header: list[str]) -> str | None:
    """The tool whose own columns the header holds (at least two of them), else None."""
    have = set(header)
    best = max(SIGNS, key=lambda t: len(have & set(SIGNS[t])))
    return best if len(have & set(SIGNS[best])) >= 2 else None
