"""Appendix D (Figure 11) recomputed from the authors' released Chinese outputs (results_zh.zip).

    twinlab reproduce hu-levy2023 --authors-outputs results_zh.zip --out OUT

The archive (read by `archive.read_json_archive`: bounded, JSON only) holds one JSON file per model x
method (x answer order) in three folders, as the authors' run scripts wrote them (`scripts/zh/`):
`exp1_word-prediction/news_zh_<model>_<method>.json`, `exp3a_sentence-judgment/mandarin_<model>_<method>.json`,
`exp3b_sentence-comparison/mandarin_<model>_<method>_<order>.json`; each `{"meta": {...}, "results": [...]}`.
Every file is checked against its name and folder (model, method, order, task, language), every
record for its item id and finite log-probabilities, each experiment for completeness (all four
methods, both orders, the same items and sentence pairs in every file); anything else is refused
naming the member (exit 2).

The records become the score table of a twinlab run (one row per item x method x order x option), so
the paper's rules are the English reproduction's own (`measures.py`): Exp 1 mean log P(gold
continuation) per model and method; 3a Direct = share of pairs whose good sentence is more probable,
Meta = balanced accuracy (TPR + TNR)/2 of 是 vs 否; 3b Meta = accuracy over items x both answer orders
(the mean of the orders); 3b Direct = 3a Direct (the notebook copies 3a's Direct rows into 3b).
"""
from __future__ import annotations

import dataclasses
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from experiments.atomic import atomic_write_text
from reproductions.common import ReproError, Report, sha256_file, write_provenance
from reproductions.hu_levy.archive import ArchiveError, read_json_archive
from reproductions.hu_levy.prompts import META, METHODS, render

PAPER = "seeds/003: Hu & Levy (2023), Appendix D (Experiments in Mandarin Chinese), Figure 11"
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
# What the paper prints (Appendix D text; Figure 11 has bars only) and the authors' notebook's printed output
# (analysis_zh.ipynb on the chinese branch: the means behind Figure 11's panels a and c).
PAPER_PRINTED = {("3b", "Direct"): 0.6, ("3b", "MetaQuestionSimple"): 0.8, ("3b", "MetaInstruct"): 0.8,
                 ("3b", "MetaQuestionComplex"): 0.8}
NOTEBOOK_PRINTED = {("1", "Direct"): -3.346442, ("1", "MetaQuestionSimple"): -3.671287,
                    ("1", "MetaInstruct"): -3.553944, ("1", "MetaQuestionComplex"): -5.521090,
                    ("3b", "Direct"): 0.611215, ("3b", "MetaQuestionSimple"): 0.787850,
                    ("3b", "MetaInstruct"): 0.823364, ("3b", "MetaQuestionComplex"): 0.777570}


@dataclass
class AuthorsZhOptions:
    authors_outputs: Path
    out: Path
    n_boot: int = 1000
    seed: int = 1
    quiet: bool = False


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


def identify(member: str, data: Any) -> OutputFile:
    """The experiment, dataset, model, method and order of one file; its meta must agree with its name."""
    parts = member.split("/")
    if len(parts) < 2 or parts[-2] not in FOLDERS:
        raise _refuse(member, f"not in one of the results folders {', '.join(FOLDERS)}")
    exp, task = FOLDERS[parts[-2]]
    if not isinstance(data, dict) or not isinstance(data.get("meta"), dict) or not isinstance(data.get("results"), list):
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
    members, aside = read_json_archive(path)
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


# ------------------------------------------------------------------------------------ the paper beside ours
def paper_comparison(perf: pd.DataFrame) -> pd.DataFrame:
    """Each Figure 11 number (text-davinci-003, pooled) beside the paper's print and the notebook's output."""
    p = perf[(perf["dataset"] == "all") & (perf["model"] == FIGURE_MODEL)]
    rows = []
    for _, r in p.iterrows():
        key = (r["experiment"], r["method"])
        paper, nb = PAPER_PRINTED.get(key), NOTEBOOK_PRINTED.get(key)
        rows.append({"experiment": key[0], "method": key[1], "measure": r["measure"], "ours": round(r["estimate"], 6),
                     "n_items": r["n_items"], "paper": paper, "agrees_with_paper": None if paper is None
                     else round(r["estimate"], 1) == paper, "notebook": nb,
                     "agrees_with_notebook": None if nb is None else abs(r["estimate"] - nb) < 5e-7,
                     "note": _why(key)})
    return pd.DataFrame(rows)


def _why(key: tuple[str, str]) -> str:
    if key[0] == "3b":
        return "the paper prints one decimal: 'accuracy scores: Direct 0.6; others 0.8'"
    if key[0] == "3a":
        return ("printed nowhere: Figure 11's bar only (the notebook plots it without printing)"
                + ("; the same number as 3b Direct (one set of sentence scores)" if key[1] == "Direct" else ""))
    return "the paper prints no value (bars); the notebook prints the mean behind the bar"


