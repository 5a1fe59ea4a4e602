"""Choice for models (2 to n options).

  direct[:mean]  log P(option | prefix) for each option (summed, and per-token mean: Hu & Frank score
                 multiple choice by the mean); the choice is by the sum (`direct:mean`: by the mean);
                 both stored (`option_logprobs`, `option_mean_logprobs`)
  meta           the options listed and numbered in a prompt, the numbers scored; asked in both answer
                 orders (as given and reversed, as Hu & Levy do); each option's score is the mean of its
                 number's log-probability over the two orders
  production     the meta prompt; the model writes its answer (greedy), parsed as a number 1..n or an
                 option's text (strict: exactly that; both parsings are stored)
"""
from __future__ import annotations

import re
from typing import Any

from kinds.api import Trial
from kinds.choice.task import answer_index
from model_subjects.protocol_base import Answer, Decision, Option, Query
from model_subjects.tasks.base import TaskProtocol, argmax, decision, mean_logprobs, need, signed_margin
from stimuli.input_rules import ascii_int


def options_of(trial: Trial, protocol: str) -> list[str]:
    opts = [str(o) for o in need(trial, "options", protocol)]
    return opts


def correct_index(trial: Trial, options: list[str]) -> int | None:
    """The option that is the answer, by the kind's rule (experiments.tasks.choice.answer_index)."""
    return answer_index(options, trial.mat.get("answer"))


class ChoiceDirect(TaskProtocol):
    kind = "choice"
    chat_ok = False

    def __init__(self, settings: Any = None, max_new_tokens: int = 8, by: str = "sum"):
        self.by = by
        self.short = "direct" if by == "sum" else "direct:mean"
        super().__init__(settings, max_new_tokens)

    def queries(self, trial: Trial) -> list[Query]:
        opts = options_of(trial, self.name)
        prefix = str(trial.mat.get("prefix") or "")
        sep = " " if prefix and not prefix.endswith((" ", "\n")) else ""
        return [Query(prefix, tuple(Option(o, sep + o) for o in opts))]

    def correct_option_index(self, trial: Trial) -> int | None:
        """The option the kind scores correct: the response is its text, the answer text its continuation."""
        return self.first_scored_correct(trial, options_of(trial, self.name))

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        opts = options_of(trial, self.name)
        lps = list(scores[0])
        means = mean_logprobs(lps, results[0] if results else None)
        basis = lps if self.by == "sum" or any(m is None for m in means) else [float(m) for m in means]
        k = argmax(basis)
        cont = self.queries(trial)[0].options[k].continuation
        return decision(opts[k], self.score(trial, opts[k]), opts, lps,
                        signed_margin(basis, correct_index(trial, opts)),
                        cont, extra={"decided_by": self.by},
                        columns={"option_mean_logprobs": means, "chosen_position": k,
                                 "option_order": list(range(len(opts)))})

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "decided_by": self.by}


def meta_prompt(question: str, prefix: str, options: list[str]) -> str:
    lines = [question] + ([prefix] if prefix else []) + [f"{i + 1}) {o}" for i, o in enumerate(options)]
    nums = ", ".join(str(i + 1) for i in range(len(options)))
    return "\n".join(lines) + f"\nRespond with the number of your answer ({nums}).\nAnswer:"


