"""One typing rule: the page's typed text (twinlab-task.js `Typing`, given the rule the server ships in the
page config) equals Python's typed_text (experiments.tasks.record) on awkward key sequences, and the page
keeps no copy of the key table of its own."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from experiments.spec import load_spec
from experiments.tasks.record import CHAR_KEYS, TYPING, is_text_key, typed_text
from participants.web.payload import page_config

JS = Path(__file__).resolve().parents[2] / "participants" / "web" / "js" / "twinlab-task.js"

SEQUENCES = [
    ["b", "r", "x", "backspace", "e", "a", "d", "period"],
    ["backspace", "backspace", "a"],  # deleting nothing
    ["d", "o", "n", "apostrophe", "t", "space", "g", "o", "comma", "minus"],
    ["ß", "é", "ǅ", "ʰ", "中", "ж"],  # letters of other alphabets (Ll, Lt, Lm, Lo)
    ["𝐀", "x"],  # an astral letter: one code point (two UTF-16 units in JavaScript)
    ["e\u0301", "1", "_", "Ⅷ", "tab", "return", "escape", "left"],  # not typing: a letter plus a mark, digits, ...
    ["constructor", "toString", "__proto__", "hasOwnProperty", "a"],  # names an object lookup would find
    ["A", "space", "backspace", "backspace", "b"],
    [],
]
CHARS = [" ", "'", "-", ".", ",", "B", "é", "1", "İ", "中", "\u0301", "?"]


def _typing_js() -> str:
    js = JS.read_text()
    start = js.index("function Typing(")
    return js[start:js.index("\n  }\n", start) + 4]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_pages_typed_text_from_the_shipped_rule_equals_pythons():
    rule = page_config(load_spec("cloze"), "static")["typing"]
    assert rule == TYPING
    keys = sorted({k for seq in SEQUENCES for k in seq} | set(CHAR_KEYS))
    prog = _typing_js() + (
        f"\nconst T = Typing({json.dumps(rule)});"
        f"\nconsole.log(JSON.stringify({{text: {json.dumps(SEQUENCES)}.map(T.typedText),"
        f" isText: {json.dumps(keys)}.map(T.isTextKey), charKey: {json.dumps(CHARS)}.map(T.charKey),"
        f" deleteKey: T.deleteKey}}));")
    out = subprocess.run(["node", "-e", prog], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["text"] == [typed_text(seq) for seq in SEQUENCES]
    assert got["text"][0] == "bread." and got["text"][4] == "𝐀x" and got["text"][5] == ""
    assert got["isText"] == [is_text_key(k) for k in keys]
    # a character typed on a phone becomes the key that types it: typing that key types the character back
    # (lower-cased), and one no key types is dropped
    for ch, k in zip(CHARS, got["charKey"], strict=False):
        if k is None:
            assert not is_text_key(ch.lower()), ch
        else:
            assert typed_text([k]) == ch.lower(), ch
    assert got["charKey"][:5] == ["space", "apostrophe", "minus", "period", "comma"]
    assert [k is None for k in got["charKey"][5:]] == [False, False, True, True, False, True, True]
    assert got["deleteKey"] == "backspace"


def test_the_page_keeps_no_copy_of_the_key_table():
    """The key names that type (and the characters they type) are nowhere in the page's source: they come
    with the config, so a change to the Python table cannot leave the page typing something else."""
    js = JS.read_text()
    for name in CHAR_KEYS:
        if name == "space":  # the browser's own name of the space bar (" ") -> PsychoPy's "space"
            continue
        assert not re.search(rf"""["']{name}["']""", js), name
    assert "p{L}" not in js  # the letter class comes with the rule too


def _function(path: Path, name: str) -> str:
    js = path.read_text()
    start = js.index(f"function {name}(")
    return js[start:js.index("\n  }\n", start) + 4]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_both_plugins_name_keys_by_the_shipped_table():
    """The RSVP plugin and the task plugin name a browser key the same way, PsychoPy's way, from the one
    table in the page config (a "." is "period" on an RSVP trial too)."""
    names = page_config(load_spec("cloze"), "static")["key_names"]
    keys = [" ", "Spacebar", "Enter", "Escape", "ArrowLeft", "Backspace", "Tab", "'", "-", ".", ",", "F", "j", "ß",
            "constructor", "Shift"]
    want = [names.get(k, k.lower()) for k in keys]
    assert want[:11] == ["space", "space", "return", "escape", "left", "backspace", "tab", "apostrophe", "minus",
                         "period", "comma"]
    assert {names[c] for c in CHAR_KEYS.values()} == set(CHAR_KEYS)  # each typed mark is its typing key's name
    for plugin in ("twinlab-task.js", "twinlab-rsvp.js"):
        prog = _function(JS.parent / plugin, "keyName") + (
            f"\nconsole.log(JSON.stringify({json.dumps(keys)}.map(k => keyName({{key: k}}, {json.dumps(names)}))));")
        out = subprocess.run(["node", "-e", prog], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == want, plugin
        assert "ArrowLeft" not in (JS.parent / plugin).read_text()  # no table of its own