def statements(perf: pd.DataFrame, model: str = FIGURE_MODEL) -> pd.DataFrame:
    """Appendix D's claims, checked on one model's numbers (the paper's: text-davinci-003)."""
    mine = perf[(perf["dataset"] == "all") & (perf["model"] == model)].set_index(["experiment", "method"])
    est = mine["estimate"]
    lows = mine["ci_low"] if "ci_low" in mine else est * float("nan")
    # the pair claims are about a model above chance; one whose every Meta CI includes 0.5 cannot bear them
    above = any(lows.get((e, m), float("nan")) > 0.5 for e in ("3a", "3b") for m in META)
    rows = []
    if ("1", "Direct") in est.index:
        best = max(META, key=lambda m: est.get(("1", m), -math.inf))
        rows.append({"claim": "Exp 1: Direct gives the gold continuation the highest probability",
                     "ours": f"Direct {est[('1', 'Direct')]:.3f} vs best Meta ({best}) {est[('1', best)]:.3f}",
                     "holds": bool(all(est[("1", "Direct")] > est[("1", m)] for m in META))})
    if all(("3a", m) in est.index and ("3b", m) in est.index for m in META):
        rows.append({"claim": "minimal pairs help: Meta accuracy rises from 3a to 3b",
                     "ours": "; ".join(f"{m} {est[('3a', m)]:.3f} -> {est[('3b', m)]:.3f}" for m in META)
                     + ("" if above else " (every Meta 95% CI includes chance: the claim does not apply)"),
                     "holds": bool(all(est[("3b", m)] > est[("3a", m)] for m in META)) if above else "n/a"})
        rows.append({"claim": "3b: Direct underperforms the metalinguistic prompts (Direct 0.6; others 0.8)",
                     "ours": f"Direct {est[('3b', 'Direct')]:.3f}; " + ", ".join(f"{m} {est[('3b', m)]:.3f}" for m in META)
                     + ("" if above else " (every Meta 95% CI includes chance: the claim does not apply)"),
                     "holds": bool(all(est[("3b", "Direct")] < est[("3b", m)] for m in META)) if above else "n/a"})
    return pd.DataFrame(rows)


DIFFERENCES = (
    ("printed precision", "Appendix D prints 3b only, to one decimal ('Direct 0.6; others 0.8'); Exp 1 and 3a are "
     "bars", "ours to 6 decimals beside the print and beside the authors' notebook output (analysis_zh.ipynb), "
     "which prints Exp 1 and 3b means"),
    ("models", "Figure 11 shows text-davinci-003", "the archive also holds text-curie-001 for Exp 1: in "
     "tables/performance.csv, not in the figure"),
    ("checkpoint copies", "the notebook reads each results folder's own *.json (os.listdir), not "
     ".ipynb_checkpoints/", "read, checked and set aside the same way; tables/checkpoints.csv says how each differs"),
    ("3b Direct", "the notebook copies 3a's Direct rows into 3b", "the same 535 sentence-pair scores serve both"),
    ("confidence intervals", "seaborn's bootstrap (Exp 1, 3b, 3a Direct) and the notebook's own 1000-resample "
     "bootstrap (3a Meta), unseeded", "percentile bootstrap over items (--n-boot, --seed); estimates are "
     "identical, the CIs differ by resampling only"),
    ("extra 3a methods", "the notebook's 3a loop also names MetaQuestionComplexOptionFirst and MetaInstructKeywords",
     "no such files are in the archive; nothing in Figure 11 depends on them"),
    ("ties", "strict '>' (a tie is wrong)", "the same"),
    ("a prompt of another code version", "text-curie-001's Exp 1 MetaQuestionComplex prompts (not in Figure 11) "
     "have a space after 答案： ('答案： 伐'); the released utils/llm_zh.py and every text-davinci-003 prompt have "
     "none", "the stored scores are used as they are; the stored prompt is kept in tables/items_scores.csv and the "
     "count of prompts that differ from the templates is reported"),
)


def _prompt_check(scores: pd.DataFrame) -> str:
    s = scores[scores["prompt_source"] == "authors"]
    ok = int(s["prompt_matches_twinlab"].astype(bool).sum())
    text = (f"The prompts the authors stored in their outputs ({len(s)}: Exp 1 every prompt, 3a the good sentence "
            f"with 是, 3b the good sentence's answer) against twinlab's rendering of their Chinese templates "
            f"(reproductions/hu_levy/prompts_zh.py): {ok} of {len(s)} identical, character for character.")
    bad = s[~s["prompt_matches_twinlab"].astype(bool)]
    for member, g in bad.groupby("member", sort=True):
        r = g.iloc[0]
        ours = r["context"] + r["continuation"]
        k = next((i for i, (a, b) in enumerate(zip(r["prompt"], ours)) if a != b), min(len(r["prompt"]), len(ours)))
        text += (f" {member}: {len(g)} differ; item {r['item']}: the stored prompt has {r['prompt'][k - 4:k + 4]!r} "
                 f"where the templates give {ours[k - 4:k + 4]!r} (character {k}).")
    return text


