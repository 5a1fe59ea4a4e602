"""The authors' Chinese outputs (results_zh.zip) as twinlab score rows: each JSON file identified and checked.

The archive (read by `archive.read_json_archive`: bounded, JSON only) holds one JSON file per model x
method (x answer order) in three folders, as the authors' run scripts wrote them (`scripts/zh/`):
`exp1_word-prediction/news_zh_<model>_<method>.json`, `exp3a_sentence-judgment/mandarin_<model>_<method>.json`,
`exp3b_sentence-comparison/mandarin_<model>_<method>_<order>.json`; each `{"meta": {...}, "results": [...]}`.
Every file is checked against its name and folder (model, method, order, task, language), every
record for its item id and finite log-probabilities, each experiment for completeness (all four
methods, both orders, the same items and sentence pairs in every file); anything else is refused
naming the member (ArchiveError; the CLI exits 2). The records become the score table of a twinlab run
(one row per item x method x order x option), with the prompt the authors stored beside twinlab's
rendering of their Chinese templates.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from reproductions.hu_levy.archive import ArchiveError, read_json_archive
from reproductions.hu_levy.prompts import META, METHODS, render

FIGURE_MODEL = "text-davinci-003"  # Figure 11 shows GPT-3.5 (text-davinci-003) only
FOLDERS = {"exp1_word-prediction": ("1", "word_pred"), "exp3a_sentence-judgment": ("3a", "sentence_judge"),
           "exp3b_sentence-comparison": ("3b", "sentence_comparison")}
METHOD_OF = {"direct": "Direct", "metaQuestionSimple": "MetaQuestionSimple", "metaInstruct": "MetaInstruct",
             "metaQuestionComplex": "MetaQuestionComplex"}
ORDERS = ("goodFirst", "badFirst")
FIELDS = {  # the log-probabilities each kind of file must hold (finite numbers)
    ("1", "Direct"): ("logprob_of_gold_continuation",), ("1", "Meta"): ("logprob_of_gold_continuation",),
    ("3a", "Direct"): ("logprob_of_good_sentence", "logprob_of_bad_sentence"),
    ("3a", "Meta"): ("logprob_of_yes_good_sentence", "logprob_of_no_good_sentence", "logprob_of_yes_bad_sentence",
                     "logprob_of_no_bad_sentence"),
    ("3b", "Meta"): ("logprob_of_good_continuation", "logprob_of_bad_continuation"),
}


@dataclass(frozen=True)
class OutputFile:
    """One JSON file of the archive, identified from its folder and name and checked against its meta."""

    member: str
    experiment: str
    dataset: str
    model: str
    method: str
    order: str  # goodFirst | badFirst | none
    records: tuple[dict[str, Any], ...]
    timestamp: str = ""


def _refuse(member: str, why: str) -> ArchiveError:
    return ArchiveError(f"member {member}: {why} (refused: not the authors' outputs as released)")


def folder_problem(member: str) -> str | None:
    """Why a member cannot be one of the outputs by its name alone (checked before any member is read)."""
    parts = member.split("/")
    if len(parts) < 2 or parts[-2] not in FOLDERS:
        return f"not in one of the results folders {', '.join(FOLDERS)}"
    return None


def identify(member: str, data: Any) -> OutputFile:
    """The experiment, dataset, model, method and order of one file; its meta must agree with its name."""
    parts = member.split("/")
    if folder_problem(member):
        raise _refuse(member, folder_problem(member) or "")
    exp, task = FOLDERS[parts[-2]]
    if (not isinstance(data, dict) or not isinstance(data.get("meta"), dict)
            or not isinstance(data.get("results"), list)):
        raise _refuse(member, 'not an object with "meta" (object) and "results" (list)')
    meta = data["meta"]
    model, eval_type, order = meta.get("model"), meta.get("eval_type"), meta.get("option_order")
    if not isinstance(model, str) or not re.fullmatch(r"[A-Za-z0-9.\-]+", model) or eval_type not in METHOD_OF:
        raise _refuse(member, f"meta model {model!r} / eval_type {eval_type!r} not understood")
    if meta.get("task") != task:
        raise _refuse(member, f"meta task {meta.get('task')!r}, but its folder {parts[-2]} holds {task}")
    if meta.get("lang") != "zh":
        raise _refuse(member, f"meta lang {meta.get('lang')!r}, not 'zh' (the Chinese outputs)")
    if exp == "3b" and order not in ORDERS:
        raise _refuse(member, f"meta option_order {order!r}, not goodFirst or badFirst")
    if exp == "3b" and eval_type == "direct":
        raise _refuse(member, "a Direct file in 3b (the authors' 3b Direct is 3a's)")
    suffix = f"_{model}_{eval_type}" + (f"_{order}" if exp == "3b" else "") + ".json"
    if not parts[-1].endswith(suffix) or len(parts[-1]) == len(suffix):
        raise _refuse(member, f"its name does not match its meta (expected <corpus>{suffix})")
    records = tuple(_check_records(member, exp, METHOD_OF[eval_type], data["results"]))
    return OutputFile(member, exp, parts[-1][: -len(suffix)], model, METHOD_OF[eval_type],
                      order if exp == "3b" else "none", records, str(meta.get("timestamp", "")))


def _check_records(member: str, exp: str, method: str, results: list) -> list[dict[str, Any]]:
    fields = FIELDS[(exp, "Direct" if method == "Direct" else "Meta")]
    seen: set[str] = set()
    for k, r in enumerate(results):
        if not isinstance(r, dict):
            raise _refuse(member, f"results[{k}] is not an object")
        iid = r.get("item_id")
        if isinstance(iid, bool) or not isinstance(iid, (int, str)) or not str(iid).strip():
            raise _refuse(member, f"results[{k}]: item_id {iid!r} is not an id")
        if str(iid) in seen:
            raise _refuse(member, f"results[{k}]: item_id {iid} appears twice")
        seen.add(str(iid))
        for f in fields:
            v = r.get(f)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise _refuse(member, f"results[{k}] (item {iid}): {f} is {v!r}, not a finite number")
        for f in ("good_sentence", "bad_sentence") if exp != "1" else ("prefix", "gold_continuation"):
            if not isinstance(r.get(f), str) or not r[f]:
                raise _refuse(member, f"results[{k}] (item {iid}): {f} missing or empty")
    if not results:
        raise _refuse(member, "no results")
    return results


def check_complete(files: list[OutputFile]) -> list[str]:
    """Every model's experiment complete (all methods, both 3b orders, 3a's Direct for 3b), one item set and
    one sentence pair per item across files; notes on what is not in Figure 11."""
    by = {(f.experiment, f.model, f.method, f.order): f for f in files}
    if len(by) != len(files):
        raise ArchiveError("two members hold the same experiment, model, method and order")
    notes = []
    for exp in ("1", "3a", "3b"):
        for model in sorted({f.model for f in files if f.experiment == exp}):
            want = [(exp, model, m, "none") for m in METHODS] if exp != "3b" else \
                [(exp, model, m, o) for m in META for o in ORDERS] + [("3a", model, "Direct", "none")]
            missing = [w for w in want if w not in by]
            if missing:
                raise ArchiveError(f"experiment {exp}, {model}: no file for " + ", ".join(
                    f"{w[2]}" + (f" {w[3]}" if w[3] != "none" else "") + (" (3a)" if w[0] != exp else "")
                    for w in missing))
            _same_items(exp, [by[w] for w in want])
    if {f.model for f in files if f.experiment != "1"} - {FIGURE_MODEL}:
        notes.append("models other than text-davinci-003 in 3a/3b: in the tables, not in Figure 11")
    return notes


def _same_items(exp: str, group: list[OutputFile]) -> None:
    keys = ("prefix", "gold_continuation") if exp == "1" else ("good_sentence", "bad_sentence")
    ref = {str(r["item_id"]): tuple(r[k] for k in keys) for r in group[0].records}
    for f in group[1:]:
        other = {str(r["item_id"]): tuple(r[k] for k in keys) for r in f.records}
        if set(other) != set(ref):
            raise ArchiveError(f"member {f.member}: its items differ from {group[0].member}'s "
                               f"({len(set(other) ^ set(ref))} item ids in one only)")
        bad = [i for i in ref if ref[i] != other[i]]
        if bad:
            raise ArchiveError(f"member {f.member}: item {bad[0]} has other {' / '.join(keys)} than in "
                               f"{group[0].member} ({len(bad)} items differ)")


# ------------------------------------------------------------------------------------ records -> scores
def _row(f: OutputFile, exp: str, r: dict, shown: str, option: str, ctx_cont: tuple[str, str], lp: float,
         stored: str | None) -> dict[str, Any]:
    context, continuation = ctx_cont
    ours = context + continuation
    stored = stored if isinstance(stored, str) and stored else None  # the release leaves some out
    return {"model": f.model, "experiment": exp, "dataset": f.dataset, "item": str(r["item_id"]), "method": f.method,
            "order": f.order, "shown": shown, "option": option, "prompt": stored if stored is not None else ours,
            "prompt_source": "authors" if stored is not None else "twinlab", "context": context,
            "continuation": continuation, "logprob": float(lp), "unscorable": "", "request": "",
            "prompt_matches_twinlab": (stored == ours) if stored is not None else None, "member": f.member}


def score_rows(f: OutputFile) -> list[dict[str, Any]]:
    """The records of one file as score rows (the English run's columns); the stored prompt kept, and
    compared with twinlab's rendering of the authors' Chinese templates (`prompts_zh`)."""
    out, m = [], f.method
    R = lambda exp, answer, **kw: render("authors", exp, m, answer, language="zh", **kw)  # noqa: E731
    for r in f.records:
        if f.experiment == "1":
            out.append(_row(f, "1", r, "item", "word", R("1", r["gold_continuation"], prefix=r["prefix"]),
                            r["logprob_of_gold_continuation"], r.get("prompt")))
        elif m == "Direct":  # 3a's Direct file serves 3a and 3b, as the notebook copies it
            for exp in ("3a", "3b"):
                for opt in ("good", "bad"):
                    out.append(_row(f, exp, r, "pair", opt, R(exp, r[f"{opt}_sentence"]),
                                    r[f"logprob_of_{opt}_sentence"], None))
        elif f.experiment == "3a":
            for shown in ("good", "bad"):
                for opt, said in (("Yes", "是"), ("No", "否")):
                    stored = r.get("good_prompt_yes") if (shown, opt) == ("good", "Yes") else None
                    out.append(_row(f, "3a", r, shown, opt, R("3a", said, sentence=r[f"{shown}_sentence"]),
                                    r[f"logprob_of_{opt.lower()}_{shown}_sentence"], stored))
        else:
            s1, s2 = (r["good_sentence"], r["bad_sentence"]) if f.order == "goodFirst" else \
                (r["bad_sentence"], r["good_sentence"])
            label = {"good": "1", "bad": "2"} if f.order == "goodFirst" else {"good": "2", "bad": "1"}
            for opt in ("good", "bad"):
                stored = r.get("good_prompt") if opt == "good" else None
                out.append(_row(f, "3b", r, "pair", opt, R("3b", label[opt], s1=s1, s2=s2),
                                r[f"logprob_of_{opt}_continuation"], stored))
    return out


def read_outputs(path: Path) -> tuple[pd.DataFrame, list[OutputFile], dict[str, Any], list[str]]:
    """(score table, the files, the checkpoint copies set aside, notes); ArchiveError naming what is wrong."""
    members, aside = read_json_archive(path, name_problem=folder_problem)
    if not members:
        raise ArchiveError(f"{path}: no JSON files outside .ipynb_checkpoints/")
    files = [identify(name, data) for name, data in sorted(members.items())]
    notes = check_complete(files)
    rows = [row for f in files for row in score_rows(f)]
    return pd.DataFrame(rows), files, aside, notes


def checkpoint_table(files: list[OutputFile], aside: dict[str, Any]) -> pd.DataFrame:
    """The Jupyter checkpoint copies the notebook does not read, each beside the file it shadows."""
    final = {f.member.replace("/.ipynb_checkpoints", ""): f for f in files}
    rows = []
    for name, data in sorted(aside.items()):
        base = name.replace("/.ipynb_checkpoints", "").replace("-checkpoint.json", ".json")
        f = final.get(base)
        try:
            g = identify(base, data)
            same = f is not None and g.records == f.records
            what = "identical records" if same else "records differ"
            if f is not None and not same and f.experiment == "1":
                mean = lambda rs: sum(r["logprob_of_gold_continuation"] for r in rs) / len(rs)  # noqa: E731
                what += f" (mean log P {mean(g.records):.4f} vs {mean(f.records):.4f} in the file read)"
        except ArchiveError as exc:
            what = f"not read as outputs ({exc})"
        rows.append({"checkpoint": name, "shadows": base if f else "(none)",
                     "timestamp": (data.get("meta") or {}).get("timestamp") if isinstance(data, dict) else None,
                     "timestamp_of_file_read": f.timestamp if f else None, "compared": what})
    return pd.DataFrame(rows)
