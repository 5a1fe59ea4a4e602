"""`surprisal[:bow][:nobos]`: per-word surprisal (bits) of the trial's words, on any spec with sentences.

The model reads the sentence (after the start/BOS token, or a few-shot text); each row gets
`word_surprisal_bits` (a JSON list, one value per word of `words`), the region sums when the item
has `regions`, and `sentence_logprob` (log P of the sentence after the start token, the backend's
own scoring; equal to -ln 2 x the word sum without the BOW correction). Settings (model_subjects.surprisal):
`:bow` turns on the beginning-of-word correction (default off), `:nobos` drops the BOS token
(default: BOS prepended; the first word then has no surprisal).
"""
from __future__ import annotations

from typing import Any, Sequence

from experiments.tasks.regions import regions
from experiments.trials import Trial
from model_subjects.protocol_base import Decision, Option, ProtocolError, Query
from model_subjects.surprisal import SurprisalScorer, SurprisalSettings, region_surprisals
from model_subjects.tasks.base import TaskProtocol, decision, sentence_of


class Surprisal(TaskProtocol):
    short = "surprisal"
    chat_ok = False
    measures = True

    def __init__(self, kind: str, settings: SurprisalSettings = SurprisalSettings()):
        self.kind = kind
        self.surprisal = settings
        super().__init__(None)
        parts = ["surprisal"] + (["bow"] if settings.bow_correction else []) + ([] if settings.bos else ["nobos"])
        self.name = ":".join(parts)
        self._scorer: SurprisalScorer | None = None

    def words(self, trial: Trial) -> list[str]:
        return sentence_of(trial).split()

    def queries(self, trial: Trial) -> list[Query]:
        s = " ".join(self.words(trial))
        return [Query("", (Option(s, s),))]

    history_since = "twinlab-context-v4"  # before, a replayed person's reading trial showed the answer alone

    def history_entry(self, trial: Trial, response: str) -> tuple[str, str]:
        """A finished trial in a running history as (question, answer): the sentence read; a replayed person's
        answer to the trial's comprehension question (a self-paced reading trial's, or a judgment read by
        surprisal) after it, on a line of its own with the question where the item gives it (`Answer:` where it
        does not), so the answer is the person's own words alone (a transcript marks it). The model's own row
        answers with the sentence: the sentence alone, as before."""
        s = " ".join(self.words(trial))
        answer = str(response or "")
        if answer == s:
            return "", s
        if not answer:  # read, nothing asked: the sentence, and no answer
            return s, ""
        question = str(trial.mat.get("question") or "").strip()
        return f"{s}\n{question or 'Answer:'}", f" {answer}"

    def measure(self, backend: Any, trials: Sequence[Trial], contexts: Sequence[str]) -> list[dict[str, Any]]:
        if self._scorer is None or self._scorer.model is not getattr(backend, "model", None):
            self._scorer = SurprisalScorer.from_backend(backend, self.surprisal)
        bits = self._scorer.score([self.words(t) for t in trials], list(contexts))
        return [{"word_surprisal_bits": b} for b in bits]

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        lp = scores[0][0]
        s = " ".join(self.words(trial))
        bits = (measured or {}).get("word_surprisal_bits")
        extra: dict[str, Any] = {}
        if bits is not None and trial.mat.get("regions"):  # the one reading of any kind's regions
            extra["region_surprisal_bits"] = region_surprisals(bits, regions({**trial.mat, "sentence": s}))
        return decision("", None, [s], [lp], None, s, extra=extra,
                        columns={"word_surprisal_bits": bits, "sentence_logprob": lp})

    def describe(self) -> dict[str, Any]:
        d = super().describe()
        d["surprisal"] = {"bow_correction": self.surprisal.bow_correction, "bos": self.surprisal.bos,
                          "unit": "bits", "word_probability": "product over the word's tokens",
                          "words": "the sentence split on spaces",
                          "context": "the BOS token (or the few-shot text) before the sentence"}
        return d


def parse_surprisal(name: str) -> SurprisalSettings:
    parts = name.split(":")[1:]
    unknown = set(parts) - {"bow", "nobos"}
    if unknown:
        raise ProtocolError(f"unknown surprisal option(s) {', '.join(sorted(unknown))} in {name!r}; "
                            "use surprisal, surprisal:bow, surprisal:nobos or surprisal:bow:nobos")
    return SurprisalSettings(bow_correction="bow" in parts, bos="nobos" not in parts)
