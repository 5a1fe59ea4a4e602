"""Violation detection (Lakretz et al. 2021): RSVP sentence, report a violation by key or on a panel.

The Lakretz runners implement it as before; it is in the registry so every runner and `validate`
read one list. `forced_choice` (the model-only Lakretz forced choice at the critical verb) is here too.
A Lakretz trial is a generic `Trial` whose materials are a study's trial record (structure, condition,
dependency, violation_position, words, critical_index, ...: the registered records' keys,
experiments.trials.record_keys); a design file's violation-detection item gives `sentence` and `answer`.
"""
from __future__ import annotations

import random
from typing import Any, Literal

from kinds.api import Answer, KindSettings, TaskError, TaskKind, TaskSettings, Trial, missing, pair_missing, record_keys

ANSWERS = ("violation", "no_violation")


class ViolationDetectionSettings(KindSettings):
    """Violation detection's settings: the `task:` fields every spec has had since the first release
    (declared on experiments.spec_model.Task, which checks them and hashes them in every spec; this
    model reads them from there). `response: key`: press `response_key` on noticing an error (go/no-go);
    `panel`: answer on the two-option panel after the sentence (`panel`: labels, keys, left, mouse, question)."""

    response: Literal["key", "panel"] = "key"
    panel: Any = None  # the spec's Panel, as a mapping (labels, keys, left, mouse, question)
    response_key: str = "space"
    respond_during_sentence: bool = True
    response_prompt: str = "?"


def human_settings(st: Any, given: dict[str, Any], lang: str, n_options: int) -> dict[str, Any]:
    """The answers in screen order with their keys: the panel's two (its `left` answer first), or with
    `response: key` the one key that reports a violation (no press: no violation)."""
    panel = st.panel
    if st.response != "panel" or panel is None:
        return {"labels": (("violation", st.response_prompt),), "keys": (st.response_key,), "mouse": False}
    left = panel["left"]
    order = (left, next(a for a in ANSWERS if a != left))
    return {"labels": tuple((a, panel["labels"][a]) for a in order), "keys": tuple(panel["keys"][a] for a in order),
            "mouse": bool(panel["mouse"])}


def answers(trial: Trial, s: TaskSettings, order: list[int] | None = None) -> list[Answer]:
    """The answers on screen (human_settings): the panel's, left to right, or the violation key."""
    return [Answer(v, lab, k) for (v, lab), k in zip(s.labels, s.keys, strict=False)]


# ---- what a person's answer means (the rules both renderers, RSVP in PsychoPy and the page, call) ----------
def key_response(pressed: bool) -> str:
    """`response: key` (go/no-go): a press of the response key in the window reports a violation; none, none."""
    return "violation" if pressed else "no_violation"


def outcome(trial: Any, response: str, answered: bool = True) -> bool | None:
    """Whether a person's answer is right, as the rows have recorded it since the first release: the response
    against the trial's correct response (a filler's too); None for a panel left unanswered. (`score`, which
    leaves fillers unscored, is the rule the analysis and the model runner read.)"""
    if not answered:
        return None
    return response == trial.study_record.correct_response


def response_times(answer_at: float | None, critical_onset: float, sentence_end: float, panel_onset: float | None,
                   ms: Any) -> tuple[float | None, float | None]:
    """(rt_ms, rt_sentence_end_ms) of an answer at `answer_at` (None: no answer) on the renderer's clock:
    from the panel's onset (`response: panel`) or else from the critical word's onset, and from the
    sentence's end; `ms` turns a difference on that clock into the recorded ms (each renderer's rounding)."""
    if answer_at is None:
        return None, None
    ref = panel_onset if panel_onset is not None else critical_onset
    return ms(answer_at - ref), ms(answer_at - sentence_end)


