"""A-maze distractors (Boyce, Futrell & Levy 2020): for each word after the first, candidates from a word list
matched to the word in length (letters, punctuation aside) and, where the list gives frequencies, in frequency
(log10 within `freq_band` of the word's; a word the list lacks is matched in length only), a seeded sample of
`n_candidates` of them; the candidate the model finds least likely after the sentence's words before it (log P,
summed over tokens) is the distractor, with the word's trailing punctuation. Nothing offline gives frequencies
(no frequency list is installed): without one in the word list the match is by length only, and the record says
so. The record (seed, list, model, the candidates and their log-probabilities) is written beside the items.

API: `generate_distractors(rows, score, vocabulary, seed=...)`; command line (a kind cannot add a `twinlab`
subcommand from its folder: commands are entry points in pyproject.toml):
    python -m kinds.maze.generate ITEMS.csv WORDS.txt OUT.csv [--model M] [--seed N] [--force]
"""
from __future__ import annotations

import csv
import io
import json
import math
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from experiments.tasks.scoring import normalize_answer

Score = Callable[[str, Sequence[str]], list[float]]  # (context, continuations) -> log P of each
_CORE = re.compile(r"^(\W*)(.*?)(\W*)$", re.S)


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
        if len(parts) > 2 or not parts[0].strip().isalpha():
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
    m = _CORE.match(w)
    return (m.group(1), m.group(2), m.group(3)) if m else ("", w, "")


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
    out, record = [], []
    for line, row in enumerate(rows, start=2):
        if (row.get("distractors") or "").strip():
            out.append(dict(row))
            continue
        words = str(row.get("sentence") or "").split()
        if len(words) < 2:
            raise GenerateError(f"{where}: line {line}: sentence: at least two words are needed")
        avoid = {normalize_answer(split_word(w)[1]) for w in words}
        chosen, per_word = [], []
        for k in range(1, len(words)):
            cands, how = candidates(words[k], vocab, avoid, n_candidates, rng)
            if not cands:
                raise GenerateError(f"{where}: line {line}: no word of the list has the length of {words[k]!r}")
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
    from model_subjects.requests import LoglikelihoodRequest

    def score(context: str, conts: Sequence[str]) -> list[float]:
        return [r.logprob for r in backend.loglikelihood([LoglikelihoodRequest(context, c) for c in conts])]
    return score


def _write(path: Path, rows: list[dict[str, str]], record: dict[str, Any], force: bool) -> None:
    from experiments.atomic import atomic_write_text

    side = path.with_suffix(".distractors.json")
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
    import typer

    from experiments.cli_common import fail

    def run(items: Path, words: Path, out: Path, model: str = typer.Option(None, help="model (default: the bundled one)"),
            seed: int = 0, n_candidates: int = 20, force: bool = False) -> None:
        """Fill the items' empty `distractors` the A-maze way; OUT.csv and OUT.distractors.json (the record)."""
        try:
            if out.resolve() == items.resolve():
                raise GenerateError(f"{out}: is the input; write the generated items to another file")
            rows = list(csv.DictReader(io.StringIO(items.read_text(encoding="utf-8"))))
            if not rows or "sentence" not in rows[0]:
                raise GenerateError(f"{items}: a CSV with a `sentence` column is needed")
            vocab = read_vocabulary(words.read_text(encoding="utf-8"), str(words))
            from model_subjects.registry import load_backend  # (loads torch: only when asked to generate)

            backend = load_backend(model)
            done, record = generate_distractors(rows, backend_score(backend), vocab, seed=seed,
                                                n_candidates=n_candidates, where=str(items))
            record["model"] = model or "bundled"
            _write(out, done, record, force)
        except (GenerateError, OSError, UnicodeDecodeError) as exc:
            fail(str(exc))
        typer.echo(f"wrote {out} and {out.with_suffix('.distractors.json')} ({len(done)} rows; matched by "
                   f"{', '.join(record['matched_by']) or 'nothing new'})")

    typer.run(run)


if __name__ == "__main__":
    main()
