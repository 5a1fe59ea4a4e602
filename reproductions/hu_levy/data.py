"""The authors' released `datasets/` folder (jennhu/metalinguistic-prompting), read and checked.

Five corpus files, in the release's layout and columns:

    exp1/p18/corpus.csv        item_id,prefix,continuation                       (paper: 384 items)
    exp1/news/corpus.csv       item_id,prefix,continuation,category,...           (paper: 222)
    exp2/dtfit/corpus.csv      item_id,prefix,good_continuation,bad_continuation,... (paper: 395)
    exp3/blimp/corpus.csv      good_sentence,bad_sentence,category,category_fine,...,item_id (paper: 13 x 30 = 390;
                               the 13 phenomena are `category_fine`)
    exp3/syntaxgym/corpus.csv  good_sentence,bad_sentence,suite,...,item_id       (paper: 23 x 15 = 345)

Why checked before any model loads: a missing column, an empty cell, a repeated item id or a
repeated item (the same prefix and word, the same sentence pair) would silently change a count
or a mean; each is refused with the file and the line (the CSV line where the row starts), exit 2.
A count that differs from the paper's is not an error (a user may give a subset), but is said.
"""
from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from model_subjects.run_checks import item_length_problem
from reproductions.common import ReproError
from stimuli.textfile import decode_utf8, read_bytes_bounded
from stimuli.visible_text import lookalike_problem, nfc, text_problem

MAX_CORPUS_BYTES = 50_000_000


@dataclass(frozen=True)
class DatasetSpec:
    """One corpus file of the release: where it lies, what it must hold, what the paper says."""

    name: str  # p18, news, dtfit, blimp, syntaxgym
    experiments: tuple[str, ...]  # the experiments that use it
    path: str  # relative to the datasets/ folder
    columns: tuple[str, ...]  # required, non-empty
    identity: tuple[str, ...]  # the columns that make an item (a repeat is an error)
    paper_count: int
    group: str | None = None  # the phenomenon column (exp3)
    paper_per_group: int | None = None
    label: str = ""
    raw_text: bool = False  # keep the cells' whitespace (the Chinese news prefixes hold line breaks the authors kept)


DATASETS: tuple[DatasetSpec, ...] = (
    DatasetSpec("p18", ("1",), "exp1/p18/corpus.csv", ("item_id", "prefix", "continuation"),
                ("prefix", "continuation"), 384, label="P18"),
    DatasetSpec("news", ("1",), "exp1/news/corpus.csv", ("item_id", "prefix", "continuation"),
                ("prefix", "continuation"), 222, label="News"),
    DatasetSpec("dtfit", ("2",), "exp2/dtfit/corpus.csv",
                ("item_id", "prefix", "good_continuation", "bad_continuation"),
                ("prefix", "good_continuation", "bad_continuation"), 395, label="DTFit"),
    DatasetSpec("syntaxgym", ("3a", "3b"), "exp3/syntaxgym/corpus.csv",
                ("item_id", "good_sentence", "bad_sentence", "suite"), ("good_sentence", "bad_sentence"), 345,
                group="suite", paper_per_group=15, label="SyntaxGym"),
    DatasetSpec("blimp", ("3a", "3b"), "exp3/blimp/corpus.csv",
                ("item_id", "good_sentence", "bad_sentence", "category_fine"), ("good_sentence", "bad_sentence"), 390,
                group="category_fine", paper_per_group=30, label="BLiMP"),
)
EXPERIMENTS = ("1", "2", "3a", "3b")

# Appendix D (Mandarin Chinese): the `chinese` branch's datasets/ folder. The paper prints no item counts
# for them (paper_count 0: none to compare); the counts here are the release's.
DATASETS_ZH: tuple[DatasetSpec, ...] = (
    DatasetSpec("news_zh", ("1",), "exp1/news_zh/corpus.csv", ("item_id", "prefix", "continuation"),
                ("prefix", "continuation"), 0, label="News (Chinese)", raw_text=True),
    DatasetSpec("mandarin", ("3a", "3b"), "exp3/mandarin/corpus.csv",
                ("item_id", "good_sentence", "bad_sentence", "suite"), ("good_sentence", "bad_sentence"), 0,
                group="suite", label="Mandarin pairs (Wang et al. 2021)", raw_text=True),
)


@dataclass(frozen=True)
class Item:
    """One row of a corpus: its id, the file line it starts on and the fields the prompts need."""

    dataset: str
    item_id: str
    line: int
    prefix: str = ""
    continuation: str = ""  # exp1: the ground-truth word; exp2: the plausible word
    bad_continuation: str = ""  # exp2: the implausible word
    good_sentence: str = ""
    bad_sentence: str = ""
    group: str = ""  # exp3: suite or category


