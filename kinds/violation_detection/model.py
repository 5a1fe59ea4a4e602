"""Violation detection (and its model-only sibling, forced choice) for models: the Lakretz protocols.

The kind's unit on the model side, beside the other kinds' (model_subjects/tasks/); its `MODEL` is read through the
kinds' registry (experiments/kinds.py); forced choice's (kinds/forced_choice/model.py) reuses it. Each protocol is
a small class with one job. It turns a Trial into one or more queries (a prompt and the answer options scored after
it), and the options' log-probabilities (or a generation) into a Decision: the response, whether it is correct, the
scores, the margin, and the answer text that a running context shows after the prompt. Prompts are plain text; the
context builder puts them after the instructions, few-shot prompt or session history.

Names (the `protocol` column):
  forced_choice                      log P(correct form) vs log P(number-flipped form) after the prefix
  direct                             violation reported if the presented word is less probable than its flip
  violation_judgment                 the human's question after the sentence; Yes/No by log-probability
  panel_judgment                     the response panel's question with its two labels as the answer options
                                     (the default for specs with task.response: panel)
  sentence_judgment:<PromptType>     Hu & Levy sentence judgment (Direct, MetaQuestionSimple, MetaInstruct,
                                     MetaQuestionComplex)
  sentence_comparison:<PromptType>   Hu & Levy sentence comparison (meta prompts in both answer orders)
  production[:lenient]               generate the answer to the human's question; strict (default) or
                                     lenient parsing decides the response (both are stored)
  production:completion[:lenient]    generate the word at the critical position; parsed against the two forms
"""
from __future__ import annotations

from typing import Any

from kinds.api import Trial, other_form
from model_subjects.parsing import parse_lenient, parse_strict
from model_subjects.protocol_base import Answer, Decision, Option, Protocol, ProtocolError, Query

QUESTION = "Does this sentence contain a grammatical error?"
PROMPT_TYPES = ("Direct", "MetaQuestionSimple", "MetaInstruct", "MetaQuestionComplex")

# Hu & Levy (seeds/003), Table 4a (sentence judgment) and 4b (sentence comparison).
JUDGMENT_TEMPLATES = {
    "MetaQuestionSimple": "Is the following sentence a good sentence of English? {s} "
                          "Respond with either Yes or No as your answer.",
    "MetaInstruct": "You are a helpful writing assistant. Tell me if the following sentence is a good sentence "
                    "of English. {s} Respond with either Yes or No as your answer.",
    "MetaQuestionComplex": "Here is a sentence: {s} Is the sentence a good sentence of English? "
                           "Respond with either Yes or No as your answer. Answer:",
}
COMPARISON_TEMPLATES = {
    "MetaQuestionSimple": "Which sentence is a better English sentence? 1) {s1} 2) {s2} "
                          "Respond with either 1 or 2 as your answer.",
    "MetaInstruct": "You are a helpful writing assistant. Tell me which sentence is a better English sentence. "
                    "1) {s1} 2) {s2} Respond with either 1 or 2 as your answer.",
    "MetaQuestionComplex": "Here are two English sentences: 1) {s1} 2) {s2} Which sentence is a better English "
                           "sentence? Respond with either 1 or 2 as your answer. Answer:",
}


def with_form(trial: Trial, form: str) -> str:
    """The trial's sentence with `form` at the critical position (keeps attached punctuation)."""
    words = list(trial.words)
    w = words[trial.study_record.critical_index]
    punct = w[len(trial.study_record.critical_word):] if w.startswith(trial.study_record.critical_word) else ""
    words[trial.study_record.critical_index] = form + punct
    return " ".join(words)


def grammatical_sentence(trial: Trial) -> str:
    return with_form(trial, trial.study_record.correct_form)


def ungrammatical_sentence(trial: Trial) -> str:
    return with_form(trial, other_form(trial))


