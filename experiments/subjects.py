"""A subject's number for counterbalancing (Latin-square lists, the Lakretz rotation): one rule that the
compiler and the design compiler share, in a module of its own so that neither imports the other."""
from __future__ import annotations

import hashlib
import re


def subject_number(subject_id: str) -> int:
    """A stable integer for counterbalancing: trailing digits if any (S07 -> 7), else a hash."""
    m = re.search(r"(\d+)$", subject_id)
    if m:
        return int(m.group(1))
    return int(hashlib.sha256(subject_id.encode()).hexdigest()[:8], 16)
