"""Text that reads one way and is another: invisible, control and look-alike characters.

Why one module: two options that differ only by a zero-width space look the same on the screen but are
two strings to every comparison (a "minimal pair" the reader cannot see); a right-to-left override shows
a sentence reordered; a Cyrillic 'а' inside a Latin level name never matches the level typed on a keyboard.
Every reader of a spec, a design or stimulus file and a reproduction's corpus applies these rules
(docs/validation.md "Invisible and look-alike characters"):

- text is Unicode NFC (`nfc`): the same letter written precomposed or decomposed is one string;
- refused (`text_problem`, naming each character by code point and name): control characters other than
  tab and line breaks (ESC, BEL, NUL, ...), format characters (zero-width space U+200B, word joiner,
  BOM U+FEFF inside text, soft hyphen, the bidi marks, embeddings, overrides and isolates U+202A-U+202E,
  U+2066-U+2069), the line and paragraph separators U+2028/U+2029, and the blank look-alike letters
  (Hangul fillers, braille blank, combining grapheme joiner). ZERO WIDTH (NON-)JOINER U+200C/U+200D are
  kept inside a word of a script that needs them (Persian, Arabic, Indic scripts; emoji sequences),
  refused anywhere else (between Chinese characters, in Latin text);
- a word mixing Latin, Cyrillic, Greek or Armenian letters (a look-alike: `pаst` with Cyrillic а) is
  refused naming the foreign letters;
- two texts of one set (a factor's levels, an item's options, the labels, a minimal pair) that differ
  only invisibly (`visible_key`: NFKC, invisible characters dropped, white space collapsed and trimmed)
  are refused naming both (`lookalike_problem`).
"""
from __future__ import annotations

import re
import unicodedata
from typing import Iterable

LINE_CONTROLS = "\t\n\r"  # the line structure of a multi-line text (instructions, a news prefix)
JOINERS = {0x200C, 0x200D}
BLANK_LETTERS = {0x034F, 0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800}  # shown as nothing, yet letters or marks
CONTROL_NAMES = {0x00: "NULL", 0x07: "BELL", 0x08: "BACKSPACE", 0x0B: "LINE TABULATION", 0x0C: "FORM FEED",
                 0x1B: "ESCAPE", 0x7F: "DELETE", 0x85: "NEXT LINE", 0x9B: "CONTROL SEQUENCE INTRODUCER"}
CONFUSABLE_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK", "ARMENIAN")
# scripts whose words never need a zero-width joiner: a joiner between their letters is hidden text
_NO_JOINER = ("LATIN", "CYRILLIC", "GREEK", "CJK", "HIRAGANA", "KATAKANA", "HANGUL", "BOPOMOFO", "FULLWIDTH",
              "HALFWIDTH", "IDEOGRAPHIC", "DIGIT")
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
SHOWN = 4  # characters named in one message


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def char_name(ch: str) -> str:
    """'U+200B ZERO WIDTH SPACE' (controls, which Unicode leaves unnamed, by their usual name)."""
    cp = ord(ch)
    name = unicodedata.name(ch, "") or CONTROL_NAMES.get(cp) or "<control>"
    return f"U+{cp:04X} {name}"


def _joiner_ok(text: str, i: int) -> bool:
    """A ZWJ/ZWNJ inside a word of a script that uses it (both neighbours letters, marks or symbols of
    such a script, e.g. Persian می‌خواهم, an emoji sequence)."""
    if i == 0 or i == len(text) - 1:
        return False
    for ch in (text[i - 1], text[i + 1]):
        if unicodedata.category(ch)[0] not in "LMS" or unicodedata.name(ch, "").startswith(_NO_JOINER):
            return False
    return True


def hidden_chars(text: str) -> list[tuple[int, str]]:
    """(1-based position, character) of every character the rules refuse (module doc)."""
    out = []
    for i, ch in enumerate(text):
        cat = unicodedata.category(ch)
        cp = ord(ch)
        if (cat == "Cc" and ch not in LINE_CONTROLS) or cat in ("Zl", "Zp") or cp in BLANK_LETTERS:
            out.append((i + 1, ch))
        elif cat == "Cf" and not (cp in JOINERS and _joiner_ok(text, i)):
            out.append((i + 1, ch))
    return out


def _script(ch: str) -> str | None:
    name = unicodedata.name(ch, "")
    return next((s for s in CONFUSABLE_SCRIPTS if name.startswith(s + " ")), None)


def mixed_script_problem(text: str) -> str | None:
    """A word whose letters come from two of Latin, Cyrillic, Greek, Armenian: the letters of the rarer
    script(s) named (a look-alike typed or pasted in)."""
    for m in _WORD.finditer(text):
        word = m.group()
        scripts: dict[str, list[str]] = {}
        for ch in word:
            s = _script(ch)
            if s:
                scripts.setdefault(s, []).append(ch)
        if len(scripts) > 1:
            main = max(scripts, key=lambda s: len(scripts[s]))
            odd = sorted({ch for s, chs in scripts.items() if s != main for ch in chs})
            return (f"the word {word!r} mixes {main.title()} letters with "
                    f"{' and '.join(s.title() for s in scripts if s != main)} look-alikes: "
                    + ", ".join(char_name(c) for c in odd[:SHOWN]))
    return None


def text_problem(text: str) -> str | None:
    """Why a text is refused (hidden characters, then a mixed-script word), or None."""
    hidden = hidden_chars(text)
    if hidden:
        first: dict[str, int] = {}
        for pos, ch in hidden:
            first.setdefault(ch, pos)
        named = [f"{char_name(ch)} (character {pos})" for ch, pos in list(first.items())[:SHOWN]]
        more = f" and {len(first) - SHOWN} more" if len(first) > SHOWN else ""
        return (f"holds invisible or control character(s) {', '.join(named)}{more}: text must read as it is; "
                "remove them")
    return mixed_script_problem(text)


def visible_key(text: str) -> str:
    """What a reader sees: NFKC (full-width and compatibility forms folded), hidden characters dropped,
    white space collapsed and trimmed. Two texts with one key differ only invisibly."""
    t = unicodedata.normalize("NFKC", text)
    t = "".join(ch for ch in t if unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp") or ch in LINE_CONTROLS)
    t = "".join(ch for ch in t if ord(ch) not in BLANK_LETTERS)
    return " ".join(t.split())


def _difference(a: str, b: str) -> str:
    odd = sorted(set(a) ^ set(b)) or sorted({c for c in a + b if c.isspace() or not c.isprintable()})
    return ", ".join(char_name(c) for c in odd[:SHOWN]) or "white space"


def lookalike_problem(values: Iterable[str], what: str) -> str | None:
    """Two different texts of one set that read the same (equal `visible_key`), named with the characters
    that tell them apart; None when every pair looks different."""
    seen: dict[str, str] = {}
    for v in values:
        if not isinstance(v, str):
            continue
        k = visible_key(v)
        if k in seen and seen[k] != v:
            return (f"{what} {seen[k]!r} and {v!r} look the same (they differ only by {_difference(seen[k], v)}); "
                    "write them so that they read differently, or give one of them once")
        seen.setdefault(k, v)
    return None
