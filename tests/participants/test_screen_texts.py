"""The screen texts every human runner shows: built-in English and Italian sets, spec overrides, hashes."""
from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from experiments.screen_texts import (
    DEFAULTS,
    FEEDBACK_KEYS,
    KEY_NAMES,
    SPEC_TEXT_KEYS,
    TEXT_KEYS,
    confirm_keys,
    fill,
    key_label,
    screen_bundle,
    screen_texts,
    untranslated,
)
from experiments.spec import SpecError, bundled_spec_path, load_spec, parse_spec
from experiments.spec_model import Texts

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
# placeholders screen_texts fills from the spec; the others are run-time values both languages must carry
SPEC_FILLED = {"key", "yes", "no"}
# Italian key names that are rightly the English ones (the keys are labelled so on Italian keyboards)
SAME_KEY_NAMES = {"escape", "tab", "backspace"}


def _spec(name: str = "lakretz2021_nested") -> dict:
    return yaml.safe_load(bundled_spec_path(name).read_text(encoding="utf-8"))


def _parse(data: dict, name: str = "lakretz2021_italian_example"):
    return parse_spec(data, where=f"{name}.yaml", base_dir=bundled_spec_path(name).parent)


def test_every_key_has_an_english_and_an_italian_text_and_a_spec_field():
    assert set(DEFAULTS) == {"en", "it", "zh"}
    for lang, texts in DEFAULTS.items():
        assert set(texts) == set(TEXT_KEYS), (lang, set(texts) ^ set(TEXT_KEYS))
        assert all(t.strip() for t in texts.values()), lang
    assert set(Texts.model_fields) == {"instructions", *SPEC_TEXT_KEYS}
    assert set(KEY_NAMES["it"]) == set(KEY_NAMES["en"]) == set(KEY_NAMES["zh"])
    zh, en = DEFAULTS["zh"], DEFAULTS["en"]  # Chinese: no English text left, the same run-time placeholders
    assert not [k for k in TEXT_KEYS if zh[k] == en[k]]
    assert all(set(PLACEHOLDER.findall(zh[k])) == set(PLACEHOLDER.findall(DEFAULTS["it"][k])) for k in TEXT_KEYS)


def test_no_italian_text_is_the_english_one_and_placeholders_agree():
    en, it = DEFAULTS["en"], DEFAULTS["it"]
    same = [k for k in TEXT_KEYS if it[k].strip().lower() == en[k].strip().lower()]
    assert same == [], f"Italian texts equal to the English ones: {same}"
    for k in TEXT_KEYS:
        for lang in ("en", "it"):
            used = set(PLACEHOLDER.findall(DEFAULTS[lang][k]))
            assert used <= TEXT_KEYS[k], (lang, k, used)
        # a run-time value (sentence number, code, ...) in one language is in the other too
        assert set(PLACEHOLDER.findall(en[k])) - SPEC_FILLED == set(PLACEHOLDER.findall(it[k])) - SPEC_FILLED, k
    same_keys = {k for k in KEY_NAMES["en"] if KEY_NAMES["en"][k] == KEY_NAMES["it"][k]}
    assert same_keys == SAME_KEY_NAMES
    assert confirm_keys("it") == ("s", "n") and confirm_keys("en") == ("y", "n")


def test_the_italian_bundled_spec_shows_only_italian_texts():
    ita = load_spec("lakretz2021_italian_example")
    eng = load_spec("lakretz2021_replication")
    it_texts, en_texts = screen_texts(ita), screen_texts(eng)
    assert set(it_texts) == set(en_texts)
    for k in TEXT_KEYS:
        assert it_texts[k] != en_texts[k], k
        assert it_texts[k] == fill(DEFAULTS["it"][k] if k not in ("break_text", "end_text", *FEEDBACK_KEYS)
                                   else it_texts[k], key="SPAZIO", yes="S", no="N")
    assert it_texts["continue_hint"] == "Premi SPAZIO per continuare"
    assert it_texts["quit_hint"].startswith("S = esci") and "N = continua" in it_texts["quit_hint"]
    assert it_texts["panel_label_violation"] == "VIOLAZIONE" and it_texts["panel_key_no_violation"] == "J"
    assert en_texts["continue_hint"] == "Press SPACE to continue" and en_texts["quit_hint"].startswith("Y = quit")
    # the texts the spec gives are kept as written
    assert it_texts["correct_text"] == "Corretto!" and it_texts["end_text"] == "Grazie! La sessione è finita."


