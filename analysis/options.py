"""The options of one analysis run (`twinlab analyze` flags, `api.report` keywords).

Its own module so that the pipeline and the section writers share it without importing each other."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Options:
    seed: int = 0
    n_boot: int = 2000
    mixed: bool = True
    focus: str = "long_nested:PSP:inner"
    fmt: str = "auto"
    training_blocks: list[str] = field(default_factory=list)
    keep_outliers: bool = False
    rejected_rule: str = "paper"  # analysis/scoring.py: how REJECTED trials count in first encounters and exposures
    show_progress: bool = True
    by: list[str] = field(default_factory=list)  # --by: the factors of the rates tables (default: the design's)
    formula: str = ""  # --formula: the analyst's lme4 formula
    family: str = "auto"  # --family: auto | binomial | gaussian | ordinal
    gap_pairs: list[tuple[str, str]] = field(default_factory=list)  # --gap LOW=>HIGH (default: every pair)
    model_copies: str = "merge"  # --model-copies: merge deterministic model copies into one subject, or keep "subjects"
    rt_trim: tuple[float, float] = (200.0, 3000.0)  # --rt-trim LOW,HIGH: response times (ms) kept, inclusive
    rt_sd: float = 2.5  # --rt-sd: drop RTs beyond this many SDs of the subject's mean (0: off)
    region: str = ""  # --region NAME: --formula fitted on that region's rows (analysis/tasks_reading.py)
    word: int = 0  # --word N: --formula fitted on the N-th word's rows
    word_rt_range: tuple[float, float] = (100.0, 5000.0)  # --word-rt-range: self-paced reading's `rt_range` rule
    exclude_wrong_answers: bool = False  # --exclude-wrong-answers: self-paced reading's `wrong_answer` rule
    blocks: str = "test"  # --blocks: test | training,test | all -- the rows of the rates, --formula and learning fits
