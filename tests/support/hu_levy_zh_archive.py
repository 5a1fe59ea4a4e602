"""A results_zh.zip in the authors' format (folders, file names, meta, record fields), with seeded
random log-probabilities, built from the Chinese fixture corpora; and an independent computation of
Figure 11's numbers from any such archive (plain zipfile + json, none of twinlab's code)."""
from __future__ import annotations

import csv
import json
import random
import zipfile
from pathlib import Path

FIX = Path(__file__).resolve().parents[1] / "data" / "hu_levy2023" / "chinese" / "datasets"
METHODS = ("direct", "metaQuestionSimple", "metaInstruct", "metaQuestionComplex")


def _rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _file(model: str, task: str, method: str, data_file: str, results: list, order: str | None = None) -> bytes:
    meta = {"model": model, "lang": "zh", "seed": 0, "task": task, "eval_type": method}
    if order:
        meta["option_order"] = order
    meta |= {"data_file": data_file, "timestamp": "2023-08-24 16:00:00"}
    return json.dumps({"meta": meta, "results": results}, ensure_ascii=False).encode("utf-8")


def build_archive(path: Path, seed: int = 0, models: tuple[str, ...] = ("text-davinci-003",)) -> dict[str, bytes]:
    """Write the archive; return its members (name -> bytes) so a test can tamper with one."""
    rng = random.Random(seed)
    lp = lambda: round(-rng.uniform(0.0, 12.0), 6)  # noqa: E731
    news, pairs = _rows(FIX / "exp1/news_zh/corpus.csv"), _rows(FIX / "exp3/mandarin/corpus.csv")
    members: dict[str, bytes] = {}
    root = "results_zh"
    for model in models:
        for m in METHODS:
            res = [{"item_id": int(r["item_id"]), "prefix": r["prefix"], "prompt": r["prefix"] + r["continuation"],
                    "gold_continuation": r["continuation"], "logprob_of_gold_continuation": lp()} for r in news]
            members[f"{root}/exp1_word-prediction/news_zh_{model}_{m}.json"] = _file(
                model, "word_pred", m, "datasets/exp1/news_zh/corpus.csv", res)
    model = models[0]
    for m in METHODS:
        if m == "direct":
            res = [{"item_id": int(r["item_id"]), "good_sentence": r["good_sentence"],
                    "bad_sentence": r["bad_sentence"],
                    "logprob_of_good_sentence": lp(), "logprob_of_bad_sentence": lp()} for r in pairs]
        else:
            res = [{"item_id": int(r["item_id"]), "good_prompt_yes": "", "good_sentence": r["good_sentence"],
                    "bad_sentence": r["bad_sentence"], "logprob_of_yes_good_sentence": lp(),
                    "logprob_of_yes_bad_sentence": lp(), "logprob_of_no_good_sentence": lp(),
                    "logprob_of_no_bad_sentence": lp()} for r in pairs]
        members[f"{root}/exp3a_sentence-judgment/mandarin_{model}_{m}.json"] = _file(
            model, "sentence_judge", m, "datasets/exp3/mandarin/corpus.csv", res)
        if m == "direct":
            continue
        for order in ("goodFirst", "badFirst"):
            res = [{"item_id": int(r["item_id"]), "good_prompt": "", "good_sentence": r["good_sentence"],
                    "bad_sentence": r["bad_sentence"], "good_continuation": "1" if order == "goodFirst" else "2",
                    "bad_continuation": "2" if order == "goodFirst" else "1", "logprob_of_good_continuation": lp(),
                    "logprob_of_bad_continuation": lp()} for r in pairs]
            members[f"{root}/exp3b_sentence-comparison/mandarin_{model}_{m}_{order}.json"] = _file(
                model, "sentence_comparison", m, "datasets/exp3/mandarin/corpus.csv", res, order)
    members[f"{root}/exp1_word-prediction/.ipynb_checkpoints/news_zh_{model}_direct-checkpoint.json"] = \
        members[f"{root}/exp1_word-prediction/news_zh_{model}_direct.json"]
    write_zip(path, members)
    return members


def write_zip(path: Path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def independent(path: Path) -> dict[tuple[str, str, str], float]:
    """(model, experiment, method) -> Figure 11's number, straight from the JSON files (checkpoints not read)."""
    files = {}
    with zipfile.ZipFile(path) as zf:
        for n in zf.namelist():
            if n.endswith(".json") and ".ipynb_checkpoints" not in n:
                files[n] = json.loads(zf.read(n))
    out: dict[tuple[str, str, str], float] = {}
    name = {"direct": "Direct", "metaQuestionSimple": "MetaQuestionSimple", "metaInstruct": "MetaInstruct",
            "metaQuestionComplex": "MetaQuestionComplex"}
    for n, d in files.items():
        meta, res = d["meta"], d["results"]
        key = (meta["model"], name[meta["eval_type"]])
        if "exp1_" in n:
            out[(key[0], "1", key[1])] = sum(r["logprob_of_gold_continuation"] for r in res) / len(res)
        elif "exp3a_" in n and meta["eval_type"] == "direct":
            acc = sum(r["logprob_of_good_sentence"] > r["logprob_of_bad_sentence"] for r in res) / len(res)
            out[(key[0], "3a", "Direct")] = out[(key[0], "3b", "Direct")] = acc
        elif "exp3a_" in n:
            tpr = sum(r["logprob_of_yes_good_sentence"] > r["logprob_of_no_good_sentence"] for r in res) / len(res)
            tnr = sum(r["logprob_of_no_bad_sentence"] > r["logprob_of_yes_bad_sentence"] for r in res) / len(res)
            out[(key[0], "3a", key[1])] = (tpr + tnr) / 2
        else:
            acc = sum(r["logprob_of_good_continuation"] > r["logprob_of_bad_continuation"] for r in res) / len(res)
            out[(key[0], "3b", key[1])] = out.get((key[0], "3b", key[1]), 0.0) + acc / 2
    return out
