"""Maze for models.

  choice     at each word after the first, log P(word | the sentence's words before it) against log P(distractor |
             the same prefix), each summed over its tokens (the continuation has its leading space); the model
             picks the more probable (a tie: the word) and errs where the distractor is more probable. In
             `error_mode: end` the words after the first error are not asked, as a person is not (their
             comparisons are not recorded; the prefix is always the sentence's own words, so a word's choice never
             depends on an earlier one); in `redo` every word is. The row: `response` = the picks (as a person's),
             `correct` = no error, `word_surprisal_bits` = -log2 P(word | prefix) of every word (the first after
             the start token), `extra.word_correct`, `first_error`, `word_margins` (log P(word) - log P(distractor)).
  surprisal  the generic per-word surprisal of the sentence (model_subjects/tasks/surprisal.py).

A running context shows each finished trial as the words the model picked (a replay: the person's).
"""
from __future__ import annotations

import math
from typing import Any

from experiments.trials import Trial
from kinds.maze.task import FIRST_FOIL, distractors, foils, picks_text, score, words_of
from model_subjects.protocol_base import Decision, Option, ProtocolError, Query
from model_subjects.tasks.base import TaskProtocol, decision

LN2 = math.log(2.0)


class MazeChoice(TaskProtocol):
    kind, short = "maze", "choice"
    chat_ok = False

    def mode(self) -> str:
        return str(getattr(self.settings, "error_mode", "end"))

    def check(self, trial: Trial) -> None:
        ws = words_of(trial.mat)
        if len(ws) < 2 or len(distractors(trial.mat)) != len(ws) - 1:
            raise ProtocolError(f"trial {trial.item_id!r}: protocol {self.name!r} needs a sentence of two or more words "
                                "and one distractor per word after the first (`distractors`)")

    def queries(self, trial: Trial) -> list[Query]:
        """The first word after the start token (its surprisal only), then each word against its distractor."""
        ws, ds = words_of(trial.mat), distractors(trial.mat)
        out = [Query("", (Option(ws[0], ws[0]),))]
        for k in range(1, len(ws)):
            out.append(Query(" ".join(ws[:k]), (Option(ws[k], " " + ws[k]), Option(ds[k - 1], " " + ds[k - 1]))))
        return out

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None) -> Decision:
        ws = words_of(trial.mat)
        fs = foils(trial.mat, str(getattr(self.settings, "first_foil", FIRST_FOIL)))
        picks, margins = [True], [None]  # the first word beside x-x-x is never wrong
        for k in range(1, len(ws)):
            if self.mode() == "end" and not all(picks):
                margins.append(None)
                continue
            margin = float(scores[k][0] - scores[k][1])
            margins.append(round(margin, 6))
            picks.append(margin >= 0.0)
        response = picks_text(ws, fs, picks)
        asked = [m for m in margins if m is not None]
        first_error = next((k for k, ok in enumerate(picks) if not ok), None)
        bits = [round(-float(s[0]) / LN2, 6) for s in scores]
        word_lp = sum(float(scores[k][0]) for k in range(1, len(ws)) if margins[k] is not None)
        foil_lp = sum(float(scores[k][1]) for k in range(1, len(ws)) if margins[k] is not None)
        return decision(response, score(trial, response), [" ".join(ws), " ".join(fs)], [word_lp, foil_lp],
                        min(asked) if asked else None, response,
                        extra={"word_correct": picks + [None] * (len(ws) - len(picks)), "first_error": first_error,
                               "word_margins": margins, "error_mode": self.mode()},
                        columns={"word_surprisal_bits": bits})

    def history_entry(self, trial: Trial, response: str) -> tuple[str, str]:
        """A finished trial in a running history: the words picked (the model's own, or a replayed person's)."""
        return "", str(response)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "error_mode": self.mode(), "choice": "log P(word | prefix) >= log P(distractor | prefix)",
                "margin": "the smallest word margin asked", "surprisal": "bits, -log2 P(word | prefix), every word"}


from model_subjects.tasks.registry import ModelKind  # noqa: E402 (beside the kind's MODEL it builds)

MODEL = ModelKind("maze", surprisal=True, protocols={"choice": lambda s, q, n: MazeChoice(s, n)})
