"""The compiler's public names, where callers import them (the one compile path is
experiments/design_compiler.py; the Lakretz cells and items are experiments/sources/lakretz_cells.py)."""
from __future__ import annotations

from experiments.design_compiler import check_sizes, compile_sequence, compile_sessions  # noqa: F401
from experiments.sources.lakretz_cells import (VERSION_TO_VIOLATION, Cell, StructureInfo,  # noqa: F401
                                               block_cells, block_pool_size, design_size, structure_info)
from experiments.sources.lakretz_cells import _file_items  # noqa: F401 (model_subjects.run_checks)
from experiments.subjects import subject_number  # noqa: F401 (re-exported: the rule lives there)
