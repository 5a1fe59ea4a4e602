"""The trial table's JSON cells read one way: an item's `materials` (an object) and the per-word lists
(`word_rts_ms`, `word_surprisal_bits`, `option_order`, ...). A cell that is empty or not the JSON asked for
reads as nothing ({} or None), never as an error: the loader checked the table's columns, and each measure
says which rows it could not use."""
from __future__ import annotations

import json

import pandas as pd


def materials(df: pd.DataFrame) -> list[dict]:
    """Each row's materials (JSON object; {} where empty or unreadable)."""
    out = []
    for m in (df["materials"] if "materials" in df.columns else [None] * len(df)):
        try:
            v = json.loads(m) if isinstance(m, str) and m else {}
        except json.JSONDecodeError:
            v = {}
        out.append(v if isinstance(v, dict) else {})
    return out


def json_list(v) -> list | None:
    if not isinstance(v, str) or not v:
        return None
    try:
        x = json.loads(v)
    except json.JSONDecodeError:
        return None
    return x if isinstance(x, list) else None
