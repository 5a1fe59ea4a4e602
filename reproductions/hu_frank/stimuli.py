"""Importers for the paper's released stimuli, as they are (jennhu/lm-task-demands `external_stimuli/`), into
one item list per domain with the prompts and answer options of the authors' evaluation code:

    digit_mat/all_problems.npz   Webb et al. digit matrices: the first 40 problems of each of the 32 types
                                 (1216 items), prompt = the 3x3 matrix with the last cell left open at "[";
                                 answer options = the 8 choices written as numpy prints them, without the "["
    crt/stimuli.csv              Hagendorff et al. CRTs (crt1-3): "Question: ...\nAnswer:", options = correct,
                                 intuitive (+ total cost, more, and the ".00"-less forms for crt1; + t for crt3)
    blimp/stimuli.csv            the 650 sampled BLiMP pairs (or any BLiMP JSONL: sentence_good, sentence_bad)
    dgl/stimuli.csv              Dentella et al. / Hu et al. pairs (a "." is appended, as the authors do)
    LAMBADA                      the items of a released output file (`prefix`, `final_word`)

A problem with a file is one ReproError naming the file, the field and the line.
"""
from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from reproductions.common import ReproError
from reproductions.npz import NpzError, read_npz
from stimuli.archives import ArchiveLimitError, gunzip

N_PER_TYPE = 40  # the authors' loop: the first 40 problems of each type
MAX_PROBLEM_TYPES = 1000  # the release has 32
MAX_ITEMS = 100_000  # items built from one archive (the release: 1216)
MAX_JSONL_BYTES = 200_000_000  # one BLiMP paradigm file, inflated (the release's: about 0.5 MB)
META_PROMPT_LAMBADA = "What word is most likely to come next in the following text?\nText: {prefix}\nPrediction:"
META_PROMPT_PAIR = ("\nWhich of the following two sentences is more grammatically correct in English? Respond with 1 "
                    "or "
                    "2 as your answer.\nSentence 1: {sentence1}\nSentence 2: {sentence2}\nAnswer:")


@dataclass
class Item:
    domain: str  # digit_mat | crt | lambada | syntax
    task: str  # digit_mat | crt | lambada | blimp | dgl
    item: str  # the item id the released outputs use
    condition: str = ""
    prompt: str = ""
    options: dict[str, str] = field(default_factory=dict)  # label -> answer text (forced choice)
    correct: str = ""  # the label of the correct option (or the final word / the good sentence)
    extra: dict = field(default_factory=dict)


def _need(path: Path) -> Path:
    if not path.is_file():
        raise ReproError(f"--data: {path} is missing (the release's external_stimuli/ has it)")
    return path


def choice_text(choice: np.ndarray) -> str:
    """An answer choice as the authors score it: numpy's print of the array, commas removed, without "["."""
    s = "".join(c for c in str(np.array(choice)) if c != ",")
    return s[1:]


def matrix_prompt(prob: np.ndarray) -> str:
    """The 3x3 digit matrix as the authors write it (an empty cell -1 as a space), open at the last cell."""
    out = ""
    for r in range(3):
        for c in range(3):
            out += "["
            if not (r == 2 and c == 2):
                cell = prob[r][c]
                out += " ".join(" " if int(v) == -1 else str(int(v)) for v in cell)
                out += "]"
                out += " " if c < 2 else "\n"
    return out


def digit_matrices(path: Path) -> list[Item]:
    try:  # read as data: the archive's pickled dict through twinlab's own reader, never numpy's unpickler
        archive = read_npz(_need(path))
    except NpzError as exc:
        raise ReproError(f"{path}: {exc}") from None
    held = archive.get("all_problems")
    problems = held.item() if isinstance(held, np.ndarray) and held.shape == () else None
    if not isinstance(problems, dict):
        raise ReproError(f"{path}: not the digit-matrix archive (no all_problems dict of problem types; members: "
                         f"{', '.join(archive) or 'none'})")
    _check_problem_counts(path, problems)
    items = []
    ptype = ""
    try:
        for ind in range(N_PER_TYPE):  # the authors' order: problem index, then type
            for ptype, p in problems.items():
                if ind >= p["prob"].shape[0]:
                    continue
                choices = p["answer_choices"][ind]
                correct = int(p["correct_ind"][ind])
                items.append(Item("digit_mat", "digit_mat", f"{ptype}_{ind}", prompt=matrix_prompt(p["prob"][ind]),
                                  options={str(a): choice_text(choices[a]) for a in range(len(choices))},
                                  correct=str(correct),
                                  extra={"correct_answer": [int(v) for v in np.ravel(choices[correct])],
                                         "perm_invariant": bool(p["perm_invariant"]), "problem_type": ptype}))
    except (TypeError, ValueError, IndexError, AttributeError, KeyError) as exc:  # a dict, but not of problems
        raise ReproError(f"{path}: problem type {ptype!r}: not the released layout of arrays "
                         f"({type(exc).__name__}: {exc})") from None
    return items