def rest_after_critical(trial: Trial) -> str:
    rest = trial.words[trial.study_record.critical_index + 1:]
    return (" " + " ".join(rest)) if rest else ""


def _yes_no() -> tuple[Option, Option]:
    return Option("Yes", " Yes"), Option("No", " No")


def right_response(trial: Trial) -> str | None:
    """The response a judgment of the trial is scored correct on (violation / no_violation); None for any other
    record, which no judgment answers right."""
    r = trial.study_record.correct_response
    return r if r in ("violation", "no_violation") else None


YES_NO = {"violation": " Yes", "no_violation": " No"}  # the question "is there an error?" answered


# ---------------------------------------------------------------------------------- protocols
class ForcedChoice(Protocol):
    """Lakretz/Lampinen: at the critical verb, does the model prefer the correct form?"""

    name = "forced_choice"
    chat_ok = False
    needs_pair = True

    def queries(self, trial: Trial) -> list[Query]:
        c, o = trial.study_record.correct_form, other_form(trial)
        return [Query(" ".join(trial.study_record.prefix_words), (Option(c, " " + c), Option(o, " " + o)))]

    def correct_answer(self, trial: Trial) -> Answer | None:
        """The correct form and the rest of the sentence after it; none where the two forms are one word (no
        choice between them is scored correct)."""
        c = trial.study_record.correct_form
        return None if c == other_form(trial) else Answer(c, " " + c + rest_after_critical(trial))

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        lc, lo = scores[0]
        chosen = trial.study_record.correct_form if lc > lo else other_form(trial)
        return Decision(response=chosen, correct=lc > lo and trial.study_record.correct_form != other_form(trial),
                        option_labels=[trial.study_record.correct_form, other_form(trial)], option_logprobs=[lc, lo],
                        margin=lc - lo, answer_text=" " + chosen + rest_after_critical(trial))


class Direct(Protocol):
    """Violation detection from probabilities: a violation is reported when the presented word is
    less probable than its number-flipped alternative."""

    name = "direct"
    chat_ok = False
    needs_pair = True

    def queries(self, trial: Trial) -> list[Query]:
        r = trial.study_record
        p, a = r.critical_word, r.alternative_word
        return [Query(" ".join(r.prefix_words), (Option(p, " " + p), Option(a, " " + a)))]

    def correct_answer(self, trial: Trial) -> Answer | None:
        """The record's right response; the answer text is the presented sentence's rest, whatever the response
        (the history words it as a question: `history_entry`)."""
        response = right_response(trial)
        return None if response is None else Answer(response, " " + trial.study_record.critical_word
                                                    + rest_after_critical(trial))

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        r = trial.study_record
        lp, la = scores[0]
        response = "violation" if lp < la else "no_violation"
        l_correct = lp if r.critical_word == r.correct_form else la
        l_other = la if r.critical_word == r.correct_form else lp
        return Decision(response=response, correct=response == r.correct_response,
                        option_labels=[r.critical_word, r.alternative_word], option_logprobs=[lp, la],
                        margin=l_correct - l_other, answer_text=" " + r.critical_word + rest_after_critical(trial))

    def history_entry(self, trial: Trial, response: str) -> tuple[str, str]:
        """A running history shows the task's question and the answer the log-probabilities chose (Yes:
        a violation), as violation_judgment words them; the scored text itself is the sentence."""
        return ViolationJudgment().prompt(trial), YES_NO.get(response, "")