def autopilot_answer(trial: Any, seed: str, accuracy: float, window_ms: float,
                     panel: bool) -> tuple[str, bool, float | None, float | None]:
    """A simulated participant's answer (right with probability `accuracy`), drawn from (seed, trial index):
    (response, right, rt_ms, early_ms). Key response: a violation is pressed 250 ms to the end of the window
    after the critical word's onset (`window_ms`: the time left from there). Panel: the answer 250-900 ms
    after the panel's onset (`window_ms`: the response window), and on some violation answers an early
    press of the violation key during the sentence."""
    rng = random.Random(f"{seed}:panel:{trial.trial_index}" if panel else f"{seed}:{trial.trial_index}")
    right = rng.random() < accuracy
    wrong = "no_violation" if trial.study_record.correct_response == "violation" else "violation"
    response = trial.study_record.correct_response if right else wrong
    if panel:
        rt = round(rng.uniform(250.0, max(300.0, min(900.0, window_ms - 200.0))), 1)
        early = round(rng.uniform(100.0, 400.0), 1) if response == "violation" and rng.random() < 0.5 else None
        return response, right, rt, early
    rt_key = None
    if response == "violation":
        hi = max(300.0, min(900.0, window_ms - 150.0))
        rt_key = round(rng.uniform(250.0, hi), 1)
    return response, right, rt_key, None


def check_item(mat: dict[str, Any], settings: Any, where: str) -> None:
    """A design file's item: a `sentence` and an `answer` of violation or no_violation (a Lakretz trial's
    materials come from the generator and carry its correct response)."""
    if mat.get("answer") not in ANSWERS:
        raise TaskError(f"{where}: task violation_detection needs an `answer` column of violation or no_violation "
                        f"(got {mat.get('answer', '')!r})")
    if not str(mat.get("sentence") or "").strip():
        raise TaskError(f"{where}: task violation_detection needs a `sentence` on every row")


def check_design(exp: Any) -> None:
    """A design spec (items from a file) answers on the panel: the key response times a critical word,
    which a design's items do not mark."""
    if exp.task.response != "panel":
        raise ValueError("a design spec with task.kind violation_detection needs `response: panel` (the key "
                         "response times a critical word, which a design's items do not mark)")


def score(trial: Trial, response: Any) -> bool | None:
    """violation / no_violation against the trial's correct response; a filler (`other`) is never scored."""
    if missing(response) or trial.study_record.violation_position == "other":
        return None
    return str(response) == trial.study_record.correct_response


def score_forced_choice(trial: Any, response: Any) -> bool | None:
    """The chosen form against the grammatical form at the critical position."""
    return None if missing(response) else str(response) == trial.study_record.correct_form


def check_forced_choice(exp: Any, trials: Any) -> None:
    """`task.kind: forced_choice` asks every trial for the critical word's two forms: refuse (ValueError
    naming the item and what it lacks) a spec whose items have none, as `run-model` would, at `validate`.
    `trials`: a compiled sequence of the spec (the caller compiles: this unit never imports the compiler)."""
    if exp.task.kind != "forced_choice":
        return
    for trial in trials:
        miss = pair_missing(trial)
        if miss:
            raise ValueError(f"task.kind forced_choice compares the critical word with its number-flipped form; "
                             f"item {trial.item_id!r} (block {trial.block}) lacks {'; '.join(miss)}: use a "
                             "judgment or violation_detection task for items without a critical word")


KIND = TaskKind(
    name="violation_detection", description="RSVP sentence; report a violation (key or panel)",
    # a design file's item: sentence + answer (checked by the design compiler); a study's trial: its record
    materials=(), optional_materials=("sentence", "answer", *record_keys()), runners=("psychopy", "browser", "model"),
    model_protocols=("violation_judgment", "forced_choice", "direct", "surprisal"), score=score,
    settings=ViolationDetectionSettings, check_item=check_item, answers=answers, human_settings=human_settings,
    detection=lambda settings: ("no_violation", "violation"), renderer="rsvp", check_design=check_design,
    summary=lambda task: f"response={task.response}",
)