def test_language_it_without_texts_gets_the_whole_italian_set():
    data = _spec("lakretz2021_italian_example")
    data.pop("feedback")
    data["texts"] = {"instructions": ["Leggi."]}
    data["language"] = "it-CH"  # a regional tag uses its language's set
    texts = screen_texts(_parse(data))
    for k in TEXT_KEYS:
        assert texts[k] == fill(DEFAULTS["it"][k], key="SPAZIO", yes="S", no="N"), k
    assert texts["break_text"] == "Fai una breve pausa. Premi SPAZIO per continuare."
    assert texts["no_response_text"] == "Troppo lento!"


def test_texts_override_the_language_set_and_change_the_hash_only_when_given():
    base = _spec("lakretz2021_italian_example")
    exp = _parse(base)
    with_default = _parse({**base, "texts": {**base["texts"], "quit_prompt": DEFAULTS["it"]["quit_prompt"]}})
    changed = _parse({**base, "texts": {**base["texts"], "quit_prompt": "Basta?", "resume_text": "Di nuovo: "
                                                                                                 "{trial}/{total}"}})
    assert with_default.spec_hash == exp.spec_hash  # a text equal to the language's is not a change
    assert changed.spec_hash != exp.spec_hash
    texts = screen_texts(changed)
    assert texts["quit_prompt"] == "Basta?" and fill(texts["resume_text"], trial=4, total=20) == "Di nuovo: 4/20"
    assert texts["continue_hint"] == "Premi SPAZIO per continuare"  # the others stay Italian


def test_hashes_of_specs_without_the_new_texts_are_unchanged():
    # the hashes the bundled specs had before the screen texts became spec fields
    assert load_spec("lakretz2021_nested").spec_hash == "91d1347b4fcbc6bb"
    assert load_spec("lakretz2021_replication").spec_hash == "24f55166260388ee"
    assert load_spec("lakretz2021_italian_example").spec_hash == "a8f248a0bc6a06ec"
    # an English spec that leaves out break/end/feedback texts hashes as it did with the old defaults written out
    data = _spec()
    data["texts"] = {"instructions": data["texts"]["instructions"]}
    data.pop("feedback")
    explicit = {**data, "texts": {**data["texts"], "break_text": "Take a short break. Press the response key to "
                                                                 "continue.",
                                  "end_text": "Thank you! The session is over."},
                "feedback": {"correct_text": "Correct!", "incorrect_text": "Wrong!"}}
    assert parse_spec(data).spec_hash == parse_spec(explicit).spec_hash == "fa4ded1de3023d1d"


@pytest.mark.parametrize("where, value, expected", [
    (("texts", "contineu_hint"), "x", ["texts.contineu_hint", "unknown field", "continue_hint"]),
    (("feedback", "too_slow"), "x", ["feedback.too_slow", "unknown field", "no_response_text"]),
    (("texts", "resume_text"), "Again at {trail}", ["texts.resume_text", "{trail}", "{trial}"]),
    (("feedback", "correct_text"), "{key}!", ["feedback.correct_text", "{key}", "none"]),
])
def test_bad_texts_are_errors_naming_the_key(where, value, expected):
    data = _spec()
    data.setdefault(where[0], {})[where[1]] = value
    with pytest.raises(SpecError) as err:
        parse_spec(data, where="study.yaml")
    msg = str(err.value)
    assert msg.startswith("study.yaml") and all(e in msg for e in expected), msg


def test_a_quit_key_that_answers_its_own_prompt_is_refused():
    data = _spec("lakretz2021_italian_example")
    data["task"]["quit_key"] = "s"  # the Italian "si"
    with pytest.raises(SpecError) as err:
        _parse(data)
    assert "task.quit_key 's'" in str(err.value) and "'it'" in str(err.value)
    data = _spec()
    data["task"]["quit_key"] = "s"  # fine in English
    assert parse_spec(data).task.quit_key == "s"