class ViolationJudgment(Protocol):
    """The human's task as a question after the whole sentence; Yes = 'there is an error'."""

    name = "violation_judgment"

    def __init__(self, question: str = QUESTION):
        self.question = question

    def prompt(self, trial: Trial) -> str:
        return f"{trial.sentence}\n{self.question}\nAnswer:"

    def queries(self, trial: Trial) -> list[Query]:
        return [Query(self.prompt(trial), _yes_no())]

    def correct_answer(self, trial: Trial) -> Answer | None:
        """The record's right response, answered Yes (a violation) or No."""
        response = right_response(trial)
        return None if response is None else Answer(response, self.answer_words(trial, response))

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        ly, ln = scores[0]
        response = "violation" if ly > ln else "no_violation"
        correct_yes = trial.study_record.correct_response == "violation"
        margin = (ly - ln) if correct_yes else (ln - ly)
        return Decision(response=response, correct=response == trial.study_record.correct_response,
                        option_labels=["Yes", "No"], option_logprobs=[ly, ln], margin=margin,
                        answer_text=" Yes" if ly > ln else " No")

    def answer_words(self, trial: Trial, response: str) -> str:
        """A response value (violation / no_violation: a person's, in a replay) as this protocol's answer."""
        return YES_NO.get(response, "")

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "question": self.question}


class PanelJudgment(Protocol):
    """What a human saw on a panel trial: the sentence, the panel's question, its two labels in
    screen order; the answer is the label with the higher log-probability (Lakretz et al. 2021)."""

    name = "panel_judgment"
    response_mode = "panel"  # the answer is one of the panel's two labels, as a person's panel answer

    def __init__(self, panel: Any):
        self.panel = panel
        other = "no_violation" if panel.left == "violation" else "violation"
        self.order = (panel.left, other)  # answers left to right, as on screen

    def prompt(self, trial: Trial) -> str:
        labels = self.panel.labels
        question = f"{self.panel.question}\n" if self.panel.question else ""
        return f"{trial.sentence}\n{question}{labels[self.order[0]]} / {labels[self.order[1]]}:"

    def queries(self, trial: Trial) -> list[Query]:
        labels = self.panel.labels
        return [Query(self.prompt(trial),
                      tuple(Option(labels[a], " " + labels[a]) for a in ("violation", "no_violation")))]

    def correct_answer(self, trial: Trial) -> Answer | None:
        """The record's right response, answered with its panel label."""
        response = right_response(trial)
        return None if response is None else Answer(response, self.answer_words(trial, response))

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        lv, ln = scores[0]
        response = "violation" if lv > ln else "no_violation"
        margin = (lv - ln) if trial.study_record.correct_response == "violation" else (ln - lv)
        label = self.panel.labels[response]
        return Decision(response=response, correct=response == trial.study_record.correct_response,
                        option_labels=[self.panel.labels["violation"], self.panel.labels["no_violation"]],
                        option_logprobs=[lv, ln], margin=margin, answer_text=" " + label)

    def answer_words(self, trial: Trial, response: str) -> str:
        """A response value (violation / no_violation: a person's, in a replay) as the panel's label."""
        label = dict(self.panel.labels).get(response)
        return " " + label if label else ""

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "question": self.panel.question, "labels": dict(self.panel.labels),
                "screen_order": list(self.order)}


