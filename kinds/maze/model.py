"""Maze for models.

  choice     at each word after the first, log P(word | the sentence's words before it) against log P(distractor |
             the same prefix), each summed over its tokens (the continuation has its leading space); the model
             picks the more probable (a tie: the word) and errs where the distractor is more probable. In
             `error_mode: end` the words after the first error are not asked, as a person is not (their
             comparisons are not recorded; the prefix is always the sentence's own words, so a word's choice never
             depends on an earlier one); in `redo` every word is. The row: `response` = the picks (as a person's),
             `correct` = no error, `word_surprisal_bits` = -log2 P(word | prefix) of every word (the first after
             the start token), `word_correct`, `first_error` (the kind's columns, as a person's: task.word_columns),
             `extra.word_margins` (log P(word) - log P(distractor)).
  surprisal  the generic per-word surprisal of the sentence (model_subjects/tasks/surprisal.py).

A running context shows each finished trial as the words the model picked (a replay: the person's).

Distractors the A-maze way (Boyce, Futrell & Levy 2020): for each word after the first, candidates from a word list
matched to the word in length (letters, punctuation aside) and, where the list gives frequencies, in frequency
(log10 within `freq_band` of the word's; a word the list lacks is matched in length only), a seeded sample of
`n_candidates` of them; the candidate the model finds least likely after the sentence's words before it (log P,
summed over tokens) is the distractor, with the word's trailing punctuation. Nothing offline gives frequencies
(no frequency list is installed): without one in the word list the match is by length only, and the record says
so. The record (seed, list, model, the candidates and their log-probabilities) is written beside the items.

Here, beside the protocol, because a kind's folder holds only its parts (tests/kinds/test_kinds_one_folder.py).
API: `generate_distractors(rows, score, vocabulary, seed=...)`; command line (a kind cannot add a `twinlab`
subcommand from its folder: commands are entry points in pyproject.toml):
    python -m kinds.maze.model ITEMS.csv WORDS.txt OUT.csv [--model M] [--seed N] [--force]
"""
from __future__ import annotations

import csv
import io
import json
import math
import random
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import typer

from experiments.atomic import atomic_write_text
from experiments.cli_common import fail
from kinds.api import TaskError, Trial, normalize_answer
from kinds.maze.task import (
    FIRST_FOIL,
    check_item,
    check_words,
    distractors,
    foils,
    picks_text,
    score,
    word_columns,
    words_of,
)
from model_subjects.protocol_base import Answer, Decision, Option, ProtocolError, Query
from model_subjects.requests import LoglikelihoodRequest
from model_subjects.tasks.base import TaskProtocol, decision
from stimuli.textfile import read_text_file

LN2 = math.log(2.0)


class MazeChoice(TaskProtocol):
    kind, short = "maze", "choice"
    chat_ok = False

    def mode(self) -> str:
        return str(getattr(self.settings, "error_mode", "end"))

    def check(self, trial: Trial) -> None:
        ws = words_of(trial.mat)
        if len(ws) < 2 or len(distractors(trial.mat)) != len(ws) - 1:
            raise ProtocolError(f"trial {trial.item_id!r}: protocol {self.name!r} needs a sentence of two or more "
                                "words "
                                "and one distractor per word after the first (`distractors`)")

    def queries(self, trial: Trial) -> list[Query]:
        """The first word after the start token (its surprisal only), then each word against its distractor."""
        ws, ds = words_of(trial.mat), distractors(trial.mat)
        out = [Query("", (Option(ws[0], ws[0]),))]
        for k in range(1, len(ws)):
            out.append(Query(" ".join(ws[:k]), (Option(ws[k], " " + ws[k]), Option(ds[k - 1], " " + ds[k - 1]))))
        return out

    def correct_answer(self, trial: Trial) -> Answer | None:
        """Every word picked over its distractor: the sentence's words, both the response and the history's answer."""
        ws = words_of(trial.mat)
        fs = foils(trial.mat, str(getattr(self.settings, "first_foil", FIRST_FOIL)))
        response = picks_text(ws, fs, [True] * len(ws))
        return Answer(response, response) if score(trial, response) else None

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
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
        bits = [round(-float(s[0]) / LN2, 6) for s in scores]
        word_lp = sum(float(scores[k][0]) for k in range(1, len(ws)) if margins[k] is not None)
        foil_lp = sum(float(scores[k][1]) for k in range(1, len(ws)) if margins[k] is not None)
        return decision(response, score(trial, response), [" ".join(ws), " ".join(fs)], [word_lp, foil_lp],
                        min(asked) if asked else None, response,
                        extra={"word_margins": margins, "error_mode": self.mode()},
                        columns={"word_surprisal_bits": bits,
                                 **word_columns(picks + [None] * (len(ws) - len(picks)))})

    def history_entry(self, trial: Trial, response: str) -> tuple[str, str]:
        """A finished trial in a running history: the words picked (the model's own, or a replayed person's)."""
        return "", str(response)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "error_mode": self.mode(), "choice": "log P(word | prefix) >= log P(distractor | "
                                                                           "prefix)",
                "margin": "the smallest word margin asked", "surprisal": "bits, -log2 P(word | prefix), every word"}


