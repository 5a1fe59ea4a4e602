"""The same Hu & Levy (2023) items for people: DTFit word comparison (Experiment 2: which word
continues the prefix?) and BLiMP sentence comparison (Experiment 3b: which sentence is better?) as
one `choice` study in twinlab's long format, with its spec. The authors' files are not shipped, so the
study is written from the user's copy of the release (`--data`), next to its spec, ready for
`twinlab web serve` / `run-human` / `run-model`; `analyze` then reads the human sessions beside the
models' sessions of the same spec (humans and models get the same compiled trials)."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import yaml

from experiments.atomic import atomic_write_text
from reproductions.hu_levy.data import load_datasets
from stimuli.input_rules import CSV_FIELD_LIMIT  # noqa: F401 (importing it sets the CSV field limit, once)

SPEC_NAME = "hu_levy2023_human"
DATASETS = ("dtfit", "blimp")  # the only corpora the study reads (exp2/dtfit, exp3/blimp)
ITEMS_FILE = f"{SPEC_NAME}_items.csv"


def items_rows(data: Path, n_items: int | None, seed: int) -> list[dict[str, str]]:
    """Long-format rows: one per item, factor `comparison` (word | sentence), options in file order
    (the runners counterbalance their screen positions), the right answer named."""
    rows: list[dict[str, str]] = []
    for ds in load_datasets(data, ("2", "3b"), n_items=n_items, seed=seed, names=DATASETS):
        for it in ds.items:
            if ds.spec.name == "dtfit":
                rows.append({"item": f"dtfit-{it.item_id}", "comparison": "word", "prefix": it.prefix,
                             "option_1": it.continuation, "option_2": it.bad_continuation,
                             "answer": it.continuation, "dataset": "dtfit", "source_line": str(it.line)})
            elif ds.spec.name == "blimp":
                rows.append({"item": f"blimp-{it.item_id}", "comparison": "sentence", "prefix": "",
                             "option_1": it.good_sentence, "option_2": it.bad_sentence,
                             "answer": it.good_sentence, "dataset": "blimp", "phenomenon": it.group,
                             "source_line": str(it.line)})
    return rows


def spec_dict(n_rows: int) -> dict:
    return {
        "name": SPEC_NAME,
        "description": "Hu & Levy (2023) for people: DTFit word comparison and BLiMP sentence comparison "
                       "(written by `twinlab reproduce hu-levy2023-human` from the authors' release)",
        "seed": 3,
        "design": {"file": ITEMS_FILE, "factors": {"comparison": ["word", "sentence"]}, "lists": "all"},
        "blocks": [{"name": "test", "role": "test", "feedback": False, "max_run": {"comparison": 4}}],
        "task": {"kind": "choice", "question": "Which is the better continuation or sentence?",
                 "option_keys": ["f", "j"]},
        "texts": {"instructions": [
            "You will see a sentence beginning with two possible next words, or two whole sentences. "
            "Choose the one that is more natural: F for the left one, J for the right one (or click it).",
            "Press SPACE to begin."]},
    }


def write_study(data: Path, out: Path, n_items: int | None, seed: int, force: bool = False) -> tuple[Path, int]:
    """Write the spec and its items into `out` (atomic; existing files need `force`). Everything is
    read and checked before `out` is made."""
    spec_path, items_path = out / f"{SPEC_NAME}.yaml", out / ITEMS_FILE
    for p in (spec_path, items_path):
        if p.exists() and not force:
            raise FileExistsError(f"{p} exists (--force replaces it)")
    rows = items_rows(data, n_items, seed)
    out.mkdir(parents=True, exist_ok=True)
    cols = ["item", "comparison", "prefix", "option_1", "option_2", "answer", "dataset", "phenomenon", "source_line"]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    atomic_write_text(items_path, buf.getvalue())
    atomic_write_text(spec_path, yaml.safe_dump(spec_dict(len(rows)), sort_keys=False, allow_unicode=True))
    return spec_path, len(rows)