class SentenceJudgment(Protocol):
    """Hu & Levy experiment 3a on the presented sentence. Direct compares the presented sentence
    with its minimal-pair counterpart; Meta* prompts ask Yes/No ('good sentence of English')."""

    def __init__(self, prompt_type: str):
        self.prompt_type = prompt_type
        self.name = f"sentence_judgment:{prompt_type}"
        self.chat_ok = prompt_type != "Direct"
        self.needs_pair = prompt_type == "Direct"

    def queries(self, trial: Trial) -> list[Query]:
        if self.prompt_type == "Direct":
            s_p, s_c = trial.sentence, with_form(trial, trial.study_record.alternative_word)
            return [Query("", (Option(s_p, s_p), Option(s_c, s_c)))]
        return [Query(JUDGMENT_TEMPLATES[self.prompt_type].format(s=trial.sentence), _yes_no())]

    def correct_answer(self, trial: Trial) -> Answer | None:
        """The record's right response; Direct's answer text is the presented sentence (whatever the response),
        the Meta prompts' Yes (a good sentence: no violation) or No."""
        response = right_response(trial)
        if response is None:
            return None
        if self.prompt_type == "Direct":
            return Answer(response, trial.sentence)
        return Answer(response, " Yes" if response == "no_violation" else " No")

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        a, b = scores[0]
        if self.prompt_type == "Direct":
            s_p, s_c = trial.sentence, with_form(trial, trial.study_record.alternative_word)
            response = "violation" if a < b else "no_violation"
            margin = (a - b) if trial.study_record.grammatical else (b - a)  # grammatical minus ungrammatical sentence
            return Decision(response=response, correct=response == trial.study_record.correct_response,
                            option_labels=[s_p, s_c], option_logprobs=[a, b], margin=margin,
                            answer_text=s_p)
        response = "no_violation" if a > b else "violation"  # Yes = a good sentence
        margin = (a - b) if trial.study_record.grammatical else (b - a)
        return Decision(response=response, correct=response == trial.study_record.correct_response,
                        option_labels=["Yes", "No"], option_logprobs=[a, b], margin=margin,
                        answer_text=" Yes" if a > b else " No")

    def history_entry(self, trial: Trial, response: str) -> tuple[str, str] | None:
        """Direct reads the sentence: its history shows the task's question and the chosen answer (as the
        Lakretz `direct` does); the Meta prompts ask, so their prompt and answer are the entry (None)."""
        return Direct().history_entry(trial, response) if self.prompt_type == "Direct" else None

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "prompt_type": self.prompt_type,
                "template": JUDGMENT_TEMPLATES.get(self.prompt_type, "full-sentence log-probabilities")}


class SentenceComparison(Protocol):
    """Hu & Levy experiment 3b: which of the minimal pair is better? Meta prompts run in both
    answer orders (grammatical first, then second); the margin averages the two orders."""

    def __init__(self, prompt_type: str):
        self.prompt_type = prompt_type
        self.name = f"sentence_comparison:{prompt_type}"
        self.chat_ok = prompt_type != "Direct"
        self.needs_pair = True

    def queries(self, trial: Trial) -> list[Query]:
        g, u = grammatical_sentence(trial), ungrammatical_sentence(trial)
        if self.prompt_type == "Direct":
            return [Query("", (Option(g, g), Option(u, u)))]
        t = COMPARISON_TEMPLATES[self.prompt_type]
        one_two = (Option("1", " 1"), Option("2", " 2"))
        return [Query(t.format(s1=g, s2=u), one_two), Query(t.format(s1=u, s2=g), one_two)]

    def correct_answer(self, trial: Trial) -> Answer | None:
        """The correct form; Direct's answer text is the grammatical sentence, the Meta prompts' is " 1": the
        grammatical sentence's number in the first prompt (grammatical first), the one a running history shows."""
        c = trial.study_record.correct_form
        return Answer(c, grammatical_sentence(trial) if self.prompt_type == "Direct" else " 1")

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        c, o = trial.study_record.correct_form, other_form(trial)
        if self.prompt_type == "Direct":
            lg, lu = scores[0]
            chosen = c if lg > lu else o
            return Decision(response=chosen, correct=lg > lu,
                            option_labels=[grammatical_sentence(trial), ungrammatical_sentence(trial)],
                            option_logprobs=[lg, lu], margin=lg - lu,
                            answer_text=grammatical_sentence(trial) if lg > lu else ungrammatical_sentence(trial))
        (a1, a2), (b1, b2) = scores
        d_first = a1 - a2  # grammatical sentence presented as 1)
        d_second = b2 - b1  # grammatical sentence presented as 2)
        margin = (d_first + d_second) / 2
        chosen = c if margin > 0 else o
        return Decision(response=chosen, correct=margin > 0,
                        option_labels=["grammatical_first:1", "grammatical_first:2",
                                       "grammatical_second:1", "grammatical_second:2"],
                        option_logprobs=[a1, a2, b1, b2], margin=margin,
                        answer_text=" 1" if a1 > a2 else " 2",
                        extra={"margin_grammatical_first": d_first, "margin_grammatical_second": d_second,
                               "correct_grammatical_first": d_first > 0, "correct_grammatical_second": d_second > 0})

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "prompt_type": self.prompt_type,
                "template": COMPARISON_TEMPLATES.get(self.prompt_type, "full-sentence log-probabilities"),
                "orders": ["grammatical_first", "grammatical_second"]}


