"""The authors' released per-item outputs (jennhu/lm-task-demands `output/`) as long tables, one row per item,
model and evaluation method, exactly as the authors' notebooks build the data of their figures and models:

    analogical (digit_mat)   correct = `generated_response_correct` / `mc_response_correct` ("True")
    reflective (crt1-3)      production correct = `generated_response_label` == "correct";
                             forced choice correct = `mc_correct_logprob` > `mc_intuitive_logprob`
                             (mean per-token log-probabilities of the correct vs the intuitive answer)
    word prediction          logprob = `direct_logprob` / `meta_logprob` (final word, summed over tokens)
    grammaticality           BLiMP sample + Dentella et al. pairs (without the duplicated "Order of Adjectives"
                             items TS 6-10); metalinguistic: `meta_good_correct` and `meta_bad_correct` (the two
                             orders of prompt (2)); direct: `direct_correct`, entered once per order, so each
                             pair gives two direct and two metalinguistic rows, as in the authors' data

Size analyses read the 13 final models (files without "step" in their name); training-time analyses the
OLMo-7B files (nine checkpoints and the final model, step 557000). Every file's columns are checked before
any is read whole; a problem is one ReproError naming the file and the column.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from reproductions.common import ReproError
from reproductions.hu_frank.models import TABLE2, checkpoint
from stimuli.archives import csv_source

DOMAINS = ("digit_mat", "crt", "lambada", "syntax")
LABEL = {"digit_mat": "analogical reasoning", "crt": "reflective reasoning", "lambada": "word prediction",
         "syntax": "grammaticality judgment"}
# low- and high-demand method of each domain (the authors' get_eval_order)
METHODS = {"digit_mat": ("mc", "generated"), "crt": ("mc", "generated"), "lambada": ("direct", "meta"),
           "syntax": ("direct", "meta")}
METHOD_NAME = {"generated": "Production", "mc": "Forced choice", "direct": "Direct", "meta": "Metalinguistic"}
BINARY = {"digit_mat": True, "crt": True, "lambada": False, "syntax": True}
TASKS = {"digit_mat": ("digit_mat",), "crt": ("crt/crt1", "crt/crt2", "crt/crt3"), "lambada": ("lambada",),
         "syntax": ("dgl", "blimp")}
TRAINING_DOMAINS = ("digit_mat", "lambada")
REQUIRED = {
    "digit_mat": ("problem_id", "generated_response_correct", "mc_response_correct", "model"),
    "crt": ("item_id", "mc_correct_logprob", "mc_intuitive_logprob", "model"),  # + generated_response_label, see _rows
    "lambada": ("item_id", "direct_logprob", "meta_logprob", "model"),
    "blimp": ("item_id", "direct_correct", "meta_good_correct", "meta_bad_correct", "model"),
    "dgl": ("item_id", "phenomenon", "test_item", "direct_correct", "meta_good_correct", "meta_bad_correct", "model"),
}
# The order in which the authors' notebook listed each output folder (os.listdir), as their processed data
# (analysis/processed_data/*_long_size.csv, syntax_wide_size.csv) record it: the same in every folder. The
# size models (1)-(2) are singular fits, whose Wald SE depends on the row order the optimiser sees; this
# order (files, then rows, then methods per row as the notebook loops) is what reproduces the printed digits.
AUTHORS_FILE_ORDER = ("Llama-2-7b-hf", "pythia-6.9b-deduped", "Mistral-7B-v0.1", "pythia-1b-deduped", "gemma-7b",
                      "pythia-1.4b-deduped", "pythia-2.8b-deduped", "pythia-12b-deduped", "OLMo-7B", "gemma-2b",
                      "OLMo-1B", "Llama-2-13b-hf", "Llama-2-70b-hf")
DGL_DUPLICATES = ("TS 6", "TS 7", "TS 8", "TS 9", "TS 10")  # "Order of Adjectives": duplicates the authors drop
COLUMNS = ["domain", "task", "condition", "model", "model_id", "family", "n_params_b", "training_tokens_b",
           "revision", "training_step", "item", "method", "order", "correct", "logprob", "source"]


@dataclass
class Released:
    """The long tables of one outputs folder, and what was left out and why."""

    size: dict[str, pd.DataFrame]  # domain -> rows of the 13 final models
    training: dict[str, pd.DataFrame]  # domain -> rows of OLMo-7B checkpoints and the final model
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def outputs_root(path: Path) -> Path:
    """The folder holding <task>/ folders: DIR/output when DIR is the release, else DIR itself."""
    p = Path(path).expanduser()
    if not p.is_dir():
        raise ReproError(f"--authors-outputs {path}: no such folder")
    if (p / "output").is_dir():
        p = p / "output"
    if not any((p / t).is_dir() for ts in TASKS.values() for t in ts):
        raise ReproError(f"--authors-outputs {path}: no task folder (digit_mat/, crt/crt1/, lambada/, dgl/, blimp/) "
                         "in it or in its output/")
    return p


def _files(folder: Path) -> list[Path]:
    """<model>.csv or <model>.csv.gz, one per model (both for one model is refused: which one counts?)."""
    rank = {n: i for i, n in enumerate(AUTHORS_FILE_ORDER)}

    def key(f: Path) -> tuple[int, str]:
        stem = f.name.removesuffix(".gz").removesuffix(".csv")
        return rank.get(stem, len(rank)), stem

    files = sorted((f for f in folder.iterdir()
                    if f.is_file() and (f.name.endswith(".csv") or f.name.endswith(".csv.gz"))),
                   key=key)
    stems: dict[str, Path] = {}
    for f in files:
        stem = f.name.removesuffix(".gz").removesuffix(".csv")
        if stem in stems:
            raise ReproError(f"{folder}: both {stems[stem].name} and {f.name}: keep one")
        stems[stem] = f
    return files


MAX_TABLE_BYTES = 500_000_000  # one released table, inflated (the largest .csv.gz: a few MB)


def _read(path: Path, required: tuple[str, ...], header_only: bool = False) -> pd.DataFrame:
    try:  # a .gz inflated under the caps of stimuli/archives.py (pandas alone would inflate it without bound)
        source = path if header_only else csv_source(path, MAX_TABLE_BYTES)
        df = pd.read_csv(source, nrows=0 if header_only else None, keep_default_na=True)
    except (OSError, ValueError, EOFError, zlib.error, pd.errors.ParserError) as exc:  # zlib.error: a damaged .gz
        raise ReproError(f"{path}: cannot be read as CSV: {' '.join(str(exc).split())}") from None
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise ReproError(f"{path}: missing column(s) {', '.join(missing)} (the released format has them)")
    return df


def _true(s: pd.Series) -> np.ndarray:
    """1 where the cell is True (bool or the text True/TRUE), else 0, as the authors' R code codes it."""
    return s.map(lambda v: 1.0 if (v is True or (isinstance(v, (bool, np.bool_)) and bool(v))
                                   or str(v).strip().lower() == "true") else 0.0).to_numpy(float)