from model_subjects.tasks.registry import ModelKind  # noqa: E402 (beside the kind's MODEL it builds)

MODEL = ModelKind("maze", surprisal=True, protocols={"choice": lambda s, q, n: MazeChoice(s, n)})


# ---- A-maze distractors -----------------------------------------------------------------------
Score = Callable[[str, Sequence[str]], list[float]]  # (context, continuations) -> log P of each


class GenerateError(ValueError):
    """Bad input for the generator; the message names the file and line."""


@dataclass(frozen=True)
class Entry:
    word: str
    freq: float | None  # a count (None: the list gives none)


def read_vocabulary(text: str, where: str) -> list[Entry]:
    """One word per line, optionally `word<TAB or comma>count`; blank lines and `#` lines skipped."""
    out: list[Entry] = []
    for n, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = re.split(r"[\t,]", line)
        if len(parts) > 2 or not is_word(parts[0].strip()):
            raise GenerateError(f"{where}: line {n}: expected a word (letters only), optionally a tab and its count")
        freq = None
        if len(parts) == 2:
            try:
                freq = float(parts[1])
            except ValueError:
                raise GenerateError(f"{where}: line {n}: count {parts[1]!r} is not a number") from None
            if not math.isfinite(freq) or freq <= 0:
                raise GenerateError(f"{where}: line {n}: count {parts[1]!r} must be a positive number")
        out.append(Entry(parts[0].strip(), freq))
    if not out:
        raise GenerateError(f"{where}: no words")
    return out


def split_word(w: str) -> tuple[str, str, str]:
    """(leading punctuation, the word, trailing punctuation): the edges are punctuation, symbols, spaces and
    format characters; a combining mark is part of the word (Hindi's vowel signs, Arabic's harakat)."""
    i, j = 0, len(w)
    while i < j and unicodedata.category(w[i])[0] in "PSZC":
        i += 1
    while j > i and unicodedata.category(w[j - 1])[0] in "PSZC":
        j -= 1
    return w[:i], w[i:j], w[j:]


def is_word(text: str) -> bool:
    """Letters and the marks that combine with them (a word of a word list in any script)."""
    return bool(text) and unicodedata.category(text[0])[0] == "L" and all(unicodedata.category(c)[0] in "LM"
                                                                         for c in text)


def candidates(word: str, vocab: list[Entry], avoid: set[str], n: int, rng: random.Random,
               freq_band: float = 0.5) -> tuple[list[str], str]:
    """A seeded sample of the list's words matched to `word` (length; frequency where known) and how they matched."""
    core = split_word(word)[1]
    freqs = {normalize_answer(e.word): e.freq for e in vocab if e.freq is not None}
    target = freqs.get(normalize_answer(core))
    pool = sorted({e.word for e in vocab if len(e.word) == len(core) and normalize_answer(e.word) not in avoid})
    how = "length"
    if target is not None:
        near = [w for w in pool if freqs.get(normalize_answer(w)) is not None
                and abs(math.log10(freqs[normalize_answer(w)]) - math.log10(target)) <= freq_band]
        if near:
            pool, how = near, "length+frequency"
    rng.shuffle(pool)
    return pool[:n], how