@dataclass
class Dataset:
    spec: DatasetSpec
    file: Path
    sha256: str
    items: list[Item]
    all_count: int  # items in the file (before --items sampling)
    notes: list[str] = field(default_factory=list)
    all_items: list[Item] = field(default_factory=list)  # every item of the file (Table 5 counts them)


class DataError(ReproError):
    """A corpus file that cannot be used as it is; the message names the file and the line."""


def specs_for(experiments: tuple[str, ...], names: tuple[str, ...] | None = None,
              language: str = "en") -> list[DatasetSpec]:
    """The corpora the experiments use (only those named in `names`, when given), in English or Chinese."""
    every = DATASETS_ZH if language == "zh" else DATASETS
    return [s for s in every if set(s.experiments) & set(experiments) and (names is None or s.name in names)]


def _read_header(reader, spec: DatasetSpec, file: Path) -> list[str]:
    """The stripped header: refused when the file is empty, not CSV, lacks a column or repeats one."""
    try:
        header = next(reader)
    except StopIteration:
        raise DataError(f"{file}: empty file (expected a header: {','.join(spec.columns)})") from None
    except csv.Error as exc:
        raise DataError(f"{file}: line 1: not CSV ({exc})") from None
    header = [h.strip() for h in header]
    missing = [c for c in spec.columns if c not in header]
    if missing:
        raise DataError(f"{file}: line 1: missing column(s) {', '.join(missing)} (the header has {','.join(header)})")
    dup_cols = sorted({h for h in header if header.count(h) > 1})
    if dup_cols:
        raise DataError(f"{file}: line 1: column(s) {', '.join(dup_cols)} appear twice")
    return header


def _row_error(spec: DatasetSpec, values: dict[str, str], start: int, seen_ids: dict[str, int],
               seen_items: dict[tuple[str, ...], int], repeats: list[str]) -> str | None:
    """What is wrong with one row (None: nothing); records its item_id, and its line when its text repeats."""
    empty = [c for c in spec.columns if not values[c].strip()]
    if empty:
        return f"line {start}: empty {', '.join(empty)}"
    problem = _text_error(spec, values)
    if problem:
        return f"line {start}: {problem}"
    iid = values["item_id"].strip()
    if iid in seen_ids:
        return f"line {start}: item_id {iid} already on line {seen_ids[iid]}"
    seen_ids[iid] = start
    ident = tuple(values[c] for c in spec.identity)
    if ident in seen_items:  # the release has these (News: one article from several outlets); the paper kept them
        repeats.append(f"line {start} repeats the {', '.join(spec.identity)} of line {seen_items[ident]}")
    else:
        seen_items[ident] = start
    if spec.name == "dtfit" and values["good_continuation"] == values["bad_continuation"]:
        return f"line {start}: good_continuation and bad_continuation are the same"
    if spec.group and values["good_sentence"] == values["bad_sentence"]:
        return f"line {start}: good_sentence and bad_sentence are the same"
    return None


def _text_error(spec: DatasetSpec, values: dict[str, str]) -> str | None:
    """A cell with hidden or control characters or a mixed-script look-alike word, an item longer than a
    model subject reads (model_subjects/run_checks.py, checked before any model loads: a 200,000-character
    prefix ran the model out of memory), or a good/bad pair that differs only invisibly (a zero-width or
    trailing space: no minimal pair)."""

    for c in spec.columns:
        values[c] = nfc(values[c])
        problem = text_problem(values[c])
        if problem:
            return f"{c}: {problem}"
    problem = item_length_problem(values[c] for c in spec.columns if c not in ("item_id", spec.group))
    if problem:
        return f"item {values['item_id'].strip()}: {problem}; shorten or split it"
    for good, bad in (("good_sentence", "bad_sentence"), ("good_continuation", "bad_continuation")):
        if good in values and bad in values:
            problem = lookalike_problem([values[good], values[bad]], f"{good} and {bad}:")
            if problem:
                return f"{problem} (no minimal pair)"
    return None


def _row_item(spec: DatasetSpec, values: dict[str, str], start: int) -> Item:
    """The Item of a checked row (exp1's continuation and exp2's good continuation share one field)."""
    return Item(spec.name, values["item_id"].strip(), start, prefix=values.get("prefix", ""),
                continuation=values.get("continuation") or values.get("good_continuation", ""),
                bad_continuation=values.get("bad_continuation", ""),
                good_sentence=values.get("good_sentence", ""), bad_sentence=values.get("bad_sentence", ""),
                group=values.get(spec.group, "") if spec.group else "")


