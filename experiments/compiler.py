"""The compiler's public names, where callers import them (the one compile path is
experiments/design_compiler.py; a study's own cells are its package's, e.g. studies/lakretz2021/cells.py)."""
from __future__ import annotations

from experiments.design_compiler import check_sizes, compile_sequence, compile_sessions  # noqa: F401
from experiments.subjects import subject_number  # noqa: F401 (re-exported: the rule lives there)
