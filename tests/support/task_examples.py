"""The bundled task examples as compiled trials, built per docs/general_model.md (test support).

Until the design compiler serves `design:` specs, the tests build a subject's Trials from an
example's long-format file here: the subject's Latin-square list, the first `n` items, shuffled by
(seed, subject). The task's settings are the example spec's `task:` section. The base experiment
(timing, texts, keys) is the bundled go/no-go spec with short timings, under the example's name.
"""
from __future__ import annotations

import csv
import random
from pathlib import Path
from typing import Any

import yaml

from experiments.spec import Experiment, bundled_spec_path, load_spec
from experiments.trials import Trial, TrialSequence, freeze_pairs

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "experiments" / "specs"
EXAMPLES = {"judgment": "acceptability_yesno", "choice": "minimal_pairs_2afc", "rating": "acceptability_rating",
            "lexical_decision": "lexical_decision", "self_paced_reading": "self_paced_reading",
            "completion": "cloze"}
FAST = dict(fixation_ms=150, word_ms=100, gap_ms=50, response_ms=1000, feedback_ms=150, iti_ms=80)


def example_spec(kind: str) -> dict[str, Any]:
    return yaml.safe_load((SPECS / f"{EXAMPLES[kind]}.yaml").read_text(encoding="utf-8"))


def base_spec(tmp: Path, kind: str, **timing: float) -> Path:
    """A loadable spec for the runners' paradigm (timing, texts, keys) under the example's name."""
    data = yaml.safe_load(bundled_spec_path("lakretz2021_nested").read_text(encoding="utf-8"))
    ex = example_spec(kind)
    data["name"] = ex["name"]
    data["timing"] = dict(FAST, **timing)
    data["texts"]["instructions"] = ex["texts"]["instructions"][:1]
    for b in data["blocks"]:
        b.pop("intro_text", None)
    path = tmp / f"{ex['name']}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def task_section(kind: str) -> dict[str, Any]:
    return {k: v for k, v in example_spec(kind)["task"].items() if k != "kind"}


def read_items(kind: str) -> list[dict[str, str]]:
    ex = example_spec(kind)
    with open(SPECS / ex["design"]["file"], encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def materials(row: dict[str, str]) -> dict[str, Any]:
    m: dict[str, Any] = {}
    for k in ("sentence", "regions", "prefix", "answer", "target", "question", "question_answer"):
        if row.get(k):
            m[k] = row[k]
    opts = [row[k] for k in sorted((k for k in row if k.startswith("option_")), key=lambda k: int(k[7:])) if row[k]]
    if opts:
        m["options"] = opts
    for k in ("accepted", "question_options"):
        if row.get(k):
            m[k] = row[k].split("|")
    return m


def example_sequence(kind: str, exp: Experiment, subject: str, seed: int = 25, n: int = 4,
                     feedback_first: int = 0) -> TrialSequence:
    """`n` trials of the example for `subject`: Latin-square list by subject, items shuffled by seed."""
    ex = example_spec(kind)
    factors = ex["design"]["factors"]
    fname = next(iter(factors))
    levels = factors[fname]
    rows = [r for r in read_items(kind) if (r.get("role") or "test") == "test"]
    items = list(dict.fromkeys(r["item"] for r in rows))
    lst = random.Random(f"{seed}:{subject}:list").randrange(len(levels)) + 1
    if ex["design"].get("lists") == "all":
        chosen = rows
    else:
        chosen = [r for k, it in enumerate(items) for r in rows
                  if r["item"] == it and r[fname] == levels[(k + lst - 1) % len(levels)]]
    rng = random.Random(f"{seed}:{subject}")
    rng.shuffle(chosen)
    trials = []
    for i, r in enumerate(chosen[:n]):
        m = materials(r)
        trials.append(Trial(
            experiment=exp.name, block="test", trial_index=i, block_trial_index=i,
            item_id=f"{r['item']}:{r[fname]}",
            feedback=i < feedback_first, item=r["item"], list_number=lst,
            factors=((fname, r[fname]),), task=kind, role="test", materials=freeze_pairs(dict(sorted(m.items())))))
    return TrialSequence(experiment=exp.name, subject_id=subject, seed=seed, spec_hash=exp.spec_hash,
                         trials=tuple(trials))


def load(path: Path) -> Experiment:
    return load_spec(path)