def read_corpus(spec: DatasetSpec, file: Path) -> tuple[list[Item], str, list[str]]:
    """The items of one corpus file, its SHA-256 and the lines whose item text repeats an earlier line.

    Refused (DataError naming the file and line): a missing or repeated column, a row with the wrong
    number of fields, an empty required cell, a repeated item_id, two identical options. Kept but
    reported: an item whose text repeats an earlier one under another item_id (the release's News
    corpus has three rows of one article, two of them identical in every column but item_id, and the
    paper's 222 counts them).
    """

    raw = read_bytes_bounded(file, DataError, "corpus CSV", MAX_CORPUS_BYTES)
    text = decode_utf8(raw, file, DataError, "corpus CSV")
    reader = csv.reader(io.StringIO(text, newline=""))
    header = _read_header(reader, spec, file)
    col = {h: i for i, h in enumerate(header)}
    items: list[Item] = []
    errors: list[str] = []
    seen_ids: dict[str, int] = {}
    seen_items: dict[tuple[str, ...], int] = {}
    repeats: list[str] = []
    line = reader.line_num + 1
    while True:
        start = line
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            errors.append(f"line {start}: not CSV ({exc})")
            break
        line = reader.line_num + 1
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(header):
            errors.append(f"line {start}: {len(row)} fields, the header has {len(header)}")
            continue
        values = {h: row[i] if spec.raw_text else " ".join(row[i].split()) for h, i in col.items()}
        error = _row_error(spec, values, start, seen_ids, seen_items, repeats)
        if error:
            errors.append(error)
            continue
        items.append(_row_item(spec, values, start))
    if errors:
        shown = errors[:20] + ([f"... and {len(errors) - 20} more"] if len(errors) > 20 else [])
        raise DataError(f"{file}: {len(errors)} bad row(s)\n" + "\n".join(f"  {e}" for e in shown))
    if not items:
        raise DataError(f"{file}: no items (only a header)")
    return items, hashlib.sha256(raw).hexdigest(), repeats


def load_datasets(folder: Path, experiments: tuple[str, ...] = EXPERIMENTS, n_items: int | None = None,
                  seed: int = 1, names: tuple[str, ...] | None = None, language: str = "en") -> list[Dataset]:
    """Every corpus the chosen experiments need (or only the `names` among them), checked; `n_items`
    sampled per dataset (seeded). Every file is looked for before any is read, so a missing one is
    named at once (with the experiments that need it).

    The sample is drawn without replacement by `numpy.random.default_rng(seed)` and kept in file
    order, so the same seed gives the same items on every machine.
    """

    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(f"--data {folder}: {'no such folder' if not folder.exists() else 'is not a folder'} "
                        "(give the authors' datasets/ folder, with exp1/, exp2/ and exp3/)")
    if n_items is not None and n_items < 1:
        raise DataError(f"--items must be at least 1, got {n_items}")
    specs = specs_for(experiments, names, language)
    if not specs:
        raise DataError(f"--data {folder}: none of experiments {', '.join(experiments)} has {language} materials "
                        f"(Chinese: {', '.join(sorted({e for s in DATASETS_ZH for e in s.experiments}))})")
    for spec in specs:
        file = folder / spec.path
        if not file.is_file():
            raise DataError(f"--data {folder}: {spec.path} is {'missing' if not file.exists() else 'not a file'} "
                            f"(experiment(s) {', '.join(spec.experiments)} need it"
                            + ("; --experiments chooses fewer)" if names is None else ")"))
    out = []
    for spec in specs:
        file = folder / spec.path
        items, digest, repeats = read_corpus(spec, file)
        notes = [f"{spec.path}: {r} (kept, as in the paper)" for r in repeats]
        if spec.paper_count and len(items) != spec.paper_count:
            notes.append(f"{spec.path}: {len(items)} items; the paper used {spec.paper_count}")
        if spec.group:
            counts: dict[str, int] = {}
            for it in items:
                counts[it.group] = counts.get(it.group, 0) + 1
            odd = {g: n for g, n in counts.items() if spec.paper_per_group and n != spec.paper_per_group}
            if odd:
                notes.append(f"{spec.path}: {len(odd)} of {len(counts)} {spec.group} value(s) do not have the paper's "
                             f"{spec.paper_per_group} items each")
        every = items
        total = len(items)
        if n_items is not None and n_items < total:
            rng = np.random.default_rng(seed)
            keep = sorted(rng.choice(total, size=n_items, replace=False).tolist())
            items = [items[i] for i in keep]
        out.append(Dataset(spec, file, digest, items, total, notes, every))
    return out


def data_files(folder: Path) -> dict[str, Path]:
    """Every file of the data folder (for provenance), keyed by its path relative to the folder."""
    folder = Path(folder)
    return {str(p.relative_to(folder)): p for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.startswith(".")}