def test_validate_command_refuses_an_unknown_text_key_with_exit_2(tmp_path):
    data = _spec()
    data["texts"]["welcome_back"] = "Hi again"
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    res = subprocess.run([sys.executable, "-m", "experiments.cli", "validate", str(path)], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "texts.welcome_back" in res.stderr and "Traceback" not in res.stderr


def test_a_language_without_a_set_falls_back_to_english_and_says_which_keys():
    data = _spec("lakretz2021_italian_example")
    data["language"] = "de"
    data["feedback"] = {"correct_text": "Richtig!"}
    data["texts"] = {"instructions": ["Lies."], "end_text": "Danke!"}
    exp = _parse(data)
    missing = untranslated(exp)
    assert "correct_text" not in missing and "end_text" not in missing
    assert {"continue_hint", "quit_prompt", "incorrect_text"} <= set(missing)
    assert screen_texts(exp)["quit_prompt"] == "Quit the session?"
    assert untranslated(load_spec("lakretz2021_italian_example")) == []


def test_fill_and_key_labels():
    assert fill("{trial} of {total} {x} {", trial=3, total=9) == "3 of 9 {x} {"
    assert key_label("space", "it") == "SPAZIO" and key_label("space", "en") == "SPACE"
    assert key_label("f", "it") == "F" and key_label("return", "it-IT") == "INVIO"


def test_the_bundle_is_plain_json():
    exp = load_spec("lakretz2021_replication")
    bundle = screen_bundle(exp)
    assert json.loads(json.dumps(bundle)) == bundle
    assert bundle["instructions"][-1] == "Press SPACE to begin."
    assert bundle["block_intros"] == {"training": "First, a practice block of 40 sentences.",
                                      "main": "The main part begins now."}
    assert bundle["keys"] == {"continue": "space", "quit": "escape", "quit_yes": "y", "quit_no": "n",
                              "panel_violation": "f", "panel_no_violation": "j"}
    assert all(isinstance(v, str) for v in bundle["texts"].values())


def _string_constants(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def test_no_participant_facing_english_literal_is_left_in_participants():
    """Every runner under participants/ takes its texts from the spec, not from literals of its own."""
    fragments = set()
    for text in DEFAULTS["en"].values():  # the literal parts of each English text
        fragments |= {f.strip() for f in PLACEHOLDER.split(text)[::2] if len(f.strip()) >= 12}
    fragments |= {"Welcome back", "Press ", "Quit the session"}
    found = []
    views = sorted((ROOT / "kinds").glob("*/view.py"))  # the kinds' PsychoPy views (kinds/<kind>/view.py)
    assert views
    for path in sorted((ROOT / "participants").rglob("*.py")) + views:
        for s in _string_constants(path):
            found += [(path.name, f) for f in fragments if f in s]
    assert found == []


def test_model_subjects_get_block_intros_with_their_number_of_trials_but_no_break():
    """A model subject's running context shows each block's intro ({trials} filled in), never the pause
    screen between blocks (a rest, with a key press a model has no part in: docs/model_subjects.md)."""
    from experiments.design_compiler import compile_sequence
    from experiments.screen_texts import block_sizes
    from model_subjects.context import block_start_segments

    data = _spec("lakretz2021_italian_example")
    first = data["blocks"][0]
    first.update(trials=2, break_after=True, intro_text="Un blocco di {trials} frasi.")
    data["blocks"].append({**first, "name": "second", "trials": 3})
    exp = _parse(data)
    seq = compile_sequence(exp, "P1")
    sizes = block_sizes(seq.trials)
    assert sizes == {first["name"]: 2, "second": 3}
    assert block_start_segments(exp, seq[0], None, sizes) == ["Un blocco di 2 frasi.\n"]
    assert block_start_segments(exp, seq[2], seq[1].block, sizes) == ["Un blocco di 3 frasi.\n"]  # no break page
    assert block_start_segments(exp, seq[2], seq[1].block, block_sizes(seq.trials[:3])) == ["Un blocco di 1 frasi.\n"]
    assert block_start_segments(exp, seq[1], seq[0].block, sizes) == []
