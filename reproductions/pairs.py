"""Minimal pairs for the Hu & Levy / Hu & Frank reproductions, scored by the model_subjects protocols.

A pair is a grammatical and an ungrammatical sentence: from the agreement items (the sentence and
its version with the critical verb flipped) or from a BLiMP-format JSONL file (`sentence_good`,
`sentence_bad`; `UID`/`linguistics_term`/`field` name the phenomenon when present).

Why a one-word trial: the sentence_judgment / sentence_comparison protocols build their prompts
from a Trial and its number-flipped form (`with_form`). A pair becomes a Trial whose only "word" is
the whole sentence, with the other sentence as its alternative, so the protocols put a BLiMP pair
(which may differ in any number of words) exactly as they put an agreement pair. Requests go to
`Backend.loglikelihood` in batches; a request-level cache (keyed by model, settings and the
request's hash, as lm-evaluation-harness caches) makes a re-run reuse every finished score.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from experiments.session import SessionError, acquire_session_lock
from experiments.trials import Trial
from model_subjects.invariance import decision_gap, margin_for_tokens, tie_margin_for
from model_subjects.requests import LoglikelihoodRequest
from model_subjects.run_checks import item_length_problem
from reproductions.common import ReproError
from stimuli.textfile import read_text_file
from stimuli.visible_text import lookalike_problem, text_problem


@dataclass(frozen=True)
class Pair:
    pair_id: str
    dataset: str  # "agreement" or the JSONL file's name
    category: str  # structure:dependency, or the BLiMP phenomenon
    good: str
    bad: str


MAX_PAIRS_BYTES = 500_000_000  # BLiMP's 67 files together are ~30 MB


class _PairsFileError(ReproError):
    def __init__(self, message: str) -> None:
        super().__init__(f"--pairs {message}")


def _text_problem(good: str, bad: str) -> str | None:
    """Hidden characters or a look-alike word in a sentence, a pair longer than a model subject reads
    (model_subjects/run_checks.py: checked before any model loads), or a pair that differs only invisibly
    (a zero-width or trailing space: no minimal pair), by the one rule (stimuli/visible_text.py)."""

    for name, text in (("sentence_good", good), ("sentence_bad", bad)):
        problem = text_problem(text)
        if problem:
            return f"{name}: {problem}"
    problem = item_length_problem([good, bad])
    if problem:
        return f"{problem}; shorten or split it"
    problem = lookalike_problem([good, bad], "sentence_good and sentence_bad:")
    return f"{problem} (no minimal pair)" if problem else None


def load_blimp_jsonl(path: Path) -> list[Pair]:
    """BLiMP JSONL: one JSON object per line with `sentence_good` and `sentence_bad`; errors name the line."""

    path = Path(path)
    if not path.exists():
        raise ReproError(f"--pairs {path}: no such file")
    # a regular file, UTF-8 (a bad byte named by line and column), at most MAX_PAIRS_BYTES
    text = read_text_file(path, _PairsFileError, "BLiMP JSONL pairs", MAX_PAIRS_BYTES)
    pairs, errors = [], []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"  line {lineno}: not JSON ({exc.msg})")
            continue
        if not isinstance(d, dict):
            errors.append(f"  line {lineno}: expected a JSON object")
            continue
        good, bad = d.get("sentence_good"), d.get("sentence_bad")
        missing = [k for k, v in (("sentence_good", good), ("sentence_bad", bad))
                   if not isinstance(v, str) or not v.strip()]
        if missing:
            errors.append(f"  line {lineno}: missing or empty {', '.join(missing)}")
            continue
        if good.strip() == bad.strip():
            errors.append(f"  line {lineno}: sentence_good and sentence_bad are the same")
            continue
        problem = _text_problem(good, bad)
        if problem:
            errors.append(f"  line {lineno}: {problem}")
            continue
        category = str(d.get("UID") or d.get("linguistics_term") or d.get("field") or path.stem)
        pid = str(d.get("pairID", lineno))
        pairs.append(Pair(f"{path.stem}-{pid}", path.name, category, " ".join(good.split()), " ".join(bad.split())))
    if errors:
        shown = errors[:20] + ([f"  ... and {len(errors) - 20} more"] if len(errors) > 20 else [])
        raise ReproError(f"--pairs {path}: {len(errors)} bad line(s)\n" + "\n".join(shown))
    if not pairs:
        raise ReproError(f"--pairs {path}: no pairs")
    return pairs


def pairs_from_items(items: list, dependency: str | None = None) -> list[Pair]:
    """Agreement pairs: each item's sentence and its version with the critical verb flipped."""
    out = []
    for it in items:
        for dep in it.verbs:
            if dependency in (None, dep):
                out.append(Pair(f"{it.item_id}-{dep}", "agreement", f"{it.structure}:{dep}", it.sentence,
                                " ".join(it.version(dep))))
    return out


