"""Import the English nested-agreement stimuli as Lakretz et al. released them (.text + .gold).

The release format (as in the colorlessgreenRNNs agreement test sets it follows) is two
line-aligned files per structure and critical verb:

* ``NAME.text``: one sentence per line, words separated by single spaces (a trailing ``<eos>``
  token or a detached final ``.`` is accepted and dropped/attached);
* ``NAME.gold``: one tab-separated line per sentence: the 0-based index of the critical verb,
  its correct form, its number-flipped form, and a fourth field (ignored).

Why derive the condition from the words: the files carry no design labels, and the condition
(noun numbers in the order of seeds/000, e.g. ``PSP`` = outer plural, inner singular, distractor
plural) is what every analysis groups by. Each sentence is tagged word by word (determiner,
complementiser, known noun with its number, other word), the tag string is matched against the
structures of `studies.lakretz2021.stimuli.structures`, and the critical index says which dependency the file tests.
Anything that does not fit -- an unknown noun, an unknown sentence shape, a gold form that is not
the word at its index, a correct form whose number disagrees with its subject -- is an error naming
the file and the line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from stimuli.files import StimulusFileError
from stimuli.items import Item
from stimuli.textfile import read_text_file
from studies.lakretz2021.stimuli.lexicon import LEXICONS
from studies.lakretz2021.stimuli.structures import DEEPER_PREFIXES

DETERMINERS = {"the"}
COMPLEMENTISERS = {"that", "whom", "who"}
EOS = "<eos>"


def _known_nouns() -> dict[str, str]:
    """Every noun form of the bundled lexicons -> its number (S/P); the deeper prefixes are plural."""
    nouns: dict[str, str] = {}
    for lex in LEXICONS.values():
        for sg, pl in lex.nouns:
            nouns[sg], nouns[pl] = "S", "P"
    for noun, _, _ in DEEPER_PREFIXES:
        nouns[noun] = "P"
    return nouns


NOUNS = _known_nouns()


@dataclass(frozen=True)
class Shape:
    """A sentence structure as a tag pattern; `letters` picks the nouns of the condition, in order.

    Tags: D determiner, C complementiser, N noun, W any other word. `verbs` gives, for each
    verb slot of the pattern (in linear order), the dependency it closes.
    """

    structure: str
    pattern: str
    letters: tuple[int, ...]  # indices into the sentence's nouns, in the order of Structure.letters
    verbs: tuple[str, ...]  # dependency of each W slot that is a verb, in linear order
    verb_slots: tuple[int, ...]  # which W slots (0-based among W tags) are verbs
    prefix: str = ""


# Patterns of the structures in studies/lakretz2021/stimuli/structures.py (the English stimuli of Lakretz et al.).
SHAPES: tuple[Shape, ...] = (
    # The N1 that the N2 P the N3 V2 V1 the N4
    Shape("long_nested", "DNCDNWDNWWDN", (0, 1, 2), ("inner", "outer"), (1, 2)),
    # The N1 that the N2 P the N3 P the Nx P the Ny V2 V1 the N4
    Shape("long_nested_more_distractors", "DNCDNWDNWDNWDNWWDN", (0, 1, 2), ("inner", "outer"), (3, 4)),
    # The N1 that the N2 V2 V1 the N4
    Shape("short_nested", "DNCDNWWDN", (0, 1), ("inner", "outer"), (0, 1)),
    # The PEOPLE whom the N1 that the N2 P the N3 V2 V1 are ADJ
    Shape("long_nested_deeper", "DNCDNCDNWDNWWWW", (1, 2, 3), ("inner", "outer"), (1, 2), prefix="P"),
    # The N1 P the N3 VC that the N2 V2 the N4   (letters: outer, inner, distractor)
    Shape("long_successive", "DNWDNWCDNWDN", (0, 2, 1), ("outer", "inner"), (1, 2)),
    # The N1 VC that the N2 V2 the N4
    Shape("short_successive", "DNWCDNWDN", (0, 1), ("outer", "inner"), (0, 1)),
    # The N1 V1 the N4
    Shape("single", "DNWDN", (0,), ("outer",), (0,)),
)
# the subject (index into the sentence's nouns) of each dependency, per structure
SUBJECT = {
    "long_nested": {"outer": 0, "inner": 1}, "long_nested_more_distractors": {"outer": 0, "inner": 1},
    "short_nested": {"outer": 0, "inner": 1}, "long_nested_deeper": {"outer": 1, "inner": 2},
    "long_successive": {"outer": 0, "inner": 2}, "short_successive": {"outer": 0, "inner": 1},
    "single": {"outer": 0},
}


class LineError(ValueError):
    """One bad line (the caller adds the file and line number)."""


def _bare(word: str) -> str:
    return word.rstrip(".,;:!?").lower()


def _tag(word: str) -> str:
    w = _bare(word)
    if w in DETERMINERS:
        return "D"
    if w in COMPLEMENTISERS:
        return "C"
    if w in NOUNS:
        return "N"
    return "W"


def normalise_words(line: str) -> tuple[str, ...]:
    """Split on single spaces; drop a final <eos>, attach a detached final '.' to the last word."""
    if line != line.strip() or "  " in line or "\t" in line:
        raise LineError("words must be separated by single spaces (found tabs, double or edge spaces)")
    words = line.split(" ")
    if words and words[-1] == EOS:
        words = words[:-1]
    if len(words) >= 2 and words[-1] in (".", "!", "?"):
        words = words[:-2] + [words[-2] + words[-1]]
    if not words or words == [""]:
        raise LineError("empty sentence")
    return tuple(words)


def derive(words: tuple[str, ...], index: int, correct: str, flipped: str) -> tuple[str, str, str]:
    """(structure, condition, dependency) of one sentence with its critical verb at `index`."""
    tags = "".join(_tag(w) for w in words)
    nouns = [NOUNS[_bare(w)] for w in words if _tag(w) == "N"]
    w_positions = [k for k, t in enumerate(tags) if t == "W"]
    for shape in SHAPES:
        if not re.fullmatch(shape.pattern, tags):
            continue
        verb_positions = [w_positions[s] for s in shape.verb_slots]
        if index not in verb_positions:
            raise LineError(f"word {index} ({words[index]!r}) is not a verb position of a {shape.structure} sentence "
                            f"(verbs at {', '.join(map(str, verb_positions))})")
        dependency = shape.verbs[verb_positions.index(index)]
        condition = shape.prefix + "".join(nouns[i] for i in shape.letters)
        subject = nouns[SUBJECT[shape.structure][dependency]]
        number = verb_number(correct, flipped)
        if number is not None and number != subject:
            noun = [w for w, t in zip(words, tags, strict=False) if t == "N"][SUBJECT[shape.structure][dependency]]
            raise LineError(f"the correct form {correct!r} is {_NUMBER[number]} but its subject {_bare(noun)!r} "
                            f"({dependency} dependency of a {shape.structure} sentence) is {_NUMBER[subject]}")
        return shape.structure, condition, dependency
    raise LineError(
        f"cannot derive the condition: the sentence shape {_shape_text(words, tags)} matches none of "
        f"{', '.join(s.structure for s in SHAPES)} (a noun outside the lexicon reads as 'w')"
    )


_NUMBER = {"S": "singular", "P": "plural"}
_IRREGULAR = {"is": "S", "are": "P", "has": "S", "have": "P", "was": "S", "were": "P", "does": "S", "do": "P"}


def verb_number(correct: str, flipped: str) -> str | None:
    """S/P of the correct form: the lexicons, then be/have/do, then the -s rule; None if unclear."""
    c = correct.lower()
    for lex in LEXICONS.values():
        for sg, pl in lex.verbs + lex.complement_verbs:
            if c == sg:
                return "S"
            if c == pl:
                return "P"
    if c in _IRREGULAR:
        return _IRREGULAR[c]
    f = flipped.lower()
    if c.endswith("s") and not f.endswith("s"):
        return "S"
    if f.endswith("s") and not c.endswith("s"):
        return "P"
    return None


def _shape_text(words: tuple[str, ...], tags: str) -> str:
    names = {"D": "the", "C": "that", "N": "N", "W": "w"}
    return "'" + " ".join(names[t] if t != "N" else f"N({_bare(w)})" for w, t in zip(words, tags, strict=False)) + "'"


def parse_gold(line: str) -> tuple[int, str, str]:
    fields = line.rstrip("\r\n").split("\t")
    if len(fields) < 3:
        raise LineError(f"expected 4 tab-separated fields (index, correct form, flipped form, ignored), "
                        f"found {len(fields)}: {line.strip()!r}")
    raw, correct, flipped = fields[0].strip(), fields[1].strip(), fields[2].strip()
    try:
        index = int(raw)
    except ValueError:
        raise LineError(f"the verb index {raw!r} is not an integer") from None
    if not correct or not flipped:
        raise LineError("the correct or the flipped form is empty")
    if correct == flipped:
        raise LineError(f"the correct and the flipped form are the same word {correct!r}")
    return index, correct, flipped


MAX_TEXT_BYTES = 100_000_000  # the released files are a few hundred kB


def read_lines(path: Path) -> list[str]:
    """The file's lines: a regular UTF-8 file (FIFO, device, folder, bad byte refused by name)."""

    if not path.exists():
        raise StimulusFileError(f"{path}: no such file")
    text = read_text_file(path, StimulusFileError, "Lakretz .text/.gold", MAX_TEXT_BYTES)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]  # the final newline
    return [ln.rstrip("\r") for ln in lines]