class Production(Protocol):
    """Hu & Frank production: the model writes its answer (greedy); strict and lenient parsing.

    `question` mode answers the human's question (Yes/No); `completion` mode writes the word at the
    critical position. The options are also scored (forced choice on the same prompt), so every
    row carries both the production and its low-demand counterpart.
    """

    generates = True

    def __init__(self, mode: str = "question", scoring: str = "strict", question: str = QUESTION,
                 max_new_tokens: int = 8):
        if mode not in ("question", "completion") or scoring not in ("strict", "lenient"):
            raise ProtocolError(f"production mode {mode!r} / scoring {scoring!r} unknown")
        self.mode, self.scoring, self.question = mode, scoring, question
        self.max_new_tokens = max_new_tokens
        self.chat_ok = mode == "question"
        self.needs_pair = mode == "completion"
        parts = ["production"] + (["completion"] if mode == "completion" else []) + (
            ["lenient"] if scoring == "lenient" else [])
        self.name = ":".join(parts)

    def queries(self, trial: Trial) -> list[Query]:
        if self.mode == "completion":
            c, o = trial.study_record.correct_form, other_form(trial)
            return [Query(" ".join(trial.study_record.prefix_words), (Option(c, " " + c), Option(o, " " + o)))]
        return [Query(f"{trial.sentence}\n{self.question}\nAnswer:", _yes_no())]

    @property
    def until(self) -> tuple[str, ...]:
        return ("\n",)

    def parsed(self, text: str, labels: list[str]) -> tuple[str | None, str | None]:
        """(strict, lenient) readings of a generation as one of the option labels (None: it names none); a
        completion's strict reading is its first word, the lenient one its first three."""
        if self.mode == "completion":
            words = text.split()
            first = words[0] if words else ""
            return parse_strict(first, labels), parse_lenient(" ".join(words[:3]), labels)
        return parse_strict(text, labels), parse_lenient(text, labels)

    def outcome(self, trial: Trial, label: str | None) -> tuple[str, bool]:
        """The response a reading gives and whether it is right."""
        if label is None:
            return "none", False
        if self.mode == "completion":
            return label, label == trial.study_record.correct_form
        resp = "violation" if label == "Yes" else "no_violation"
        return resp, resp == trial.study_record.correct_response

    def correct_answer(self, trial: Trial) -> Answer | None:
        """The right option written as the answer (the correct form; Yes or No), when this protocol's own reading
        of it is right: strict reading takes a completion's first word, so a form of two words has none."""
        labels = [o.label for o in self.queries(trial)[0].options]
        right = trial.study_record.correct_form if self.mode == "completion" else YES_NO.get(
            trial.study_record.correct_response, "").strip()
        if not right:
            return None
        text = " " + right
        strict, lenient = self.parsed(text, labels)
        response, correct = self.outcome(trial, strict if self.scoring == "strict" else lenient)
        return Answer(response, text) if correct else None

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        labels = [o.label for o in self.queries(trial)[0].options]
        text = generation
        strict, lenient = self.parsed(text, labels)
        r_strict, c_strict = self.outcome(trial, strict)
        r_len, c_len = self.outcome(trial, lenient)
        response, correct = (r_strict, c_strict) if self.scoring == "strict" else (r_len, c_len)
        a, b = scores[0]
        if self.mode == "completion":
            margin = a - b
        else:
            margin = (a - b) if trial.study_record.correct_response == "violation" else (b - a)
        answer = text.strip().split("\n")[0]
        return Decision(response=response, correct=correct, option_labels=labels, option_logprobs=[a, b],
                        margin=margin, answer_text=(" " + answer) if answer else "",
                        extra={"generation": text, "response_strict": r_strict, "correct_strict": c_strict,
                               "response_lenient": r_len, "correct_lenient": c_len, "scoring": self.scoring})

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "mode": self.mode, "scoring": self.scoring, "question": self.question,
                "decoding": "greedy", "max_new_tokens": self.max_new_tokens, "until": list(self.until),
                "skip_leading_whitespace": True}