def _check_problem_counts(path: Path, problems: dict) -> None:
    """Every problem type has the released fields, and the items they make stay within MAX_ITEMS: counted
    before any item is built (50,000 types would build 2,000,000 items)."""
    if len(problems) > MAX_PROBLEM_TYPES:
        raise ReproError(f"{path}: {len(problems)} problem types; at most {MAX_PROBLEM_TYPES} (the release has 32)")
    total = 0
    for ptype, p in problems.items():
        for key in ("prob", "answer_choices", "correct_ind", "perm_invariant"):
            if not isinstance(p, dict) or key not in p:
                raise ReproError(f"{path}: problem type {ptype}: no field {key}")
        shape = getattr(p["prob"], "shape", None)
        if not shape:
            raise ReproError(f"{path}: problem type {ptype}: field prob is not an array of problems")
        total += min(N_PER_TYPE, int(shape[0]))
    if total > MAX_ITEMS:
        raise ReproError(f"{path}: its problem types make {total} items; at most {MAX_ITEMS} (the release: 1216)")


def money(v) -> str:
    """The authors' format_as_money: "$1,234.50"."""
    s = str(v).strip()
    return "${:,.2f}".format(float(s[1:] if s.startswith("$") else s))


def crt(path: Path) -> list[Item]:
    df = _csv(path, ("condition", "item_id", "question", "correct", "intuitive"))
    items = []
    for i, r in df.iterrows():
        cond = str(r["condition"])
        labels = ["correct", "intuitive"]
        if cond.startswith("crt1"):
            labels += ["total_cost", "more", "correct_alt", "intuitive_alt", "total_cost_alt", "more_alt"]
        elif cond.startswith("crt3"):
            labels += ["t"]
        opts = {}
        try:
            for lab in labels:
                if cond.startswith("crt1"):
                    text = money(r[lab.removesuffix("_alt")])
                    if lab.endswith("_alt") and text.endswith(".00"):
                        text = text[:-3]
                else:
                    text = str(r[lab])
                opts[lab] = text
        except ValueError:
            raise ReproError(f"{path}: line {i + 2}: field {lab}: {r[lab.removesuffix('_alt')]!r} is not an "
                             "amount") from None
        if any(v in ("", "nan") for v in opts.values()):
            bad = next(k for k, v in opts.items() if v in ("", "nan"))
            raise ReproError(f"{path}: line {i + 2}: field {bad} is empty")
        items.append(Item("crt", "crt", f"{cond}:{r['item_id']}", condition=cond,
                          prompt=f"Question: {r['question']}\nAnswer:", options=opts, correct="correct"))
    return items


def _csv(path: Path, required: tuple[str, ...]) -> pd.DataFrame:
    try:
        df = pd.read_csv(_need(path), dtype=str, keep_default_na=False)
    except (ValueError, pd.errors.ParserError, OSError, EOFError, zlib.error) as exc:  # a damaged .gz too
        raise ReproError(f"{path}: cannot be read as CSV: {' '.join(str(exc).split())}") from None
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise ReproError(f"{path}: missing column(s) {', '.join(missing)}")
    for c in required:
        empty = df.index[df[c].str.strip() == ""]
        if len(empty):
            raise ReproError(f"{path}: line {int(empty[0]) + 2}: field {c} is empty")
    return df


def pair_item(task: str, item: str, good: str, bad: str) -> Item:
    return Item("syntax", task, f"{task}:{item}", options={"good": good, "bad": bad}, correct="good",
                extra={"good_first": META_PROMPT_PAIR.format(sentence1=good, sentence2=bad),
                       "bad_first": META_PROMPT_PAIR.format(sentence1=bad, sentence2=good)})


def blimp(path: Path) -> list[Item]:
    df = _csv(path, ("good_sentence", "bad_sentence", "item_id"))
    return [pair_item("blimp", r["item_id"], r["good_sentence"], r["bad_sentence"]) for _, r in df.iterrows()]


