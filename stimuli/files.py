"""Load a stimulus set from a CSV/TSV file with named columns (one error line per bad row).

The file is UTF-8 in any language. Columns: item_id, structure, condition, lexicon, sentence
(the grammatical sentence) and, for each dependency the item has, `<dep>_index` (0-based index
of its verb's RSVP unit) and `<dep>_alternative` (the number-flipped verb form), dep in
inner/outer. Optional: `filler_index`, `filler_word`, `filler_kind` (the item's filler version:
the unit at filler_index replaced by filler_word, a violation of another kind).

RSVP units: the sentence's words separated by spaces are one unit each; when the sentence holds
the unit separator `|`, the units are the `|`-separated parts instead, so a unit can hold
several words ("l' attore|che|l' uomo|accanto|al ragazzo|ignora|conosce|l' amico").
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

from stimuli.input_rules import is_ascii_digits  # (importing it sets the CSV field limit, once)
from stimuli.items import Item
from stimuli.textfile import read_text_file
from stimuli.visible_text import nfc, text_problem

REQUIRED_COLUMNS = ("item_id", "structure", "condition", "lexicon", "sentence")
FILLER_COLUMNS = ("filler_index", "filler_word", "filler_kind")
UNIT_SEPARATOR = "|"


def split_units(sentence: str) -> tuple[str, ...]:
    """RSVP units of a sentence cell: `|`-separated parts when present, else whitespace-separated words."""
    if UNIT_SEPARATOR in sentence:
        return tuple(" ".join(u.split()) for u in sentence.split(UNIT_SEPARATOR))
    return tuple(sentence.split())


def join_units(words: tuple[str, ...]) -> str:
    """The sentence cell for `words` (inverse of `split_units`)."""
    if any(" " in w for w in words):
        return UNIT_SEPARATOR.join(words)
    return " ".join(words)


class StimulusFileError(ValueError):
    """The file cannot be used; the message names the file, the row and the column."""


# words that are never the agreeing verb of an English item (a critical index on one is off by one)
ENGLISH_DETERMINERS = frozenset({"the", "a", "an", "this", "that", "these", "those", "every", "each"})
MAX_FILE_BYTES = 200_000_000
SHOWN_ERRORS = 20


def load_items(path: str | Path, language: str | None = None) -> list[Item]:
    """Every row of the file as an Item; a StimulusFileError names every bad row (file, line, column).

    `language` (the spec's) enables its checks of the critical word: for English, a critical index
    on a determiner is an error.
    """
    path = Path(path)
    delimiter = "\t" if path.suffix.lower() in (".tsv", ".tab") else ","
    text = _read_text(path)
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
        header = reader.fieldnames or []
        doubled = sorted({c for c in header if header.count(c) > 1})
        if doubled:  # DictReader would keep the last of the two silently
            raise StimulusFileError(f"{path}: line 1: column(s) {', '.join(map(repr, doubled))} appear twice in the "
                                    "header")
        missing = [c for c in REQUIRED_COLUMNS if c not in header]
        if missing:
            raise StimulusFileError(f"{path}: missing column(s) {', '.join(missing)} (found: {', '.join(header)})")
        items: list[Item] = []
        lines: list[int] = []
        errors: list[tuple[int, str]] = []
        seen: set[str] = set()
        english = bool(language) and str(language).split("-")[0] == "en"
        for row in reader:
            lineno = reader.line_num
            try:
                if None in row:  # more cells than the header (a stray delimiter?)
                    raise ValueError(f"has {len(header) + len(row[None])} cells but the header has "
                                     ""  # type: ignore[index]
                                     f"{len(header)} (a stray {'tab' if delimiter == chr(9) else 'comma'}?)")
                row = _visible_row(row)
                items.append(_row_to_item(row, seen, english))
                lines.append(lineno)
            except ValueError as exc:
                errors.append((lineno, str(exc)))
    except csv.Error as exc:
        raise StimulusFileError(f"{path}: line {reader.line_num}: not readable as CSV/TSV ({exc})") from None
    errors += _design_errors(items, lines)
    if errors:
        errors.sort()
        shown = [f"  line {n}: {e}" for n, e in errors[:SHOWN_ERRORS]]
        if len(errors) > SHOWN_ERRORS:
            shown.append(f"  ... and {len(errors) - SHOWN_ERRORS} more, on line(s) "
                         + _ranges([n for n, _ in errors[SHOWN_ERRORS:]]))
        raise StimulusFileError(f"{path}: {len(errors)} bad row(s)\n" + "\n".join(shown))
    if not items:
        raise StimulusFileError(f"{path}: no stimulus rows")
    return items


def _visible_row(row: dict) -> dict:
    """The row's cells NFC; a hidden or control character or a mixed-script look-alike word is a
    ValueError naming the column and characters (stimuli/visible_text.py)."""

    out = {}
    for k, v in row.items():
        if isinstance(v, str):
            v = nfc(v)
            problem = text_problem(v)
            if problem:
                raise ValueError(f"column {k}: {problem}")
        out[k] = v
    return out


def _design_errors(items: list[Item], lines: list[int]) -> list[tuple[int, str]]:
    """Items that do not fit their structure: a condition string of another length than the
    structure's (the generator's structures have a fixed number of nouns), or fewer critical
    verbs than the structure's other items have (the compiler would pick it for a dependency it
    lacks)."""
    # late, and the one import of experiments here (stimuli sits below it): the generator's structures are the
    # study's that supplies a spec's `stimuli:` items (experiments/studies.py; pure lookups)
    from experiments.studies import stimuli_part

    structures = stimuli_part("structures")
    first: dict[str, tuple[int, Item]] = {}
    deps: dict[str, set[str]] = {}
    for line, it in zip(lines, items, strict=False):
        first.setdefault(it.structure, (line, it))
        deps.setdefault(it.structure, set()).update(it.verbs)
    errors: list[tuple[int, str]] = []
    for line, it in zip(lines, items, strict=False):
        known = structures.get(it.structure)
        if known is not None and len(it.condition) != len(known.letters):
            errors.append((line, f"condition {it.condition!r} has {len(it.condition)} letter(s) but structure "
                                 f"{it.structure!r} has {len(known.letters)} nouns ({', '.join(known.letters)})"))
        elif known is not None and set(it.verbs) - set(known.dependencies):
            extra = sorted(set(it.verbs) - set(known.dependencies))
            errors.append((line, f"{extra[0]}_index: structure {it.structure!r} has no {extra[0]} dependency "
                                 f"(its dependencies: {', '.join(known.dependencies)})"))
        elif known is None and len(it.condition) != len(first[it.structure][1].condition):
            fl, fi = first[it.structure]
            errors.append((line, f"condition {it.condition!r} has {len(it.condition)} letter(s) but structure "
                                 f"{it.structure!r} has {len(fi.condition)} on line {fl} ({fi.condition!r})"))
        lacking = sorted(deps[it.structure] - set(it.verbs))
        if lacking:
            d = lacking[0]
            errors.append((line, f"{d}_index is empty but other items of structure {it.structure!r} have a {d} "
                                 f"verb: every item of a structure needs the same dependencies"))
    return errors


def _index(row: dict[str, str], field: str, n_words: int) -> int:
    """A 0-based unit index written as plain digits (int() would read '0_3' as 3 and ' +3' as 3)."""
    raw = (row.get(field) or "").strip()
    if not is_ascii_digits(raw):
        raise ValueError(f"{field} {raw!r} is not an integer (digits only, 0-based)")
    idx = int(raw)
    if not 0 <= idx < n_words:
        raise ValueError(f"{field} {idx} is outside the sentence ({n_words} units, 0 to {n_words - 1})")
    return idx


def _read_text(path: Path) -> str:
    return read_text_file(path, StimulusFileError, "CSV/TSV stimulus", MAX_FILE_BYTES)


def _ranges(numbers: list[int]) -> str:
    """[3, 4, 5, 9] -> '3-5, 9' (every bad line named, compactly)."""
    out: list[str] = []
    start = prev = numbers[0]
    for n in numbers[1:] + [None]:  # type: ignore[list-item]
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(out)


def _row_to_item(row: dict[str, str], seen: set[str], english: bool = False) -> Item:
    item_id = (row.get("item_id") or "").strip()
    if not item_id:
        raise ValueError("item_id is empty")
    if item_id in seen:
        raise ValueError(f"item_id {item_id!r} appears twice")
    seen.add(item_id)
    cond = (row.get("condition") or "").strip()
    if not cond or set(cond) - {"S", "P"}:
        raise ValueError(f"condition {cond!r} must be S/P letters such as PSP")
    words = split_units(row.get("sentence") or "")
    if not words or any(not w for w in words):
        raise ValueError("sentence is "
                         "empty" if not words else f"sentence has an empty RSVP unit (check the '{UNIT_SEPARATOR}'s)")
    verbs: dict[str, tuple[int, str, str]] = {}
    for dep in ("inner", "outer"):
        raw_idx = (row.get(f"{dep}_index") or "").strip()
        alt = (row.get(f"{dep}_alternative") or "").strip()
        if not raw_idx and not alt:
            continue
        idx = _index(row, f"{dep}_index", len(words))
        if not alt:
            raise ValueError(f"{dep}_alternative is empty but {dep}_index is set")
        word = words[idx].rstrip(".")
        if alt.rstrip(".").casefold() == word.casefold():
            raise ValueError(f"{dep}_alternative {alt!r} is the word at {dep}_index {idx} itself: the violation "
                             "version would not differ from the grammatical sentence")
        if english and word.casefold() in ENGLISH_DETERMINERS:
            raise ValueError(f"{dep}_index {idx} points at the determiner {word!r}, not at a verb (off by one?)")
        verbs[dep] = (idx, word, alt)
    if not verbs:
        raise ValueError("no inner_index/outer_index given: the item has no critical verb")
    if len(verbs) == 2 and verbs["inner"][0] == verbs["outer"][0]:
        raise ValueError(f"inner_index and outer_index are both {verbs['inner'][0]}: two dependencies need two verbs")
    structure = (row.get("structure") or "").strip()
    if not structure:
        raise ValueError("structure is empty")
    return Item(item_id=item_id, structure=structure, condition=cond,
                lexicon=(row.get("lexicon") or "").strip() or "test", words=words, verbs=verbs,
                filler=_filler(row, words))


def _filler(row: dict[str, str], words: tuple[str, ...]) -> tuple[int, str, str] | None:
    raw_idx = (row.get("filler_index") or "").strip()
    word = (row.get("filler_word") or "").strip()
    if not raw_idx and not word:
        return None
    idx = _index(row, "filler_index", len(words))
    if not word:
        raise ValueError("filler_word is empty but filler_index is set")
    if word.rstrip(".").casefold() == words[idx].rstrip(".").casefold():
        raise ValueError(f"filler_word {word!r} is the word at filler_index {idx} itself: the filler version "
                         "would not differ from the grammatical sentence")
    return idx, word, (row.get("filler_kind") or "").strip() or "other"


def save_items(items: list[Item], path: str | Path) -> Path:
    """Write items in the format `load_items` reads (for editing or sharing a stimulus set)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    delimiter = "\t" if path.suffix.lower() in (".tsv", ".tab") else ","
    cols = list(REQUIRED_COLUMNS) + ["inner_index", "inner_alternative", "outer_index", "outer_alternative"]
    fillers = any(it.filler is not None for it in items)
    if fillers:
        cols += list(FILLER_COLUMNS)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter=delimiter)
        w.writerow(cols)
        for it in items:
            row = [it.item_id, it.structure, it.condition, it.lexicon, join_units(it.words)]
            for dep in ("inner", "outer"):
                if dep in it.verbs:
                    row += [it.verbs[dep][0], it.verbs[dep][2]]
                else:
                    row += ["", ""]
            if fillers:
                row += list(it.filler) if it.filler is not None else ["", "", ""]
            w.writerow(row)
    return path