# ---------------------------------------------------------------------------------- registry
KIND = "violation_detection"
FORCED_CHOICE_KIND = "forced_choice"
PROTOCOL_NAMES = (
    ["forced_choice", "direct", "violation_judgment"]
    + [f"sentence_judgment:{p}" for p in PROMPT_TYPES]
    + [f"sentence_comparison:{p}" for p in PROMPT_TYPES]
    + ["production", "production:lenient", "production:completion", "production:completion:lenient"]
)
PANEL_PROTOCOL = "panel_judgment"  # needs the spec's panel, so not in PROTOCOL_NAMES


def offered(task: Any) -> list[str]:
    """The protocols a spec of this kind offers (the panel's with a panel); surprisal is added by the registry."""
    return list(PROTOCOL_NAMES) + ([PANEL_PROTOCOL] if getattr(task, "panel", None) is not None else [])


def default_for(response: str = "key") -> str:
    """Violation detection put to a model: the panel's question and labels (panel specs), else the
    question with Yes/No (go/no-go specs)."""
    return PANEL_PROTOCOL if response == "panel" else "violation_judgment"


def resolve(name: str, *, question: str | None = None, max_new_tokens: int = 8, panel: Any = None,
            task: Any = None) -> Protocol:
    """A Lakretz protocol by its recorded name (the `protocol` column); ProtocolError lists the names."""
    q = question or QUESTION
    key = name.strip()
    if key == PANEL_PROTOCOL:
        if panel is None:
            raise ProtocolError(f"protocol {PANEL_PROTOCOL!r} asks the spec's response panel; this spec has none "
                                "(task.response: panel with task.panel.labels)")
        if question:
            panel = panel.model_copy(update={"question": question})
        return PanelJudgment(panel)
    fixed_names: dict[str, Any] = {"forced_choice": ForcedChoice, "direct": Direct,
                                   "violation_judgment": lambda: ViolationJudgment(q)}
    if key in fixed_names:
        return fixed_names[key]()
    fixed = {p.lower(): p for p in PROMPT_TYPES}
    for prefix, cls in (("sentence_judgment:", SentenceJudgment), ("sentence_comparison:", SentenceComparison)):
        if key.startswith(prefix):
            pt = fixed.get(key[len(prefix):].lower())
            if pt is None:
                raise ProtocolError(f"unknown prompt type in {name!r}; use one of {', '.join(PROMPT_TYPES)}")
            return cls(pt)
    if key.startswith("production"):
        parts = key.split(":")[1:]
        mode = "completion" if "completion" in parts else "question"
        scoring = "lenient" if "lenient" in parts else "strict"
        if set(parts) - {"completion", "lenient", "strict"}:
            raise ProtocolError(f"unknown production variant {name!r}; known: "
                                + ", ".join(p for p in PROTOCOL_NAMES if p.startswith("production")))
        return Production(mode, scoring, q, max_new_tokens)
    raise ProtocolError(f"unknown protocol {name!r}; known: {', '.join(PROTOCOL_NAMES)}, {PANEL_PROTOCOL} (panel "
                        "specs)")


from model_subjects.tasks.registry import ModelKind  # noqa: E402 (beside the kind's MODEL it builds)

MODEL = ModelKind(KIND, resolve=resolve, names=offered, default=default_for, surprisal=True)
