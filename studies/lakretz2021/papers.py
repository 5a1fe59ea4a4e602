"""The study's cells as the papers that re-used them name them (reproductions/: seeds/000 Lampinen 2024,
Hu & Levy 2023, Hu & Frank 2024), with the generator the reproductions draw their items from.

Why here: those papers test this study's cells, so which cells they test is the study's knowledge; the
reproductions read it through the registry (reproductions/common.py `cells_study`) and name no cell.
"""
from __future__ import annotations

from studies.lakretz2021.stimuli.generate import generate_items
from studies.lakretz2021.stimuli.structures import STRUCTURES

# what the reproductions read through the registry: the cells, their names, and the generator with its structures
__all__ = ["KEY_STRUCTURE", "KEY_CONDITION", "SUBTASKS", "HARDER", "TABLE_B1_CONDITIONS", "generate_items",
           "STRUCTURES"]

KEY_STRUCTURE = "long_nested"  # the structure the papers test (and humans' reference for the harder variants)
KEY_CONDITION = "PSP"  # seeds/000's key condition (the most attraction), drawn thick with the humans' line
# seeds/000's subtasks (BIG-bench names) -> the structure and the critical verb
SUBTASKS: dict[str, tuple[str, str]] = {
    "long_nested_inner_english": ("long_nested", "inner"),
    "long_nested_outer_english": ("long_nested", "outer"),
    "long_nested_inner_english_harder_more_center_distractors": ("long_nested_more_distractors", "inner"),
    "long_nested_inner_english_harder_more_depth": ("long_nested_deeper", "inner"),
}
HARDER = {"long_nested_more_distractors": "more center distractors", "long_nested_deeper": "more depth"}
TABLE_B1_CONDITIONS = ("SSS", "SSP", "SPP", "SPS", "PPP", "PPS", "PSS", "PSP")  # seeds/000 Table B1's column order