def blimp_jsonl(path: Path) -> list[Item]:
    """An official BLiMP paradigm file (.jsonl or .jsonl.gz): sentence_good, sentence_bad, pairID."""

    raw = _need(path).read_bytes()
    try:  # inflated under the caps of stimuli/archives.py: a small .gz never becomes gigabytes
        text = (gunzip(raw, MAX_JSONL_BYTES, str(path)).decode("utf-8") if path.name.endswith(".gz")
                else raw.decode("utf-8"))
    except ArchiveLimitError as exc:
        raise ReproError(str(exc)) from None
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:  # a damaged .gz, or not UTF-8
        raise ReproError(f"{path}: cannot be read ({type(exc).__name__}: {' '.join(str(exc).split())})") from None
    items = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReproError(f"{path}: line {n}: not JSON ({exc.msg})") from None
        for k in ("sentence_good", "sentence_bad"):
            if not str(d.get(k, "")).strip():
                raise ReproError(f"{path}: line {n}: field {k} is missing or empty")
        uid = d.get("UID", path.name.split(".")[0])
        items.append(pair_item("blimp", f"{uid}-{d.get('pairID', n - 1)}", d["sentence_good"], d["sentence_bad"]))
    return items


def dgl(path: Path) -> list[Item]:
    df = _csv(path, ("item_id", "phenomenon", "test_item", "sentence_grammatical", "sentence_ungrammatical"))
    out = []
    for _, r in df.iterrows():
        if r["phenomenon"] == "Order of Adjectives" and r["test_item"] in ("TS 6", "TS 7", "TS 8", "TS 9", "TS 10"):
            continue  # the duplicated items the authors leave out of the analysis
        out.append(pair_item("dgl", r["item_id"], r["sentence_grammatical"] + ".", r["sentence_ungrammatical"] + "."))
    return out


def lambada(path: Path) -> list[Item]:
    """LAMBADA items from a released output file (prefix, final_word), as the authors split them."""
    try:
        df = pd.read_csv(_need(path), usecols=["item_id", "prefix", "final_word"], dtype=str, keep_default_na=False)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:  # a damaged .gz, or not UTF-8
        raise ReproError(f"{path}: cannot be read ({type(exc).__name__}: {' '.join(str(exc).split())})") from None
    except ValueError as exc:
        raise ReproError(f"{path}: needs the columns item_id, prefix, final_word ({exc})") from None
    for c in ("prefix", "final_word"):
        empty = df.index[df[c] == ""]
        if len(empty):
            raise ReproError(f"{path}: line {int(empty[0]) + 2}: field {c} is empty")
    return [Item("lambada", "lambada", r["item_id"], prompt=r["prefix"], correct=r["final_word"],
                 extra={"meta_prompt": META_PROMPT_LAMBADA.format(prefix=r["prefix"])}) for _, r in df.iterrows()]


def load_all(data: Path) -> dict[str, list[Item]]:
    """Every domain's items from a release folder (external_stimuli/ and output/lambada/ for LAMBADA)."""
    root = Path(data).expanduser()
    ext = root / "external_stimuli" if (root / "external_stimuli").is_dir() else root
    if not ext.is_dir():
        raise ReproError(f"--data {data}: no such folder")
    out = {"digit_mat": digit_matrices(ext / "digit_mat" / "all_problems.npz"), "crt": crt(ext / "crt" / "stimuli.csv"),
           "syntax": dgl(ext / "dgl" / "stimuli.csv") + blimp(ext / "blimp" / "stimuli.csv")}
    lam_dir = root / "output" / "lambada"
    lam = sorted(lam_dir.glob("*.csv*")) if lam_dir.is_dir() else []
    if not lam:
        raise ReproError(f"--data {data}: no output/lambada/<model>.csv(.gz) to take the LAMBADA items from")
    out["lambada"] = lambada(lam[0])
    return out


def sample(items: list[Item], n: int | None, seed: int, by: str = "") -> list[Item]:
    """A seeded sample of n items (per condition for the CRT, so every condition is run), in file order."""
    if n is None or n >= len(items):
        return items
    rng = np.random.default_rng(seed)
    groups: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        groups.setdefault(getattr(it, by) if by else "", []).append(i)
    keep = sorted(int(i) for g in groups.values() for i in rng.choice(g, size=min(n, len(g)), replace=False))
    return [items[i] for i in keep]
