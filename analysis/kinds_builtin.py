"""The built-in kinds' analysis units; importing this registers them, in the report's section order
(analysis/kind_sections.py imports it on first use)."""
from analysis import (tasks_choice, tasks_rating_report, tasks_completion, tasks_judgment,  # noqa: F401
                      tasks_lexical, tasks_violation)