def import_lakretz_text(text_path: str | Path, gold_path: str | Path, id_prefix: str | None = None,
                        lexicon: str = "test") -> list[Item]:
    """Items of one released file pair; every bad line is listed (file and line number)."""
    text_path, gold_path = Path(text_path), Path(gold_path)
    sentences, golds = read_lines(text_path), read_lines(gold_path)
    if len(sentences) != len(golds):
        raise StimulusFileError(f"{text_path} has {len(sentences)} line(s) but {gold_path} has {len(golds)}; "
                                "the two files must be line-aligned")
    if not sentences:
        raise StimulusFileError(f"{text_path}: no sentences")
    prefix = id_prefix or text_path.stem
    items: list[Item] = []
    errors: list[str] = []
    for lineno, (sentence, gold) in enumerate(zip(sentences, golds, strict=False), start=1):
        try:
            items.append(_item(sentence, gold, f"{prefix}-{lineno:05d}", lexicon))
        except LineError as exc:
            errors.append(f"  {text_path.name} / {gold_path.name} line {lineno}: {exc}")
    if errors:
        shown = errors[:20] + ([f"  ... and {len(errors) - 20} more"] if len(errors) > 20 else [])
        raise StimulusFileError(f"{text_path}: {len(errors)} bad line(s)\n" + "\n".join(shown))
    return items


def _item(sentence: str, gold: str, item_id: str, lexicon: str) -> Item:
    index, correct, flipped = parse_gold(gold)
    words = normalise_words(sentence)
    if not 0 <= index < len(words):
        raise LineError(f"the verb index {index} is outside the sentence ({len(words)} words)")
    at = words[index].rstrip(".,;:!?")
    if at != correct:
        raise LineError(f"word {index} of the sentence is {at!r}, but the gold file's correct form is {correct!r}")
    structure, condition, dependency = derive(words, index, correct, flipped)
    return Item(item_id=item_id, structure=structure, condition=condition, lexicon=lexicon, words=words,
                verbs={dependency: (index, correct, flipped)})
