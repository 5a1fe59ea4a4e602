"""The built-in task kinds, one module each; importing this registers them in a fixed order."""
from __future__ import annotations

import experiments.tasks.violation_detection  # noqa: F401
import experiments.tasks.judgment  # noqa: F401
import experiments.tasks.choice  # noqa: F401
import experiments.tasks.rating  # noqa: F401
import experiments.tasks.completion  # noqa: F401
import experiments.tasks.self_paced_reading  # noqa: F401
import experiments.tasks.lexical_decision  # noqa: F401