def _rows(task: str, df: pd.DataFrame, path: Path, condition: str, notes: list[str]) -> pd.DataFrame:
    """One file's long rows (without the model columns), ordered as the authors' loop orders them (per input
    row, its methods in turn); departures from the format go to `notes`."""
    parts = []

    def part(item, method, correct=None, logprob=None, order=""):
        n = len(item)
        parts.append(pd.DataFrame({"_row": np.arange(n), "_part": len(parts), "item": item, "method": method,
                                   "order": order,
                                   "correct": correct if correct is not None else np.full(n, np.nan),
                                   "logprob": logprob if logprob is not None else np.full(n, np.nan)}))

    if task == "digit_mat":
        item = df["problem_id"].astype(str).to_numpy()
        part(item, "generated", _true(df["generated_response_correct"]))
        part(item, "mc", _true(df["mc_response_correct"]))
    elif task == "crt":
        item = (condition + ":" + df["item_id"].astype(str)).to_numpy()
        if "generated_response_label" not in df.columns:
            # one released file (crt3/Llama-2-7b-hf) has `generated_response_naive_label` twice and no label column;
            # the authors' notebook then reads every production of it as not correct: so does this reader
            naive = [c for c in df.columns if c.startswith("generated_response_naive_label")]
            n_naive = int((df[naive[0]].astype(str) == "correct").sum()) if naive else 0
            notes.append(f"{path}: no generated_response_label column: every production counts as not correct, as "
                         f"in the authors' data ({n_naive} of {len(df)} naive labels say correct)")
            part(item, "generated", np.zeros(len(df)))
        else:
            lab = df["generated_response_label"]
            if lab.isna().any():
                notes.append(f"unlabeled\t{int(lab.isna().sum())}\t{len(df)}")
            part(item, "generated", (lab.astype(str) == "correct").to_numpy(float))
        c = pd.to_numeric(df["mc_correct_logprob"], errors="coerce")
        i = pd.to_numeric(df["mc_intuitive_logprob"], errors="coerce")
        part(item, "mc", (c > i).to_numpy(float))
    elif task == "lambada":
        item = df["item_id"].astype(str).to_numpy()
        for m in ("direct", "meta"):
            v = pd.to_numeric(df[f"{m}_logprob"], errors="coerce")
            if v.isna().any():
                raise ReproError(f"{path}: column {m}_logprob: {int(v.isna().sum())} empty or non-numeric value(s), "
                                 f"first at data line {int(np.flatnonzero(v.isna().to_numpy())[0]) + 2}")
            part(item, m, logprob=v.to_numpy(float))
    else:  # blimp, dgl
        if task == "dgl":
            keep = ~((df["phenomenon"] == "Order of Adjectives") & df["test_item"].isin(DGL_DUPLICATES))
            df = df[keep.to_numpy()].reset_index(drop=True)
        item = (task + ":" + df["item_id"].astype(str)).to_numpy()
        for order in ("good", "bad"):
            part(item, "direct", _true(df["direct_correct"]), order=order)
        for order in ("good", "bad"):
            part(item, "meta", _true(df[f"meta_{order}_correct"]), order=order)
    out = pd.concat(parts, ignore_index=True).sort_values(["_row", "_part"], kind="stable")
    return out.drop(columns=["_row", "_part"]).reset_index(drop=True)


