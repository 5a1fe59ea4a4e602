"""The public contract of a task kind: what a kind's `task` part imports
(docs/general_model/kinds.md "How to add a kind").

A kind fills `TaskKind` (its three typed sides, each with defaults: items and validation, presentation,
scoring) and gives plain functions whose signatures are the Protocols of experiments/tasks/hooks.py. The
helpers below are the ones the built-in kinds use; each is the one reading of its rule (a key name, a time
on the trial's clock, a normalised answer), so a kind that uses them agrees with every runner.

The other sides of a kind are its other parts, each built from its layer's public contract:
`model` (model_subjects.tasks.registry.ModelKind, model_subjects.tasks.base.TaskProtocol), `view`
(participants.tasks.window.TaskWindow), `analysis` (analysis.kind_sections.AnalysisKind), `importer`
(participants.imports.kind_importer.KindImporter). This module imports only experiments/, so a kind's task
part stays light (no PsychoPy, pandas or torch).
"""
from __future__ import annotations

from experiments.tasks.base import (
    ANSWER_FIELDS,
    ItemsSide,
    PresentationSide,
    ScoringSide,
    TaskError,
    TaskKind,
    no_answer,
)
from experiments.tasks.config import KindSettings, Label, Presentation, Scale, distinct_labels, valid_key
from experiments.tasks.detection import detection_values, judgment_values, label_field
from experiments.tasks.form_pair import other_form, pair_missing
from experiments.tasks.hooks import (
    JSON,
    Answers,
    CheckDesign,
    CheckItem,
    CheckKeys,
    CheckSequence,
    Derive,
    Detection,
    HumanSettings,
    OptionOrder,
    PageView,
    PersonResponse,
    Plan,
    RecordKeys,
    Score,
    Summary,
)
from experiments.tasks.keys import POSITION_KEYS, KeySettingError, choice_keys, clash, label_keys, types_text
from experiments.tasks.record import (
    CHAR_KEYS,
    FRAME_SLACK_MS,
    TEXT_KEYS,
    TaskResultError,
    counted_answer,
    derive_answer,
    event_time,
    is_text_key,
    pick_answer,
    plan_answer,
    round_ms,
    rt,
    typeable,
    typed_text,
)
from experiments.tasks.regions import regions
from experiments.tasks.scoring import RULE, equals_answer, missing, normalize_answer
from experiments.tasks.shown import Answer, TaskPlan, TaskSettings
from experiments.trials import Trial, record_keys

__all__ = [
    # the contract: the kind's class, its sides, its hooks' signatures, the types they receive
    "TaskKind", "ItemsSide", "PresentationSide", "ScoringSide", "TaskError", "no_answer", "ANSWER_FIELDS",
    "JSON", "Answers", "CheckDesign", "CheckItem", "CheckKeys", "CheckSequence", "Derive", "Detection", "HumanSettings",
    "OptionOrder", "PageView", "PersonResponse", "Plan", "RecordKeys", "Score", "Summary",
    "Trial", "TaskSettings", "Answer", "TaskPlan",
    # settings: the base of a kind's settings model and the pieces kinds share
    "KindSettings", "Label", "Scale", "Presentation", "valid_key", "distinct_labels",
    # keys the human runners can honour
    "KeySettingError", "POSITION_KEYS", "choice_keys", "clash", "label_keys", "types_text",
    # a raw record of a human trial: times, answers, typed text, the autopilot's plan
    "TaskResultError", "FRAME_SLACK_MS", "CHAR_KEYS", "TEXT_KEYS", "event_time", "round_ms", "counted_answer",
    "derive_answer", "plan_answer", "pick_answer", "rt", "is_text_key", "typeable", "typed_text",
    # scoring and detection
    "RULE", "equals_answer", "missing", "normalize_answer", "detection_values", "judgment_values", "label_field",
    "regions", "other_form", "pair_missing",
    # a study's trial record (the keys violation detection's items may carry: a Lakretz trial's)
    "record_keys",
]