def generate_distractors(rows: list[dict[str, str]], score: Score, vocab: list[Entry], *, seed: int = 0,
                         n_candidates: int = 20, where: str = "items") -> tuple[list[dict[str, str]], dict[str, Any]]:
    """Each row with `distractors` filled (rows that give them are kept as they are) and the record."""
    rng = random.Random(f"maze-distractors:{seed}")
    for line, row in enumerate(rows, start=2):  # every row checked by the kind's rule before any is scored
        words = str(row.get("sentence") or "").split()
        try:
            if (row.get("distractors") or "").strip():
                check_item(row, None, f"{where}: line {line}")  # given distractors are kept: they must be right
            elif len(words) < 2:
                raise GenerateError(f"{where}: line {line}: sentence: at least two words are needed")
            else:
                check_words("sentence", words, f"{where}: line {line}")
        except TaskError as exc:
            raise GenerateError(str(exc)) from None
        empty = [w for w in words[1:] if not split_word(w)[1]]
        if empty and not (row.get("distractors") or "").strip():
            raise GenerateError(f"{where}: line {line}: sentence: {empty[0]!r} has no letters to match a distractor to "
                                "(join punctuation to the word before it)")
    out, record = [], []
    for line, row in enumerate(rows, start=2):
        if (row.get("distractors") or "").strip():
            out.append(dict(row))
            continue
        words = str(row.get("sentence") or "").split()
        avoid = {normalize_answer(split_word(w)[1]) for w in words}
        chosen, per_word = [], []
        for k in range(1, len(words)):
            cands, how = candidates(words[k], vocab, avoid, n_candidates, rng)
            if not cands:
                raise GenerateError(f"{where}: line {line}: no word of the list has the length of {words[k]!r} "
                                    f"({len(split_word(words[k])[1])} letters)")
            lead, _, trail = split_word(words[k])
            conts = [" " + lead + c + trail for c in cands]
            lps = score(" ".join(words[:k]), conts)
            best = min(range(len(cands)), key=lambda i: (lps[i], cands[i]))
            chosen.append(lead + cands[best] + trail)
            per_word.append({"word": words[k], "matched_by": how, "candidates": cands,
                             "logprobs": [round(x, 6) for x in lps], "chosen": chosen[-1]})
        out.append({**row, "distractors": " ".join(chosen)})
        record.append({"line": line, "sentence": " ".join(words), "words": per_word})
    by = {w["matched_by"] for r in record for w in r["words"]}
    return out, {"seed": seed, "n_candidates": n_candidates, "rule": "least likely candidate after the prefix",
                 "matched_by": sorted(by), "frequencies": any(e.freq is not None for e in vocab), "items": record}


def backend_score(backend: Any) -> Score:
    """A model backend's log P(continuation | context) (model_subjects' requests), summed over tokens."""

    def score(context: str, conts: Sequence[str]) -> list[float]:
        return [r.logprob for r in backend.loglikelihood([LoglikelihoodRequest(context, c) for c in conts])]
    return score


def record_path(out: Path) -> Path:
    """Where the generator's record goes: beside OUT.csv, OUT.distractors.json."""
    return out.with_suffix(".distractors.json")


def check_outputs(out: Path, inputs: dict[str, Path]) -> None:
    """Neither output (OUT.csv, its record) is an input (the items, the word list), by name, through a link or as
    the same file under another name: never overwritten, with --force or without; nor a folder or a device."""
    for o in (out, record_path(out)):
        for what, i in inputs.items():
            same = o.resolve() == i.resolve()
            if not same and o.exists() and i.exists():
                try:
                    same = o.samefile(i)
                except OSError:
                    same = False
            if same:
                raise GenerateError(f"{o}: is {what} ({i}), an input: write the generated items to another file "
                                    "(--force never replaces an input)")
        if o.is_symlink() or (o.exists() and not o.is_file()):
            raise GenerateError(f"{o}: is a link, a folder or a device; write the generated items to a new file")


def _write(path: Path, rows: list[dict[str, str]], record: dict[str, Any], force: bool) -> None:
    side = record_path(path)
    for p in (path, side):
        if p.exists() and not force:
            raise GenerateError(f"{p}: exists (give --force to replace it)")
    cols = list(dict.fromkeys([c for r in rows for c in r]))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    atomic_write_text(side, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    atomic_write_text(path, buf.getvalue())


def main() -> None:


    def run(items: Path, words: Path, out: Path, model: str = typer.Option(None, help="model (default: the bundled "
                                                                                      "one)"),
            seed: int = 0, n_candidates: int = 20, force: bool = False) -> None:
        """Fill the items' empty `distractors` the A-maze way; OUT.csv and OUT.distractors.json (the record)."""
        try:
            check_outputs(out, {"the items file": items, "the word list": words})
            rows = list(csv.DictReader(io.StringIO(read_text_file(items, GenerateError, "the items file"))))
            if not rows or "sentence" not in rows[0]:
                raise GenerateError(f"{items}: a CSV with a `sentence` column is needed")
            vocab = read_vocabulary(read_text_file(words, GenerateError, "the word list"), str(words))
            from model_subjects.backends.registry import load_backend  # (loads torch: only when asked to generate)

            backend = load_backend(model)
            done, record = generate_distractors(rows, backend_score(backend), vocab, seed=seed,
                                                n_candidates=n_candidates, where=str(items))
            record["model"], record["word_list"] = model or "bundled", str(words)
            _write(out, done, record, force)
        except (GenerateError, OSError, UnicodeDecodeError) as exc:
            fail(str(exc))
        typer.echo(f"wrote {out} and {out.with_suffix('.distractors.json')} ({len(done)} rows; matched by "
                   f"{', '.join(record['matched_by']) or 'nothing new'})")

    typer.run(run)


if __name__ == "__main__":
    main()