def _plan(root: Path) -> list[tuple[str, str, str, Path]]:
    """(domain, task, condition, file) of every output file, headers checked."""
    plan = []
    for domain, tasks in TASKS.items():
        for t in tasks:
            folder = root / t
            if not folder.is_dir():
                continue
            task = t.split("/")[0]
            cond = t.split("/")[1] if "/" in t else ""
            for f in _files(folder):
                _read(f, REQUIRED[task], header_only=True)
                plan.append((domain, task, cond, f))
    return plan


def read_released(path: Path) -> Released:
    """All domains of a released outputs folder as long tables (size and training time)."""
    root = outputs_root(path)
    plan = _plan(root)
    if not plan:
        raise ReproError(f"--authors-outputs {path}: no <model>.csv or .csv.gz file under {root}")
    size: dict[str, list[pd.DataFrame]] = {d: [] for d in DOMAINS}
    training: dict[str, list[pd.DataFrame]] = {d: [] for d in TRAINING_DOMAINS}
    notes, files = [], []
    for domain, task, cond, f in plan:
        df = _read(f, REQUIRED[task])
        files.append(f)
        if df.empty:
            notes.append(f"{f}: no rows")
            continue
        stem = f.name.removesuffix(".gz").removesuffix(".csv")
        ids = df["model"].astype(str).unique()
        if len(ids) != 1:
            raise ReproError(f"{f}: column model: {len(ids)} different models in one file ({', '.join(ids[:3])})")
        info = TABLE2.get(ids[0])
        if info is None:
            notes.append(f"{f}: model {ids[0]} is not one of the paper's 13 (Table 2): left out")
            continue
        rev = df["revision"].iloc[0] if "revision" in df.columns else None
        try:
            step, tokens = checkpoint(rev) if info.name == "OLMo 7B" else (np.nan, info.training_tokens_b)
        except ValueError as exc:
            raise ReproError(f"{f}: column revision: {exc}") from None
        long = _rows(task, df, f, cond, notes)
        long = long.assign(domain=domain, task=task, condition=cond, model=info.name, model_id=info.model_id,
                           family=info.family, n_params_b=info.n_params_b, training_tokens_b=tokens,
                           revision="" if rev is None or pd.isna(rev) else str(rev), training_step=step,
                           source="authors")[COLUMNS]
        if "step" not in stem:
            size[domain].append(long)
        if domain in training and "OLMo-7B" in stem:
            training[domain].append(long)
    unl = [n.split("\t") for n in notes if n.startswith("unlabeled\t")]
    notes = [n for n in notes if not n.startswith("unlabeled\t")]
    if unl:
        notes.append(f"reflective reasoning: {sum(int(u[1]) for u in unl)} of {sum(int(u[2]) for u in unl)} "
                     "productions "
                     f"in {len(unl)} files have an empty generated_response_label (neither correct nor intuitive): "
                     "not correct, as in the authors' data")
    out_size = {d: pd.concat(v, ignore_index=True) for d, v in size.items() if v}
    out_train = {d: pd.concat(v, ignore_index=True) for d, v in training.items() if v}
    for d, t in out_size.items():
        dup = t.groupby(["model", "task"])["revision"].nunique()
        if (dup > 1).any():
            raise ReproError(f"{d}: more than one final-model file for {', '.join(dup[dup > 1].index.map(str))}")
    return Released(out_size, out_train, files, notes)
