"""The same Hu & Levy (2023) items for people: DTFit word comparison (Experiment 2: which word
continues the prefix?) and BLiMP sentence comparison (Experiment 3b: which sentence is better?) as
one `choice` study in twinlab's long format, with its spec. The authors' files are not shipped, so the
study is written from the user's copy of the release (`--data`), next to its spec, ready for
`twinlab web serve` / `run-human` / `run-model`; `analyze` then reads the human sessions beside the
models' sessions of the same spec (humans and models get the same compiled trials)."""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import yaml

from experiments.atomic import atomic_write_text
from reproductions.common import ReproError
from reproductions.hu_levy.data import load_datasets

SPEC_NAME = "hu_levy2023_human"
DATASETS = ("dtfit", "blimp")  # the only corpora the study reads (exp2/dtfit, exp3/blimp)
ITEMS_FILE = f"{SPEC_NAME}_items.csv"
SPEC_NAME_ZH = "hu_levy2023_human_zh"  # --language zh: Appendix D's Mandarin pairs (the chinese branch's exp3/mandarin)
ITEMS_FILE_ZH = f"{SPEC_NAME_ZH}_items.csv"
_SPACE_BY_CJK = re.compile(r"(?<=[^\x00-\x7f]) +| +(?=[^\x00-\x7f])")


def unspace(sentence: str) -> str:
    """A word-segmented Chinese sentence as it is written (spaces next to a non-ASCII character dropped;
    a space between two Latin words kept): people read the script, not the corpus's segmentation."""
    return _SPACE_BY_CJK.sub("", sentence)


def items_rows_zh(data: Path, n_items: int | None, seed: int) -> list[dict[str, str]]:
    """The Mandarin pairs as sentence comparisons: the script for people, the authors' segmentation kept."""
    rows: list[dict[str, str]] = []
    for ds in load_datasets(data, ("3b",), n_items=n_items, seed=seed, language="zh"):
        for it in ds.items:
            good, bad = unspace(it.good_sentence), unspace(it.bad_sentence)
            if good == bad:  # a pair that differs only in spacing would be no choice for a reader
                continue
            rows.append({"item": f"mandarin-{it.item_id}", "phenomenon": it.group, "option_1": good,
                         "option_2": bad, "answer": good, "words_1": it.good_sentence, "words_2": it.bad_sentence,
                         "dataset": "mandarin", "source_line": str(it.line)})
    return rows


def spec_dict_zh(phenomena: list[str]) -> dict:
    return {
        "name": SPEC_NAME_ZH,
        "description": "Hu & Levy (2023) Appendix D for people: the Mandarin minimal pairs (Wang et al. 2021) as a "
                       "two-alternative choice (written by `twinlab reproduce hu-levy2023-human --language zh`)",
        "language": "zh",
        "seed": 3,
        "design": {"file": ITEMS_FILE_ZH, "factors": {"phenomenon": phenomena}, "lists": "all"},
        "blocks": [{"name": "test", "role": "test", "feedback": False, "max_run": {"phenomenon": 4}}],
        "task": {"kind": "choice", "question": "哪一句话在中文里更为通顺？", "option_keys": ["f", "j"]},
        "feedback": {"correct_text": "正确！", "incorrect_text": "错误！"},
        "texts": {"instructions": [
            "您将看到并排的两个句子。请选出在中文里更为通顺的那一句：按F键选择左边的句子，按J键选择右边的句子"
            "（也可以用鼠标点击）。", "按空格键开始。"]},
    }


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


def write_study(data: Path, out: Path, n_items: int | None, seed: int, force: bool = False,
                language: str = "en") -> tuple[Path, int]:
    """Write the spec and its items into `out` (atomic; existing files need `force`). Everything is
    read and checked before `out` is made. `language="zh"`: Appendix D's Mandarin pairs."""
    zh = language == "zh"
    spec_path, items_path = (out / f"{SPEC_NAME_ZH}.yaml", out / ITEMS_FILE_ZH) if zh else \
        (out / f"{SPEC_NAME}.yaml", out / ITEMS_FILE)
    for p in (spec_path, items_path):
        if p.exists() and not force:
            raise FileExistsError(f"{p} exists (--force replaces it)")
    rows = items_rows_zh(data, n_items, seed) if zh else items_rows(data, n_items, seed)
    cols = ["item", "comparison", "prefix", "option_1", "option_2", "answer", "dataset", "phenomenon", "source_line"]
    spec = spec_dict(len(rows))
    if zh:
        cols = ["item", "phenomenon", "option_1", "option_2", "answer", "words_1", "words_2", "dataset", "source_line"]
        phenomena = sorted({r["phenomenon"] for r in rows})
        if len(phenomena) < 2:  # the design's factor needs two levels; one would be no design at all
            raise ReproError(f"--data {data}: the pairs chosen hold one phenomenon only ({', '.join(phenomena)}); "
                             "the study's factor `phenomenon` needs two: give more --items (0 = all)")
        spec = spec_dict_zh(phenomena)
    out.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    atomic_write_text(items_path, buf.getvalue())
    atomic_write_text(spec_path, yaml.safe_dump(spec, sort_keys=False, allow_unicode=True))
    return spec_path, len(rows)