def pair_trials(p: Pair) -> tuple[Trial, Trial]:
    """(grammatical, ungrammatical) one-word trials of a pair (see the module doc)."""
    common = dict(experiment="pairs", block="test", trial_index=0, block_trial_index=0, item_id=p.pair_id,
                  structure=p.category, condition="", dependency="outer", critical_index=0, correct_form=p.good,
                  feedback=False, lexicon=p.dataset)
    g = Trial.of_record(**common, violation_position="none", words=(p.good,), critical_word=p.good,
                        alternative_word=p.bad, correct_response="no_violation")
    b = Trial.of_record(**common, violation_position="outer", words=(p.bad,), critical_word=p.bad,
                        alternative_word=p.good, correct_response="violation")
    return g, b


class ScoreCache:
    """log-probabilities of requests already scored, one JSON line each (append-only, flushed)."""

    def __init__(self, path: Path):
        self.path = path
        self.scores: dict[str, float] = {}
        try:  # one writer, as for session tables: a second reproduction on this folder is refused at once
            self._lock = acquire_session_lock(path)
        except SessionError as exc:
            raise ReproError(str(exc)) from None
        torn = False
        if path.exists():
            text = path.read_text(encoding="utf-8")  # own_file: the scores cache twinlab writes
            torn = bool(text) and not text.endswith("\n")
            for line in text.splitlines():
                try:
                    k, v = json.loads(line)
                    self.scores[k] = float(v)
                except (ValueError, TypeError):
                    continue  # a half-written last line after a kill
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(path, "a", encoding="utf-8")
        if torn:  # end the torn line, so that the next entry starts a line of its own
            self._fh.write("\n")

    def add(self, key: str, value: float) -> None:
        self.scores[key] = value
        self._fh.write(json.dumps([key, value]) + "\n")

    def flush(self) -> None:
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()
        self._lock.release()


def score_protocols(backend: Any, cache: ScoreCache, jobs: list[tuple[Trial, Any]], chunk: int = 256,
                    progress: Callable[[int, int | None], None] | None = None,
                    tie_margin: float | None = None) -> tuple[list[Any], int]:
    """Decisions of (trial, protocol) jobs; requests missing from the cache are scored in chunks.

    Near ties as in the runner (`model_subjects.invariance`): a job whose decision margin (|margin|) is
    at most the tie margin (by the backend's dtype unless `tie_margin` is given; 0: off; times the
    square root of the longest option's token count, `margin_for_tokens`) is decided
    on its requests scored alone (`Backend.loglikelihood_alone`), cached under their own keys, and
    its decision says so (`extra.rescored_alone`). So a choice does not depend on the chunk or
    batch it was scored in. Returns the decisions (in job order) and the number of requests
    computed now.
    """

    plans = []
    reqs: dict[str, LoglikelihoodRequest] = {}
    every: dict[str, LoglikelihoodRequest] = {}
    for trial, proto in jobs:
        spans = []
        for q in proto.queries(trial):
            keys = []
            for o in q.options:
                r = LoglikelihoodRequest(q.prompt, o.continuation)
                k = r.key()
                keys.append(k)
                every[k] = r
                if k not in cache.scores:
                    reqs[k] = r
            spans.append(keys)
        plans.append(spans)
    # sorted by context: a chunk then holds one prompt template, whose shared prefix the backend caches
    todo = sorted(reqs.items(), key=lambda kv: (kv[1].context, kv[1].continuation))
    if progress:
        progress(0, len(todo))
    for start in range(0, len(todo), chunk):
        part = todo[start:start + chunk]
        res = backend.loglikelihood([r for _, r in part])
        for (k, _), r in zip(part, res, strict=False):
            cache.add(k, r.logprob)
        cache.flush()
        if progress:
            progress(len(part), None)
    eps = tie_margin_for(backend, tie_margin)

    def n_tokens(k: str) -> int:
        """Scored tokens of a request (the backend's tokenizer; words + 1 for a backend without one)."""
        r = every[k]
        enc = getattr(backend, "encode_pair", None)
        return len(enc(r.context, r.continuation)[1]) if enc else len(r.continuation.split()) + 1

    near = [j for j, ((trial, proto), spans) in enumerate(zip(jobs, plans, strict=False))
            if eps > 0 and decision_gap(proto, trial, [[cache.scores[k] for k in keys] for keys in spans])
            <= margin_for_tokens(eps, max(n_tokens(k) for keys in spans for k in keys))]
    alone_keys = {k: ALONE + k for j in near for keys in plans[j] for k in keys}
    missing = [k for k, ak in alone_keys.items() if ak not in cache.scores]
    for start in range(0, len(missing), chunk):
        part = missing[start:start + chunk]
        for k, r in zip(part, backend.loglikelihood_alone([every[k] for k in part]), strict=False):
            cache.add(alone_keys[k], r.logprob)
        cache.flush()
    decisions = []
    near_set = set(near)
    for j, ((trial, proto), spans) in enumerate(zip(jobs, plans, strict=False)):
        key = (lambda k: alone_keys[k]) if j in near_set else (lambda k: k)
        d = proto.decide(trial, [[cache.scores[key(k)] for k in keys] for keys in spans])
        if j in near_set:
            d.extra["rescored_alone"] = True
        decisions.append(d)
    return decisions, len(todo) + len(missing)


ALONE = "alone:"  # cache key prefix of a request's score computed alone (near-tie re-scoring)
