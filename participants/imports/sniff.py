"""Which tool wrote a table, from its header: so that a file given to the wrong reader is named as what it is.

The columns only one tool writes are each importer's `signs` (registry.py, the one list of formats)."""
from __future__ import annotations

from participants.imports.registry import importers


def other_tool(header: list[str]) -> str | None:
    """The format whose own columns the header holds (at least two of them), else None."""

    have = set(header)
    counts = {name: len(have & set(imp.signs)) for name, imp in importers().items() if imp.signs}
    best = max(counts, key=lambda n: counts[n], default=None)
    return best if best is not None and counts[best] >= 2 else None
