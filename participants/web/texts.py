"""The texts the browser page shows: the shared screen-text module's bundle (one function, so the source can move).

`experiments.screen_texts` gives every text from the spec, with English defaults and a complete
Italian set; the PsychoPy runner reads the same strings.
"""
from __future__ import annotations

from typing import Any

from experiments.screen_texts import screen_bundle
from experiments.spec import Experiment


def page_texts(exp: Experiment) -> dict[str, Any]:
    """{'texts': key -> text, 'instructions': pages, 'block_intros': block -> text or None, ...}."""
    return screen_bundle(exp)