class ChoiceMeta(TaskProtocol):
    kind, short = "choice", "meta"

    def __init__(self, settings: Any = None, max_new_tokens: int = 8, question: str | None = None):
        super().__init__(settings, max_new_tokens)
        self.question = question or settings.question

    def orders(self, trial: Trial) -> list[list[int]]:
        n = len(options_of(trial, self.name))
        return [list(range(n)), list(reversed(range(n)))]

    def queries(self, trial: Trial) -> list[Query]:
        opts = options_of(trial, self.name)
        q = str(trial.mat.get("question") or self.question)
        prefix = str(trial.mat.get("prefix") or "")
        nums = tuple(Option(str(i + 1), f" {i + 1}") for i in range(len(opts)))
        return [Query(meta_prompt(q, prefix, [opts[i] for i in order]), nums) for order in self.orders(trial)]

    def correct_answer(self, trial: Trial) -> Answer | None:
        """The option the kind scores correct, answered by its number in the first order (the options as given),
        the prompt a running history shows; production's generation is that number too."""
        opts = options_of(trial, self.name)
        k = self.first_scored_correct(trial, opts)
        return None if k is None else Answer(opts[k], f" {k + 1}")

    def per_option(self, trial: Trial, scores: list[list[float]]) -> list[float]:
        """Each option's number log-probability averaged over the orders."""
        n = len(options_of(trial, self.name))
        out = [0.0] * n
        orders = self.orders(trial)
        for order, sc in zip(orders, scores, strict=False):
            for pos, i in enumerate(order):
                out[i] += sc[pos] / len(orders)
        return out

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        opts = options_of(trial, self.name)
        per = self.per_option(trial, scores)
        k = argmax(per)
        first = argmax(scores[0])
        ci = correct_index(trial, opts)
        extra = {"order_logprobs": [list(s) for s in scores], "orders": self.orders(trial),
                 "chosen_per_order": [self.orders(trial)[j][argmax(s)] for j, s in enumerate(scores)]}
        return decision(opts[k], self.score(trial, opts[k]), opts, per, signed_margin(per, ci), f" {first + 1}",
                        extra=extra, columns={"chosen_position": k, "option_order": list(range(len(opts)))})

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "question": self.question, "orders": ["as given", "reversed"]}


def parse_choice(text: str, options: list[str]) -> tuple[str | None, str | None]:
    """(strict, lenient) parse of a generated answer: strict is exactly a number 1..n or an option's
    text (stripped, final period ignored); lenient is the first number 1..n or option text found in it."""
    t = text.strip().split("\n")[0].strip()
    bare = t.rstrip(".").strip()
    strict = None
    number = ascii_int(bare, strip=False)
    if number is not None and 1 <= number <= len(options):
        strict = options[number - 1]
    elif bare in options:
        strict = bare
    lenient = strict
    if lenient is None:
        m = re.search(r"\b(\d+)\b", t)
        if m and 1 <= int(m.group(1)) <= len(options):
            lenient = options[int(m.group(1)) - 1]
        else:
            found = [o for o in options if o.lower() in t.lower()]
            lenient = found[0] if len(found) == 1 else None
    return strict, lenient


class ChoiceProduction(ChoiceMeta):
    kind, short = "choice", "production"
    generates = True

    def queries(self, trial: Trial) -> list[Query]:
        return super().queries(trial)[:1]

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        opts = options_of(trial, self.name)
        strict, lenient = parse_choice(generation, opts)
        response = strict if strict is not None else "none"
        lps = list(scores[0])
        answer = generation.strip().split("\n")[0]
        return decision(response, self.score(trial, strict) if strict is not None else False, opts, lps,
                        signed_margin(lps, correct_index(trial, opts)), (" " + answer) if answer else "",
                        extra={"generation": generation, "response_strict": strict or "none",
                               "response_lenient": lenient or "none",
                               "correct_lenient": bool(lenient is not None and self.score(trial, lenient))},
                        columns={"response_text": generation, "chosen_position": opts.index(strict) if strict else None,
                                 "option_order": list(range(len(opts)))})


from model_subjects.tasks.registry import ModelKind  # noqa: E402 (beside the kind's MODEL it builds)

MODEL = ModelKind("choice", surprisal=True, protocols={
    "direct": lambda s, q, n: ChoiceDirect(s, n), "direct:mean": lambda s, q, n: ChoiceDirect(s, n, by="mean"),
    "meta": lambda s, q, n: ChoiceMeta(s, n, q), "production": lambda s, q, n: ChoiceProduction(s, n, q)})