# ------------------------------------------------------------------------------------ the run
def reproduce_authors_zh(opt: AuthorsZhOptions) -> Path:
    """Figure 11 and its numbers from the archive; everything is read and checked before OUT is written."""
    from reproductions.hu_levy import figures as F
    from reproductions.hu_levy.measures import consistency, consistency_means, differentials, item_table, performance

    started = time.time()
    scores, files, aside, notes = read_outputs(Path(opt.authors_outputs))
    items = item_table(scores.drop(columns=["prompt_source", "prompt_matches_twinlab", "member"]))
    perf = performance(items, opt.n_boot, opt.seed)
    ic = consistency(differentials(items))
    by_model, mean_ic = consistency_means(ic)
    opt.out.mkdir(parents=True, exist_ok=True)
    rep = Report(opt.out, "Hu & Levy (2023) Appendix D: Figure 11 from the authors' Chinese outputs")
    models = sorted(scores["model"].unique())
    rep.text(f"Archive: {opt.authors_outputs} ({len(files)} JSON files read; {len(aside)} checkpoint copies set "
             f"aside). Models: {', '.join(models)}. Items: Exp 1 "
             f"{scores.loc[scores['experiment'] == '1', 'item'].nunique()} Chinese news prefixes; 3a/3b "
             f"{scores.loc[scores['experiment'] != '1', 'item'].nunique()} Mandarin minimal pairs (Wang et al. 2021).")
    rep.text("Rules (the English reproduction's, reproductions/hu_levy/measures.py): Exp 1 mean log P(gold "
             "continuation); 3a Direct accuracy (good sentence more probable), Meta balanced accuracy (TPR + TNR)/2 "
             "of 是 vs 否; 3b accuracy over items x both answer orders; strict '>'. No model is run.")
    for n in notes:
        rep.note(n)
    rep.text(_prompt_check(scores))
    cols = ["model", "experiment", "dataset", "item", "method", "order", "shown", "option", "prompt", "prompt_source",
            "context", "continuation", "logprob", "member"]
    atomic_write_text(opt.out / "tables" / "items_scores.csv", scores[cols].to_csv(index=False))
    atomic_write_text(opt.out / "tables" / "items.csv", items.to_csv(index=False))

    rep.heading("Task performance (Figure 11)", anchor="performance")
    shown = perf[perf["dataset"] == "all"].pivot_table(index=["model", "experiment"], columns="method",
                                                      values="estimate", sort=False)
    shown = shown[[m for m in METHODS if m in shown.columns]].round(3).reset_index()
    rep.table("performance_wide", shown, "Figure 11 numbers (and text-curie-001's Exp 1)")
    rep.table("performance", perf, "With 95% bootstrap CIs, per-order accuracies and TPR/TNR", show=False)
    fig = perf[perf["model"] == FIGURE_MODEL]
    rep.figure(F.figure2(fig, opt.out / "figures" / "figure11.png",
                         title="Figure 11: text-davinci-003 in Chinese, from the authors' outputs"),
               "Figure 11: (a) word prediction, (b) sentence judgment, (c) sentence comparison (bars: 95% bootstrap "
               "CIs over items; dashed: chance)")
    rep.heading("The paper beside ours", anchor="paper")
    rep.table("paper_comparison", paper_comparison(perf), "Each number: ours, the paper's print, the notebook's output")
    rep.table("statements", statements(perf), "Appendix D's claims on these numbers")
    rep.table("differences", pd.DataFrame(DIFFERENCES, columns=["what", "the authors", "here"]),
              "Every difference between the authors' figure and this one, explained")
    cp = checkpoint_table(files, aside)
    if not cp.empty:
        rep.table("checkpoints", cp, "Checkpoint copies in the archive (not read by the notebook, nor here)")
    rep.heading("Internal consistency (not in the paper for Chinese)", anchor="consistency")
    rep.text("Pearson r of the item-level Direct and Meta values, as Figure 3 computes it for English; Appendix D "
             "shows no such figure for Chinese, so there is nothing to compare these with.")
    rep.table("consistency", ic, "Per model, experiment and Meta method")
    rep.table("consistency_mean", mean_ic, "Mean over models", show=False)
    opts = {k: str(v) if isinstance(v, Path) else v for k, v in dataclasses.asdict(opt).items()}
    from reproductions.hu_levy.prompts import templates_text

    write_provenance(opt.out, PAPER, opts, [], {}, templates_text("authors", "zh"),
                     {"authors_outputs": Path(opt.authors_outputs)}, [], started,
                     extra={"archive_sha256": sha256_file(Path(opt.authors_outputs)),
                            "members_read": [f.member for f in files], "members_set_aside": sorted(aside),
                            "no_model_run": True})
    return rep.write()
