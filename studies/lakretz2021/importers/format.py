"""Facts about the Lakretz et al. (2021) release format, in one place (checked on the public files).

Session logs (`logLocalGlobalParadigm_<date>_<time>_Subj_<n>_sess_<k>.csv`, training sessions with a
`train_` prefix) are tab separated, CRLF, with an 11-name header; each line is one event. Lines end
with a tab, so trial events have 11 or 12 fields and GrandStart/BlockStart have 8. Per trial:

    FIX_ON (Sentence_type, Condition, Viol_on_slide) -> WORD_ON/WORD_OFF per RSVP unit (SlideNum
    1-based, WordStr the unit, e.g. "l' attore") -> optional KEY_PRESS (early 'VIOLATION' key, during
    the sentence or the fixation before the panel) -> FIX2PANEL_ON -> PanelOn -> PanelResp (WordStr
    VIOLATION/ACCEPTABLE, empty on a timeout; Time = response time in s from PanelOn) ->
    FeedbackOn/FeedbackOff -> END_TRIAL (WordStr = outcome code; Time = the release's `RT`: first key
    press minus the onset of slide |Viol_on_slide|, 0 without a press).

Times are PsychoPy-clock seconds printed with MATLAB num2str's precision (see `num2str`).
Training logs use block 0 and have no GrandStart line; the main logs use block 1.

Outcome codes (END_TRIAL, and the table's `correct_wrong`): CORRECT/WRONG is the panel answer's
correctness; `_INC` marks an early key press inconsistent with the panel answer (or a missing press
on a violation answered VIOLATION); `_DDC` marks no panel answer (timeout; the table's valid_answer
REJECTED).

The log names two sentence types differently from the results table: `objrel_that` is the table's
`objrel`, `embedding_mental` the table's `embedding_mental_LR`; `Violation_type` NaN is the table's
`None`. `Viol_on_slide` > 0 is a Violation trial, < 0 a Filler, 0 Acceptable.
"""
from __future__ import annotations

import math
import re

LOG_HEADER = ("Event", "Block", "Trial", "StimNum", "SlideNum", "WordStr", "Time", "Sentence_type", "Condition",
              "Viol_on_slide", "Violation_type")
LOG_FIELDS = LOG_HEADER + ("_trailing",)  # every line ends with a tab
LOG_NAME = re.compile(r"^(?P<train>train_)?logLocalGlobalParadigm_(?P<date>\d{4}[A-Za-z]{3}\d{2})_(?P<time>\d{6})"
                      r"_Subj_(?P<subject>\d+)_sess_(?P<session>\d+)\.csv$")
LOG_GLOB = "*logLocalGlobalParadigm_*.csv"

SESSION_EVENTS = ("GrandStart", "BlockStart")
TRIAL_EVENTS = ("FIX_ON", "WORD_ON", "WORD_OFF", "KEY_PRESS", "FIX2PANEL_ON", "PanelOn", "PanelResp", "FeedbackOn",
                "FeedbackOff", "END_TRIAL")
KNOWN_EVENTS = SESSION_EVENTS + TRIAL_EVENTS
# events that occur once per trial (a second one is an error)
SINGLE_EVENTS = ("FIX_ON", "FIX2PANEL_ON", "PanelOn", "PanelResp", "FeedbackOn", "FeedbackOff", "END_TRIAL")
# fields a line must have (Event .. Viol_on_slide) and, for these events, Violation_type too
WIDE_EVENTS = ("WORD_ON", "FIX2PANEL_ON", "PanelOn", "PanelResp", "END_TRIAL")

TABLE_COLUMNS = ("subject", "sentence_type", "trial_type", "violation_type", "violation_position",
                 "congruent_subjects", "congruent_attractor", "congruent_subjects_attractor", "condition",
                 "correct_wrong", "valid_answer", "block", "trial_num", "slide_num_of_viol", "RT", "is_outlier")
TABLE_REQUIRED = ("subject", "sentence_type", "trial_type", "violation_type", "condition", "valid_answer",
                  "trial_num")

# log sentence type -> results-table sentence type (the table's names are the canonical ones here)
TABLE_TYPE_OF_LOG = {"objrel_that": "objrel", "embedding_mental": "embedding_mental_LR",
                     "objrel_nounpp": "objrel_nounpp", "embedding_mental_SR": "embedding_mental_SR"}
LOG_TYPE_OF_TABLE = {v: k for k, v in TABLE_TYPE_OF_LOG.items()}
STRUCTURE_OF_TYPE = {"objrel": "short_nested", "objrel_nounpp": "long_nested",
                     "embedding_mental_SR": "short_successive", "embedding_mental_LR": "long_successive"}
NESTED_TYPES = ("objrel", "objrel_nounpp")
CONDITIONS_OF_TYPE = {
    "objrel": ("SS", "SP", "PS", "PP"), "embedding_mental_SR": ("SS", "SP", "PS", "PP"),
    "objrel_nounpp": ("SSS", "SSP", "SPS", "SPP", "PSS", "PSP", "PPS", "PPP"),
    "embedding_mental_LR": ("SSS", "SSP", "SPS", "SPP", "PSS", "PSP", "PPS", "PPP"),
}
VIOLATION_TYPES = ("None", "V1", "V2", "N1", "N2", "FA", "FI")
TRIAL_TYPES = ("Acceptable", "Violation", "Filler")
OUTCOMES = ("CORRECT", "CORRECT_INC", "CORRECT_DDC", "WRONG", "WRONG_INC", "WRONG_DDC")
VALID_ANSWER_OF_OUTCOME = {"CORRECT": "CORRECT", "CORRECT_INC": "CORRECT", "CORRECT_DDC": "REJECTED",
                           "WRONG": "WRONG", "WRONG_INC": "WRONG", "WRONG_DDC": "REJECTED"}
PANEL_RESPONSE = {"VIOLATION": "violation", "ACCEPTABLE": "no_violation", "": "none"}

# 0-based RSVP unit of the verb named by Violation_type, per (table sentence type, V1/V2); checked on
# the sample's words. Viol_on_slide agrees (|slide| - 1) except in objrel_nounpp, where it is one more.
CRITICAL_UNIT = {("objrel", "V1"): 3, ("objrel", "V2"): 4, ("objrel_nounpp", "V1"): 5, ("objrel_nounpp", "V2"): 6,
                 ("embedding_mental_SR", "V1"): 1, ("embedding_mental_SR", "V2"): 4,
                 ("embedding_mental_LR", "V1"): 1, ("embedding_mental_LR", "V2"): 6}


def trial_type_of_slide(slide: int) -> str:
    """The release codes the trial type in the sign of Viol_on_slide."""
    return "Violation" if slide > 0 else ("Filler" if slide < 0 else "Acceptable")


def dependency_of(table_type: str, violation_type: str) -> str:
    """V1/V2 is the verb in linear order: V1 inner in nested types, outer (the main verb) in successive ones."""
    if violation_type not in ("V1", "V2"):
        return "other"
    if table_type in NESTED_TYPES:
        return "inner" if violation_type == "V1" else "outer"
    return "outer" if violation_type == "V1" else "inner"


def num2str(x: float) -> str:
    """A number as the release prints it (MATLAB num2str: max(ceil(log10|x|), 1) + 4 significant digits)."""
    if x == 0 or x != x:
        return "0" if x == 0 else "NaN"
    digits = max(math.ceil(math.log10(abs(x))), 1) + 4
    text = f"{x:.{digits}g}"
    if "e" in text:  # num2str never switches to exponent notation in this range; keep it plain
        text = f"{x:.{max(digits - 1, 0)}f}".rstrip("0").rstrip(".")
    return text
