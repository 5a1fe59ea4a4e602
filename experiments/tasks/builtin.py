"""The built-in task kinds, one module each; importing this registers them in a fixed order."""
from __future__ import annotations

from experiments.tasks import (violation_detection, judgment, choice, rating, completion,  # noqa: F401
                               self_paced_reading, lexical_decision)
